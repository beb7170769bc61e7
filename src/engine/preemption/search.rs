//! Greedy removal + fill-back (`pkg/scheduler/preemption/preemption.go`
//! `classicalPreemptions`, `fillBackWorkloads`, `workloadFits`) and the oracle used
//! during flavor assignment (`preemption_oracle.go`).

use crate::model::BorrowWithinCohortPolicy;

use super::super::quota::FrId;
use super::super::state::EngineState;
use super::candidates::{self, CandOrder, Candidate, Class, Source, Variant};
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
    /// Next position in `per_cq[src.cq][..end]`.
    pos: usize,
    end: usize,
    head: Option<Candidate>,
}

#[derive(Default)]
struct Part {
    cursors: Vec<usize>,
    /// Min-heap of (rank of the cursor's head, cursor).
    heap: BinaryHeap<Reverse<(u32, usize)>>,
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
            let wls = &order.per_cq[src.cq];
            let split = order.evicted[src.cq];
            let base = match src.class {
                Class::Hierarchy => 0,
                Class::Priority => 1,
                Class::SameCq => 2,
            };
            for (part, (pos, end)) in [(base, (0, split)), (base + 3, (split, wls.len()))] {
                if pos < end {
                    list.parts[part].cursors.push(list.cursors.len());
                    list.cursors.push(Cursor {
                        src,
                        pos,
                        end,
                        head: None,
                    });
                }
            }
        }
        for p in [0, 1, 3, 4] {
            list.init_part(st, ctx, p);
        }
        let empty = |l: &CandidateList, p: usize| l.parts[p].heap.is_empty();
        list.no_hierarchy = empty(&list, 0) && empty(&list, 3);
        list.no_other_cq = list.no_hierarchy && empty(&list, 1) && empty(&list, 4);
        list
    }

    /// Moves cursor `c` to its next candidate and queues it in `part`.
    fn advance(&mut self, st: &EngineState<'_>, ctx: &PreemptionCtx<'_>, part: usize, c: usize) {
        let order = st.cand_order.as_ref().expect("candidate order built");
        let cur = &mut self.cursors[c];
        let wls = &order.per_cq[cur.src.cq][..cur.end];
        cur.head = candidates::next_of(st, ctx, &cur.src, wls, &mut cur.pos);
        if let Some(h) = cur.head {
            self.parts[part].heap.push(Reverse((order.rank[h.wl], c)));
        }
    }

    fn init_part(&mut self, st: &EngineState<'_>, ctx: &PreemptionCtx<'_>, p: usize) {
        if self.parts[p].ready {
            return;
        }
        self.parts[p].ready = true;
        for i in 0..self.parts[p].cursors.len() {
            let c = self.parts[p].cursors[i];
            self.advance(st, ctx, p, c);
        }
    }

    pub fn is_empty(&mut self, st: &EngineState<'_>, ctx: &PreemptionCtx<'_>) -> bool {
        self.init_part(st, ctx, 2);
        self.init_part(st, ctx, 5);
        self.parts.iter().all(|p| p.heap.is_empty())
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
            self.init_part(st, ctx, p);
            let Some(Reverse((_, c))) = self.parts[p].heap.pop() else {
                self.part += 1;
                continue;
            };
            let cand = self.cursors[c].head.expect("queued cursor has a head");
            self.produced.push(cand);
            self.advance(st, ctx, p, c);
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
