//! The console's feed: live snapshots and plans in, [`ConsoleData`] out.
//!
//! One task joins the source's snapshot channel and the re-planner's plan channel,
//! adapts them to the console's own types (plan → verdicts, doctor → Health rows,
//! sync states → status bar) off the async workers, and publishes the result. The
//! console only ever reads the published value: nothing renders from the network.

use std::sync::Arc;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::actions::ApprovalPolicy;
use crate::doctor::{self, DoctorOptions};
use crate::model::ClusterState;
use crate::source::{self, LivePlan, Snapshot};
use crate::tui::adapt::{event_rows, health_rows, plan_view, proposal_views};
use crate::tui::{ConsoleData, DriftRow, ResourceSync, SyncState, SyncStatus};

/// The short names operators know (k9s / kueuectl) for the status bar.
fn short_name(resource: &str) -> String {
    let short = match resource {
        "workloads" => "wl",
        "clusterqueues" => "cq",
        "localqueues" => "lq",
        "resourceflavors" => "rf",
        "cohorts" => "cohort",
        "workloadpriorityclasses" => "wpc",
        "priorityclasses" => "pc",
        "namespaces" => "ns",
        "pytorchjobs" => "ptj",
        other => other,
    };
    short.to_string()
}

/// The source's per-resource sync states as the console's status bar shows them.
pub fn sync_status(snap: &Snapshot) -> SyncStatus {
    let resources = snap
        .sync
        .iter()
        .map(|r| ResourceSync {
            kind: short_name(&r.resource),
            state: match &r.state {
                source::SyncState::Waiting => SyncState::Syncing {
                    done: 0,
                    total: None,
                },
                source::SyncState::Syncing { listed } => SyncState::Syncing {
                    done: *listed as u64,
                    total: None,
                },
                source::SyncState::Synced => SyncState::Synced,
                source::SyncState::Resyncing { since, .. } => SyncState::Resyncing {
                    since: since.as_millisecond(),
                },
                source::SyncState::Forbidden { .. } => SyncState::Forbidden,
                source::SyncState::NotServed { message } => {
                    SyncState::Error(format!("not served: {message}"))
                }
                source::SyncState::Error { message, .. } => SyncState::Error(message.clone()),
            },
        })
        .collect();
    let last_event = snap
        .sync
        .iter()
        .filter_map(|r| r.last_event.map(|t| t.as_millisecond()))
        .max();
    SyncStatus {
        resources,
        last_event,
    }
}

/// What the feed adds besides the cluster: the policy preemption proposals are made
/// under. (Audit rows reach the console from its action task, as
/// [`crate::actions::ActionEvent::Audited`].)
#[derive(Clone, Debug, Default)]
pub struct FeedExtras {
    pub policy: ApprovalPolicy,
}

/// Builds one [`ConsoleData`] from the latest snapshot and plan.
pub fn console_data(
    snap: &Snapshot,
    plan: Option<&LivePlan>,
    context: &str,
    generation: u64,
) -> ConsoleData {
    console_data_with(snap, plan, context, generation, &FeedExtras::default())
}

/// [`console_data`] with proposals under `extras.policy`.
pub fn console_data_with(
    snap: &Snapshot,
    plan: Option<&LivePlan>,
    context: &str,
    generation: u64,
    extras: &FeedExtras,
) -> ConsoleData {
    // Shared with the snapshot: no copy of the model per published snapshot.
    let state: Arc<ClusterState> = snap.state.clone();
    let report = doctor::run(&state, &DoctorOptions::at(snap.taken_at.as_millisecond()));
    let plan_view = plan.map(|p| {
        let mut view = plan_view(&p.plan, &state);
        view.computed_at = Some(snap.taken_at.as_millisecond());
        view.duration_ms = Some(p.plan_time.as_millis() as u64);
        view.proposals = proposal_views(&state, &extras.policy);
        Arc::new(view)
    });
    let drift = plan
        .map(|p| {
            p.drift
                .iter()
                .map(|d| DriftRow {
                    object: d.subject.clone(),
                    field: format!("{:?}", d.kind),
                    expected: d.engine.to_string(),
                    actual: format!("{} ({})", d.kueue, d.detail),
                })
                .collect()
        })
        .unwrap_or_default();
    // Operator actions join the timeline in the console, which gets them from its
    // action task (`App::add_audit_rows`).
    let events = event_rows(&state, &snap.evictions, &snap.events, &[]);
    ConsoleData {
        state,
        plan: plan_view,
        sync: sync_status(snap),
        context: context.to_string(),
        drift: Arc::new(drift),
        events: Arc::new(events),
        audit: Arc::default(),
        health: Arc::new(health_rows(&report)),
        generation,
    }
}

/// Spawns the feed task; the receiver always holds the newest console input.
#[allow(dead_code)] // The console uses `spawn_with`; kept for feeds without actions.
pub fn spawn(
    snapshots: watch::Receiver<Arc<Snapshot>>,
    plans: watch::Receiver<Option<Arc<LivePlan>>>,
    context: String,
) -> (watch::Receiver<ConsoleData>, JoinHandle<()>) {
    spawn_with(snapshots, plans, context, FeedExtras::default())
}

/// [`spawn`] with extras.
pub fn spawn_with(
    mut snapshots: watch::Receiver<Arc<Snapshot>>,
    mut plans: watch::Receiver<Option<Arc<LivePlan>>>,
    context: String,
    extras: FeedExtras,
) -> (watch::Receiver<ConsoleData>, JoinHandle<()>) {
    let first = console_data_with(&snapshots.borrow(), None, &context, 0, &extras);
    let (tx, rx) = watch::channel(first);
    let task = tokio::spawn(async move {
        let mut generation = 0u64;
        loop {
            tokio::select! {
                changed = snapshots.changed() => if changed.is_err() { return },
                changed = plans.changed() => if changed.is_err() { return },
                _ = tx.closed() => return,
            }
            generation += 1;
            let snap = snapshots.borrow_and_update().clone();
            let plan = plans.borrow_and_update().clone();
            let context = context.clone();
            let extras = extras.clone();
            // Cloning the state and running doctor are CPU work: keep them off the
            // async workers that carry the watches.
            let built = tokio::task::spawn_blocking(move || {
                console_data_with(&snap, plan.as_deref(), &context, generation, &extras)
            })
            .await;
            match built {
                Ok(data) => {
                    if tx.send(data).is_err() {
                        return;
                    }
                }
                Err(err) => tracing::error!("console feed failed: {err}"),
            }
        }
    });
    (rx, task)
}
