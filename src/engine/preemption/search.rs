//! Greedy removal + fill-back (`pkg/scheduler/preemption/preemption.go`
//! `classicalPreemptions`, `fillBackWorkloads`, `workloadFits`) and the oracle used
//! during flavor assignment (`preemption_oracle.go`).

use crate::model::BorrowWithinCohortPolicy;

use super::super::quota::FrId;
use super::super::state::EngineState;
use super::candidates::{self, CandOrder, Candidate, Class, Source, Variant, Verdict};
use super::{PreemptionCtx, Target};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
/// Kueue collects and sorts every candidate; the search then usually stops after a few.
/// In a large cohort tree a preemptor has thousands of candidates, and collecting them
/// for every head of every cycle dominated the plan. So each of the six parts (evicted
/// then not-evicted; hierarchy, priority, same-ClusterQueue candidates) is a lazy merge
/// of its ClusterQueues' lists in the cycle's candidate order
/// ([`candidates::CandOrder`]): a workload is classified only when the search reaches
/// it. The order is total (ties fall back to the unique `namespace/name`), so the
/// sequence is exactly the fully sorted one.
pub struct CandidateList {
    cursors: Vec<Cursor>,
    parts: [Part; 6],
    /// The part being emitted.
    part: usize,
    /// Candidates emitted so far, in order (the search walks the list once per attempt).
    produced: Vec<Candidate>,
    pub no_other_cq: bool,
    pub no_hierarchy: bool,
}

struct Cursor {
    src: Source,
    /// Next position in `per_cq[src.cq][..end]`, not classified yet.
    pos: usize,
    end: usize,
}

#[derive(Default)]
struct Part {
    cursors: Vec<usize>,
    /// Min-heap of (rank of the cursor's next workload, cursor). A cursor's next
    /// workload is classified only when it reaches the top: the ranks of the others are
    /// lower bounds of their next candidates, so a candidate at the top is the smallest.
    heap: BinaryHeap<Reverse<(u32, usize)>>,
    /// The top of `heap`, classified as a candidate.
    top: Option<Candidate>,
    ready: bool,
}

impl CandidateList {
    fn new(st: &EngineState<'_>, ctx: &PreemptionCtx<'_>) -> CandidateList {
        let order = st.cand_order.as_ref().expect("candidate order built");
        let mut list = CandidateList {
            cursors: Vec::new(),
            parts: Default::default(),
            part: 0,
            produced: Vec::new(),
            no_other_cq: false,
            no_hierarchy: false,
        };
        for src in candidates::sources(st, ctx) {
            let len = order.per_cq[src.cq].len();
            let split = order.evicted[src.cq];
            let base = match src.class {
                Class::Hierarchy => 0,
                Class::Priority => 1,
                Class::SameCq => 2,
            };
            for (part, (pos, end)) in [(base, (0, split)), (base + 3, (split, len))] {
                if pos < end {
                    list.parts[part].cursors.push(list.cursors.len());
                    list.cursors.push(Cursor { src, pos, end });
                }
            }
        }
        let empty = |l: &mut CandidateList, p: usize| l.top(st, ctx, p).is_none();
        list.no_hierarchy = empty(&mut list, 0) && empty(&mut list, 3);
        list.no_other_cq = list.no_hierarchy && empty(&mut list, 1) && empty(&mut list, 4);
        list
    }

    fn rank(st: &EngineState<'_>, cur: &Cursor) -> u32 {
        let order = st.cand_order.as_ref().expect("candidate order built");
        order.rank[order.per_cq[cur.src.cq][cur.pos]]
    }

    /// Moves cursor `c` past its next workload and queues it again in `part` if it has
    /// more.
    fn step_past(&mut self, st: &EngineState<'_>, part: usize, c: usize) {
        let cur = &mut self.cursors[c];
        cur.pos += 1;
        if cur.pos < cur.end {
            let r = Self::rank(st, cur);
            self.parts[part].heap.push(Reverse((r, c)));
        }
    }

    /// The smallest candidate of part `p` (it stays queued).
    fn top(
        &mut self,
        st: &EngineState<'_>,
        ctx: &PreemptionCtx<'_>,
        p: usize,
    ) -> Option<Candidate> {
        if !self.parts[p].ready {
            self.parts[p].ready = true;
            let heap: Vec<_> = self.parts[p]
                .cursors
                .iter()
                .map(|&c| Reverse((Self::rank(st, &self.cursors[c]), c)))
                .collect();
            self.parts[p].heap = BinaryHeap::from(heap);
        }
        if let Some(t) = self.parts[p].top {
            return Some(t);
        }
        let order = st.cand_order.as_ref().expect("candidate order built");
        loop {
            let &Reverse((_, c)) = self.parts[p].heap.peek()?;
            let cur = &self.cursors[c];
            let wl = order.per_cq[cur.src.cq][cur.pos];
            match candidates::check(st, ctx, &cur.src, wl) {
                Verdict::Take(cand) => {
                    self.parts[p].top = Some(cand);
                    return Some(cand);
                }
                Verdict::Skip => {
                    self.parts[p].heap.pop();
                    self.step_past(st, p, c);
                }
                Verdict::Stop => {
                    self.parts[p].heap.pop();
                }
            }
        }
    }

    pub fn is_empty(&mut self, st: &EngineState<'_>, ctx: &PreemptionCtx<'_>) -> bool {
        (0..self.parts.len()).all(|p| self.top(st, ctx, p).is_none())
    }

    /// The `i`-th candidate in Kueue's order.
    pub fn get(
        &mut self,
        st: &EngineState<'_>,
        ctx: &PreemptionCtx<'_>,
        i: usize,
    ) -> Option<Candidate> {
        while self.produced.len() <= i {
            if self.part >= self.parts.len() {
                return None;
            }
            let p = self.part;
            let Some(cand) = self.top(st, ctx, p) else {
                self.part += 1;
                continue;
            };
            let Some(Reverse((_, c))) = self.parts[p].heap.pop() else {
                unreachable!("a top candidate is queued")
            };
            self.parts[p].top = None;
            self.produced.push(cand);
            self.step_past(st, p, c);
        }
        Some(self.produced[i])
    }
}

pub fn ordered_candidates(st: &EngineState<'_>, ctx: &PreemptionCtx<'_>) -> CandidateList {
    CandidateList::new(st, ctx)
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
    // outside a cycle's nomination (what-if proposals) the order is built for this call
    let built = st.cand_order.is_none();
    if built {
        st.cand_order = Some(CandOrder::build(st));
    }
    let targets = classical_targets(st, ctx);
    if built {
        st.cand_order = None;
    }
    targets
}

fn classical_targets(st: &mut EngineState<'_>, ctx: &PreemptionCtx<'_>) -> Vec<Target> {
    let mut list = ordered_candidates(st, ctx);
    if list.is_empty(st, ctx) {
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
        while let Some(c) = list.get(st, ctx, next) {
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
