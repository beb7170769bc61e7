//! Connecting like kubectl: kubeconfig (`--kubeconfig`, `$KUBECONFIG`, `~/.kube/config`),
//! `--context`, in-cluster service account, `--as`/`--as-group` impersonation.

use std::path::PathBuf;
use std::time::Duration;

// axum re-exports the `http` crate kube uses; no extra dependency for two header types.
use axum::http::{HeaderValue, header::USER_AGENT};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use super::Error;

/// The cluster flags shared by every command that talks to a live cluster
/// (`#[command(flatten)]` them).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ClusterArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; inside a
    /// pod, its service account).
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: the current context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// Act as this user (impersonation, like kubectl --as).
    #[arg(long = "as", value_name = "USER")]
    pub as_user: Option<String>,
    /// Act as a member of this group (repeatable, like kubectl --as-group).
    #[arg(long = "as-group", value_name = "GROUP")]
    pub as_group: Vec<String>,
    /// Show only this namespace (a view filter: quota and preemption are still
    /// computed over the whole cluster).
    #[arg(short = 'n', long = "namespace", value_name = "NAMESPACE")]
    pub namespace: Option<String>,
}

/// `gangplank/<version>`: sent as User-Agent so the apiserver's audit log names us.
pub const USER_AGENT_VALUE: &str = concat!("gangplank/", env!("CARGO_PKG_VERSION"));

/// The kube client configuration the flags describe.
///
/// `read_timeout` bounds every read on a connection: without it a hung list request
/// never returns (kube's default is none, reliability.md §1). It must exceed the
/// watch timeout, or quiet watches would be cut.
pub async fn client_config(args: &ClusterArgs, read_timeout: Duration) -> Result<Config, Error> {
    let opts = KubeConfigOptions {
        context: args.context.clone(),
        ..KubeConfigOptions::default()
    };
    let mut cfg = match (&args.kubeconfig, &args.context) {
        (Some(path), _) => {
            let kc = Kubeconfig::read_from(path).map_err(|source| Error::Kubeconfig {
                what: path.display().to_string(),
                source,
            })?;
            Config::from_custom_kubeconfig(kc, &opts)
                .await
                .map_err(|source| Error::Kubeconfig {
                    what: path.display().to_string(),
                    source,
                })?
        }
        (None, Some(ctx)) => {
            Config::from_kubeconfig(&opts)
                .await
                .map_err(|source| Error::Kubeconfig {
                    what: format!("context {ctx:?}"),
                    source,
                })?
        }
        (None, None) => Config::infer().await.map_err(Error::Infer)?,
    };
    if let Some(user) = &args.as_user {
        cfg.auth_info.impersonate = Some(user.clone());
    }
    if !args.as_group.is_empty() {
        cfg.auth_info.impersonate_groups = Some(args.as_group.clone());
    }
    cfg.headers
        .push((USER_AGENT, HeaderValue::from_static(USER_AGENT_VALUE)));
    cfg.read_timeout = Some(read_timeout);
    Ok(cfg)
}

/// The kube context the flags select, by name: `--context`, else the kubeconfig's
/// `current-context` (`--kubeconfig`, else `$KUBECONFIG` / `~/.kube/config`), else
/// `in-cluster` inside a pod; `None` when none can be read.
pub fn context_name(args: &ClusterArgs) -> Option<String> {
    if let Some(c) = &args.context {
        return Some(c.clone());
    }
    let kc = match &args.kubeconfig {
        Some(path) => Kubeconfig::read_from(path).ok(),
        None => Kubeconfig::read().ok(),
    };
    match kc.and_then(|k| k.current_context) {
        Some(c) if !c.is_empty() => Some(c),
        _ if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() => Some("in-cluster".into()),
        _ => None,
    }
}

/// Every context name in the kubeconfig the flags select (empty when none is readable).
pub fn context_names(args: &ClusterArgs) -> Vec<String> {
    let kc = match &args.kubeconfig {
        Some(path) => Kubeconfig::read_from(path).ok(),
        None => Kubeconfig::read().ok(),
    };
    kc.map(|k| k.contexts.into_iter().map(|c| c.name).collect())
        .unwrap_or_default()
}

/// A client for the flags.
pub async fn connect(args: &ClusterArgs, read_timeout: Duration) -> Result<Client, Error> {
    let cfg = client_config(args, read_timeout).await?;
    Client::try_from(cfg).map_err(Error::Client)
}

/// A client for the flags, for [`super::start`] with `opts`: also records the API
/// server's address in `opts.server`, so that "cannot reach" names it.
pub async fn connect_source(
    args: &ClusterArgs,
    opts: &mut super::SourceOptions,
) -> Result<Client, Error> {
    let cfg = client_config(args, opts.read_timeout()).await?;
    opts.server = Some(server_label(&cfg.cluster_url));
    Client::try_from(cfg).map_err(Error::Client)
}

/// `https://host:port` (the path of the root URL is dropped).
fn server_label(url: &impl std::fmt::Display) -> String {
    url.to_string().trim_end_matches('/').to_string()
}
