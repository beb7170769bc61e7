//! Per-resource sync status: what the console's status bar shows for each watch.
//!
//! kube's reflector has no "currently syncing" flag (reliability.md §1), so the store
//! derives it from the watcher's event and error stream with [`ResourceSync::on`].

use std::fmt;

use jiff::Timestamp;
use serde::Serialize;

use super::resources::ResourceKind;

/// Where one resource's watch stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum SyncState {
    /// Not started yet (or waiting for Kueue discovery).
    Waiting,
    /// First list in progress; `listed` objects received so far.
    Syncing { listed: usize },
    /// Listed and watching.
    Synced,
    /// Relisting after a 410, a restart or a reconnect; the previous objects stay
    /// visible until the new list completes.
    Resyncing {
        #[serde(serialize_with = "ser_ts")]
        since: Timestamp,
        listed: usize,
    },
    /// RBAC forbids listing or watching it; everything else keeps working.
    Forbidden { message: String },
    /// The server does not serve this resource (CRD not installed).
    NotServed { message: String },
    /// The last attempt failed; retrying with backoff. Data, if any, is from before.
    Error {
        message: String,
        #[serde(serialize_with = "ser_ts")]
        since: Timestamp,
    },
}

impl SyncState {
    /// The failure message of an [`SyncState::Error`].
    pub fn error(&self) -> Option<&str> {
        match self {
            SyncState::Error { message, .. } => Some(message),
            _ => None,
        }
    }
}

/// RFC 3339 (jiff's serde feature is not enabled).
fn ser_ts<S: serde::Serializer>(t: &Timestamp, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(t)
}

fn ser_opt_ts<S: serde::Serializer>(t: &Option<Timestamp>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => s.collect_str(t),
        None => s.serialize_none(),
    }
}

/// What happened to a watch, as far as its status is concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SyncEvent {
    /// A (re)list started.
    ListStarted,
    /// One object of the list arrived.
    Listed,
    /// The list completed; the view was swapped.
    ListDone,
    /// A watch event arrived.
    Event,
    Forbidden(String),
    NotServed(String),
    Failed(String),
}

/// The status of one watched resource.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSync {
    pub resource: String,
    #[serde(flatten)]
    pub state: SyncState,
    /// A list completed at least once (the view holds real data).
    pub ever_synced: bool,
    /// Objects currently in the view.
    pub objects: usize,
    /// When the last event (list item, watch event or error) arrived.
    #[serde(serialize_with = "ser_opt_ts")]
    pub last_event: Option<Timestamp>,
    /// How many times the watch had to start over (relists after the first).
    pub relists: u64,
    /// The last failure's message, kept after recovery ("recovered from …").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// The newest `metadata.resourceVersion` seen on this resource's objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
}

impl ResourceSync {
    /// A resource not yet started.
    pub fn new(kind: ResourceKind) -> Self {
        ResourceSync {
            resource: kind.qualified(),
            state: SyncState::Waiting,
            ever_synced: false,
            objects: 0,
            last_event: None,
            relists: 0,
            last_error: None,
            resource_version: None,
        }
    }

    /// The next state after `event` at `now`.
    pub fn on(&mut self, event: SyncEvent, now: Timestamp) {
        self.last_event = Some(now);
        if let SyncEvent::Failed(m) = &event {
            self.last_error = Some(m.clone());
        }
        self.state = match (event, &self.state) {
            (SyncEvent::ListStarted, _) if self.ever_synced => {
                self.relists += 1;
                SyncState::Resyncing {
                    since: now,
                    listed: 0,
                }
            }
            (SyncEvent::ListStarted, _) => SyncState::Syncing { listed: 0 },
            (SyncEvent::Listed, SyncState::Syncing { listed }) => {
                SyncState::Syncing { listed: listed + 1 }
            }
            (SyncEvent::Listed, SyncState::Resyncing { since, listed }) => SyncState::Resyncing {
                since: *since,
                listed: listed + 1,
            },
            (SyncEvent::Listed, s) => s.clone(),
            (SyncEvent::ListDone, _) => {
                self.ever_synced = true;
                SyncState::Synced
            }
            (SyncEvent::Event, s) => s.clone(),
            (SyncEvent::Forbidden(message), _) => SyncState::Forbidden { message },
            (SyncEvent::NotServed(message), _) => SyncState::NotServed { message },
            // Keep the first failure time across retries: "failing since T".
            (SyncEvent::Failed(message), SyncState::Error { since, .. }) => SyncState::Error {
                message,
                since: *since,
            },
            (SyncEvent::Failed(message), _) => SyncState::Error {
                message,
                since: now,
            },
        };
    }

    /// Synced, or in a state that waiting will not change (forbidden, not served):
    /// what `plan --live` waits for before planning.
    pub fn settled(&self) -> bool {
        matches!(
            self.state,
            SyncState::Synced | SyncState::Forbidden { .. } | SyncState::NotServed { .. }
        )
    }

    /// Neither forbidden nor failing: the data of this resource can be trusted as
    /// complete (not served counts: there is nothing to miss).
    pub fn healthy(&self) -> bool {
        !matches!(
            self.state,
            SyncState::Forbidden { .. } | SyncState::Error { .. }
        )
    }

    /// Records the resourceVersion of an object just received.
    pub fn saw_version(&mut self, rv: Option<&str>) {
        if let Some(rv) = rv.filter(|v| !v.is_empty()) {
            self.resource_version = Some(rv.to_string());
        }
    }

    /// Seconds since the last event, for the status bar.
    pub fn last_event_age(&self, now: Timestamp) -> Option<f64> {
        self.last_event
            .map(|t| (now.as_millisecond() - t.as_millisecond()).max(0) as f64 / 1000.0)
    }
}

impl fmt::Display for ResourceSync {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.resource)?;
        match &self.state {
            SyncState::Waiting => write!(f, "waiting"),
            SyncState::Syncing { listed } => write!(f, "syncing ({listed} listed)"),
            SyncState::Synced => write!(f, "synced ({} objects)", self.objects),
            SyncState::Resyncing { since, listed } => {
                write!(
                    f,
                    "resyncing since {since} ({listed} listed, old view kept)"
                )
            }
            SyncState::Forbidden { message } => write!(f, "forbidden: {message}"),
            SyncState::NotServed { message } => write!(f, "not served: {message}"),
            SyncState::Error { message, since } => write!(f, "error since {since}: {message}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relist_is_resyncing_and_error_keeps_first_time() {
        let t0 = Timestamp::from_second(100).expect("ts");
        let t1 = Timestamp::from_second(200).expect("ts");
        let mut s = ResourceSync::new(ResourceKind::Node);
        s.on(SyncEvent::ListStarted, t0);
        s.on(SyncEvent::Listed, t0);
        assert_eq!(s.state, SyncState::Syncing { listed: 1 });
        s.on(SyncEvent::ListDone, t0);
        assert!(s.settled());
        s.on(SyncEvent::Failed("a".into()), t0);
        s.on(SyncEvent::Failed("b".into()), t1);
        assert_eq!(
            s.state,
            SyncState::Error {
                message: "b".into(),
                since: t0
            }
        );
        s.on(SyncEvent::ListStarted, t1);
        assert!(matches!(s.state, SyncState::Resyncing { .. }));
        assert_eq!(s.relists, 1);
        assert_eq!(s.last_error.as_deref(), Some("b"));
    }
}
