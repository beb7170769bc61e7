//! The live cluster source: kube watchers → one store task → immutable snapshots →
//! a re-planning task. See docs/source.md.
//!
//! ```text
//! watch task per resource ──parsed model objects──► store task ──watch<Arc<Snapshot>>──► readers
//!  (kube watcher, RawObject,                         (only writer, relist buffers,         │
//!   model parser per object)                          coalesced publish ≥ 200 ms)          ▼
//!                                                           replan task ──watch<Option<Arc<LivePlan>>>
//! ```
//!
//! The console gets snapshots with [`SourceHandle::snapshots`] and plans with
//! [`replan::spawn`]; headless commands use [`SourceHandle::wait_synced`].

pub mod connect;
pub mod drift;
pub mod history;
pub mod kueue_config;
pub mod objects;
pub mod replan;
pub mod resources;
pub mod snapshot;
pub mod store;
pub mod sync;
pub mod watch;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kube::runtime::watcher;
use kube::{Api, Client};
use tokio::sync::{mpsc, watch as chan};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;

pub use connect::{
    ClusterArgs, USER_AGENT_VALUE, client_config, connect, connect_source, context_name,
    context_names,
};
pub use history::{
    EvictionRecord, HistoryLog, TimelineRecord, default_demo_history_path, default_history_path,
    read_history, read_timeline,
};
pub use replan::{LivePlan, ReplanOptions};
pub use resources::{KUEUE_GROUP, RawObject, ResourceKind};
pub use snapshot::{IngestStats, KUEUE_NOT_INSTALLED, KueueStatus, Snapshot};
pub use sync::{ResourceSync, SyncState};

/// Errors of the live source.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot load kubeconfig ({what}): {source}")]
    Kubeconfig {
        what: String,
        #[source]
        source: kube::config::KubeconfigError,
    },
    #[error("no cluster configuration found (no kubeconfig, not in a pod): {0}")]
    Infer(#[source] kube::config::InferConfigError),
    #[error("cannot create the cluster client: {0}")]
    Client(#[source] kube::Error),
    #[error("{0}")]
    KueueNotInstalled(String),
    #[error(
        "cannot reach {server} ({cause}): no answer within {secs}s (--sync-timeout), retried with backoff"
    )]
    Unreachable {
        server: String,
        cause: String,
        secs: u64,
    },
    #[error("timed out after {secs}s waiting for the initial sync; not synced: {details}")]
    SyncTimeout { secs: u64, details: String },
    #[error("the live source stopped")]
    Stopped,
}

/// Settings of [`start`].
#[derive(Clone, Debug)]
pub struct SourceOptions {
    /// `-n`: the view filter recorded in snapshots.
    pub namespace: Option<String>,
    /// Where evictions are appended (JSON lines); `None` keeps them in memory only.
    pub history_file: Option<PathBuf>,
    /// Coalescing window of snapshots.
    pub publish_interval: Duration,
    /// `timeoutSeconds` of each watch. kube also treats a watch silent for this plus
    /// 5 s as dead and reconnects: this is the silent-watch watchdog.
    pub watch_timeout_secs: u32,
    /// A list with no progress for this long is restarted.
    pub list_stall: Duration,
    /// Objects per list page.
    pub page_size: u32,
    /// "Now" for snapshots and sync states: the wall clock, or the simulator's.
    pub clock: Clock,
    /// The API server's address (`https://host:port`) for messages such as "cannot
    /// reach …"; set by [`connect_source`].
    pub server: Option<String>,
    /// Read Kueue's configuration (the `kueue-system/kueue-manager-config` ConfigMap)
    /// once at start, so the plan uses fair sharing etc. as the cluster does.
    pub read_kueue_config: bool,
}

impl Default for SourceOptions {
    fn default() -> Self {
        SourceOptions {
            namespace: None,
            history_file: None,
            publish_interval: Duration::from_millis(200),
            watch_timeout_secs: 60,
            list_stall: Duration::from_secs(60),
            page_size: 500,
            clock: Clock::wall(),
            server: None,
            read_kueue_config: true,
        }
    }
}

impl SourceOptions {
    /// The client read timeout that goes with these options: how long a connection
    /// may stay silent. A healthy watch is closed by the server at `timeoutSeconds`;
    /// one still silent 3 s later is hung. This fires before kube's own idle timeout
    /// (`timeoutSeconds` + 5 s), which would reconnect without telling anyone, so the
    /// hang reaches the watch task as an error: the status shows it and the watcher
    /// restarts (relists).
    pub fn read_timeout(&self) -> Duration {
        Duration::from_secs(u64::from(self.watch_timeout_secs) + 3)
    }
}

/// A running source. Dropping it stops every task.
pub struct SourceHandle {
    rx: chan::Receiver<Arc<Snapshot>>,
    /// The API server's address, when known ([`SourceOptions::server`]).
    server: Option<String>,
    cancel: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
    /// The Kueue API version being watched (`v1beta2` or `v1beta1`).
    pub kueue_version: String,
    /// Why Kueue's configuration was not read (missing, forbidden, …), for commands
    /// that print warnings; empty when it was read or not asked for.
    pub kueue_config_notes: Vec<String>,
}

impl Drop for SourceHandle {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

impl SourceHandle {
    /// A receiver of snapshots (the latest is always available; readers never lock).
    pub fn snapshots(&self) -> chan::Receiver<Arc<Snapshot>> {
        self.rx.clone()
    }

    /// The latest snapshot.
    pub fn latest(&self) -> Arc<Snapshot> {
        self.rx.borrow().clone()
    }

    /// Waits until a snapshot satisfies `pred`, up to `timeout`.
    pub async fn wait_for(
        &self,
        timeout: Duration,
        mut pred: impl FnMut(&Snapshot) -> bool,
    ) -> Option<Arc<Snapshot>> {
        let mut rx = self.rx.clone();
        let wait = async {
            loop {
                let snap = rx.borrow_and_update().clone();
                if pred(&snap) {
                    return Some(snap);
                }
                if rx.changed().await.is_err() {
                    return None;
                }
            }
        };
        tokio::time::timeout(timeout, wait).await.ok().flatten()
    }

    /// Waits for the initial sync of every available resource (synced, forbidden or
    /// not served); the error names what did not sync.
    pub async fn wait_synced(&self, timeout: Duration) -> Result<Arc<Snapshot>, Error> {
        if let Some(s) = self.wait_for(timeout, Snapshot::all_settled).await {
            return Ok(s);
        }
        let snap = self.latest();
        let unsettled = snap.unsettled();
        // Nothing answered at all: say so once, naming the server, not per resource.
        let causes: std::collections::BTreeSet<&str> = unsettled
            .iter()
            .filter_map(|s| s.state.error().and_then(watch::unreachable_cause_of))
            .collect();
        // Every resource either failed to connect or is between two attempts, and none
        // ever listed anything.
        let no_answer = |s: &&ResourceSync| match s.state.error() {
            Some(e) => watch::unreachable_cause_of(e).is_some(),
            None => !s.ever_synced && s.objects == 0,
        };
        if causes.len() == 1 && !unsettled.is_empty() && unsettled.iter().all(no_answer) {
            return Err(Error::Unreachable {
                server: self
                    .server
                    .clone()
                    .unwrap_or_else(|| "the API server".into()),
                cause: causes.into_iter().next().unwrap_or_default().to_string(),
                secs: timeout.as_secs(),
            });
        }
        let details = snap
            .unsettled()
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join("; ");
        Err(Error::SyncTimeout {
            secs: timeout.as_secs(),
            details: if details.is_empty() {
                "no snapshot was published".into()
            } else {
                details
            },
        })
    }

    /// Stops every task and waits for them.
    pub async fn shutdown(mut self) {
        self.cancel.cancel();
        for t in std::mem::take(&mut self.tasks) {
            let _ = t.await;
        }
    }
}

/// Kueue's configuration for [`start`], and what to say about it: `None` (Kueue's
/// defaults) with a note when the ConfigMap is missing, unreadable or the server does
/// not answer within 10 s. An unreachable server gets no note: the sync reports it.
async fn read_kueue_config(
    client: &Client,
) -> (Option<crate::model::kueue_config::KueueConfig>, Vec<String>) {
    let read = kueue_config::fetch(client.clone());
    let (cfg, notes) = match tokio::time::timeout(Duration::from_secs(10), read).await {
        Ok(Ok(found)) => found,
        Ok(Err(e)) if unreachable(&e) => (None, Vec::new()),
        Ok(Err(e)) => (None, vec![format!("{e:#}; Kueue's defaults apply")]),
        Err(_) => (
            None,
            vec!["Kueue's ConfigMap: no answer in 10 s; Kueue's defaults apply".to_string()],
        ),
    };
    for n in &notes {
        tracing::warn!(target: "gangplank::source", "{n}");
    }
    (cfg, notes)
}

/// Whether `err` is a connection that could not be made ([`watch::unreachable_cause`]).
pub fn unreachable(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<kube::Error>()
            .is_some_and(|k| watch::unreachable_cause(k).is_some())
    })
}

/// Which Kueue version the cluster serves: v1beta2 preferred, else v1beta1.
/// A 404 on the group means Kueue is not installed. Other errors (server down,
/// discovery forbidden) assume v1beta2 and let the watchers report what happens.
pub async fn detect_kueue(client: &Client) -> (KueueStatus, String) {
    match kube::discovery::group(client, KUEUE_GROUP).await {
        Ok(g) => {
            let versions: Vec<&str> = g.versions().collect();
            let v = ["v1beta2", "v1beta1"]
                .into_iter()
                .find(|v| versions.contains(v))
                .unwrap_or_else(|| g.preferred_version_or_latest());
            (
                KueueStatus::Installed {
                    version: v.to_string(),
                },
                v.to_string(),
            )
        }
        Err(kube::Error::Api(s)) if s.code == 404 => (
            KueueStatus::NotInstalled {
                message: KUEUE_NOT_INSTALLED.to_string(),
            },
            "v1beta2".into(),
        ),
        Err(e) => {
            tracing::warn!(error = %e, "Kueue discovery failed; assuming v1beta2");
            (KueueStatus::Unknown, "v1beta2".into())
        }
    }
}

/// Starts the watchers and the store.
pub async fn start(client: Client, opts: SourceOptions) -> SourceHandle {
    let (kueue, version) = detect_kueue(&client).await;
    let kinds: Vec<ResourceKind> = ResourceKind::ALL
        .into_iter()
        .filter(|k| !k.is_kueue() || !matches!(kueue, KueueStatus::NotInstalled { .. }))
        .collect();
    let cancel = CancellationToken::new();
    // Bounded: a slow store pushes back on the watch tasks (and so on the server)
    // instead of buffering parsed objects without limit. Messages come in batches of
    // up to 256.
    let (etx, erx) = mpsc::channel(32);
    let mut store = store::Store::new(
        &kinds,
        kueue,
        opts.namespace.clone(),
        HistoryLog::open(opts.history_file.clone()),
    );
    let mut kueue_config_notes = Vec::new();
    if opts.read_kueue_config {
        let (cfg, notes) = read_kueue_config(&client).await;
        store.set_kueue_config(cfg);
        kueue_config_notes = notes;
    }
    let (stx, srx) = chan::channel(Arc::new(Snapshot::empty(opts.namespace.clone())));
    let publish = store::PublishOptions {
        min_interval: opts.publish_interval,
        clock: opts.clock.clone(),
    };
    let mut tasks = vec![tokio::spawn(store::run(
        store,
        erx,
        stx,
        publish,
        cancel.clone(),
    ))];
    let server: Arc<str> = opts.server.as_deref().unwrap_or("the API server").into();
    for kind in kinds {
        let ar = kind.api_resource(&version);
        let mut config = watcher::Config::default()
            .timeout(opts.watch_timeout_secs)
            .page_size(opts.page_size);
        if kind == ResourceKind::Pod {
            // Finished pods hold no resources; the server drops them for us.
            config = config.fields("status.phase!=Succeeded,status.phase!=Failed");
        }
        let spec = watch::WatchSpec {
            kind,
            api_version: ar.api_version.clone(),
            api: Api::all_with(client.clone(), &ar),
            config,
            list_stall: opts.list_stall,
            server: server.clone(),
        };
        tasks.push(tokio::spawn(watch::run(spec, etx.clone(), cancel.clone())));
    }
    SourceHandle {
        rx: srx,
        server: opts.server.clone(),
        cancel,
        tasks,
        kueue_version: version,
        kueue_config_notes,
    }
}
