//! Against a cluster that does not answer (a loopback port nobody listens on), the
//! console says it is not connected, naming the server and the cause, instead of
//! showing empty views that read like an empty cluster; `plan --live` gives up after
//! `--sync-timeout` with one line that names the server once.

use crate::tmux_support;

use std::path::Path;

use tmux_support::Tmux;

/// A port that refuses connections: bound, then released.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    drop(l);
    port
}

fn kubeconfig(dir: &Path, port: u16) -> std::path::PathBuf {
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- cluster: {{server: \"https://127.0.0.1:{port}\"}}\n  name: gone\n\
             contexts:\n- context: {{cluster: gone, user: u}}\n  name: gone\ncurrent-context: gone\n\
             users:\n- name: u\n  user: {{token: t}}\n"
        ),
    )
    .expect("write kubeconfig");
    path
}

#[test]
fn plan_live_names_the_unreachable_server_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = closed_port();
    let kc = kubeconfig(dir.path(), port);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gangplank"))
        .args(["plan", "--live", "--sync-timeout", "3", "--kubeconfig"])
        .arg(&kc)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let server = format!("https://127.0.0.1:{port}");
    assert!(
        stderr.contains(&format!("cannot reach {server} (connection refused)")),
        "{stderr}"
    );
    assert_eq!(stderr.matches(&server).count(), 1, "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn console_says_it_is_not_connected() {
    let Some(tmux) = Tmux::start(100, 24) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let port = closed_port();
    let kc = kubeconfig(dir.path(), port);
    let bin = env!("CARGO_BIN_EXE_gangplank");
    tmux.send(&[
        &format!("{bin} --kubeconfig {}; echo EXIT=$?", kc.display()),
        "Enter",
    ]);
    let server = format!("https://127.0.0.1:{port}");
    let screen = tmux.wait_for("the not-connected panel", 60, |s| {
        s.contains("Not connected") && s.contains(&format!("cannot reach {server}"))
    });
    assert!(screen.contains("connection refused"), "{screen}");
    tmux.send(&["q"]);
    tmux.wait_for("the console to exit", 30, |s| s.contains("EXIT=0"));
}
