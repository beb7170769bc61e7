//! What the console displays: [`ConsoleData`], published by whoever owns the data.
//!
//! Everything here is plain data with no behaviour beyond small helpers, so the live
//! source, the simulator, the SSH server and tests can all build it.
//!
//! # The engine seam
//! [`PlanView`] is the console's own, deliberately small picture of a shadow-engine
//! plan. The console never imports engine types: the lead writes one adapter
//! (`fn plan_view(plan: &engine::Plan) -> PlanView`) that fills
//! * [`PlanView::verdicts`] — one [`Verdict`] per workload key `(namespace, name)`:
//!   a short verdict string ("admit", "preempts 2", "waits: quota"), the queue position,
//!   and the explanation lines shown in the workload detail pane;
//! * [`PlanView::cycles`] — per scheduling cycle, who was admitted (with flavors) and
//!   which preemptions happened (preemptor → victims, reason, GPUs freed);
//! * [`PlanView::proposals`] — actions awaiting an operator's approval.

use std::collections::HashMap;
use std::sync::Arc;

use crate::model::{ClusterState, Timestamp};

/// One published state of the console's inputs. Cheap to clone (`Arc`s).
#[derive(Clone, Debug, Default)]
pub struct ConsoleData {
    /// The cluster snapshot being displayed.
    pub state: Arc<ClusterState>,
    /// The shadow engine's plan for `state`; `None` until the engine has run.
    pub plan: Option<Arc<PlanView>>,
    /// Watch / list progress per resource kind.
    pub sync: SyncStatus,
    /// Kube context (or "simulator", "file: …") shown in the status bar.
    pub context: String,
    /// Live objects that differ from what was declared (rows for the Drift view).
    pub drift: Arc<Vec<DriftRow>>,
    /// The action ledger (rows for the Audit view), newest last.
    pub audit: Arc<Vec<AuditRow>>,
    /// `doctor`-style findings (rows for the Health view).
    pub health: Arc<Vec<HealthRow>>,
    /// What happened (rows for the Events view), newest first.
    pub events: Arc<Vec<EventRow>>,
    /// Bumped by the publisher on every change; the console rebuilds its caches when
    /// it changes (an `Arc::ptr_eq` check on `state`/`plan` is used as well).
    pub generation: u64,
}

/// The console-side view of one engine plan. See the module docs for how to fill it.
#[derive(Clone, Debug, Default)]
pub struct PlanView {
    /// Per-workload verdicts, keyed by `(namespace, name)`.
    pub verdicts: HashMap<(String, String), Verdict>,
    /// Scheduling cycles in order.
    pub cycles: Vec<CycleView>,
    /// Proposed actions awaiting approval.
    pub proposals: Vec<ProposalView>,
    /// When (the snapshot) the plan was computed on: the status bar shows the plan's age
    /// while it lags behind the last event ("re-planning (plan is 3s old)").
    pub computed_at: Option<Timestamp>,
    /// How long the engine took, in milliseconds.
    pub duration_ms: Option<u64>,
    /// The head of each ClusterQueue still pending after the last cycle: why it waits.
    pub pending: Vec<PendingHeadView>,
}

/// A ClusterQueue's first pending workload after the plan's last cycle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PendingHeadView {
    /// `namespace/name` of the Workload.
    pub workload: String,
    pub cluster_queue: String,
    /// The engine's reason, in words.
    pub reason: String,
    /// The total shortfall: `8 nvidia.com/gpu in p4d-flavor` (per resource and flavor),
    /// empty when quota is not what it waits for.
    pub shortfall: String,
    /// What could free the room: the victims it waits for, or lower-priority workloads
    /// running in its ClusterQueue; empty when nothing could.
    pub could_free: String,
}

/// The engine's verdict on one workload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Short text for the table column, e.g. "admit", "preempts 2", "waits: quota".
    pub verdict: String,
    /// 1-based position in its ClusterQueue's pending order, if pending.
    pub position: Option<u32>,
    /// Why, one line each, shown in the detail pane.
    pub explanation: Vec<String>,
}

/// One scheduling cycle of the plan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CycleView {
    pub index: u32,
    pub admitted: Vec<AdmissionView>,
    pub preempted: Vec<PreemptionView>,
}

/// A workload admitted in a cycle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AdmissionView {
    /// "namespace/name".
    pub workload: String,
    pub cluster_queue: String,
    /// e.g. "nvidia.com/gpu: p4d-flavor".
    pub flavors: String,
}

/// One preemption decision: a preemptor and the victims it evicts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreemptionView {
    pub preemptor: String,
    pub victims: Vec<String>,
    /// Kueue's reason vocabulary: InClusterQueue, InCohortReclamation, …
    pub reason: String,
    pub gpus_freed: i64,
}

/// An action awaiting approval.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProposalView {
    pub id: String,
    /// What would be done, e.g. "evict", "reprioritize".
    pub action: String,
    /// The object it acts on.
    pub target: String,
    pub summary: String,
}

/// Sync progress of every watched resource kind, plus the age of the last event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyncStatus {
    pub resources: Vec<ResourceSync>,
    /// When the last watch event arrived.
    pub last_event: Option<Timestamp>,
}

/// Sync state of one kind, named by its short name (wl, cq, lq, rf, nodes, pods).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceSync {
    pub kind: String,
    pub state: SyncState,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SyncState {
    Synced,
    /// Initial list in progress: `done` objects of `total` (if known).
    Syncing {
        done: u64,
        total: Option<u64>,
    },
    /// The watch broke and is relisting since the given time.
    Resyncing {
        since: Timestamp,
    },
    /// RBAC forbids watching this kind.
    Forbidden,
    Error(String),
}

/// One drifted object.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DriftRow {
    /// "kind/namespace/name".
    pub object: String,
    pub field: String,
    pub expected: String,
    pub actual: String,
}

/// One ledger entry (the action task's vocabulary).
pub use crate::actions::protocol::AuditRow;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    #[default]
    Info,
    Warning,
    Error,
}

impl Severity {
    /// A fixed-width word so severity never relies on colour.
    pub fn label(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "WARN",
            Severity::Error => "ERROR",
        }
    }
}

/// What kind of thing happened, as the Events view names it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventKind {
    #[default]
    Admitted,
    Preempted,
    Evicted,
    Requeued,
    Finished,
    Held,
    Resumed,
    PriorityChanged,
    /// An operator's action through gangplank (from the audit ledger).
    Operator,
}

impl EventKind {
    pub fn label(self) -> &'static str {
        match self {
            EventKind::Admitted => "Admitted",
            EventKind::Preempted => "Preempted",
            EventKind::Evicted => "Evicted",
            EventKind::Requeued => "Requeued",
            EventKind::Finished => "Finished",
            EventKind::Held => "Held",
            EventKind::Resumed => "Resumed",
            EventKind::PriorityChanged => "Priority",
            EventKind::Operator => "Operator",
        }
    }
}

/// One line of the Events view.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventRow {
    /// Milliseconds since the epoch; 0 when unknown (shown as `—`).
    pub time: Timestamp,
    pub kind: EventKind,
    /// `namespace/name` of the Workload it happened to (the victim of a preemption),
    /// or the operator action's target.
    pub object: String,
    /// The same, as shown: `namespace/job-name` when the Workload is known.
    pub object_name: String,
    /// The preemptor (preemptions, shown by name) or the operator (actions).
    pub by: Option<String>,
    /// Kueue's reason (`InClusterQueue`, `Deactivated`, …) or the change.
    pub reason: String,
    /// GPUs freed (preemptions and evictions).
    pub gpus: i64,
    /// One sentence for the list: `nlp-team/boss preempted cv-team/yolo (InClusterQueue, 8 GPUs freed)`.
    pub text: String,
    /// Kueue's message or the operator action's outcome.
    pub message: String,
}

/// One health finding.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HealthRow {
    pub severity: Severity,
    pub check: String,
    pub objects: Vec<String>,
    pub message: String,
    /// How to fix it (a YAML snippet or a kubectl command), shown in the detail pane.
    pub fix: String,
}

impl ConsoleData {
    /// A console input over a cluster state with nothing else known yet.
    pub fn from_state(state: Arc<ClusterState>, context: impl Into<String>) -> Self {
        ConsoleData {
            state,
            context: context.into(),
            ..ConsoleData::default()
        }
    }
}
