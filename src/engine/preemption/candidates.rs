//! Candidate collection (`pkg/scheduler/preemption/classical/hierarchical_preemption.go`).

use crate::model::{BorrowWithinCohortPolicy, ReclaimWithinCohort, WithinClusterQueue};

use super::super::quota::NodeId;
use super::super::state::{CqIdx, EngineState, WlIdx};
use super::{PreemptionCtx, PreemptionReason};

/// How a candidate may be preempted (`preemptionVariant`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    WithinCq,
    HierarchicalReclaim,
    ReclaimWithoutBorrowing,
    ReclaimWhileBorrowing,
}

impl Variant {
    pub fn reason(self) -> PreemptionReason {
        match self {
            Variant::WithinCq => PreemptionReason::InClusterQueue,
            Variant::HierarchicalReclaim | Variant::ReclaimWithoutBorrowing => {
                PreemptionReason::InCohortReclamation
            }
            Variant::ReclaimWhileBorrowing => PreemptionReason::InCohortReclaimWhileBorrowing,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    pub wl: WlIdx,
    pub cq: CqIdx,
    /// Lowest common ancestor with the preemptor's ClusterQueue (other-CQ candidates).
    pub lca: Option<NodeId>,
    pub variant: Variant,
}

/// The three candidate classes of §6.1.
#[derive(Default, Debug)]
pub struct Collected {
    pub same_cq: Vec<Candidate>,
    pub hierarchy: Vec<Candidate>,
    pub priority: Vec<Candidate>,
}

/// The policy predicate (`preemption_policy.go`), with Never ⇒ false.
pub fn policy_allows_within(
    p: WithinClusterQueue,
    preemptor: (i32, i64),
    cand: (i32, i64),
) -> bool {
    match p {
        WithinClusterQueue::Never => false,
        WithinClusterQueue::LowerPriority => cand.0 < preemptor.0,
        WithinClusterQueue::LowerOrNewerEqualPriority => {
            cand.0 < preemptor.0 || (cand.0 == preemptor.0 && preemptor.1 < cand.1)
        }
    }
}

pub fn policy_allows_reclaim(
    p: ReclaimWithinCohort,
    preemptor: (i32, i64),
    cand: (i32, i64),
) -> bool {
    match p {
        ReclaimWithinCohort::Never => false,
        ReclaimWithinCohort::LowerPriority => cand.0 < preemptor.0,
        ReclaimWithinCohort::Any => true,
    }
}

fn uses_needed(st: &EngineState<'_>, wl: WlIdx, ctx: &PreemptionCtx<'_>) -> bool {
    st.usage_of(wl)
        .iter()
        .any(|(fr, _)| ctx.frs_need.contains(fr))
}

/// `classifyPreemptionVariant`; `None` = cannot be preempted.
fn classify(
    st: &EngineState<'_>,
    ctx: &PreemptionCtx<'_>,
    wl: WlIdx,
    cand_cq: CqIdx,
    advantage: bool,
) -> Option<Variant> {
    st.step();
    let w = &st.wls[wl];
    let me = (ctx.priority, ctx.queue_ts);
    let cand = (w.priority, w.queue_ts);
    // the policy (integer comparisons) before the usage scan: most candidates of a big
    // cohort tree fail on priority
    let allowed = if cand_cq == ctx.cq {
        policy_allows_within(ctx.policy.within_cluster_queue, me, cand)
    } else {
        policy_allows_reclaim(ctx.policy.reclaim_within_cohort, me, cand)
    };
    if !allowed || Some(wl) == ctx.preemptor || !uses_needed(st, wl, ctx) {
        return None;
    }
    if cand_cq == ctx.cq {
        return Some(Variant::WithinCq);
    }
    if advantage {
        return Some(Variant::HierarchicalReclaim);
    }
    let bwc = &ctx.policy.borrow_within_cohort;
    if bwc.policy == BorrowWithinCohortPolicy::Never {
        return Some(Variant::ReclaimWithoutBorrowing);
    }
    // isAboveBorrowingThreshold
    let above =
        w.priority >= ctx.priority || bwc.max_priority_threshold.is_some_and(|t| w.priority > t);
    Some(if above {
        Variant::ReclaimWithoutBorrowing
    } else {
        Variant::ReclaimWhileBorrowing
    })
}

fn from_cq(
    st: &EngineState<'_>,
    ctx: &PreemptionCtx<'_>,
    cq: CqIdx,
    lca: Option<NodeId>,
    advantage: bool,
    out: &mut Vec<Candidate>,
) {
    let mut push = |wl: WlIdx| {
        if let Some(variant) = classify(st, ctx, wl, cq, advantage) {
            out.push(Candidate {
                wl,
                cq,
                lca,
                variant,
            });
        }
    };
    let Some(sorted) = st.by_priority.get(cq) else {
        for &wl in &st.cqs[cq].admitted {
            push(wl);
        }
        return;
    };
    // Ascending priority: stop where the policy's priority rule excludes every later
    // one (classify still decides each candidate before that point).
    let (bound, inclusive) = if cq == ctx.cq {
        match ctx.policy.within_cluster_queue {
            WithinClusterQueue::LowerOrNewerEqualPriority => (Some(ctx.priority), true),
            _ => (Some(ctx.priority), false),
        }
    } else {
        match ctx.policy.reclaim_within_cohort {
            ReclaimWithinCohort::Any => (None, false),
            _ => (Some(ctx.priority), false),
        }
    };
    for &wl in sorted {
        let p = st.wls[wl].priority;
        if let Some(b) = bound
            && (p > b || (p == b && !inclusive))
        {
            break;
        }
        push(wl);
    }
}

/// Visits `current`'s subtree, skipping `skip` and subtrees within nominal.
fn in_subtree(
    st: &EngineState<'_>,
    ctx: &PreemptionCtx<'_>,
    current: NodeId,
    subtree_root: NodeId,
    skip: Option<NodeId>,
    advantage: bool,
    out: &mut Vec<Candidate>,
) {
    let node = &st.tree.nodes[current];
    for &child in &node.child_cohorts {
        if Some(child) == skip || st.tree.within_nominal(child, &ctx.frs_need) {
            continue;
        }
        in_subtree(st, ctx, child, subtree_root, skip, advantage, out);
    }
    let me = st.cqs[ctx.cq].node;
    for &child in &node.child_cqs {
        if child == me || st.tree.within_nominal(child, &ctx.frs_need) {
            continue;
        }
        let cq = st.node_cq[child].expect("cq node");
        from_cq(st, ctx, cq, Some(subtree_root), advantage, out);
    }
}

/// Collects same-CQ, hierarchy and priority candidates (unsorted).
pub fn collect(st: &EngineState<'_>, ctx: &PreemptionCtx<'_>) -> Collected {
    let mut c = Collected::default();
    if ctx.policy.within_cluster_queue != WithinClusterQueue::Never {
        from_cq(st, ctx, ctx.cq, None, false, &mut c.same_cq);
    }
    let me = st.cqs[ctx.cq].node;
    if st.tree.nodes[me].parent.is_none()
        || ctx.policy.reclaim_within_cohort == ReclaimWithinCohort::Never
    {
        return c;
    }
    let (mut advantage, mut remaining) = st.tree.quantities_fit_in_quota(me, &ctx.usage);
    let mut previous: Option<NodeId> = None;
    for root in st.tree.ancestors(me) {
        let list = if advantage {
            &mut c.hierarchy
        } else {
            &mut c.priority
        };
        in_subtree(st, ctx, root, root, previous, advantage, list);
        let (fits, rem) = st.tree.quantities_fit_in_quota(root, &remaining);
        remaining = rem;
        advantage = advantage || fits;
        previous = Some(root);
    }
    c
}
