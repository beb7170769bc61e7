//! Candidate collection (`pkg/scheduler/preemption/classical/hierarchical_preemption.go`).

use std::sync::Arc;

use crate::model::{BorrowWithinCohortPolicy, ReclaimWithinCohort, WithinClusterQueue};

use super::super::quota::{FrId, NodeId};
use super::super::state::{CqIdx, EngineState, WlIdx, WlState};
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

/// `classifyPreemptionVariant`; `None` = cannot be preempted. `e` is the workload's
/// entry in a candidate list (its priority is read there); `listed_by_need` says the list
/// holds only workloads using a pair that needs preemption ([`CohortLists`]), so that
/// scan is skipped. Most candidates of a big cohort tree are decided without reading the
/// workload's own record.
fn classify(
    st: &EngineState<'_>,
    ctx: &PreemptionCtx<'_>,
    e: &Listed,
    src: &Source,
) -> Option<Variant> {
    st.step();
    let (wl, priority) = (e.wl, e.priority);
    // the policy (integer comparisons) before the usage scan: most candidates of a big
    // cohort tree fail on priority
    let allowed = if src.cq == ctx.cq {
        let queue_ts = || st.wls[wl].queue_ts;
        match ctx.policy.within_cluster_queue {
            WithinClusterQueue::LowerOrNewerEqualPriority if priority == ctx.priority => {
                ctx.queue_ts < queue_ts()
            }
            p => policy_allows_within(p, (ctx.priority, ctx.queue_ts), (priority, 0)),
        }
    } else {
        policy_allows_reclaim(
            ctx.policy.reclaim_within_cohort,
            (ctx.priority, ctx.queue_ts),
            (priority, 0),
        )
    };
    if !allowed || Some(wl) == ctx.preemptor || (!src.listed_by_need && !uses_needed(st, wl, ctx)) {
        return None;
    }
    if src.cq == ctx.cq {
        return Some(Variant::WithinCq);
    }
    if src.advantage {
        return Some(Variant::HierarchicalReclaim);
    }
    let bwc = &ctx.policy.borrow_within_cohort;
    if bwc.policy == BorrowWithinCohortPolicy::Never {
        return Some(Variant::ReclaimWithoutBorrowing);
    }
    // isAboveBorrowingThreshold
    let above =
        priority >= ctx.priority || bwc.max_priority_threshold.is_some_and(|t| priority > t);
    Some(if above {
        Variant::ReclaimWithoutBorrowing
    } else {
        Variant::ReclaimWhileBorrowing
    })
}

/// Each ClusterQueue's admitted workloads in Kueue's candidate order, built once per
/// cycle for the nomination phase (admitted sets, eviction flags and reservation times do
/// not change while the heads are nominated).
///
/// Within one of the six parts of the ordered list (§6.2: evicted or not × hierarchy,
/// priority or same-ClusterQueue candidates) the first two keys of `CandidatesOrdering`
/// (`pkg/scheduler/preemption/common/ordering.go`: evicted first, other ClusterQueues
/// first) are constant, so the order of a part is the order of the remaining keys
/// (priority, most recent reservation, uid, then `namespace/name`), which does not depend
/// on the preemptor. One sort of every admitted workload gives each a rank in that order;
/// a preemptor's part is then the merge of its ClusterQueues' ranked lists, walked lazily.
#[derive(Clone, Debug)]
pub struct CandOrder {
    /// ClusterQueue by ClusterQueue ([`CandOrder::of_cq`]): its admitted workloads by
    /// rank (evicted ones first, each group by ascending priority).
    /// (Shared with the nomination workers' copies, as are the next three.)
    per_cq: Arc<Vec<Listed>>,
    /// Where each ClusterQueue's part of `per_cq` starts (and, at `c + 1`, ends).
    cq_start: Arc<Vec<u32>>,
    /// Per ClusterQueue: how many of `per_cq` are evicted (they come first).
    pub evicted: Arc<Vec<usize>>,
    /// Every admitted workload in rank order, with what [`CohortLists::build`] reads.
    global: Arc<Vec<Global>>,
    /// Per set of contested (flavor, resource) pairs: [`CohortLists`], built on first use.
    pub cohort_lists: Vec<(Vec<FrId>, CohortLists)>,
}

/// A workload in a candidate list, with what walking the list reads of it. The lists
/// are read in order while the workloads' own records are scattered over memory: on a
/// large cluster, reading those per list entry was most of a search's time.
#[derive(Clone, Copy, Debug)]
pub struct Listed {
    pub wl: WlIdx,
    /// Position in the cycle's candidate order (the merge of a preemptor's lists).
    pub rank: u32,
    pub cq: u32,
    pub priority: i32,
    /// Pre-order number of its ClusterQueue's node ([`super::super::quota::QuotaTree::preorder`]).
    pub node_pre: u32,
}

/// A workload of the global order, for building [`CohortLists`] in one sequential pass.
#[derive(Clone, Copy, Debug)]
struct Global {
    listed: Listed,
    /// Its ClusterQueue's node.
    node: u32,
    evicted: bool,
    /// Bit `fr` set for each (flavor, resource) it uses below 64; `wide` when it uses one
    /// at 64 or above (then its usage is read).
    frs: u64,
    wide: bool,
}

/// Merges two lists sorted by [`rank_cmp`].
fn merge_sorted(st: &EngineState<'_>, a: Vec<Ranked>, b: Vec<Ranked>) -> Vec<Ranked> {
    if b.is_empty() {
        return a;
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
        if rank_cmp(st, x, y) == std::cmp::Ordering::Greater {
            out.extend(b.next());
        } else {
            out.extend(a.next());
        }
    }
    out.extend(a);
    out.extend(b);
    out
}

/// Bits of the pairs below 64, and whether any pair is at 64 or above.
fn fr_bits(frs: impl Iterator<Item = FrId>) -> (u64, bool) {
    frs.fold((0, false), |(bits, wide), fr| {
        if fr < 64 {
            (bits | 1 << fr, wide)
        } else {
            (bits, true)
        }
    })
}

/// For one set of contested (flavor, resource) pairs F, per cohort C: the admitted
/// workloads using F of the ClusterQueues that `collectCandidatesInSubtree(C)` visits
/// (the ClusterQueues above nominal in F, reached through cohorts above nominal in F),
/// in rank order (evicted ones first). A preemptor's candidates from one level of its
/// cohort tree are this list minus its own ClusterQueue and the subtree it came from, so
/// a search reads a prefix of a few lists instead of visiting every ClusterQueue of the
/// tree.
#[derive(Clone, Debug, Default)]
pub struct CohortLists {
    /// By node id (empty for ClusterQueues and for cohorts no list reaches).
    pub by_cohort: Vec<CohortList>,
}

#[derive(Clone, Debug, Default)]
pub struct CohortList {
    pub wls: Vec<Listed>,
    /// How many of `wls` are evicted (they come first).
    pub evicted: usize,
}

impl CohortLists {
    fn build(st: &EngineState<'_>, order: &[Global], frs: &[FrId]) -> CohortLists {
        let nodes = st.tree.nodes.len();
        let over: Vec<bool> = (0..nodes)
            .map(|n| !st.tree.within_nominal(n, frs))
            .collect();
        let (bits, wide) = fr_bits(frs.iter().copied());
        let mut by_cohort = vec![CohortList::default(); nodes];
        for g in order {
            let mut node = g.node as NodeId;
            if !over[node] {
                continue;
            }
            let uses = g.frs & bits != 0
                || ((g.wide || wide)
                    && st
                        .usage_of(g.listed.wl)
                        .iter()
                        .any(|(fr, _)| frs.contains(fr)));
            if !uses {
                continue;
            }
            let evicted = usize::from(g.evicted);
            while let Some(parent) = st.tree.nodes[node].parent {
                let list = &mut by_cohort[parent];
                list.wls.push(g.listed);
                list.evicted += evicted;
                // a cohort within nominal is not descended into from above
                if !over[parent] {
                    break;
                }
                node = parent;
            }
        }
        CohortLists { by_cohort }
    }
}

/// The integer part of a candidate's order: not evicted, priority, most recent
/// reservation first, uid rank.
type OrderKey = (bool, i32, std::cmp::Reverse<i64>, u32);

/// An admitted workload with its order key, as [`CandOrder::build`] sorts them, and the
/// (flavor, resource) pairs it uses ([`fr_bits`]: they do not change while it is admitted).
pub type Ranked = (OrderKey, CqIdx, WlIdx, (u64, bool));

fn ranked(st: &EngineState<'_>, c: CqIdx, w: WlIdx) -> Ranked {
    let bits = fr_bits(st.usage_of(w).iter().map(|&(fr, _)| fr));
    (order_key(&st.wls[w]), c, w, bits)
}

fn order_key(x: &super::super::state::WlInfo<'_>) -> OrderKey {
    (
        !x.evicted,
        x.priority,
        std::cmp::Reverse(x.reserve_time),
        x.uid_rank,
    )
}

fn rank_cmp(
    st: &EngineState<'_>,
    (ka, _, a, _): &Ranked,
    (kb, _, b, _): &Ranked,
) -> std::cmp::Ordering {
    ka.cmp(kb)
        .then_with(|| super::super::state::key_cmp(st.wls[*a].wl, st.wls[*b].wl))
        .then(a.cmp(b))
}

/// Whether ClusterQueue `c` is in Kueue's scheduling snapshot: an inactive one (stopped,
/// naming a missing ResourceFlavor, in a cohort cycle) is left out of it
/// (`pkg/cache/scheduler/snapshot.go`, `Cache.Snapshot`), so its admitted workloads are
/// never preemption candidates. Its usage still counts in its cohorts: the snapshot's
/// cohorts are clones of the cache's, whose quota and usage include every child.
pub fn in_snapshot(st: &EngineState<'_>, c: CqIdx) -> bool {
    st.cqs[c].inactive.is_none()
}

impl CandOrder {
    /// The order of the snapshot's admitted workloads, sorted from scratch.
    pub fn build(st: &EngineState<'_>) -> CandOrder {
        Self::from_sorted(st, &Self::sorted(st))
    }

    fn sorted(st: &EngineState<'_>) -> Vec<Ranked> {
        // keys materialized next to each workload: the sort compares integers in one
        // array instead of reading every workload's record per comparison
        let mut all: Vec<Ranked> = Vec::new();
        for (c, q) in st.cqs.iter().enumerate() {
            if in_snapshot(st, c) {
                all.extend(q.admitted.iter().map(|&w| ranked(st, c, w)));
            }
        }
        all.sort_unstable_by(|a, b| rank_cmp(st, a, b));
        all
    }

    /// [`Self::build`] for a cycle: between cycles only a few workloads are admitted or
    /// released, so the previous cycle's sorted list ([`EngineState::cand_sorted`]) is
    /// kept where still true (admitted in the same ClusterQueue with the same key), the
    /// workloads admitted since ([`EngineState::changed_since`]) are sorted and merged
    /// in. The result is the same order as a full sort.
    pub fn build_for_cycle(st: &mut EngineState<'_>) -> CandOrder {
        let prev = std::mem::take(&mut st.cand_sorted);
        let mut since = std::mem::take(&mut st.changed_since);
        let all = if prev.is_empty() {
            Self::sorted(st)
        } else {
            // kept: still admitted in the same ClusterQueue with the same key; fresh:
            // admitted since, or still admitted with a changed key
            let mut placed = vec![false; st.wls.len()];
            // a workload's place changes only when it is admitted or released
            // ([`EngineState::admit`], [`EngineState::release`]): the others are kept
            // without reading their records
            let mut changed = vec![false; st.wls.len()];
            for &w in &since {
                changed[w] = true;
            }
            let mut kept: Vec<Ranked> = Vec::with_capacity(prev.len() + since.len());
            let mut fresh: Vec<Ranked> = Vec::new();
            for (key, c, w, bits) in prev {
                if !changed[w] {
                    kept.push((key, c, w, bits));
                    continue;
                }
                let x = &st.wls[w];
                if x.state != WlState::Admitted || x.cq != Some(c) {
                    continue;
                }
                placed[w] = true;
                let now = order_key(x);
                if now == key {
                    kept.push((key, c, w, bits));
                } else {
                    fresh.push((now, c, w, bits));
                }
            }
            since.sort_unstable();
            since.dedup();
            for w in since {
                let x = &st.wls[w];
                if let (false, WlState::Admitted, Some(c)) = (placed[w], x.state, x.cq)
                    && in_snapshot(st, c)
                {
                    fresh.push(ranked(st, c, w));
                }
            }
            fresh.sort_unstable_by(|a, b| rank_cmp(st, a, b));
            let merged = merge_sorted(st, kept, fresh);
            // every engine test (debug builds) checks the merge against a full sort
            debug_assert!(merged == Self::sorted(st), "merged candidate order differs");
            merged
        };
        let order = Self::from_sorted(st, &all);
        st.cand_sorted = all;
        order
    }

    fn from_sorted(st: &EngineState<'_>, all: &[Ranked]) -> CandOrder {
        let ncq = st.cqs.len();
        // one array, ClusterQueue by ClusterQueue (a counting sort keeps the rank order)
        let mut cq_start = vec![0u32; ncq + 1];
        for &(_, c, ..) in all {
            cq_start[c + 1] += 1;
        }
        for c in 0..ncq {
            cq_start[c + 1] += cq_start[c];
        }
        let mut next: Vec<u32> = cq_start[..ncq].to_vec();
        let mut per_cq = vec![
            Listed {
                wl: 0,
                rank: 0,
                cq: 0,
                priority: 0,
                node_pre: 0,
            };
            all.len()
        ];
        let mut evicted = vec![0; ncq];
        let mut global = Vec::with_capacity(all.len());
        let (node_pre, node): (Vec<u32>, Vec<u32>) = st
            .cqs
            .iter()
            .map(|q| (st.tree.preorder(q.node), q.node as u32))
            .unzip();
        for (r, &((not_evicted, priority, ..), c, w, (frs, wide))) in all.iter().enumerate() {
            let listed = Listed {
                wl: w,
                rank: r as u32,
                cq: c as u32,
                priority,
                node_pre: node_pre[c],
            };
            per_cq[next[c] as usize] = listed;
            next[c] += 1;
            evicted[c] += usize::from(!not_evicted);
            global.push(Global {
                listed,
                node: node[c],
                evicted: !not_evicted,
                frs,
                wide,
            });
        }
        CandOrder {
            per_cq: Arc::new(per_cq),
            cq_start: Arc::new(cq_start),
            evicted: Arc::new(evicted),
            global: Arc::new(global),
            cohort_lists: Vec::new(),
        }
    }

    /// ClusterQueue `c`'s admitted workloads by rank.
    pub fn of_cq(&self, c: CqIdx) -> &[Listed] {
        &self.per_cq[self.cq_start[c] as usize..self.cq_start[c + 1] as usize]
    }

    /// Index of F's [`CohortLists`] in `cohort_lists`, built if needed.
    pub fn lists_for(st: &mut EngineState<'_>, frs: &[FrId]) -> usize {
        let order = st.cand_order.as_ref().expect("candidate order built");
        if let Some(i) = order.cohort_lists.iter().position(|(f, _)| f == frs) {
            return i;
        }
        let lists = CohortLists::build(st, &order.global, frs);
        let order = st.cand_order.as_mut().expect("candidate order built");
        order.cohort_lists.push((frs.to_vec(), lists));
        order.cohort_lists.len() - 1
    }
}

/// Which class of §6.1 a ClusterQueue's candidates belong to, for one preemptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Hierarchy,
    Priority,
    SameCq,
}

/// One ClusterQueue whose admitted workloads are candidates of one class.
#[derive(Clone, Copy, Debug)]
pub struct Source {
    pub cq: CqIdx,
    pub lca: Option<NodeId>,
    pub advantage: bool,
    pub class: Class,
    /// The list walked holds only workloads using a pair that needs preemption.
    pub listed_by_need: bool,
}

/// Where the policy's priority rule excludes every later candidate of a ClusterQueue
/// (its lists ascend in priority): `(bound, inclusive)`, `None` = no bound.
pub fn priority_bound(ctx: &PreemptionCtx<'_>, cq: CqIdx) -> Option<(i32, bool)> {
    if cq == ctx.cq {
        match ctx.policy.within_cluster_queue {
            WithinClusterQueue::LowerOrNewerEqualPriority => Some((ctx.priority, true)),
            _ => Some((ctx.priority, false)),
        }
    } else {
        match ctx.policy.reclaim_within_cohort {
            ReclaimWithinCohort::Any => None,
            _ => Some((ctx.priority, false)),
        }
    }
}

/// What the search does with the next workload of a ClusterQueue's list.
pub enum Verdict {
    /// A candidate.
    Take(Candidate),
    /// Not a candidate (policy, preemptor itself, none of the contested resources).
    Skip,
    /// Beyond the policy's priority bound: neither it nor any later one is a candidate.
    Stop,
}

/// Classifies `wl`, the next workload of `src`'s list (lists ascend in priority within
/// the evicted and not-evicted groups, so the priority bound ends a walk).
pub fn check(st: &EngineState<'_>, ctx: &PreemptionCtx<'_>, src: &Source, e: &Listed) -> Verdict {
    let (wl, p) = (e.wl, e.priority);
    if let Some((b, inclusive)) = priority_bound(ctx, src.cq)
        && (p > b || (p == b && !inclusive))
    {
        return Verdict::Stop;
    }
    match classify(st, ctx, e, src) {
        Some(variant) => Verdict::Take(Candidate {
            wl,
            cq: src.cq,
            lca: src.lca,
            variant,
        }),
        None => Verdict::Skip,
    }
}

/// One level of the preemptor's cohort tree (`collectCandidatesInSubtree` of an
/// ancestor `root`, skipping the subtree `skip` the walk came from): its candidates are
/// the [`CohortList`] of `root` minus the preemptor's ClusterQueue and `skip`'s subtree.
#[derive(Clone, Copy, Debug)]
pub struct Level {
    pub root: NodeId,
    pub skip: Option<NodeId>,
    pub advantage: bool,
    pub class: Class,
}

/// The levels of the preemptor's cohort tree whose ClusterQueues hold candidates
/// (hierarchy or priority class), lowest first; empty when the preemptor cannot reclaim.
pub fn levels(st: &EngineState<'_>, ctx: &PreemptionCtx<'_>) -> Vec<Level> {
    let mut out = Vec::new();
    let me = st.cqs[ctx.cq].node;
    if st.tree.nodes[me].parent.is_none()
        || ctx.policy.reclaim_within_cohort == ReclaimWithinCohort::Never
    {
        return out;
    }
    let (mut advantage, mut remaining) = st.tree.quantities_fit_in_quota(me, &ctx.usage);
    let mut previous: Option<NodeId> = None;
    for root in st.tree.ancestors_iter(me) {
        let class = if advantage {
            Class::Hierarchy
        } else {
            Class::Priority
        };
        out.push(Level {
            root,
            skip: previous,
            advantage,
            class,
        });
        let (fits, rem) = st.tree.quantities_fit_in_quota(root, &remaining);
        remaining = rem;
        advantage = advantage || fits;
        previous = Some(root);
    }
    out
}
