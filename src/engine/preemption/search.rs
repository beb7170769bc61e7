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

/// `candidateIsValid`, and when not, whether every later candidate of the same
/// ClusterQueue is invalid too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Validity {
    Valid,
    /// This candidate only (a `ReclaimWithoutBorrowing` one in the borrowing attempt).
    Invalid,
    /// Its ClusterQueue, or a cohort below the lowest common ancestor, is within nominal.
    /// An attempt only removes usage, so it stays within nominal for the rest of the
    /// attempt and the source's remaining candidates are invalid as well.
    SourceWithinNominal,
}

/// `candidateIsValid`: other-CQ candidates stay valid only while their CQ, and every
/// cohort up to the lowest common ancestor, is still above nominal.
fn candidate_valid(
    st: &EngineState<'_>,
    ctx: &PreemptionCtx<'_>,
    c: &Candidate,
    borrow: bool,
) -> Validity {
    if c.cq == ctx.cq {
        return Validity::Valid;
    }
    if borrow && c.variant == Variant::ReclaimWithoutBorrowing {
        return Validity::Invalid;
    }
    let node = st.cqs[c.cq].node;
    if st.tree.within_nominal(node, &ctx.frs_need) {
        return Validity::SourceWithinNominal;
    }
    for a in st.tree.ancestors_iter(node) {
        if Some(a) == c.lca {
            break;
        }
        if st.tree.within_nominal(a, &ctx.frs_need) {
            return Validity::SourceWithinNominal;
        }
    }
    Validity::Valid
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
/// sequence is exactly the fully sorted one. One list is walked by one attempt; the
/// search clones the fresh list for its second attempt.
#[derive(Clone)]
pub struct CandidateList {
    cursors: Vec<Cursor>,
    parts: [Part; 6],
    /// The part being emitted.
    part: usize,
    /// Per source (`Cursor::src_id`): its remaining candidates are known to be invalid
    /// for this attempt ([`Validity::SourceWithinNominal`]), so they are dropped unread.
    dead: Vec<bool>,
    pub no_other_cq: bool,
    pub no_hierarchy: bool,
}

#[derive(Clone)]
struct Cursor {
    src: Source,
    /// Index of `src` in the list's sources (both cursors of a source share it).
    src_id: usize,
    /// Next position in `per_cq[src.cq][..end]`, not classified yet.
    pos: usize,
    end: usize,
}

#[derive(Clone, Default)]
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
        let sources = candidates::sources(st, ctx);
        let mut list = CandidateList {
            cursors: Vec::new(),
            parts: Default::default(),
            part: 0,
            dead: vec![false; sources.len()],
            no_other_cq: false,
            no_hierarchy: false,
        };
        for (src_id, src) in sources.into_iter().enumerate() {
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
                    list.cursors.push(Cursor {
                        src,
                        src_id,
                        pos,
                        end,
                    });
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
            if self.dead[cur.src_id] {
                self.parts[p].heap.pop();
                continue;
            }
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

    fn empty() -> CandidateList {
        CandidateList {
            cursors: Vec::new(),
            parts: Default::default(),
            part: 0,
            dead: Vec::new(),
            no_other_cq: true,
            no_hierarchy: true,
        }
    }

    pub fn is_empty(&mut self, st: &EngineState<'_>, ctx: &PreemptionCtx<'_>) -> bool {
        (0..self.parts.len()).all(|p| self.top(st, ctx, p).is_none())
    }

    /// The next candidate in Kueue's order, with its source's id.
    fn next(&mut self, st: &EngineState<'_>, ctx: &PreemptionCtx<'_>) -> Option<(Candidate, usize)> {
        loop {
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
            let src_id = self.cursors[c].src_id;
            if self.dead[src_id] {
                // classified before its source was found within nominal
                continue;
            }
            self.step_past(st, p, c);
            return Some((cand, src_id));
        }
    }

    /// Drops the remaining candidates of a source for this attempt.
    fn kill(&mut self, src_id: usize) {
        self.dead[src_id] = true;
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
    let key = MemoEntry {
        cq: ctx.cq,
        preemptor: ctx.preemptor,
        priority: ctx.priority,
        queue_ts: ctx.queue_ts,
        usage: ctx.usage.clone(),
        frs_need: ctx.frs_need.clone(),
        targets: Vec::new(),
    };
    if let Some(hit) = st
        .search_memo
        .as_ref()
        .and_then(|m| m.iter().find(|e| e.same_search(&key)))
    {
        return hit.targets.clone();
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
    if let Some(memo) = st.search_memo.as_mut() {
        memo.push(MemoEntry {
            targets: targets.clone(),
            ..key
        });
    }
    targets
}

/// One classical search of the head being nominated ([`EngineState::search_memo`]):
/// its inputs (the policy is the ClusterQueue's) and result.
#[derive(Clone, Debug)]
pub struct MemoEntry {
    cq: usize,
    preemptor: Option<usize>,
    priority: i32,
    queue_ts: i64,
    usage: Vec<(FrId, i128)>,
    frs_need: Vec<FrId>,
    targets: Vec<Target>,
}

impl MemoEntry {
    fn same_search(&self, o: &MemoEntry) -> bool {
        (self.cq, self.preemptor, self.priority, self.queue_ts)
            == (o.cq, o.preemptor, o.priority, o.queue_ts)
            && self.usage == o.usage
            && self.frs_need == o.frs_need
    }
}

fn classical_targets(st: &mut EngineState<'_>, ctx: &PreemptionCtx<'_>) -> Vec<Target> {
    let mut fresh = ordered_candidates(st, ctx);
    if fresh.is_empty(st, ctx) {
        return Vec::new();
    }
    let forbidden = ctx.policy.borrow_within_cohort.policy == BorrowWithinCohortPolicy::Never;
    let attempts: &[bool] = if fresh.no_other_cq || (forbidden && !under_nominal(st, ctx)) {
        &[true]
    } else if forbidden && fresh.no_hierarchy {
        &[false, true]
    } else {
        &[true, false]
    };
    for (n, &allow_borrowing) in attempts.iter().enumerate() {
        let mut list = if n + 1 == attempts.len() {
            std::mem::replace(&mut fresh, CandidateList::empty())
        } else {
            fresh.clone()
        };
        let mut targets: Vec<Target> = Vec::new();
        while let Some((c, src_id)) = list.next(st, ctx) {
            match candidate_valid(st, ctx, &c, allow_borrowing) {
                Validity::Valid => {}
                Validity::Invalid => continue,
                Validity::SourceWithinNominal => {
                    list.kill(src_id);
                    continue;
                }
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
