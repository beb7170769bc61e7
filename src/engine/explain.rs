//! Explanations for pending workloads: structured data plus one line a person can act on.

use serde::Serialize;

use crate::model::{Quantity, ReclaimWithinCohort, WithinClusterQueue, Workload};

use super::cycle::{Entry, EntryOutcome};
use super::flavor::{Failure, PMode, QuotaNote};
use super::output::SharedStr;
use super::state::{CqIdx, EngineState, NotQueued, WlIdx};

/// The kind of obstacle, for UIs that want to group or colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum PendingKind {
    NoQueueName,
    LocalQueueNotFound,
    ClusterQueueNotFound,
    LocalQueueStopped,
    Inactive,
    PriorityClassError,
    ClusterQueueInactive,
    NamespaceMismatch,
    /// A pod template fails Kueue's resource validation (requests > limits, negative).
    InvalidResources,
    UncoveredResource,
    NoMatchingFlavor,
    ExceedsMaxQuota,
    InsufficientQuota,
    WaitingForPreemptedWorkloads,
    SkippedThisCycle,
    BlockedByStrictFifo,
    Queued,
}

/// The quota figures behind a "needs …" reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceNeed {
    pub pod_set: String,
    pub count: i32,
    pub per_pod: Quantity,
    pub flavor: String,
    pub resource: String,
    /// Needed in this flavor, earlier pod sets of the workload included.
    pub needed: Quantity,
    /// Unused nominal quota of the ClusterQueue (capped by what is available).
    pub free: Quantity,
    pub nominal: Quantity,
    /// Available beyond the free nominal quota (from the cohort).
    pub borrowable: Quantity,
    /// The most the ClusterQueue could ever use (`potentialAvailable`).
    pub max_capacity: Quantity,
}

/// Why a workload is pending.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    pub kind: PendingKind,
    /// One line, in words. The text fields are shared: the queued rows of a
    /// ClusterQueue (tens of thousands in a large plan) carry the same texts.
    pub reason: SharedStr,
    /// The `QuotaReserved=False` reason Kueue would write.
    pub condition_reason: SharedStr,
    /// A Kueue-style condition message.
    pub message: SharedStr,
    pub cluster_queue: Option<SharedStr>,
    pub local_queue: Option<SharedStr>,
    /// 1-based, in Kueue's heap order (heap and inadmissible together).
    pub position_in_cluster_queue: Option<usize>,
    pub position_in_local_queue: Option<usize>,
    pub needs: Vec<ResourceNeed>,
    /// Victims this workload waits for.
    pub waiting_for: Vec<String>,
    /// Whether it was nominated (evaluated as a head) when this was computed.
    pub evaluated: bool,
}

fn q(m: i128) -> Quantity {
    Quantity::from_milli(m)
}

fn base(st: &EngineState<'_>, wl: WlIdx, cq: Option<CqIdx>, kind: PendingKind) -> Explanation {
    let w = st.wls[wl].wl;
    Explanation {
        kind,
        reason: SharedStr::default(),
        condition_reason: "Pending".into(),
        message: SharedStr::default(),
        cluster_queue: cq.map(|c| SharedStr::from(st.cqs[c].name())),
        local_queue: local_queue_label(w),
        position_in_cluster_queue: None,
        position_in_local_queue: None,
        needs: Vec::new(),
        waiting_for: Vec::new(),
        evaluated: false,
    }
}

/// `namespace/queue-name` of the LocalQueue a workload names.
pub fn local_queue_label(w: &Workload) -> Option<SharedStr> {
    w.queue_name
        .as_ref()
        .map(|l| SharedStr::from(format!("{}/{}", w.namespace, l)))
}

fn need_of(n: &QuotaNote) -> ResourceNeed {
    let free = (n.nominal - n.usage).max(0).min(n.available);
    ResourceNeed {
        pod_set: n.pod_set.to_string(),
        count: n.count,
        per_pod: q(n.per_pod),
        flavor: n.flavor.to_string(),
        resource: n.resource.to_string(),
        needed: q(n.needed),
        free: q(free),
        nominal: q(n.nominal),
        borrowable: q((n.available - free).max(0)),
        max_capacity: q(n.potential),
    }
}

fn need_text(n: &ResourceNeed) -> String {
    format!(
        "needs {} {} in flavor {} (pod set {}: {} × {}), {} free of {} nominal, {} borrowable",
        n.needed,
        n.resource,
        n.flavor,
        n.pod_set,
        n.count,
        n.per_pod,
        n.free,
        n.nominal,
        n.borrowable
    )
}

/// Why no preemption candidates were found, from the ClusterQueue's policy.
pub fn policy_note(st: &EngineState<'_>, cq: CqIdx, wl: WlIdx) -> String {
    let spec = st.cqs[cq].spec;
    let name = st.cqs[cq].name();
    let (priority, ts) = (st.wls[wl].priority, st.wls[wl].queue_ts);
    let within_policy = spec.preemption.within_cluster_queue;
    let lower = st.cqs[cq]
        .admitted
        .iter()
        .filter(|&&c| {
            super::preemption::candidates::policy_allows_within(
                within_policy,
                (priority, ts),
                (st.wls[c].priority, st.wls[c].queue_ts),
            )
        })
        .count();
    let which = match within_policy {
        WithinClusterQueue::LowerOrNewerEqualPriority => {
            format!("below priority {priority} or newer at it")
        }
        _ => format!("below priority {priority}"),
    };
    let within = match (within_policy, lower) {
        (WithinClusterQueue::Never, _) => {
            "withinClusterQueue: Never forbids preemption".to_string()
        }
        (p, 0) => {
            format!("withinClusterQueue: {p:?}, but no admitted workload in {name} is {which}")
        }
        (p, n) => format!(
            "withinClusterQueue: {p:?}, but the {n} admitted workload{} in {name} {which} would not free enough",
            if n == 1 { "" } else { "s" }
        ),
    };
    let Some(cohort) = &spec.cohort else {
        return within;
    };
    let reclaim = match spec.preemption.reclaim_within_cohort {
        ReclaimWithinCohort::Never => {
            format!("reclaimWithinCohort: Never forbids reclaiming from cohort {cohort}")
        }
        ReclaimWithinCohort::LowerPriority => format!(
            "reclaimWithinCohort: LowerPriority finds too few lower-priority workloads of borrowing ClusterQueues in cohort {cohort}"
        ),
        ReclaimWithinCohort::Any => {
            format!("no other ClusterQueue in cohort {cohort} borrows enough to reclaim")
        }
    };
    format!("{within}; {reclaim}")
}

/// Explanation for a head evaluated in a cycle and not admitted.
pub fn for_entry(st: &EngineState<'_>, e: &Entry) -> Explanation {
    for_entry_with(st, e, no_candidates_why(st, e))
}

/// The one part of [`for_entry`] that reads the cycle's state rather than the entry and
/// the specs: why a NoCandidates head found no victims (it counts the ClusterQueue's
/// admitted workloads). A plan that lists pending workloads only after its last cycle
/// keeps each head's last entry with this text and writes the explanation at the end.
pub fn no_candidates_why(st: &EngineState<'_>, e: &Entry) -> Option<String> {
    if !matches!(e.outcome, EntryOutcome::NoCandidates) {
        return None;
    }
    let spec = st.cqs[e.cq].spec;
    Some(match (&e.assignment, st.fair.enabled) {
        (Some(a), true) if spec.preemption.reclaim_within_cohort != ReclaimWithinCohort::Never => {
            let within = policy_note(st, e.cq, e.wl);
            let within = within.split("; ").next().unwrap_or_default().to_string();
            format!(
                "{within}; {}",
                super::fair::no_candidates_note(st, e.cq, &a.usage)
            )
        }
        _ => policy_note(st, e.cq, e.wl),
    })
}

/// [`for_entry`] with the NoCandidates text computed when the entry was evaluated.
pub fn for_entry_with(st: &EngineState<'_>, e: &Entry, why: Option<String>) -> Explanation {
    let mut ex = base(st, e.wl, Some(e.cq), PendingKind::InsufficientQuota);
    ex.evaluated = true;
    ex.condition_reason = "WaitingForQuota".into();
    let cq_name = st.cqs[e.cq].name().to_string();
    let spec = st.cqs[e.cq].spec;
    let w = st.wls[e.wl].wl;
    if let Some(a) = &e.assignment {
        ex.needs = a.notes.iter().map(need_of).collect();
    }
    match e.outcome {
        EntryOutcome::Admitted => {}
        EntryOutcome::NamespaceMismatch => {
            ex.kind = PendingKind::NamespaceMismatch;
            ex.condition_reason = "Misconfigured".into();
            ex.message = "Workload namespace doesn't match ClusterQueue selector".into();
            ex.reason = if spec.namespace_selector.is_none() {
                format!(
                    "ClusterQueue {cq_name} has no namespaceSelector, so Kueue admits from no namespace (namespaceSelector: {{}} admits all)"
                ).into()
            } else {
                format!(
                    "namespace {} does not match ClusterQueue {cq_name}'s namespaceSelector",
                    w.namespace
                )
                .into()
            };
        }
        EntryOutcome::InvalidResources => {
            ex.kind = PendingKind::InvalidResources;
            ex.condition_reason = "Misconfigured".into();
            let (i, ps, why) = w
                .pod_sets
                .iter()
                .enumerate()
                .find_map(|(i, p)| p.invalid.as_ref().map(|m| (i, p.name.clone(), m.clone())))
                .unwrap_or_default();
            ex.message = format!("resources validation failed: spec.podSets[{i}].{why}").into();
            ex.reason = format!(
                "Kueue will not admit it: pod set {ps} is invalid ({why}); fix the job's resources"
            )
            .into();
        }
        EntryOutcome::Preempting => {
            ex.kind = PendingKind::WaitingForPreemptedWorkloads;
            ex.condition_reason = "WaitingForPreemptedWorkloads".into();
            ex.waiting_for = e.targets.iter().map(|t| st.wls[t.wl].key()).collect();
            let n = e.targets.len();
            ex.message = format!("Pending the preemption of {n} workload(s)").into();
            ex.reason = format!(
                "waiting for {n} preempted workload{} to release quota ({})",
                if n == 1 { "" } else { "s" },
                ex.waiting_for.join(", ")
            )
            .into();
        }
        EntryOutcome::DeferredFit => {
            ex.kind = PendingKind::WaitingForPreemptedWorkloads;
            ex.condition_reason = "WaitingForPreemptedWorkloads".into();
            ex.message =
                "Waiting for workloads preempted by another workload to release quota".into();
            ex.reason = "waiting for workloads preempted by a higher-ranked workload to release quota; it fits once they are gone".into();
        }
        EntryOutcome::SkippedOverlap => {
            ex.kind = PendingKind::SkippedThisCycle;
            ex.message = "Workload has overlapping preemption targets with another workload".into();
            ex.reason = "skipped this cycle: its preemption targets overlap those chosen by a higher-ranked workload; retried next cycle".into();
        }
        EntryOutcome::SkippedNoLongerFits => {
            ex.kind = PendingKind::SkippedThisCycle;
            ex.message = "Workload no longer fits after processing another workload".into();
            ex.reason = "skipped this cycle: no longer fits after a higher-ranked workload took quota; retried next cycle".into();
        }
        EntryOutcome::NoCandidates => {
            let needs: Vec<String> = ex
                .needs
                .iter()
                .zip(e.assignment.iter().flat_map(|a| a.notes.iter()))
                .filter(|(_, n)| n.mode == PMode::NoCandidates)
                .map(|(r, _)| need_text(r))
                .collect();
            let first = needs
                .first()
                .cloned()
                .unwrap_or_else(|| "needs more quota".to_string());
            let why = why.unwrap_or_default();
            ex.reason = format!("{first}; {why}").into();
            ex.message =
                kueue_quota_message(&ex.needs, e.assignment.as_ref().map(|a| &a.failure)).into();
        }
        EntryOutcome::NoFit => match e.assignment.as_ref().and_then(|a| a.failure.clone()) {
            Some(Failure::Uncovered { pod_set, resource }) => {
                ex.kind = PendingKind::UncoveredResource;
                ex.condition_reason = "NoMatchingFlavor".into();
                let covered: Vec<&str> = spec
                    .resource_groups
                    .iter()
                    .flat_map(|g| g.covered_resources.iter().map(String::as_str))
                    .collect();
                ex.message = format!(
                    "couldn't assign flavors to pod set {pod_set}: resource {resource} unavailable in ClusterQueue"
                ).into();
                ex.reason = format!(
                    "resource {resource} is not covered by ClusterQueue {cq_name} (covers {})",
                    if covered.is_empty() {
                        "nothing".to_string()
                    } else {
                        covered.join(", ")
                    }
                )
                .into();
            }
            Some(Failure::NoMatchingFlavor { pod_set, reasons }) => {
                ex.kind = PendingKind::NoMatchingFlavor;
                ex.condition_reason = "NoMatchingFlavor".into();
                ex.message = format!(
                    "couldn't assign flavors to pod set {pod_set}: {}",
                    reasons.join(", ")
                )
                .into();
                ex.reason = format!(
                    "no flavor of ClusterQueue {cq_name} matches pod set {pod_set}: {}",
                    reasons.join("; ")
                )
                .into();
            }
            _ => {
                let exceeds = ex.needs.iter().any(|n| n.needed > n.max_capacity);
                let mut flavors: Vec<&str> = ex.needs.iter().map(|n| n.flavor.as_str()).collect();
                flavors.dedup();
                let head = ex
                    .needs
                    .first()
                    .map(need_text)
                    .unwrap_or_else(|| "needs more quota".to_string());
                let also = if flavors.len() > 1 {
                    format!(
                        " (also tried flavor{} {})",
                        if flavors.len() > 2 { "s" } else { "" },
                        flavors[1..].join(", ")
                    )
                } else {
                    String::new()
                };
                if exceeds {
                    ex.kind = PendingKind::ExceedsMaxQuota;
                    ex.condition_reason = "ExceedsMaxQuota".into();
                    let n = ex
                        .needs
                        .iter()
                        .find(|n| n.needed > n.max_capacity)
                        .expect("exceeds");
                    ex.reason = format!(
                        "{}; more than the {} the ClusterQueue can ever use{also}",
                        need_text(n),
                        n.max_capacity
                    )
                    .into();
                } else {
                    ex.reason = format!(
                        "{head}; over nominal quota and preemption while borrowing is not allowed (borrowWithinCohort: Never){also}"
                    ).into();
                }
                ex.message =
                    kueue_quota_message(&ex.needs, e.assignment.as_ref().map(|a| &a.failure))
                        .into();
            }
        },
    }
    // fair sharing, in words: who went first and why each victim was chosen
    if !matches!(
        e.outcome,
        EntryOutcome::NamespaceMismatch | EntryOutcome::InvalidResources
    ) {
        let mut reason = ex.reason.to_string();
        for (v, note) in &e.victim_notes {
            reason.push_str(&format!("; would preempt {}: {note}", st.wls[*v].key()));
        }
        if let Some(note) = &e.fair_note
            && matches!(
                e.outcome,
                EntryOutcome::SkippedNoLongerFits
                    | EntryOutcome::SkippedOverlap
                    | EntryOutcome::DeferredFit
            )
        {
            reason.push_str(&format!("; {note}"));
        }
        if reason.len() != ex.reason.len() {
            ex.reason = reason.into();
        }
    }
    ex
}

fn kueue_quota_message(needs: &[ResourceNeed], failure: Option<&Option<Failure>>) -> String {
    let ps = match failure {
        Some(Some(Failure::Quota { pod_set })) => pod_set.clone(),
        _ => needs.first().map(|n| n.pod_set.clone()).unwrap_or_default(),
    };
    let parts: Vec<String> = needs
        .iter()
        .map(|n| {
            if n.needed > n.max_capacity {
                format!(
                    "insufficient quota for {} in flavor {}, request > maximum capacity ({} > {})",
                    n.resource, n.flavor, n.needed, n.max_capacity
                )
            } else {
                let avail = Quantity::from_milli(n.free.milli() + n.borrowable.milli());
                format!(
                    "insufficient unused quota for {} in flavor {}, {} more needed",
                    n.resource,
                    n.flavor,
                    Quantity::from_milli(n.needed.milli() - avail.milli())
                )
            }
        })
        .collect();
    format!(
        "couldn't assign flavors to pod set {ps}: {}",
        parts.join(", ")
    )
}

/// Explanation for a pending workload that Kueue keeps in no queue.
pub fn for_not_queued(st: &EngineState<'_>, wl: WlIdx, why: NotQueued) -> Explanation {
    let cq = st.wls[wl].cq;
    let w = st.wls[wl].wl;
    let lq = st.local_queue_of(wl);
    let lq_name = || {
        lq.map(|l| format!("{}/{}", l.namespace, l.name))
            .unwrap_or_default()
    };
    let mut ex = base(st, wl, None, PendingKind::Inactive);
    match why {
        NotQueued::NoQueueName => {
            ex.kind = PendingKind::NoQueueName;
            ex.reason =
                "no LocalQueue named: set the kueue.x-k8s.io/queue-name label (or spec.queueName)"
                    .into();
        }
        NotQueued::LocalQueueNotFound => {
            let (namespace, name) = (&w.namespace, w.queue_name.as_deref().unwrap_or_default());
            ex.kind = PendingKind::LocalQueueNotFound;
            ex.reason = format!("LocalQueue {namespace}/{name} not found").into();
            ex.message = format!("LocalQueue {name} doesn't exist").into();
        }
        NotQueued::ClusterQueueNotFound => {
            let local_queue = lq_name();
            let cluster_queue = lq.map(|l| l.cluster_queue.as_str()).unwrap_or_default();
            ex.kind = PendingKind::ClusterQueueNotFound;
            ex.reason =
                format!("ClusterQueue {cluster_queue} (from LocalQueue {local_queue}) not found")
                    .into();
            ex.message = format!("ClusterQueue {cluster_queue} doesn't exist").into();
        }
        NotQueued::LocalQueueStopped => {
            let local_queue = lq_name();
            ex.kind = PendingKind::LocalQueueStopped;
            ex.cluster_queue = cq.map(|c| SharedStr::from(st.cqs[c].name()));
            ex.reason =
                format!("LocalQueue {local_queue} is stopped (stopPolicy is not None)").into();
            ex.message = format!("LocalQueue {local_queue} is inactive").into();
        }
        NotQueued::Inactive => {
            ex.kind = PendingKind::Inactive;
            ex.cluster_queue = cq.map(|c| SharedStr::from(st.cqs[c].name()));
            ex.reason =
                "inactive (spec.active: false): Kueue never admits it until it is reactivated"
                    .into();
            ex.message = "The workload is deactivated".into();
        }
        NotQueued::PriorityError => {
            ex.kind = PendingKind::PriorityClassError;
            ex.cluster_queue = cq.map(|c| SharedStr::from(st.cqs[c].name()));
            ex.reason = w.priority_error.clone().unwrap_or_default().into();
        }
    }
    if ex.message.is_empty() {
        ex.message = ex.reason.clone();
    }
    ex
}

/// Explanation for a victim that was evicted and requeued.
pub fn for_requeued_victim(
    st: &EngineState<'_>,
    wl: WlIdx,
    cq: CqIdx,
    by: WlIdx,
    reason: &str,
) -> Explanation {
    let mut ex = base(st, wl, Some(cq), PendingKind::Queued);
    ex.reason = format!(
        "preempted by {} ({reason}) and requeued with its original position; waits for quota",
        st.wls[by].key()
    )
    .into();
    ex.condition_reason = "Pending".into();
    ex.message = ex.reason.clone();
    ex
}

/// Explanation for a queued workload that was not evaluated this cycle.
pub fn for_queued(
    st: &EngineState<'_>,
    wl: WlIdx,
    cq: CqIdx,
    strict_head: Option<WlIdx>,
) -> Explanation {
    let mut ex = base(st, wl, Some(cq), PendingKind::Queued);
    let name = st.cqs[cq].name();
    if let Some(why) = &st.cqs[cq].inactive {
        ex.kind = PendingKind::ClusterQueueInactive;
        ex.condition_reason = "Suspended".into();
        ex.reason = format!("ClusterQueue {name} is inactive: {why}").into();
        ex.message = format!("ClusterQueue {name} is inactive").into();
        return ex;
    }
    match strict_head {
        Some(h) if h != wl => {
            ex.kind = PendingKind::BlockedByStrictFifo;
            ex.reason = format!(
                "blocked behind {} (ClusterQueue {name} uses StrictFIFO)",
                st.wls[h].key()
            )
            .into();
        }
        _ => {
            ex.reason = format!(
                "queued in ClusterQueue {name}; Kueue evaluates one head per ClusterQueue per cycle"
            )
            .into();
        }
    }
    ex.message = ex.reason.clone();
    ex
}
