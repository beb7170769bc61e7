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
///
/// Kueue sorts every candidate; the search then usually stops after a few. In a large
/// cohort tree a preemptor has thousands of candidates, and sorting them all for every
/// head of every cycle dominated the plan. So each of the six parts (evicted then
/// not-evicted; hierarchy, priority, same-ClusterQueue candidates) is sorted on demand, a
/// growing prefix at a time (`select_nth_unstable` + sort of the prefix). The order is
/// total (ties fall back to the unique `namespace/name`), so the sequence is exactly the
/// fully sorted one.
pub struct CandidateList {
    parts: [LazyPart; 6],
    pub no_other_cq: bool,
    pub no_hierarchy: bool,
}

type Key = (bool, bool, i32, std::cmp::Reverse<i64>, u32);

#[derive(Default)]
struct LazyPart {
    items: Vec<(Key, Candidate)>,
    /// `items[..sorted]` is in final order and holds the smallest ones.
    sorted: usize,
}

impl LazyPart {
    fn get(&mut self, st: &EngineState<'_>, i: usize) -> Option<Candidate> {
        if i >= self.items.len() {
            return None;
        }
        let cmp = |(ka, a): &(Key, Candidate), (kb, b): &(Key, Candidate)| {
            ka.cmp(kb)
                .then_with(|| key_cmp(st.wls[a.wl].wl, st.wls[b.wl].wl))
        };
        while self.sorted <= i {
            let rest = &mut self.items[self.sorted..];
            let chunk = self.sorted.max(16).min(rest.len());
            if chunk < rest.len() {
                rest.select_nth_unstable_by(chunk - 1, cmp);
            }
            rest[..chunk].sort_unstable_by(cmp);
            self.sorted += chunk;
        }
        Some(self.items[i].1)
    }
}

impl CandidateList {
    pub fn is_empty(&self) -> bool {
        self.parts.iter().all(|p| p.items.is_empty())
    }

    /// The `i`-th candidate in Kueue's order.
    pub fn get(&mut self, st: &EngineState<'_>, mut i: usize) -> Option<Candidate> {
        for part in &mut self.parts {
            if i < part.items.len() {
                return part.get(st, i);
            }
            i -= part.items.len();
        }
        None
    }
}

pub fn ordered_candidates(st: &EngineState<'_>, ctx: &PreemptionCtx<'_>) -> CandidateList {
    let c = candidates::collect(st, ctx);
    // keys computed once per candidate, not once per comparison
    let split = |v: Vec<Candidate>| {
        let (ev, rest): (Vec<_>, Vec<_>) = v
            .into_iter()
            .map(|c| (candidate_key(st, c.wl, ctx.cq), c))
            .partition(|(_, c)| st.wls[c.wl].evicted);
        (
            LazyPart {
                items: ev,
                sorted: 0,
            },
            LazyPart {
                items: rest,
                sorted: 0,
            },
        )
    };
    let no_other_cq = c.hierarchy.is_empty() && c.priority.is_empty();
    let no_hierarchy = c.hierarchy.is_empty();
    let (h_ev, h) = split(c.hierarchy);
    let (p_ev, p) = split(c.priority);
    let (s_ev, s) = split(c.same_cq);
    CandidateList {
        parts: [h_ev, p_ev, s_ev, h, p, s],
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
    let mut list = ordered_candidates(st, ctx);
    if list.is_empty() {
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
        let mut next = 0;
        while let Some(c) = list.get(st, next) {
            next += 1;
            let c = &c;
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
