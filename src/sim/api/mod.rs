//! The simulator's Kubernetes-compatible HTTP API server.
//!
//! Real `kubectl` and kube-rs clients talk to it unchanged over loopback HTTP:
//! legacy discovery (`/api`, `/apis`, `/apis/{g}/{v}`; the aggregated format is
//! declined by answering plain JSON), get/list/watch with selectors and paging,
//! create/update/delete, merge/JSON/strategic/apply patches, the `status`
//! subresource, `dryRun=All`, `Status` error bodies, request counters and fault
//! injection (`/_sim/faults`, see [`faults`]).
//!
//! `/openapi/v3` serves a document per group-version ([`openapi`]: Kueue's CRD
//! schemas, `kubectl explain`, server-side `fieldValidation=Strict`); `/openapi/v2` an
//! empty document for older clients. Tables (`as=Table`) are printed server-side
//! ([`table`]); otherwise responses are `application/json` whatever `Accept` asks for
//! (protobuf falls back to JSON). CRDs are served read-only ([`crds`]).
//!
//! # Simplifications
//!
//! * Deletion is immediate (no finalizers, no graceful deletion); deleting a
//!   namespace deletes its contents at once.
//! * managedFields are not tracked: server-side apply strategically merges the
//!   applied object over the live one, never reports conflicts, and does not
//!   remove fields an applier stopped sending. `force` is accepted and ignored.
//! * Strategic merge patch uses a fixed table of merge keys by field name (see
//!   [`crate::sim::patch`]); it is refused (415) for CRD kinds, as upstream.
//! * Field selectors work on any dotted path; list `resourceVersion` /
//!   `resourceVersionMatch` are ignored (a list starts at the current state). Paged
//!   lists are consistent: all pages show the collection at the first page's
//!   resourceVersion ([`paging`]); a continue token unused for 5 minutes gets 410.
//! * PUT without `metadata.resourceVersion` is an unconditional update; status
//!   sent on create is kept (handy for seeding Nodes); validation is limited to
//!   type meta, names, labels, a few Workload field types, pod counts (the caps of
//!   [`crate::sim::cluster::SimLimits`]) and, with `fieldValidation=Strict`, unknown
//!   fields of CRD kinds (no defaulting, no other schema checks).
//! * A watch from a resourceVersion newer than the store's starts there instead
//!   of waiting. Bookmarks come every [`ServerOptions::bookmark_interval`].
//! * No authentication or RBAC; 403s come only from fault rules, and access reviews
//!   (`kubectl auth can-i`, gangplank's permission checks) answer from the same rules
//!   ([`reviews`]); `SelfSubjectReview` reports the impersonated user, else
//!   `gangplank-sim-admin`.

pub mod crds;
pub mod discovery;
pub mod errors;
pub mod faults;
pub mod kubeconfig;
mod list_watch;
pub mod openapi;
pub mod paging;
pub mod reviews;
mod routes;
pub mod selectors;
pub mod stats;
pub mod table;
mod write;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use faults::{FaultConfig, FaultRule, Faults, MalformedInjection};
pub use kubeconfig::{kubeconfig_yaml, write_kubeconfig};
pub use stats::RequestStats;
pub use write::decode_body;

use super::clock::SimClock;
use super::cluster::SimLimits;
use super::store::ObjectStore;

/// Server settings.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// Address to bind; default `127.0.0.1:0` (any free port).
    pub addr: SocketAddr,
    /// How often watches with `allowWatchBookmarks=true` get a BOOKMARK.
    pub bookmark_interval: Duration,
    /// Watch duration when the client sends no `timeoutSeconds`.
    pub default_watch_timeout: Duration,
    /// Initial fault configuration.
    pub faults: FaultConfig,
    /// Pod caps: over-cap objects are refused with 422, pods beyond the total with 403.
    pub limits: SimLimits,
    /// The clock ages in tables are computed with (the wall clock when `None`).
    pub clock: Option<SimClock>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            bookmark_interval: Duration::from_secs(5),
            default_watch_timeout: Duration::from_secs(1800),
            faults: FaultConfig::default(),
            limits: SimLimits::default(),
            clock: None,
        }
    }
}

impl ServerOptions {
    /// "Now" for ages, ms since the epoch.
    pub(crate) fn now_ms(&self) -> i64 {
        match &self.clock {
            Some(c) => c.now_ms(),
            None => jiff::Timestamp::now().as_millisecond(),
        }
    }
}

/// State shared by all request handlers.
pub(crate) struct Shared {
    pub(crate) store: ObjectStore,
    pub(crate) stats: RequestStats,
    pub(crate) faults: Faults,
    pub(crate) opts: ServerOptions,
    pub(crate) shutdown: CancellationToken,
    /// Bumped to end every open watch stream.
    pub(crate) close_watches: watch::Sender<u64>,
    pub(crate) addr: SocketAddr,
    /// Snapshots behind the continue tokens of paged lists.
    pub(crate) lists: paging::ListSnapshots,
}

/// A running server.
pub struct ServerHandle {
    addr: SocketAddr,
    shared: Arc<Shared>,
    join: Option<JoinHandle<std::io::Result<()>>>,
}

impl Drop for ServerHandle {
    /// Dropping the handle stops the server (without waiting for it).
    fn drop(&mut self) {
        self.shared.shutdown.cancel();
    }
}

impl ServerHandle {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The store behind the server.
    pub fn store(&self) -> &ObjectStore {
        &self.shared.store
    }

    /// Request counters.
    pub fn stats(&self) -> &RequestStats {
        &self.shared.stats
    }

    /// Fault configuration (changes apply to the next request).
    pub fn faults(&self) -> &Faults {
        &self.shared.faults
    }

    /// Forgets every paged list in progress: their next page gets 410 `Expired`.
    pub fn expire_list_tokens(&self) {
        self.shared.lists.expire_all();
    }

    /// Ends every open watch stream now (clients see a clean end and re-watch).
    pub fn close_watches(&self) {
        self.shared.close_watches.send_modify(|g| *g += 1);
    }

    /// Writes a kubeconfig for this server (context `gangplank-sim`).
    pub fn write_kubeconfig(&self, path: &Path) -> std::io::Result<()> {
        write_kubeconfig(path, self.addr)
    }

    /// Stops accepting requests, ends watches and waits for the server task.
    pub async fn shutdown(mut self) -> std::io::Result<()> {
        self.shared.shutdown.cancel();
        match self.join.take() {
            Some(join) => join.await.unwrap_or_else(|e| Err(std::io::Error::other(e))),
            None => Ok(()),
        }
    }
}

/// Binds `options.addr` and serves `store` until [`ServerHandle::shutdown`].
pub async fn serve(store: ObjectStore, options: ServerOptions) -> std::io::Result<ServerHandle> {
    let listener = tokio::net::TcpListener::bind(options.addr).await?;
    let addr = listener.local_addr()?;
    let faults = Faults::default();
    faults.set(options.faults.clone());
    let (close_watches, _) = watch::channel(0);
    let shared = Arc::new(Shared {
        store,
        stats: RequestStats::default(),
        faults,
        opts: options,
        shutdown: CancellationToken::new(),
        close_watches,
        addr,
        lists: paging::ListSnapshots::default(),
    });
    let app = Router::new()
        .fallback(routes::dispatch)
        // Above the real API server's 3 MiB request limit, so nothing it accepts is refused here.
        .layer(DefaultBodyLimit::max(8 * 1024 * 1024))
        .with_state(shared.clone());
    let token = shared.shutdown.clone();
    let join = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(token.cancelled_owned())
            .await
    });
    Ok(ServerHandle {
        addr,
        shared,
        join: Some(join),
    })
}
