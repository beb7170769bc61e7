//! Drift: where Kueue's actual state disagrees with the shadow engine.
//!
//! Four kinds (docs/source.md "Drift"):
//! * `admittedUnexpectedly` — Kueue admitted a workload the previous plan said would
//!   stay pending;
//! * `admissibleButPending` — the engine would admit a workload now, and has said so
//!   for longer than a grace period, yet Kueue keeps it pending;
//! * `differentVictims` — Kueue preempted a different set of workloads for a preemptor
//!   than the previous plan predicted;
//! * `quotaMismatch` — a ClusterQueue's reported reservation differs from the sum of
//!   its admitted workloads' usage.
//!
//! Comparisons with "the previous plan" need memory, so a [`DriftTracker`] lives in the
//! re-planning task. Event-like drifts (the first and third kinds) stay listed for
//! `sticky_ms` so that a console refresh does not lose them.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::Serialize;
use serde_json::{Value, json};

use super::history::parse_preemptor;
use crate::engine::Plan;
use crate::engine::output::SharedStr;
use crate::model::{ClusterState, Quantity, Timestamp};

/// What disagrees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DriftKind {
    AdmittedUnexpectedly,
    AdmissibleButPending,
    DifferentVictims,
    QuotaMismatch,
}

/// One disagreement, with both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Drift {
    pub kind: DriftKind,
    /// The workload (`namespace/name`) or ClusterQueue concerned.
    pub subject: String,
    /// What Kueue's objects say.
    pub kueue: Value,
    /// What the engine says.
    pub engine: Value,
    pub detail: String,
}

/// What one plan predicted for its first cycle.
#[derive(Clone, Debug, Default)]
struct Prediction {
    admits: HashSet<String>,
    /// Pending through every simulated cycle: the engine expects it to wait. The
    /// plan's own shared key and reason (tens of thousands of rows on a large cluster:
    /// copies of them were a measurable part of the live source's peak memory).
    stays_pending: HashMap<SharedStr, SharedStr>,
    victims: BTreeMap<String, BTreeSet<String>>,
}

impl Prediction {
    /// What `plan` predicts; `reserved` holds the workloads that had quota in the state
    /// the plan was made from. Those are never "expected to wait" for
    /// `admittedUnexpectedly`: one the plan preempts ends its last cycle pending, yet
    /// finding it admitted later is no surprise, it was admitted all along (counting
    /// them listed every victim of a preempting plan as drift on every re-plan).
    fn of(plan: &Plan, reserved: &HashMap<String, &str>) -> Self {
        let mut p = Prediction::default();
        if let Some(first) = plan.cycles.first() {
            p.admits = first.admitted.iter().map(|a| a.workload.clone()).collect();
            for v in &first.preempted {
                p.victims
                    .entry(v.by.clone())
                    .or_default()
                    .insert(v.workload.clone());
            }
        }
        let admitted_later: HashSet<&str> = plan
            .cycles
            .iter()
            .flat_map(|c| c.admitted.iter().map(|a| a.workload.as_str()))
            .collect();
        if let Some(last) = plan.cycles.last() {
            for pending in &last.pending {
                let key = pending.workload.as_str();
                if !admitted_later.contains(key) && !reserved.contains_key(key) {
                    p.stays_pending
                        .insert(pending.workload.clone(), pending.reason.clone());
                }
            }
        }
        p
    }
}

/// Remembers the previous plan to detect drift.
#[derive(Debug)]
pub struct DriftTracker {
    /// How long the engine must say "admit now" before a pending workload is drift.
    pub grace_ms: i64,
    /// How long event-like drifts stay listed.
    pub sticky_ms: i64,
    previous: Option<Prediction>,
    admissible_since: HashMap<String, Timestamp>,
    evictions_seen: HashSet<String>,
    /// Event-like drifts and when they were seen, one per (kind, subject).
    sticky: BTreeMap<(DriftKind, String), (Drift, Timestamp)>,
}

impl Default for DriftTracker {
    fn default() -> Self {
        DriftTracker {
            grace_ms: 30_000,
            sticky_ms: 300_000,
            previous: None,
            admissible_since: HashMap::new(),
            evictions_seen: HashSet::new(),
            sticky: BTreeMap::new(),
        }
    }
}

/// Keeps an event-like drift for `sticky_ms`, one per (kind, subject): a newer one
/// replaces the older (its details and its time). A workload that Kueue evicts and
/// re-admits again and again would otherwise pile up one entry per re-plan; on a large
/// cluster in such a loop that was most of the live source's memory growth.
fn remember(
    sticky: &mut BTreeMap<(DriftKind, String), (Drift, Timestamp)>,
    entry: (Drift, Timestamp),
) {
    sticky.insert((entry.0.kind, entry.0.subject.clone()), entry);
}

impl DriftTracker {
    /// How many event-like drifts are kept (one per kind and subject).
    pub fn remembered(&self) -> usize {
        self.sticky.len()
    }

    /// A tracker with this grace period for `admissibleButPending`.
    pub fn with_grace_ms(grace_ms: i64) -> Self {
        DriftTracker {
            grace_ms,
            ..Self::default()
        }
    }

    /// Compares `state` (Kueue's view at `now`) with `plan` (the engine's, computed
    /// from `state`) and the previous plan; returns the current drift, sorted.
    pub fn update(&mut self, state: &ClusterState, plan: &Plan, now: Timestamp) -> Vec<Drift> {
        let mut out = Vec::new();
        let reserved: HashMap<String, &str> = state
            .workloads
            .values()
            .filter(|w| w.has_quota_reservation() && !w.is_finished())
            .filter_map(|w| Some((w.key(), w.admission.as_ref()?.cluster_queue.as_str())))
            .collect();
        if let Some(prev) = &self.previous {
            for (wl, reason) in &prev.stays_pending {
                if let Some(cq) = reserved.get(wl.as_str()) {
                    remember(
                        &mut self.sticky,
                        (
                            Drift {
                                kind: DriftKind::AdmittedUnexpectedly,
                                subject: wl.to_string(),
                                kueue: json!({"admitted": true, "clusterQueue": cq}),
                                engine: json!({"admitted": false, "reason": reason}),
                                detail: format!(
                                    "Kueue admitted {wl} in {cq}; the engine expected it to wait: {reason}"
                                ),
                            },
                            now,
                        ),
                    );
                }
            }
        }
        self.victims(state, now);
        let current = Prediction::of(plan, &reserved);
        // Pending in Kueue although the engine admits it in its first cycle.
        let mut still = HashMap::new();
        for wl in &current.admits {
            if reserved.contains_key(wl) {
                continue;
            }
            let since = *self.admissible_since.get(wl).unwrap_or(&now);
            still.insert(wl.clone(), since);
            if now - since >= self.grace_ms {
                out.push(Drift {
                    kind: DriftKind::AdmissibleButPending,
                    subject: wl.clone(),
                    kueue: json!({"admitted": false}),
                    engine: json!({"admitted": true, "admissibleForMs": now - since}),
                    detail: format!(
                        "the engine would admit {wl} now (for {}s), Kueue keeps it pending",
                        (now - since) / 1000
                    ),
                });
            }
        }
        self.admissible_since = still;
        out.extend(quota_mismatches(state, plan));
        let sticky_ms = self.sticky_ms;
        self.sticky.retain(|_, (_, at)| now - *at < sticky_ms);
        out.extend(self.sticky.values().map(|(d, _)| d.clone()));
        self.previous = Some(current);
        out.sort_by(|a, b| (a.kind, &a.subject).cmp(&(b.kind, &b.subject)));
        out.dedup_by(|a, b| a.kind == b.kind && a.subject == b.subject);
        out
    }

    /// Kueue's victims per preemptor (new evictions only) vs the previous prediction.
    fn victims(&mut self, state: &ClusterState, now: Timestamp) {
        let Some(prev) = &self.previous else {
            // First plan: remember what is already evicted, report nothing.
            for w in state.workloads.values().filter(|w| w.is_evicted()) {
                self.evictions_seen.insert(w.key());
            }
            return;
        };
        let by_uid: HashMap<&str, String> = state
            .workloads
            .values()
            .filter(|w| !w.uid.is_empty())
            .map(|w| (w.uid.as_str(), w.key()))
            .collect();
        let mut actual: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for w in state.workloads.values() {
            if !w.is_evicted() {
                self.evictions_seen.remove(&w.key());
                continue;
            }
            if !self.evictions_seen.insert(w.key()) {
                continue;
            }
            let message = w
                .condition("Evicted")
                .map(|c| c.message.as_str())
                .unwrap_or("");
            if let (Some(uid), _) = parse_preemptor(message)
                && let Some(by) = by_uid.get(uid.as_str())
            {
                actual.entry(by.clone()).or_default().insert(w.key());
            }
        }
        for (by, victims) in actual {
            let predicted = prev.victims.get(&by).cloned().unwrap_or_default();
            if predicted != victims {
                remember(
                    &mut self.sticky,
                    (
                        Drift {
                            kind: DriftKind::DifferentVictims,
                            subject: by.clone(),
                            kueue: json!({"victims": victims}),
                            engine: json!({"victims": predicted}),
                            detail: format!(
                                "Kueue preempted {} for {by}; the engine predicted {}",
                                join(&victims),
                                join(&predicted)
                            ),
                        },
                        now,
                    ),
                );
            }
        }
    }
}

fn join(s: &BTreeSet<String>) -> String {
    if s.is_empty() {
        "none".into()
    } else {
        s.iter().cloned().collect::<Vec<_>>().join(", ")
    }
}

/// ClusterQueue status reservation vs the usage the engine computed from admitted
/// workloads (the plan's `clusterQueues`, which describe the current state).
pub fn quota_mismatches(state: &ClusterState, plan: &Plan) -> Vec<Drift> {
    let mut out = Vec::new();
    for usage in &plan.cluster_queues {
        let Some(status) = state
            .cluster_queues
            .get(&usage.name)
            .and_then(|cq| cq.status.as_ref())
        else {
            continue;
        };
        let reported = if status.flavors_reservation.is_empty() {
            &status.flavors_usage
        } else {
            &status.flavors_reservation
        };
        if reported.is_empty() {
            continue;
        }
        let mut kueue: BTreeMap<(String, String), Quantity> = BTreeMap::new();
        for f in reported {
            for (r, (total, _)) in &f.resources {
                kueue.insert((f.flavor.clone(), r.clone()), *total);
            }
        }
        let mut engine: BTreeMap<(String, String), Quantity> = BTreeMap::new();
        for (flavor, resources) in &usage.usage {
            for (r, fig) in resources {
                engine.insert((flavor.clone(), r.clone()), fig.used);
            }
        }
        let keys: BTreeSet<&(String, String)> = kueue.keys().chain(engine.keys()).collect();
        let mut diffs = Vec::new();
        let (mut k_side, mut e_side) = (serde_json::Map::new(), serde_json::Map::new());
        for key in keys {
            let k = kueue.get(key).copied().unwrap_or_default();
            let e = engine.get(key).copied().unwrap_or_default();
            if k != e {
                let name = format!("{}/{}", key.0, key.1);
                diffs.push(format!("{name}: Kueue {k}, workloads {e}"));
                k_side.insert(name.clone(), json!(k.to_string()));
                e_side.insert(name, json!(e.to_string()));
            }
        }
        if !diffs.is_empty() {
            out.push(Drift {
                kind: DriftKind::QuotaMismatch,
                subject: usage.name.clone(),
                kueue: json!({"reserved": k_side}),
                engine: json!({"used": e_side}),
                detail: format!(
                    "ClusterQueue {} reservation does not add up: {}",
                    usage.name,
                    diffs.join("; ")
                ),
            });
        }
    }
    out
}
