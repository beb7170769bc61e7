//! The immutable snapshot the store publishes: the compact model plus sync status.

use std::fmt::Write as _;
use std::sync::Arc;

use jiff::Timestamp;
use serde::Serialize;

use super::history::EvictionRecord;
use super::objects::Skipped;
use super::sync::{ResourceSync, SyncState};
use crate::model::ClusterState;

/// Whether Kueue is there, and which API version is watched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum KueueStatus {
    /// Discovery has not answered yet.
    Unknown,
    Installed {
        version: String,
    },
    /// One clear message for the user; nodes and pods are still watched.
    NotInstalled {
        message: String,
    },
}

/// The message shown when Kueue is missing.
pub const KUEUE_NOT_INSTALLED: &str = "Kueue is not installed on this cluster: the API group \
     kueue.x-k8s.io (v1beta2 or v1beta1) is not served. Install Kueue, or point \
     --kubeconfig/--context at a cluster that runs it";

/// Counters for the cost of ingesting events and assembling snapshots.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IngestStats {
    /// Watch messages applied (list items, events, errors).
    pub events: u64,
    /// Snapshots published.
    pub snapshots: u64,
    /// Time spent assembling the last snapshot, in microseconds.
    pub last_assembly_us: u64,
    /// Time spent applying events since start, in microseconds.
    pub apply_us: u64,
}

/// One published view of the cluster. Readers hold an `Arc` and never lock.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// Increases by one with every published snapshot.
    pub generation: u64,
    pub taken_at: Timestamp,
    /// The compact model: what the engine and doctor read. Not filtered by namespace.
    /// Shared: publishing a snapshot or handing its state on copies no object.
    pub state: Arc<ClusterState>,
    /// Per-resource sync status, in display order.
    pub sync: Vec<ResourceSync>,
    pub kueue: KueueStatus,
    /// Objects currently skipped because they could not be read (bounded list).
    pub skipped: Vec<Skipped>,
    /// `-n NAMESPACE`: a view filter for readers (the state holds every namespace,
    /// because quota usage and preemption span namespaces).
    pub namespace: Option<String>,
    pub stats: IngestStats,
    /// Evictions seen since the source started, newest last (bounded).
    pub evictions: Vec<EvictionRecord>,
    /// Recent timeline events (admissions, requeues, holds, priority changes…).
    pub events: Vec<super::history::TimelineRecord>,
}

impl Snapshot {
    /// An empty snapshot (before anything is known).
    pub fn empty(namespace: Option<String>) -> Self {
        Snapshot {
            generation: 0,
            taken_at: Timestamp::UNIX_EPOCH,
            state: Arc::new(ClusterState::default()),
            sync: Vec::new(),
            kueue: KueueStatus::Unknown,
            skipped: Vec::new(),
            namespace,
            stats: IngestStats::default(),
            evictions: Vec::new(),
            events: Vec::new(),
        }
    }

    /// Every resource is synced, forbidden or not served.
    pub fn all_settled(&self) -> bool {
        !self.sync.is_empty() && self.sync.iter().all(ResourceSync::settled)
    }

    /// Every resource has been listed at least once (or cannot be): the view is
    /// complete, possibly slightly stale while a relist runs.
    pub fn ready(&self) -> bool {
        !self.sync.is_empty()
            && self.sync.iter().all(|s| {
                s.ever_synced
                    || matches!(
                        s.state,
                        SyncState::Forbidden { .. } | SyncState::NotServed { .. }
                    )
            })
    }

    /// Resources that are not settled, for error messages.
    pub fn unsettled(&self) -> Vec<&ResourceSync> {
        self.sync.iter().filter(|s| !s.settled()).collect()
    }

    /// (synced, total) resources.
    pub fn synced_count(&self) -> (usize, usize) {
        let synced = self
            .sync
            .iter()
            .filter(|s| s.state == SyncState::Synced)
            .count();
        (synced, self.sync.len())
    }

    /// One line for a status bar: "synced 12/12", "syncing 9 of 12", plus the
    /// resources needing attention.
    pub fn status_line(&self) -> String {
        let (synced, total) = self.synced_count();
        let mut line = if synced == total {
            format!("synced {synced}/{total}")
        } else {
            format!("syncing {synced} of {total}")
        };
        if let KueueStatus::NotInstalled { .. } = self.kueue {
            line.push_str(" | Kueue not installed");
        }
        for s in &self.sync {
            let tag = match &s.state {
                SyncState::Forbidden { .. } => "forbidden",
                SyncState::Resyncing { .. } => "resyncing",
                SyncState::Error { .. } => "error",
                _ => continue,
            };
            let _ = write!(line, " | {} {tag}", s.resource);
        }
        if !self.skipped.is_empty() {
            let _ = write!(line, " | {} skipped", self.skipped.len());
        }
        line
    }
}
