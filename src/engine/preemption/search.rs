//! Greedy removal + fill-back (`pkg/scheduler/preemption/preemption.go`
//! `classicalPreemptions`, `fillBackWorkloads`, `workloadFits`) and the oracle used
//! during flavor assignment (`preemption_oracle.go`).

use crate::model::BorrowWithinCohortPolicy;

use super::super::quota::FrId;
use super::super::state::EngineState;
use super::candidates::{self, Candidate, Variant};
use super::ordering::candidate_key;
use super::{PreemptionCtx, Target};
use crate::engine::state::key_cmp;

/// `workloadFits`: every fr of the preemptor's request is available, and (unless
/// borrowing is allowed) the preemptor's ClusterQueue would not borrow.
pub(crate) fn workload_fits(
    st: &EngineState<'_>,
    ctx: &PreemptionCtx<'_>,
    allow_borrowing: bool,
) -> bool {
    st.step();
    let node = st.cqs[ctx.cq].node;
    ctx.usage.iter().all(|&(fr, v)| {
        if !allow_borrowing && st.tree.nodes[node].borrowing_with(fr, v) {
            return false;
        }
        v <= st.tree.cq_available(node, fr)
    })
}

/// `candidateIsValid`: other-CQ candidates stay valid only while their CQ, and every
/// cohort up to the lowest common ancestor, is still above nominal.
fn candidate_valid(
    st: &EngineState<'_>,
    ctx: &PreemptionCtx<'_>,
    c: &Candidate,
    borrow: bool,
) -> bool {
    if c.cq == ctx.cq {
        return true;
    }
    if borrow && c.variant == Variant::ReclaimWithoutBorrowing {
        return false;
    }
    let node = st.cqs[c.cq].node;
    if st.tree.within_nominal(node, &ctx.frs_need) {
        return false;
    }
    for a in st.tree.ancestors(node) {
        if Some(a) == c.lca {
            break;
        }
        if st.tree.within_nominal(a, &ctx.frs_need) {
            return false;
        }
    }
    true
}

fn remove(st: &mut EngineState<'_>, wl: usize) {
    st.remove_usage_of(wl);
}

fn add(st: &mut EngineState<'_>, wl: usize) {
    st.add_usage_of(wl);
}

/// Temporarily removes the given workloads' usage from the snapshot.
pub fn remove_workloads(st: &mut EngineState<'_>, wls: &[usize]) {
    for &w in wls {
        remove(st, w);
    }
}

/// Restores what [`remove_workloads`] removed.
pub fn restore_workloads(st: &mut EngineState<'_>, wls: &[usize]) {
    for &w in wls {
        add(st, w);
    }
}

/// The ordered candidate list (§6.2) plus the flags that pick the attempt order.
pub struct CandidateList {
    pub ordered: Vec<Candidate>,
    pub no_other_cq: bool,
    pub no_hierarchy: bool,
}

pub fn ordered_candidates(st: &EngineState<'_>, ctx: &PreemptionCtx<'_>) -> CandidateList {
    let c = candidates::collect(st, ctx);
    let sort = |v: Vec<Candidate>| {
        // keys computed once per candidate, not once per comparison
        let mut keyed: Vec<_> = v
            .into_iter()
            .map(|c| (candidate_key(st, c.wl, ctx.cq), c))
            .collect();
        keyed.sort_by(|(ka, a), (kb, b)| {
            ka.cmp(kb)
                .then_with(|| key_cmp(st.wls[a.wl].wl, st.wls[b.wl].wl))
        });
        let (ev, rest): (Vec<_>, Vec<_>) = keyed
            .into_iter()
            .map(|(_, c)| c)
            .partition(|c| st.wls[c.wl].evicted);
        (ev, rest)
    };
    let no_other_cq = c.hierarchy.is_empty() && c.priority.is_empty();
    let no_hierarchy = c.hierarchy.is_empty();
    let (h_ev, h) = sort(c.hierarchy);
    let (p_ev, p) = sort(c.priority);
    let (s_ev, s) = sort(c.same_cq);
    let mut ordered = Vec::new();
    for part in [h_ev, p_ev, s_ev, h, p, s] {
        ordered.extend(part);
    }
    CandidateList {
        ordered,
        no_other_cq,
        no_hierarchy,
    }
}

/// `queueUnderNominalInResourcesNeedingPreemption`.
fn under_nominal(st: &EngineState<'_>, ctx: &PreemptionCtx<'_>) -> bool {
    let node = &st.tree.nodes[st.cqs[ctx.cq].node];
    ctx.frs_need
        .iter()
        .all(|&fr| node.usage[fr] < node.nominal[fr])
}

/// The victims Kueue would choose for this preemptor, or empty if none suffice.
/// The snapshot is left unchanged.
pub fn get_targets(st: &mut EngineState<'_>, ctx: &PreemptionCtx<'_>) -> Vec<Target> {
    if st.fair.enabled {
        return crate::engine::fair::get_targets(st, ctx);
    }
    let list = ordered_candidates(st, ctx);
    if list.ordered.is_empty() {
        return Vec::new();
    }
    let forbidden = ctx.policy.borrow_within_cohort.policy == BorrowWithinCohortPolicy::Never;
    let attempts: &[bool] = if list.no_other_cq || (forbidden && !under_nominal(st, ctx)) {
        &[true]
    } else if forbidden && list.no_hierarchy {
        &[false, true]
    } else {
        &[true, false]
    };
    for &allow_borrowing in attempts {
        let mut targets: Vec<Target> = Vec::new();
        for c in &list.ordered {
            if !candidate_valid(st, ctx, c, allow_borrowing) {
                continue;
            }
            remove(st, c.wl);
            targets.push(Target {
                wl: c.wl,
                reason: c.variant.reason(),
            });
            if workload_fits(st, ctx, allow_borrowing) {
                // fill back, from the second-to-last target down to the first
                let mut i = targets.len().saturating_sub(1);
                while i > 0 {
                    i -= 1;
                    add(st, targets[i].wl);
                    if workload_fits(st, ctx, allow_borrowing) {
                        targets.swap_remove(i);
                    } else {
                        remove(st, targets[i].wl);
                    }
                }
                let wls: Vec<usize> = targets.iter().map(|t| t.wl).collect();
                restore_workloads(st, &wls);
                return targets;
            }
        }
        let wls: Vec<usize> = targets.iter().map(|t| t.wl).collect();
        restore_workloads(st, &wls);
    }
    Vec::new()
}

/// What the oracle found for one (flavor, resource).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Possibility {
    NoCandidates,
    Preempt,
    Reclaim,
}

/// `SimulatePreemption`: runs the search for `val` of one fr; returns the possibility
/// and the borrowing level after the simulated removal.
pub fn oracle(
    st: &mut EngineState<'_>,
    base: &PreemptionCtx<'_>,
    fr: FrId,
    val: i128,
) -> (Possibility, usize) {
    let ctx = PreemptionCtx {
        usage: vec![(fr, val)],
        frs_need: vec![fr],
        ..base.clone()
    };
    let node = st.cqs[ctx.cq].node;
    let targets = get_targets(st, &ctx);
    if targets.is_empty() {
        let (b, _) = st.tree.height_of_lowest_subtree_that_fits(node, fr, val);
        return (Possibility::NoCandidates, b);
    }
    let wls: Vec<usize> = targets.iter().map(|t| t.wl).collect();
    remove_workloads(st, &wls);
    let (b, _) = st.tree.height_of_lowest_subtree_that_fits(node, fr, val);
    restore_workloads(st, &wls);
    let own = targets.iter().any(|t| st.wls[t.wl].cq == Some(ctx.cq));
    (
        if own {
            Possibility::Preempt
        } else {
            Possibility::Reclaim
        },
        b,
    )
}
