//! The stepping API for the simulator, which plays Kueue: one cycle on a state, with
//! the exact writes Kueue would make. Kueue's in-memory queue state (which pending
//! workloads sit in the inadmissible sets, which preemptor is sticky) is carried in
//! [`SchedulerMemory`] between calls, because it is not visible in the API objects.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{Admission, ClusterState, PodSetAssignment, Quantity};

use super::PlanOptions;
use super::cycle::{self, EntryOutcome};
use super::explain::{self, Explanation};
use super::pending::{Templates, queue_order, template};
use super::preemption::PreemptionReason;
use super::state::{EngineState, WlState};

/// Kueue's scheduler memory that the API objects do not show.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchedulerMemory {
    /// Keys of workloads in an inadmissible set (BestEffortFIFO parking, namespace mismatch).
    pub inadmissible: BTreeSet<String>,
    /// ClusterQueue → the preemptor waiting for its victims (sorts first).
    pub sticky: BTreeMap<String, String>,
}

impl SchedulerMemory {
    /// Call when quota is released in `cluster_queue` (a victim's admission cleared, a
    /// workload finished or deleted) or its spec changed: like Kueue's requeuer, every
    /// inadmissible workload of the same cohort tree returns to its heap. Not for an
    /// admission: Kueue requeues nothing then.
    pub fn notify_quota_change(&mut self, state: &ClusterState, cluster_queue: &str) {
        let st = EngineState::new(state, &PlanOptions::default());
        let Some(&cq) = st.cq_by_name.get(cluster_queue) else {
            return;
        };
        let tree: BTreeSet<&str> = st
            .cqs_in_same_tree(cq)
            .into_iter()
            .map(|c| st.cqs[c].name())
            .collect();
        self.inadmissible.retain(|k| {
            let cq = st.wl_index(k).and_then(|w| st.wls[w].cq);
            !cq.is_some_and(|c| tree.contains(st.cqs[c].name()))
        });
    }
}

/// Reserve quota for a workload: write `status.admission` and `QuotaReserved=True`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmitDecision {
    pub workload: String,
    pub uid: String,
    pub cluster_queue: String,
    pub admission: Admission,
    pub borrowing: bool,
    /// "Quota reserved in ClusterQueue X".
    pub message: String,
}

/// Evict a victim: `Evicted=True` (reason Preempted) and `Preempted=True` (reason below).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreemptDecision {
    pub workload: String,
    pub uid: String,
    pub cluster_queue: String,
    pub by: String,
    pub by_uid: String,
    pub reason: PreemptionReason,
    /// "Preempted to accommodate a workload (UID: …, JobUID: …) due to …".
    pub message: String,
}

/// A pending workload; `evaluated` ones get a `QuotaReserved=False` write with
/// `condition_reason` and `message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingDecision {
    pub workload: String,
    pub uid: String,
    pub cluster_queue: Option<String>,
    pub evaluated: bool,
    pub condition_reason: String,
    pub message: String,
    pub explanation: Explanation,
}

/// The result of one cycle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CycleOutcome {
    pub admitted: Vec<AdmitDecision>,
    pub preempted: Vec<PreemptDecision>,
    pub pending: Vec<PendingDecision>,
    /// The memory to pass to the next call.
    pub memory: SchedulerMemory,
    pub warnings: Vec<String>,
}

/// Runs ONE scheduling cycle on `state` as Kueue would, given its queue memory.
pub fn schedule_cycle(
    state: &ClusterState,
    memory: &SchedulerMemory,
    opts: &PlanOptions,
) -> CycleOutcome {
    let mut st = EngineState::new(state, opts);
    // restore the queue memory
    for key in &memory.inadmissible {
        if let Some(w) = st.wl_index(key)
            && st.wls[w].state == WlState::Queued
            && let Some(c) = st.wls[w].cq
        {
            let k = st.wls[w].qkey(w);
            if st.cqs[c].heap.remove(&k) {
                st.cqs[c].inadmissible.insert(k);
            }
        }
    }
    for (cq, wl) in &memory.sticky {
        if let (Some(&c), Some(w)) = (st.cq_by_name.get(cq.as_str()), st.wl_index(wl)) {
            st.cqs[c].sticky = Some(w);
        }
    }

    let res = cycle::run(&mut st);
    let explanations = res.explanations(&st);
    let mut out = CycleOutcome {
        warnings: st.warnings.clone(),
        ..Default::default()
    };
    for e in &res.entries {
        if !matches!(e.outcome, EntryOutcome::Admitted) {
            continue;
        }
        let a = e.assignment.as_ref().expect("admitted has assignment");
        let w = &st.wls[e.wl];
        let cq_name = st.cqs[e.cq].name().to_string();
        let admission = Admission {
            cluster_queue: cq_name.clone(),
            pod_set_assignments: a
                .pod_sets
                .iter()
                .map(|p| PodSetAssignment {
                    name: p.name.to_string(),
                    flavors: p
                        .flavors
                        .iter()
                        .map(|(r, c)| (r.to_string(), c.flavor.to_string()))
                        .collect(),
                    resource_usage: p
                        .requests
                        .iter()
                        .map(|(r, v)| (r.to_string(), Quantity::from_milli(*v)))
                        .collect(),
                    count: Some(p.count),
                })
                .collect(),
        };
        out.admitted.push(AdmitDecision {
            workload: w.key(),
            uid: w.wl.uid.clone(),
            cluster_queue: cq_name.clone(),
            admission,
            borrowing: a.borrowing > 0,
            message: format!("Quota reserved in ClusterQueue {cq_name}"),
        });
    }
    for (t, by) in &res.victims {
        let v = &st.wls[t.wl];
        let p = &st.wls[*by];
        let job_uid =
            p.wl.labels
                .get(crate::model::well_known::JOB_UID_LABEL)
                .cloned()
                .unwrap_or_else(|| "UNKNOWN".to_string());
        let uid = if p.wl.uid.is_empty() {
            "UNKNOWN"
        } else {
            p.wl.uid.as_str()
        };
        out.preempted.push(PreemptDecision {
            workload: v.key(),
            uid: v.wl.uid.clone(),
            cluster_queue: v.cq.map(|c| st.cqs[c].name().to_string()).unwrap_or_default(),
            by: p.key(),
            by_uid: p.wl.uid.clone(),
            reason: t.reason,
            message: format!(
                "Preempted to accommodate a workload (UID: {uid}, JobUID: {job_uid}) due to {}; preemptor path: {}; preemptee path: {}",
                t.reason.human(),
                p.cq.map(|c| st.cq_path(c)).unwrap_or_default(),
                v.cq.map(|c| st.cq_path(c)).unwrap_or_default(),
            ),
        });
    }
    // An admission requeues nothing: Kueue's workload controller moves a workload from
    // pending to QuotaReserved without notifying the requeuer (only finishes,
    // deletions, evictions, reclaimable-pod and priority changes do:
    // `pkg/controller/core/workload_controller.go` `Update`/`Delete`).

    // pending: evaluated heads first get their cycle's explanation
    for cq in 0..st.cqs.len() {
        let strict_head = (st.cqs[cq].spec.queueing_strategy
            == crate::model::QueueingStrategy::StrictFifo)
            .then(|| st.cqs[cq].heap.first().map(|k| k.idx))
            .flatten();
        let order = queue_order(&st, cq);
        let mut templates: Templates = [None, None];
        // positions per LocalQueue, i.e. per (namespace, name): Kueue's
        // `utilqueue.KeyFromWorkload` in `pkg/visibility/storage/pending_workloads_cq.go`
        let mut lq_pos: BTreeMap<(&str, Option<&String>), usize> = BTreeMap::new();
        for (i, &w) in order.iter().enumerate() {
            let mut ex = match explanations.get(&w) {
                Some(e) => e.clone(),
                None => {
                    let mut ex = template(&mut templates, &st, w, cq, strict_head).clone();
                    ex.local_queue = explain::local_queue_label(st.wls[w].wl);
                    ex
                }
            };
            let wl = st.wls[w].wl;
            let p = lq_pos
                .entry((wl.namespace.as_str(), wl.queue_name.as_ref()))
                .or_insert(0);
            *p += 1;
            ex.position_in_cluster_queue = Some(i + 1);
            ex.position_in_local_queue = Some(*p);
            out.pending.push(PendingDecision {
                workload: st.wls[w].key(),
                uid: st.wls[w].wl.uid.clone(),
                cluster_queue: Some(st.cqs[cq].name().to_string()),
                evaluated: ex.evaluated,
                condition_reason: ex.condition_reason.to_string(),
                message: ex.message.to_string(),
                explanation: ex,
            });
        }
        out.memory
            .inadmissible
            .extend(st.cqs[cq].inadmissible.iter().map(|k| st.wls[k.idx].key()));
        if let Some(s) = st.cqs[cq].sticky {
            out.memory
                .sticky
                .insert(st.cqs[cq].name().to_string(), st.wls[s].key());
        }
    }
    for (w, info) in st.wls.iter().enumerate() {
        if let WlState::NotQueued(why) = info.state {
            let ex = explain::for_not_queued(&st, w, why);
            out.pending.push(PendingDecision {
                workload: info.key(),
                uid: info.wl.uid.clone(),
                cluster_queue: ex.cluster_queue.as_deref().map(str::to_string),
                evaluated: false,
                condition_reason: ex.condition_reason.to_string(),
                message: ex.message.to_string(),
                explanation: ex,
            });
        }
    }
    out
}
