//! The incremental shadow engine: re-plans on a separate task whenever a new snapshot
//! is published. The previous plan stays visible (on the `watch` channel) while the
//! next one is computed; snapshots that arrive meanwhile are coalesced (only the
//! newest is planned).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::drift::{Drift, DriftTracker};
use super::snapshot::Snapshot;
use crate::engine::{self, Plan, PlanOptions};

/// A plan of one snapshot, with the drift found against Kueue's state.
#[derive(Clone, Debug)]
pub struct LivePlan {
    /// The snapshot generation this plan is for.
    pub generation: u64,
    pub plan: Plan,
    pub drift: Vec<Drift>,
    /// How long `engine::plan` took.
    pub plan_time: Duration,
}

impl LivePlan {
    /// The plan JSON contract of `plan -f`, plus `"drift"`; with `namespace`, only the
    /// workloads of that namespace are listed (usage stays cluster-wide).
    pub fn to_json(&self, namespace: Option<&str>) -> Value {
        plan_json(&self.plan, &self.drift, namespace)
    }
}

/// Serializes `plan` with a `"drift"` key (the engine's `Plan` is not changed).
pub fn plan_json(plan: &Plan, drift: &[Drift], namespace: Option<&str>) -> Value {
    let mut v = serde_json::to_value(plan).unwrap_or(Value::Null);
    if let Some(ns) = namespace {
        filter_namespace(&mut v, ns);
    }
    if let Value::Object(m) = &mut v {
        m.insert(
            "drift".into(),
            serde_json::to_value(drift).unwrap_or(Value::Array(Vec::new())),
        );
    }
    v
}

/// Keeps only workloads (and preemptors) of namespace `ns` in the cycles.
pub fn filter_namespace(plan: &mut Value, ns: &str) {
    let prefix = format!("{ns}/");
    let Some(cycles) = plan.get_mut("cycles").and_then(Value::as_array_mut) else {
        return;
    };
    for cycle in cycles {
        for list in ["admitted", "preempted", "pending"] {
            if let Some(items) = cycle.get_mut(list).and_then(Value::as_array_mut) {
                items.retain(|i| {
                    let mine = |k: &str| {
                        i.get(k)
                            .and_then(Value::as_str)
                            .is_some_and(|w| w.starts_with(&prefix))
                    };
                    mine("workload") || mine("by")
                });
            }
        }
    }
}

/// Re-planning settings.
#[derive(Clone, Debug)]
pub struct ReplanOptions {
    pub max_cycles: usize,
    /// Plan only snapshots whose every resource has been listed (a half-listed
    /// cluster gives a misleading plan).
    pub require_ready: bool,
    /// List pending workloads after every simulated cycle (as `plan -f` does) or only
    /// after the last. Off by default: on a large cluster every cycle repeats tens of
    /// thousands of pending entries, which made a plan weigh gigabytes.
    pub pending_in_every_cycle: bool,
    /// After a plan that took T, the next one starts no sooner than `rest × T` after
    /// it ended (and at once when a snapshot is already waiting past that). 1.0: the
    /// re-planner uses at most half a core, and a burst of watch events keeps the
    /// other cores for ingest; a plan is still at most (1 + rest) × T behind the
    /// newest snapshot. 0: plan back to back.
    pub rest: f64,
}

impl Default for ReplanOptions {
    fn default() -> Self {
        ReplanOptions {
            max_cycles: 100,
            require_ready: true,
            pending_in_every_cycle: false,
            rest: 1.0,
        }
    }
}

/// Starts the re-planning task; the receiver holds the latest plan (`None` before
/// the first).
pub fn spawn(
    mut snapshots: watch::Receiver<Arc<Snapshot>>,
    opts: ReplanOptions,
) -> (watch::Receiver<Option<Arc<LivePlan>>>, JoinHandle<()>) {
    let (tx, rx) = watch::channel(None);
    let task = tokio::spawn(async move {
        let mut tracker = DriftTracker::default();
        let mut planned = 0u64;
        loop {
            let snap = snapshots.borrow_and_update().clone();
            if snap.generation != planned && (!opts.require_ready || snap.ready()) {
                planned = snap.generation;
                let max_cycles = opts.max_cycles;
                let pending_in_every_cycle = opts.pending_in_every_cycle;
                // The engine is CPU-bound: run it off the async workers so watch
                // tasks and the store keep ingesting meanwhile.
                let result = tokio::task::spawn_blocking(move || {
                    let started = Instant::now();
                    let po = PlanOptions {
                        now: snap.taken_at.as_millisecond(),
                        max_cycles,
                        pending_in_every_cycle,
                        ..PlanOptions::default()
                    };
                    let plan = engine::plan(&snap.state, &po);
                    let took = started.elapsed();
                    let drift = tracker.update(&snap.state, &plan, po.now);
                    (tracker, plan, drift, took, snap.generation)
                })
                .await;
                let Ok((t, plan, drift, plan_time, generation)) = result else {
                    tracing::error!("re-planning panicked; keeping the last plan");
                    return;
                };
                tracker = t;
                tx.send_replace(Some(Arc::new(LivePlan {
                    generation,
                    plan,
                    drift,
                    plan_time,
                })));
                // Rest in proportion to the plan's cost (bounded, and cut short when
                // the snapshots end), so that re-planning never starves ingest.
                let rest = plan_time.mul_f64(opts.rest.clamp(0.0, 10.0));
                if !rest.is_zero() {
                    tokio::time::sleep(rest.min(Duration::from_secs(30))).await;
                }
            }
            if snapshots.changed().await.is_err() {
                return;
            }
        }
    });
    (rx, task)
}
