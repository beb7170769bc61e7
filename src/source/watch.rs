//! One task per watched resource: kube's watcher → parsed model objects → the store.
//!
//! Recovery rules (docs/source.md "Resilience"):
//! * list errors (403, 404, 5xx, connection refused) are retried by kube's default
//!   backoff; the status says forbidden / not served / error meanwhile;
//! * an in-stream 410 makes kube relist on its own (`Init` … `InitDone`);
//! * a failed watch start (an HTTP-level 410, or the server went away) or a broken
//!   stream restarts the watcher from scratch after our own backoff: kube would retry
//!   the same resourceVersion forever (reliability.md §1) and, when the retry finally
//!   succeeds, says nothing, so the status could never leave "error". A fresh watcher
//!   relists, which makes the recovery visible (resyncing → synced) and consistent;
//! * a silent watch (the server neither sends nor closes past `timeoutSeconds`) hits
//!   the client's read timeout (`timeoutSeconds` + 3 s, before kube's own silent
//!   reconnect at + 5 s): reported, and the watcher restarts; a list that stalls (no
//!   page for `list_stall`) restarts the watcher.

use std::time::Duration;

use futures::{FutureExt, StreamExt};
use kube::Api;
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt, watcher as watcher_fn};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::objects::{self, ObjKey, Parsed, Skipped};
use super::resources::{RawObject, ResourceKind};

/// What a watch task tells the store.
#[derive(Debug)]
pub enum WatchMsg {
    /// A (re)list started: buffer what follows until `ListDone`.
    ListStarted,
    InitApply(Parsed),
    /// The list completed: swap the buffer in.
    ListDone,
    Apply(Parsed),
    Delete(ObjKey),
    /// An object that could not be read, named.
    Skipped(Skipped),
    Forbidden(String),
    NotServed(String),
    Failed(String),
}

/// One message from the watch of `kind`.
#[derive(Debug)]
pub struct SourceEvent {
    pub kind: ResourceKind,
    pub msg: WatchMsg,
}

/// Everything one watch task needs.
#[derive(Clone)]
pub struct WatchSpec {
    pub kind: ResourceKind,
    pub api: Api<RawObject>,
    /// `group/version` the objects are served as (filled in when items omit it).
    pub api_version: String,
    pub config: watcher::Config,
    /// A list with no progress for this long is restarted.
    pub list_stall: Duration,
    /// The API server's address, for "cannot reach …".
    pub server: std::sync::Arc<str>,
}

/// Backoff between watcher restarts: kube's `DefaultBackoff` parameters (800 ms
/// doubling to 30 s) with ±25 % jitter, so that watchers failing together do not
/// retry in lockstep.
pub fn restart_delay(attempt: u32) -> Duration {
    let base = 800u64.saturating_mul(1u64 << attempt.min(6)).min(30_000);
    let jitter = rand::random_range(0..=base / 2);
    Duration::from_millis(base - base / 4 + jitter)
}

/// Why the inner loop ended.
enum End {
    Cancelled,
    Restart,
}

/// Runs the watch of `spec.kind` until `cancel` fires or the store goes away.
pub async fn run(spec: WatchSpec, tx: mpsc::Sender<Vec<SourceEvent>>, cancel: CancellationToken) {
    let mut attempt = 0u32;
    loop {
        match run_once(&spec, &tx, &cancel, &mut attempt).await {
            End::Cancelled => return,
            End::Restart => {
                let delay = restart_delay(attempt);
                attempt = attempt.saturating_add(1);
                tracing::debug!(resource = %spec.kind, ?delay, "restarting watcher");
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    _ = tokio::time::sleep(delay) => {}
                }
            }
        }
    }
}

/// At most this many messages go to the store in one channel send.
const MAX_BATCH: usize = 256;

/// What one item of kube's stream means for the task.
struct Step {
    msg: Option<WatchMsg>,
    restart: bool,
}

type Item = Option<Result<Event<RawObject>, watcher::Error>>;

/// Turns one item of kube's watcher stream into a message for the store.
fn step(spec: &WatchSpec, item: Item, listing: &mut bool, attempt: &mut u32) -> Step {
    let msg = match item {
        // The default backoff never ends the stream; treat an end as a restart.
        None => {
            return Step {
                msg: None,
                restart: true,
            };
        }
        Some(Ok(event)) => match event {
            Event::Init => {
                *listing = true;
                WatchMsg::ListStarted
            }
            Event::InitApply(o) => match objects::parse(spec.kind, &spec.api_version, o) {
                Ok(p) => WatchMsg::InitApply(p),
                Err(s) => WatchMsg::Skipped(s),
            },
            Event::InitDone => {
                *listing = false;
                *attempt = 0;
                WatchMsg::ListDone
            }
            Event::Apply(o) => match objects::parse(spec.kind, &spec.api_version, o) {
                Ok(p) => WatchMsg::Apply(p),
                Err(s) => WatchMsg::Skipped(s),
            },
            Event::Delete(o) => WatchMsg::Delete(objects::key_of(&o)),
        },
        Some(Err(err)) => {
            let (msg, restart) = classify(spec.kind, &err, &spec.server);
            return Step {
                msg: Some(msg),
                restart,
            };
        }
    };
    Step {
        msg: Some(msg),
        restart: false,
    }
}

async fn run_once(
    spec: &WatchSpec,
    tx: &mpsc::Sender<Vec<SourceEvent>>,
    cancel: &CancellationToken,
    attempt: &mut u32,
) -> End {
    let stream = watcher_fn(spec.api.clone(), spec.config.clone()).default_backoff();
    futures::pin_mut!(stream);
    let mut listing = false;
    loop {
        let next = async {
            if listing {
                tokio::time::timeout(spec.list_stall, stream.next()).await
            } else {
                Ok(stream.next().await)
            }
        };
        let item = tokio::select! {
            _ = cancel.cancelled() => return End::Cancelled,
            item = next => item,
        };
        let mut batch = Vec::new();
        let mut restart;
        match item {
            Err(_) => {
                let m = format!(
                    "list stalled: nothing received for {}s; restarting",
                    spec.list_stall.as_secs()
                );
                batch.push(WatchMsg::Failed(m));
                restart = true;
            }
            Ok(item) => {
                let s = step(spec, item, &mut listing, attempt);
                batch.extend(s.msg);
                restart = s.restart;
            }
        }
        // Take what kube already has ready, so a burst costs one channel send (and one
        // wake-up of the store task) per batch instead of per event.
        while !restart && batch.len() < MAX_BATCH {
            let Some(item) = stream.next().now_or_never() else {
                break;
            };
            let s = step(spec, item, &mut listing, attempt);
            batch.extend(s.msg);
            restart = s.restart;
        }
        if !batch.is_empty() {
            let kind = spec.kind;
            let batch = batch
                .into_iter()
                .map(|msg| SourceEvent { kind, msg })
                .collect();
            if tx.send(batch).await.is_err() {
                return End::Cancelled;
            }
        }
        if restart {
            return End::Restart;
        }
    }
}

/// The status message for a watcher error, and whether to restart the watcher.
fn classify(kind: ResourceKind, err: &watcher::Error, server: &str) -> (WatchMsg, bool) {
    use kube::Error as KE;
    if let watcher::Error::InitialListFailed(e)
    | watcher::Error::WatchStartFailed(e)
    | watcher::Error::WatchFailed(e) = err
        && let Some(cause) = unreachable_cause(e)
    {
        return (WatchMsg::Failed(unreachable_text(server, &cause)), true);
    }
    let api_code = |e: &KE| match e {
        KE::Api(s) => Some(s.code),
        _ => None,
    };
    match err {
        watcher::Error::InitialListFailed(e) => match api_code(e) {
            Some(403) => (WatchMsg::Forbidden(forbidden_text(kind, "list", e)), false),
            Some(404) => (WatchMsg::NotServed(not_served_text(kind)), false),
            // An expired continue token: kube would retry the same token forever.
            Some(410) => (
                WatchMsg::Failed("list expired (HTTP 410); relisting".into()),
                true,
            ),
            _ => (
                WatchMsg::Failed(format!("list failed: {}", short(e))),
                false,
            ),
        },
        watcher::Error::WatchStartFailed(e) => match api_code(e) {
            Some(403) => (WatchMsg::Forbidden(forbidden_text(kind, "watch", e)), true),
            Some(410) => (
                WatchMsg::Failed("watch expired (HTTP 410); relisting".into()),
                true,
            ),
            _ => (
                WatchMsg::Failed(format!("watch failed: {}; reconnecting", short(e))),
                true,
            ),
        },
        // An undecodable line (not an object: those always decode as RawObject).
        watcher::Error::WatchFailed(KE::SerdeError(e)) => (
            WatchMsg::Skipped(Skipped {
                object: format!("{} watch event", kind.kind()),
                error: format!("undecodable: {e}"),
            }),
            false,
        ),
        watcher::Error::WatchFailed(e) if timed_out(e) => (
            WatchMsg::Failed(
                "watch went silent (no event, bookmark or close past its timeout); reconnecting"
                    .into(),
            ),
            true,
        ),
        watcher::Error::WatchFailed(e) => (
            WatchMsg::Failed(format!("watch stream broke: {}; reconnecting", short(e))),
            true,
        ),
        watcher::Error::WatchError(s) => (
            WatchMsg::Failed(format!(
                "watch error {} {}: {}; relisting",
                s.code, s.reason, s.message
            )),
            true,
        ),
        watcher::Error::NoResourceVersion => (
            WatchMsg::Failed("server sent no resourceVersion; relisting".into()),
            false,
        ),
    }
}

fn forbidden_text(kind: ResourceKind, verb: &str, e: &kube::Error) -> String {
    format!(
        "cannot {verb} {} ({}): {}",
        kind.qualified(),
        if kind.namespaced() {
            "all namespaces"
        } else {
            "cluster scope"
        },
        short(e)
    )
}

/// The text shown when a resource is not served.
pub fn not_served_text(kind: ResourceKind) -> String {
    if kind.is_kueue() {
        format!("{} is not served: is Kueue installed?", kind.qualified())
    } else {
        format!("{} is not served by this cluster", kind.qualified())
    }
}

/// Whether an error comes from the client's read timeout (a silent connection).
fn timed_out(e: &kube::Error) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if err
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
        {
            return true;
        }
        cur = err.source();
    }
    e.to_string().contains("timed out")
}

/// Prefix of the status text when no connection could be made.
const CANNOT_REACH: &str = "cannot reach ";

fn unreachable_text(server: &str, cause: &str) -> String {
    format!("{CANNOT_REACH}{server} ({cause}); retrying")
}

/// The cause in a status text written for an unreachable server, if it is one.
pub fn unreachable_cause_of(status: &str) -> Option<&str> {
    let rest = status.strip_prefix(CANNOT_REACH)?;
    let open = rest.find(" (")?;
    let close = rest.rfind("); retrying")?;
    (open + 2 <= close).then(|| &rest[open + 2..close])
}

/// Why no connection to the server could be made (refused, unreachable, name not
/// resolved, connect timeout), in a few words; `None` for any other error (the server
/// answered, or the connection broke after it was made).
pub fn unreachable_cause(e: &kube::Error) -> Option<String> {
    use std::io::ErrorKind as K;
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    let mut connecting = false;
    while let Some(err) = cur {
        let text = err.to_string();
        // hyper-util says "client error (Connect)" for failures before a connection.
        connecting |= text.contains("(Connect)") || text.contains("tcp connect error");
        if text.contains("dns error") || text.contains("failed to lookup address") {
            return Some("name not resolved".into());
        }
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            let word = match io.kind() {
                K::ConnectionRefused => Some("connection refused"),
                K::HostUnreachable => Some("host unreachable"),
                K::NetworkUnreachable => Some("network unreachable"),
                K::AddrNotAvailable => Some("address not available"),
                K::TimedOut if connecting => Some("connect timed out"),
                _ => None,
            };
            if let Some(w) = word {
                return Some(w.into());
            }
        }
        cur = err.source();
    }
    connecting.then(|| "no connection".into())
}

/// An API error's message without kube's debug dump.
fn short(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) if !s.message.is_empty() => format!("{} ({})", s.message, s.code),
        other => other.to_string(),
    }
}
