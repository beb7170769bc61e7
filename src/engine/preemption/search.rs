//! Greedy removal + fill-back (`pkg/scheduler/preemption/preemption.go`
//! `classicalPreemptions`, `fillBackWorkloads`, `workloadFits`) and the oracle used
//! during flavor assignment (`preemption_oracle.go`).

use crate::model::BorrowWithinCohortPolicy;

use super::super::quota::{Added, FrId, NodeId};
use super::super::state::CqIdx;
use super::super::state::EngineState;
use super::candidates::{
    self, CandOrder, Candidate, Class, Level, Listed, Source, Variant, Verdict,
};
use super::{PreemptionCtx, Target};
use crate::model::WithinClusterQueue;

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
        if !allow_borrowing && st.tree.borrowing_with(node, fr, v) {
            return false;
        }
        v <= st.tree.cq_available(node, fr)
    })
}

/// Skips exact fit checks that cannot change the answer. A ClusterQueue's `available`
/// of a (flavor, resource) grows by at most `x` when `x` of usage is removed anywhere in
/// its tree, and shrinks by at most `x` when `x` is added (each term of the bubbling
/// arithmetic moves by at most the amount moved). So after an exact check found the
/// preemptor short by `d`, removals of less than `d` in total cannot make it fit; and
/// after a fit with room `r` to spare, adding back a target using at most `r` keeps it
/// fitting. The borrowing rule (`allow_borrowing` false) reads the preemptor's own
/// usage only and is always checked exactly. The answers are those of
/// [`workload_fits`] after every step, as `classicalPreemptions` computes them.
struct FitBound {
    /// Per pair of the request: (pair, requested, what the last exact check found:
    /// available − requested, what was moved since).
    pairs: Vec<(FrId, i128, i128, i128)>,
}

impl FitBound {
    fn new(ctx: &PreemptionCtx<'_>) -> FitBound {
        FitBound {
            // no exact check yet: short by an unknown amount (never skips)
            pairs: ctx.usage.iter().map(|&(fr, v)| (fr, v, 0, 0)).collect(),
        }
    }

    /// Counts the removal of `wl`'s usage; true when it cannot have made the request fit.
    fn cannot_fit_after_removing(&mut self, st: &EngineState<'_>, wl: usize) -> bool {
        let mut short = false;
        for (fr, _, room, moved) in &mut self.pairs {
            *moved += usage_in(st, wl, *fr);
            if *room + *moved < 0 {
                short = true;
            }
        }
        short
    }

    /// Counts adding back `wl`'s usage; true when the request surely still fits (then
    /// the room left is known without an exact check).
    fn still_fits_after_adding(
        &mut self,
        st: &EngineState<'_>,
        ctx: &PreemptionCtx<'_>,
        wl: usize,
        allow_borrowing: bool,
    ) -> bool {
        let added = |fr: FrId| usage_in(st, wl, fr);
        if self.pairs.iter().any(|&(fr, _, room, _)| added(fr) > room) {
            return false;
        }
        // the borrowing rule with the target back: only its own ClusterQueue's usage moves
        let node = st.cqs[ctx.cq].node;
        if !allow_borrowing && st.wls[wl].cq == Some(ctx.cq) {
            let borrows_after = self
                .pairs
                .iter()
                .any(|&(fr, v, _, _)| st.tree.borrowing_with(node, fr, v + added(fr)));
            if borrows_after {
                return false;
            }
        }
        for (fr, _, room, _) in &mut self.pairs {
            *room -= added(*fr);
        }
        true
    }

    /// The exact check ([`workload_fits`]), remembering what it found.
    fn check(
        &mut self,
        st: &EngineState<'_>,
        ctx: &PreemptionCtx<'_>,
        allow_borrowing: bool,
    ) -> bool {
        st.step();
        let node = st.cqs[ctx.cq].node;
        let mut fits = allow_borrowing || !borrows(st, ctx);
        for (fr, v, room, moved) in &mut self.pairs {
            *room = st.tree.cq_available(node, *fr) - *v;
            *moved = 0;
            fits &= *room >= 0;
        }
        fits
    }

    /// The exact check of a fill-back step, read without adding `wl` back
    /// ([`crate::engine::quota::QuotaTree::available_if_added`]): most steps keep their
    /// target removed, and adding, checking and removing it again was most of a search's
    /// work. On a fit the room it leaves is remembered.
    fn fits_if_added(
        &mut self,
        st: &mut EngineState<'_>,
        ctx: &PreemptionCtx<'_>,
        wl: usize,
        allow_borrowing: bool,
    ) -> bool {
        st.step();
        let mut rooms = [0i128; 8];
        if self.pairs.len() > rooms.len() {
            return self.fits_by_adding(st, ctx, wl, allow_borrowing);
        }
        let node = st.cqs[ctx.cq].node;
        let at = st.cqs[st.wls[wl].cq.expect("a target is admitted")].node;
        // the request fits now (fill-back only adds back what keeps it fitting): pairs
        // the target does not use stay as they are
        for (k, &(fr, v, room, _)) in self.pairs.iter().enumerate() {
            let u = usage_in(st, wl, fr);
            if u == 0 {
                rooms[k] = room;
                continue;
            }
            if !allow_borrowing && at == node && st.tree.borrowing_with(node, fr, v + u) {
                return false;
            }
            let room = match st.tree.available_if_added(node, fr, at, u) {
                Added::Unchanged => room,
                Added::Available(available) => available.max(0) - v,
            };
            if room < 0 {
                return false;
            }
            rooms[k] = room;
        }
        for (k, (_, _, room, moved)) in self.pairs.iter_mut().enumerate() {
            *room = rooms[k];
            *moved = 0;
        }
        true
    }

    /// [`FitBound::fits_if_added`] by adding `wl` back, checking and removing it again.
    fn fits_by_adding(
        &mut self,
        st: &mut EngineState<'_>,
        ctx: &PreemptionCtx<'_>,
        wl: usize,
        allow_borrowing: bool,
    ) -> bool {
        // on a miss the room found with `wl` in stays a lower bound once it is out again
        let frs: Vec<FrId> = self.pairs.iter().map(|&(fr, ..)| fr).collect();
        st.add_usage_in(wl, &frs);
        let fits = self.check(st, ctx, allow_borrowing);
        st.remove_usage_in(wl, &frs);
        fits
    }
}

/// [`workload_fits`] with `wl` added back (the snapshot is left unchanged): the debug
/// builds' reference for the fill-back shortcuts.
fn fits_with_added(
    st: &mut EngineState<'_>,
    ctx: &PreemptionCtx<'_>,
    wl: usize,
    frs: &[FrId],
    allow_borrowing: bool,
) -> bool {
    st.add_usage_in(wl, frs);
    let fits = workload_fits(st, ctx, allow_borrowing);
    st.remove_usage_in(wl, frs);
    fits
}

/// `wl`'s usage of `fr` (0 when it uses none).
fn usage_in(st: &EngineState<'_>, wl: usize, fr: FrId) -> i128 {
    st.usage_of(wl)
        .iter()
        .find(|(f, _)| *f == fr)
        .map_or(0, |&(_, v)| v)
}

/// Whether the request would make the preemptor's ClusterQueue borrow.
fn borrows(st: &EngineState<'_>, ctx: &PreemptionCtx<'_>) -> bool {
    let node = st.cqs[ctx.cq].node;
    ctx.usage
        .iter()
        .any(|&(fr, v)| st.tree.borrowing_with(node, fr, v))
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

/// The (flavor, resource) pairs a classical search reads: the preemptor's request (fit
/// checks, the levels of its tree) and those needing preemption (candidate validity).
/// Its removals and restores move only these: usage of one pair bubbles through the
/// tree independently of the others, so the pairs read see exactly what a full removal
/// would show them, and an oracle search (one pair) does a third of the work.
fn read_frs(ctx: &PreemptionCtx<'_>) -> Vec<FrId> {
    let mut frs: Vec<FrId> = ctx.usage.iter().map(|&(fr, _)| fr).collect();
    frs.extend(ctx.frs_need.iter().copied());
    frs.sort_unstable();
    frs.dedup();
    frs
}

/// Takes `targets`' usage of `frs` out of the snapshot ([`restore_in`] puts it back).
fn remove_in(st: &mut EngineState<'_>, targets: &[Target], frs: &[FrId]) {
    for t in targets {
        st.remove_usage_in(t.wl, frs);
    }
}

fn restore_in(st: &mut EngineState<'_>, targets: &[Target], frs: &[FrId]) {
    for t in targets {
        st.add_usage_in(t.wl, frs);
    }
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
/// of a few streams already in the cycle's candidate order ([`candidates::CandOrder`]):
/// the preemptor's own ClusterQueue, and per level of its cohort tree the level's
/// [`candidates::CohortList`]. A workload is classified only when its stream reaches it.
/// The order is total (ties fall back to the unique `namespace/name`), so the sequence is
/// exactly the fully sorted one. One list is walked by one attempt; the search clones
/// the fresh list for its second attempt.
#[derive(Clone)]
pub struct CandidateList {
    streams: Vec<Stream>,
    parts: [Vec<usize>; 6],
    /// The part being emitted.
    part: usize,
    /// ClusterQueues whose remaining candidates are known to be invalid for this attempt
    /// ([`Validity::SourceWithinNominal`]): dropped unread.
    dead: Vec<CqIdx>,
    pub no_other_cq: bool,
    pub no_hierarchy: bool,
}

#[derive(Clone, Copy)]
enum StreamList {
    /// [`CandOrder::of_cq`] of the preemptor's ClusterQueue.
    OwnCq,
    /// The cohort list of a level (index into `cohort_lists`, cohort).
    Cohort(usize, NodeId),
}

#[derive(Clone)]
struct Stream {
    list: StreamList,
    level: Option<Level>,
    /// Next position in the list, not classified yet (or the classified `head`).
    pos: usize,
    end: usize,
    /// The candidate at `pos`, classified, and its rank.
    head: Option<(Candidate, u32)>,
}

impl CandidateList {
    fn new(st: &mut EngineState<'_>, ctx: &PreemptionCtx<'_>) -> CandidateList {
        let levels = candidates::levels(st, ctx);
        let lists = if levels.is_empty() {
            None
        } else {
            Some(CandOrder::lists_for(st, &ctx.frs_need))
        };
        let st: &EngineState<'_> = st;
        let order = st.cand_order.as_ref().expect("candidate order built");
        let mut list = CandidateList {
            streams: Vec::new(),
            parts: Default::default(),
            part: 0,
            dead: Vec::new(),
            no_other_cq: false,
            no_hierarchy: false,
        };
        let add = |list: &mut CandidateList, base: usize, sl, level, split, len| {
            for (part, (pos, end)) in [(base, (0, split)), (base + 3, (split, len))] {
                if pos < end {
                    list.parts[part].push(list.streams.len());
                    list.streams.push(Stream {
                        list: sl,
                        level,
                        pos,
                        end,
                        head: None,
                    });
                }
            }
        };
        if ctx.policy.within_cluster_queue != WithinClusterQueue::Never {
            let (split, len) = (order.evicted[ctx.cq], order.of_cq(ctx.cq).len());
            add(&mut list, 2, StreamList::OwnCq, None, split, len);
        }
        if let Some(li) = lists {
            let by_cohort = &order.cohort_lists[li].1.by_cohort;
            for level in levels {
                let cl = &by_cohort[level.root];
                let base = match level.class {
                    Class::Hierarchy => 0,
                    _ => 1,
                };
                let sl = StreamList::Cohort(li, level.root);
                add(&mut list, base, sl, Some(level), cl.evicted, cl.wls.len());
            }
        }
        let empty = |l: &mut CandidateList, p: usize| l.top(st, ctx, p).is_none();
        list.no_hierarchy = empty(&mut list, 0) && empty(&mut list, 3);
        list.no_other_cq = list.no_hierarchy && empty(&mut list, 1) && empty(&mut list, 4);
        list
    }

    fn entries<'o>(order: &'o CandOrder, ctx: &PreemptionCtx<'_>, sl: StreamList) -> &'o [Listed] {
        match sl {
            StreamList::OwnCq => order.of_cq(ctx.cq),
            StreamList::Cohort(li, root) => &order.cohort_lists[li].1.by_cohort[root].wls,
        }
    }

    /// Classifies stream `s`'s next workloads until one is a candidate (kept as its
    /// head, with its rank) or the stream ends.
    fn fill(
        &mut self,
        st: &EngineState<'_>,
        ctx: &PreemptionCtx<'_>,
        s: usize,
    ) -> Option<(Candidate, u32)> {
        let order = st.cand_order.as_ref().expect("candidate order built");
        let stream = &mut self.streams[s];
        if let Some(h) = stream.head {
            if !self.dead.contains(&h.0.cq) {
                return Some(h);
            }
            stream.head = None;
            stream.pos += 1;
        }
        let entries = Self::entries(order, ctx, stream.list);
        while stream.pos < stream.end {
            let e = &entries[stream.pos];
            let src = match stream.level {
                None => Source {
                    cq: ctx.cq,
                    lca: None,
                    advantage: false,
                    class: Class::SameCq,
                    listed_by_need: false,
                },
                Some(level) => {
                    let cq = e.cq as CqIdx;
                    let skipped = cq == ctx.cq
                        || self.dead.contains(&cq)
                        || level
                            .skip
                            .is_some_and(|skip| st.tree.in_subtree_of(e.node_pre, skip));
                    if skipped {
                        stream.pos += 1;
                        continue;
                    }
                    Source {
                        cq,
                        lca: Some(level.root),
                        advantage: level.advantage,
                        class: level.class,
                        // a level's list is `CohortLists` of `ctx.frs_need`
                        listed_by_need: true,
                    }
                }
            };
            match candidates::check(st, ctx, &src, e) {
                Verdict::Take(cand) => {
                    stream.head = Some((cand, e.rank));
                    return Some((cand, e.rank));
                }
                Verdict::Skip => stream.pos += 1,
                // lists ascend in priority within a segment and every ClusterQueue of a
                // level has the same bound: nothing after it is a candidate
                Verdict::Stop => stream.pos = stream.end,
            }
        }
        None
    }

    /// The smallest candidate of part `p` and its stream (it stays queued).
    fn top_stream(
        &mut self,
        st: &EngineState<'_>,
        ctx: &PreemptionCtx<'_>,
        p: usize,
    ) -> Option<(Candidate, usize)> {
        let mut best: Option<(u32, Candidate, usize)> = None;
        for i in 0..self.parts[p].len() {
            let s = self.parts[p][i];
            if let Some((c, r)) = self.fill(st, ctx, s)
                && best.is_none_or(|(b, _, _)| r < b)
            {
                best = Some((r, c, s));
            }
        }
        best.map(|(_, c, s)| (c, s))
    }

    fn top(
        &mut self,
        st: &EngineState<'_>,
        ctx: &PreemptionCtx<'_>,
        p: usize,
    ) -> Option<Candidate> {
        self.top_stream(st, ctx, p).map(|(c, _)| c)
    }

    pub fn is_empty(&mut self, st: &EngineState<'_>, ctx: &PreemptionCtx<'_>) -> bool {
        (0..self.parts.len()).all(|p| self.top(st, ctx, p).is_none())
    }

    /// The next candidate in Kueue's order.
    fn next(&mut self, st: &EngineState<'_>, ctx: &PreemptionCtx<'_>) -> Option<Candidate> {
        while self.part < self.parts.len() {
            let p = self.part;
            let Some((cand, s)) = self.top_stream(st, ctx, p) else {
                self.part += 1;
                continue;
            };
            let stream = &mut self.streams[s];
            stream.head = None;
            stream.pos += 1;
            return Some(cand);
        }
        None
    }

    /// Drops the remaining candidates of a ClusterQueue for this attempt.
    fn kill(&mut self, cq: CqIdx) {
        if !self.dead.contains(&cq) {
            self.dead.push(cq);
        }
    }
}

pub fn ordered_candidates(st: &mut EngineState<'_>, ctx: &PreemptionCtx<'_>) -> CandidateList {
    CandidateList::new(st, ctx)
}

/// `queueUnderNominalInResourcesNeedingPreemption`.
fn under_nominal(st: &EngineState<'_>, ctx: &PreemptionCtx<'_>) -> bool {
    let n = st.cqs[ctx.cq].node;
    let nominal = &st.tree.nodes[n].nominal;
    ctx.frs_need
        .iter()
        .all(|&fr| st.tree.usage(n, fr) < nominal[fr])
}

/// The victims Kueue would choose for this preemptor, or empty if none suffice.
/// The snapshot is left unchanged.
pub fn get_targets(st: &mut EngineState<'_>, ctx: &PreemptionCtx<'_>) -> Vec<Target> {
    if st.fair.enabled {
        return crate::engine::fair::get_targets(st, ctx);
    }
    search(st, ctx, false)
}

/// [`get_targets`], leaving the victims' usage of the pairs [`read_frs`] names removed
/// from the snapshot (the caller restores it with [`restore_in`]): the oracle reads the
/// tree after removing them, and restoring them only to remove them again was a fifth of
/// its work.
fn get_targets_removed(st: &mut EngineState<'_>, ctx: &PreemptionCtx<'_>) -> Vec<Target> {
    if st.fair.enabled {
        let targets = crate::engine::fair::get_targets(st, ctx);
        remove_in(st, &targets, &read_frs(ctx));
        return targets;
    }
    search(st, ctx, true)
}

/// A classical search, through the head's memo; see [`classical_targets`] for
/// `keep_removed`.
fn search(st: &mut EngineState<'_>, ctx: &PreemptionCtx<'_>, keep_removed: bool) -> Vec<Target> {
    // the key (two small vectors) is built only while a head is being nominated
    let key = st.search_memo.is_some().then(|| MemoEntry {
        cq: ctx.cq,
        preemptor: ctx.preemptor,
        priority: ctx.priority,
        queue_ts: ctx.queue_ts,
        usage: ctx.usage.clone(),
        frs_need: ctx.frs_need.clone(),
        targets: Vec::new(),
    });
    if let (Some(memo), Some(key)) = (&st.search_memo, &key)
        && let Some(hit) = memo.iter().find(|e| e.same_search(key))
    {
        let targets = hit.targets.clone();
        if keep_removed {
            remove_in(st, &targets, &read_frs(ctx));
        }
        return targets;
    }
    // outside a cycle's nomination (what-if proposals) the order is built for this call
    let built = st.cand_order.is_none();
    if built {
        st.cand_order = Some(CandOrder::build(st));
    }
    let targets = classical_targets(st, ctx, keep_removed);
    if built {
        st.cand_order = None;
    }
    if let (Some(memo), Some(key)) = (st.search_memo.as_mut(), key) {
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

fn classical_targets(
    st: &mut EngineState<'_>,
    ctx: &PreemptionCtx<'_>,
    keep_removed: bool,
) -> Vec<Target> {
    let mut fresh = ordered_candidates(st, ctx);
    if fresh.is_empty(st, ctx) {
        return Vec::new();
    }
    let frs = read_frs(ctx);
    let forbidden = ctx.policy.borrow_within_cohort.policy == BorrowWithinCohortPolicy::Never;
    let attempts: &[bool] = if fresh.no_other_cq || (forbidden && !under_nominal(st, ctx)) {
        &[true]
    } else if forbidden && fresh.no_hierarchy {
        &[false, true]
    } else {
        &[true, false]
    };
    for &allow_borrowing in attempts {
        // each attempt walks its own copy (a handful of small streams)
        let mut list = fresh.clone();
        let mut targets: Vec<Target> = Vec::new();
        let mut bound = FitBound::new(ctx);
        while let Some(c) = list.next(st, ctx) {
            match candidate_valid(st, ctx, &c, allow_borrowing) {
                Validity::Valid => {}
                Validity::Invalid => continue,
                Validity::SourceWithinNominal => {
                    list.kill(c.cq);
                    continue;
                }
            }
            st.remove_usage_in(c.wl, &frs);
            targets.push(Target {
                wl: c.wl,
                reason: c.variant.reason(),
            });
            if bound.cannot_fit_after_removing(st, c.wl) {
                // every engine test (debug builds) checks each shortcut against the
                // exact check `classicalPreemptions` makes
                debug_assert!(
                    !workload_fits(st, ctx, allow_borrowing),
                    "bound skipped a fit"
                );
                continue;
            }
            if !bound.check(st, ctx, allow_borrowing) {
                continue;
            }
            // fill back, from the second-to-last target down to the first
            let mut i = targets.len().saturating_sub(1);
            while i > 0 {
                i -= 1;
                let wl = targets[i].wl;
                let fits = bound.still_fits_after_adding(st, ctx, wl, allow_borrowing)
                    || bound.fits_if_added(st, ctx, wl, allow_borrowing);
                debug_assert_eq!(
                    fits,
                    fits_with_added(st, ctx, wl, &frs, allow_borrowing),
                    "fill-back shortcut"
                );
                if fits {
                    st.add_usage_in(wl, &frs);
                    targets.swap_remove(i);
                }
            }
            if !keep_removed {
                restore_in(st, &targets, &frs);
            }
            return targets;
        }
        restore_in(st, &targets, &frs);
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
    // the height reads `fr` only, the one pair the search moves
    let targets = get_targets_removed(st, &ctx);
    let (b, _) = st.tree.height_of_lowest_subtree_that_fits(node, fr, val);
    restore_in(st, &targets, &[fr]);
    if targets.is_empty() {
        return (Possibility::NoCandidates, b);
    }
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
