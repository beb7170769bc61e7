//! A kubeconfig pointing at the simulator (no auth, plain HTTP on loopback).

use std::net::SocketAddr;
use std::path::Path;

/// Cluster, context and user name used in the generated kubeconfig.
pub const CONTEXT_NAME: &str = "gangplank-sim";

/// The kubeconfig YAML for a server at `addr`.
pub fn kubeconfig_yaml(addr: SocketAddr) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: {CONTEXT_NAME}
  cluster:
    server: http://{addr}
contexts:
- name: {CONTEXT_NAME}
  context:
    cluster: {CONTEXT_NAME}
    user: {CONTEXT_NAME}
    namespace: default
current-context: {CONTEXT_NAME}
users:
- name: {CONTEXT_NAME}
  user: {{}}
preferences: {{}}
"
    )
}

/// Writes the kubeconfig for `addr` to `path`.
pub fn write_kubeconfig(path: &Path, addr: SocketAddr) -> std::io::Result<()> {
    std::fs::write(path, kubeconfig_yaml(addr))
}
