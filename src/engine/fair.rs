//! Kueue's fair sharing: dominant resource share (DRS), the tournament that orders the
//! heads of a cohort tree, and fair preemption with the strategies
//! LessThanOrEqualToFinalShare (S2-a) and LessThanInitialShare (S2-b).
//!
//! Kueue sources (revision in docs/engine.md):
//! * `pkg/cache/scheduler/fair_sharing.go` — `dominantResourceShare`, `CompareDRS`,
//!   `calculateLendable`;
//! * `pkg/scheduler/fair_sharing_iterator.go` — `runTournament`, `entryComparer`;
//! * `pkg/scheduler/preemption/preemption.go` — `fairPreemptions`,
//!   `runFirstFsStrategy`, `runSecondFsStrategy`, `findCandidates`;
//! * `pkg/scheduler/preemption/fairsharing/{ordering,target,strategy,least_common_ancestor}.go`.
//!
//! Fair sharing is on when Kueue's configuration has `fairSharing` (v1beta2) or
//! `fairSharing.enable: true` (v1beta1); see [`crate::model::kueue_config`].

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::model::kueue_config::{KueueConfig, PreemptionStrategy};
use crate::model::{ClusterState, ReclaimWithinCohort, WithinClusterQueue};

use super::cycle::Entry;
use super::preemption::candidates::{in_snapshot, policy_allows_reclaim, policy_allows_within};
use super::preemption::ordering::candidate_key;
use super::preemption::search::workload_fits;
use super::preemption::{PreemptionCtx, PreemptionReason, Target};
use super::quota::{FrId, NodeId, QuotaTree};
use super::state::{CqIdx, EngineState, WlIdx, key_cmp};

/// The fair-sharing settings and per-node weights of a snapshot.
#[derive(Clone, Debug, Default)]
pub struct FairState {
    pub enabled: bool,
    /// Never empty when enabled; Kueue's default is [S2-a, S2-b].
    pub strategies: Vec<PreemptionStrategy>,
    /// Gate FairSharingPrioritizeNonBorrowing (tournament criterion 2).
    pub prioritize_non_borrowing: bool,
    /// Gate FairSharingPreemptWithinNominal.
    pub preempt_within_nominal: bool,
    /// Gate PrioritySortingWithinCohort (tournament criterion 4).
    pub priority_sorting: bool,
    /// Gate PrioritizePreemptorWorkloads (tournament criterion 1).
    pub prioritize_preemptors: bool,
    /// `spec.fairSharing.weight` per node (default 1).
    pub weights: Vec<f64>,
    /// Whether the fr is among the node's SubtreeQuota keys (declared by the node or
    /// a descendant): only those count in its DRS.
    pub keys: Vec<Vec<bool>>,
    /// `calculateLendable(node)` per node (quota only, so computed once): resource
    /// name → Σ over the root's (flavor, resource) of `potentialAvailable(node)`.
    pub lendable: Vec<Vec<i128>>,
    /// fr → index of its resource name in `res_names` (alphabetical).
    pub res_of: Vec<usize>,
    pub res_names: Vec<String>,
    /// Root node → the ClusterQueues of its tree (`SubtreeClusterQueues`).
    pub cqs_by_root: BTreeMap<NodeId, Vec<CqIdx>>,
    /// Why each victim of the last fair preemption search was chosen, in words.
    pub last_notes: Vec<(WlIdx, String)>,
}

impl FairState {
    /// Reads the configuration (`None` = Kueue's defaults: fair sharing off). `force`
    /// turns fair sharing on with the default strategies when the configuration does not.
    pub fn new(
        cluster: &ClusterState,
        tree: &QuotaTree,
        frs: &super::quota::FrTable,
        node_cq: &[Option<CqIdx>],
        force: bool,
    ) -> Self {
        let default_cfg = KueueConfig::default();
        let cfg = cluster.kueue_config.as_ref().unwrap_or(&default_cfg);
        let strategies = match &cfg.fair_sharing {
            Some(fs) if !fs.preemption_strategies.is_empty() => fs.preemption_strategies.clone(),
            _ => vec![
                PreemptionStrategy::LessThanOrEqualToFinalShare,
                PreemptionStrategy::LessThanInitialShare,
            ],
        };
        let mut weights = vec![1.0; tree.nodes.len()];
        for (i, n) in tree.nodes.iter().enumerate() {
            let w = if n.is_cq {
                cluster
                    .cluster_queues
                    .get(&n.name)
                    .and_then(|c| c.fair_sharing_weight)
            } else {
                cluster
                    .cohorts
                    .get(&n.name)
                    .and_then(|c| c.fair_sharing_weight)
            };
            if let Some(w) = w {
                weights[i] = w.milli() as f64 / 1000.0;
            }
        }
        let mut keys: Vec<Vec<bool>> = tree.nodes.iter().map(|n| n.has_quota.clone()).collect();
        // children before parents: a node's keys are its own plus its subtree's
        let mut order: Vec<NodeId> = (0..tree.nodes.len()).collect();
        order.sort_by_key(|&n| std::cmp::Reverse(tree.ancestors(n).len()));
        for n in order {
            if let Some(p) = tree.nodes[n].parent {
                let child = keys[n].clone();
                for (k, c) in keys[p].iter_mut().zip(child) {
                    *k |= c;
                }
            }
        }
        let enabled = force || cfg.fair_sharing_enabled();
        let mut res_names: Vec<String> = (0..tree.nfr)
            .map(|fr| frs.resource(fr).to_string())
            .collect();
        res_names.sort();
        res_names.dedup();
        let res_of: Vec<usize> = (0..tree.nfr)
            .map(|fr| {
                res_names
                    .binary_search_by(|r| r.as_str().cmp(frs.resource(fr)))
                    .expect("interned")
            })
            .collect();
        let mut lendable = vec![Vec::new(); tree.nodes.len()];
        if enabled {
            for (n, l) in lendable.iter_mut().enumerate() {
                *l = vec![0; res_names.len()];
                let root = tree.root(n);
                for (fr, &k) in keys[root].iter().enumerate() {
                    if k {
                        l[res_of[fr]] += tree.potential_available(n, fr);
                    }
                }
            }
        }
        let mut cqs_by_root: BTreeMap<NodeId, Vec<CqIdx>> = BTreeMap::new();
        if enabled {
            for (n, c) in node_cq.iter().enumerate() {
                if let Some(c) = c {
                    cqs_by_root.entry(tree.root(n)).or_default().push(*c);
                }
            }
        }
        FairState {
            enabled,
            cqs_by_root,
            lendable,
            res_of,
            res_names,
            strategies,
            prioritize_non_borrowing: cfg.gate("FairSharingPrioritizeNonBorrowing"),
            preempt_within_nominal: cfg.gate("FairSharingPreemptWithinNominal"),
            priority_sorting: cfg.gate("PrioritySortingWithinCohort"),
            prioritize_preemptors: cfg.gate("PrioritizePreemptorWorkloads"),
            weights,
            keys,
            last_notes: Vec::new(),
        }
    }
}

impl FairState {
    /// The ClusterQueues of the tree whose root is `root`.
    pub fn tree_cqs(&self, root: NodeId) -> &[CqIdx] {
        self.cqs_by_root.get(&root).map_or(&[], Vec::as_slice)
    }
}

/// A node's dominant resource share (`DRS` in `pkg/cache/scheduler/fair_sharing.go`).
#[derive(Clone, Debug, PartialEq)]
pub struct Drs {
    pub weight: f64,
    /// Borrowed / lendable × 1000 for the dominant resource (not weighted).
    pub ratio: f64,
    pub dominant: String,
    /// Usage above the subtree quota for some fr.
    pub borrowing: bool,
    pub borrowed_frs: Vec<FrId>,
}

impl Drs {
    /// `NegativeDRS`: the starting point of comparisons.
    pub fn negative() -> Self {
        Drs {
            weight: 1.0,
            ratio: -1.0,
            dominant: String::new(),
            borrowing: false,
            borrowed_frs: Vec::new(),
        }
    }

    fn is_zero(&self) -> bool {
        self.ratio == 0.0
    }

    fn zero_weight_borrows(&self) -> bool {
        self.weight == 0.0 && !self.is_zero()
    }

    /// `PreciseWeightedShare`: ratio / weight; +∞ when the weight is 0 and it borrows.
    pub fn weighted(&self) -> f64 {
        if self.is_zero() {
            0.0
        } else if self.weight == 0.0 {
            f64::INFINITY
        } else {
            self.ratio / self.weight
        }
    }

    /// Borrows on any fr the request uses (`IsBorrowingOn`).
    pub fn borrowing_on(&self, requested: &[(FrId, i128)]) -> bool {
        self.borrowed_frs
            .iter()
            .any(|fr| requested.iter().any(|&(r, q)| r == *fr && q > 0))
    }

    /// The share as a person reads it: the fraction of the cohort's lendable
    /// quota borrowed, divided by the weight ("0.62", "∞ (weight 0)").
    pub fn text(&self) -> String {
        let w = self.weighted();
        if w.is_infinite() {
            "∞ (weight 0)".to_string()
        } else {
            format!("{:.2}", w / 1000.0)
        }
    }
}

/// `CompareDRS`: lower is preferred for admission, higher for preemption.
pub fn compare(a: &Drs, b: &Drs) -> Ordering {
    match (a.zero_weight_borrows(), b.zero_weight_borrows()) {
        (true, true) => a.ratio.total_cmp(&b.ratio),
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.weighted().total_cmp(&b.weighted()),
    }
}

/// `dominantResourceShare(node, nil)` on the current snapshot.
pub fn drs(st: &EngineState<'_>, n: NodeId) -> Drs {
    drs_in(&st.tree, &st.fair, n)
}

/// [`drs`] on any copy of the quota tree.
pub fn drs_in(tree: &QuotaTree, fair: &FairState, n: NodeId) -> Drs {
    drs_with(tree, fair, n, &[])
}

/// `dominantResourceShare(node, wlReq)`: the share with `extra` added to the node's
/// own usage (no mutation of the tree).
pub fn drs_with(tree: &QuotaTree, fair: &FairState, n: NodeId, extra: &[(FrId, i128)]) -> Drs {
    let node = &tree.nodes[n];
    let mut out = Drs {
        weight: fair.weights[n],
        ratio: 0.0,
        dominant: String::new(),
        borrowing: false,
        borrowed_frs: Vec::new(),
    };
    let Some(parent) = node.parent else {
        return out;
    };
    let mut borrowed: Vec<i128> = Vec::new();
    for fr in 0..tree.nfr {
        if !fair.keys[n][fr] {
            continue;
        }
        let add: i128 = extra
            .iter()
            .filter(|(f, _)| *f == fr)
            .map(|(_, q)| *q)
            .sum();
        let b = tree.usage(n, fr) + add - node.subtree[fr];
        if b > 0 {
            if borrowed.is_empty() {
                borrowed = vec![0; fair.res_names.len()];
            }
            borrowed[fair.res_of[fr]] += b;
            out.borrowed_frs.push(fr);
        }
    }
    if borrowed.is_empty() {
        return out;
    }
    out.borrowing = true;
    // calculateLendable(parent), cached: it depends on quotas only
    let lendable = &fair.lendable[parent];
    // resource names in alphabetical order: on equal ratios the smaller name wins
    let mut dominant = None;
    for (r, &b) in borrowed.iter().enumerate() {
        let l = lendable.get(r).copied().unwrap_or(0);
        if b > 0 && l > 0 {
            let ratio = b as f64 * 1000.0 / l as f64;
            if ratio > out.ratio {
                out.ratio = ratio;
                dominant = Some(r);
            }
        }
    }
    if let Some(r) = dominant {
        out.dominant = fair.res_names[r].clone();
    }
    out
}

/// The DRS of every node of the tree with the current usage (for reports).
pub fn all_shares(st: &EngineState<'_>) -> Vec<Drs> {
    (0..st.tree.nodes.len()).map(|n| drs(st, n)).collect()
}

/// Why fair preemption found nothing, in words: the preemptor's share with the
/// workload against every borrowing ClusterQueue of its tree.
pub fn no_candidates_note(st: &EngineState<'_>, cq: CqIdx, usage: &[(FrId, i128)]) -> String {
    let node = st.cqs[cq].node;
    let Some(parent) = st.tree.nodes[node].parent else {
        return "fair sharing: the ClusterQueue has no cohort, so only its own workloads can be preempted".to_string();
    };
    let mine = drs_with(&st.tree, &st.fair, node, usage);
    let mut others: Vec<String> = Vec::new();
    for &c in st.fair.tree_cqs(st.tree.root(node)) {
        if c == cq {
            continue;
        }
        let d = drs(st, st.cqs[c].node);
        if d.borrowing {
            others.push(format!("{} {}", st.cqs[c].name(), d.text()));
        }
    }
    let strategies: Vec<&str> = st.fair.strategies.iter().map(|s| s.as_str()).collect();
    let root = &st.tree.nodes[st.tree.root(parent)].name;
    if others.is_empty() {
        format!(
            "fair sharing in cohort {root}: no other ClusterQueue borrows, so there is nothing to reclaim"
        )
    } else {
        format!(
            "fair sharing in cohort {root}: with this workload {}'s share would be {}; the borrowing queues ({}) would not keep a share at or above it after a preemption ({})",
            st.cqs[cq].name(),
            mine.text(),
            others.join(", "),
            strategies.join(", ")
        )
    }
}

// ---------------------------------------------------------------------------
// Tournament (fair_sharing_iterator.go)

/// One head's DRS at each cohort on its path, with its usage simulated in: (cohort,
/// DRS of the head's node just below that cohort), from its ClusterQueue's parent up.
type Scores = Vec<(NodeId, Drs)>;

fn score_at(scores: &Scores, cohort: NodeId) -> Option<&Drs> {
    scores.iter().find(|(c, _)| *c == cohort).map(|(_, d)| d)
}

fn usage_of<'e>(e: &'e Entry<'_>) -> &'e [(FrId, i128)] {
    match e.assignment.as_ref() {
        Some(a) => &a.usage,
        None => &[],
    }
}

/// `entryComparer.less`: is head `a` (share `da` at this cohort) before head `b`?
fn entry_less(
    st: &EngineState<'_>,
    ea: &Entry,
    eb: &Entry,
    da: &Drs,
    db: &Drs,
) -> (bool, Criterion) {
    if st.fair.prioritize_preemptors {
        let pa = st.cqs[ea.cq].sticky == Some(ea.wl);
        let pb = st.cqs[eb.cq].sticky == Some(eb.wl);
        if pa != pb {
            return (pa, Criterion::Preemptor);
        }
    }
    if st.fair.prioritize_non_borrowing {
        let ba = da.borrowing_on(usage_of(ea));
        let bb = db.borrowing_on(usage_of(eb));
        if ba != bb {
            return (!ba, Criterion::NonBorrowing);
        }
    }
    match compare(da, db) {
        Ordering::Less => return (true, Criterion::Share),
        Ordering::Greater => return (false, Criterion::Share),
        Ordering::Equal => {}
    }
    let (wa, wb) = (&st.wls[ea.wl], &st.wls[eb.wl]);
    if st.fair.priority_sorting && wa.priority != wb.priority {
        return (wa.priority > wb.priority, Criterion::Priority);
    }
    if wa.queue_ts != wb.queue_ts {
        return (wa.queue_ts < wb.queue_ts, Criterion::Fifo);
    }
    (false, Criterion::Fifo)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Criterion {
    Preemptor,
    NonBorrowing,
    Share,
    Priority,
    Fifo,
}

fn run_tournament(
    st: &EngineState<'_>,
    entries: &[Entry],
    scores: &[Option<Scores>],
    by_cq: &[Option<usize>],
    cohort: NodeId,
) -> Option<usize> {
    let mut candidates = Vec::new();
    for &c in &st.tree.nodes[cohort].child_cohorts {
        if let Some(w) = run_tournament(st, entries, scores, by_cq, c) {
            candidates.push(w);
        }
    }
    for &c in &st.tree.nodes[cohort].child_cqs {
        if let Some(e) = st.node_cq[c].and_then(|cq| by_cq[cq]) {
            candidates.push(e);
        }
    }
    let neg = Drs::negative();
    let at = |i: usize| {
        scores[i]
            .as_ref()
            .and_then(|s| score_at(s, cohort))
            .unwrap_or(&neg)
    };
    let mut best = *candidates.first()?;
    for &cur in &candidates[1..] {
        if entry_less(st, &entries[cur], &entries[best], at(cur), at(best)).0 {
            best = cur;
        }
    }
    Some(best)
}

/// The child of `ancestor` on the path from `node` (which may be `node` itself).
fn child_towards(st: &EngineState<'_>, node: NodeId, ancestor: NodeId) -> NodeId {
    let mut cur = node;
    while let Some(p) = st.tree.nodes[cur].parent {
        if p == ancestor {
            return cur;
        }
        cur = p;
    }
    cur
}

/// The tournament's memory within one cycle. Each head's scores are kept between pops
/// and recomputed only when the head processed last shares a node with it below the
/// root (only that head's ClusterQueue and its ancestors changed usage).
#[derive(Default)]
pub struct Tournament {
    /// Per entry index.
    scores: Vec<Option<Scores>>,
    /// Per ClusterQueue: its head's entry index this pop.
    by_cq: Vec<Option<usize>>,
    /// Root → the last winner and its scores when it won.
    last: BTreeMap<NodeId, (usize, Scores)>,
}

/// The node and its ancestors below the root.
fn path_below_root(st: &EngineState<'_>, n: NodeId) -> Vec<NodeId> {
    let mut out = Vec::new();
    let mut cur = n;
    while let Some(p) = st.tree.nodes[cur].parent {
        out.push(cur);
        cur = p;
    }
    out
}

/// Picks the next entry to process among `remaining` (indexes into `entries`, each
/// with an assignment). The winner gets a fair-sharing note in words when it lost the
/// previous pop of its tree: why the head processed just before it went first.
pub fn next_entry(
    st: &mut EngineState<'_>,
    entries: &mut [Entry],
    remaining: &mut BTreeSet<usize>,
    memo: &mut Tournament,
) -> Option<usize> {
    let first = *remaining.iter().next()?;
    let node = st.cqs[entries[first].cq].node;
    let Some(parent) = st.tree.nodes[node].parent else {
        remaining.remove(&first);
        return Some(first);
    };
    let root = st.tree.root(parent);
    if memo.scores.len() < entries.len() {
        memo.scores.resize(entries.len(), None);
    }
    memo.by_cq.clear();
    memo.by_cq.resize(st.cqs.len(), None);
    let changed: Vec<NodeId> = match memo.last.get(&root) {
        Some((w, _)) => path_below_root(st, st.cqs[entries[*w].cq].node),
        None => Vec::new(),
    };
    // computeDRS: each head's usage simulated in its ClusterQueue, one at a time
    let mut before: BTreeMap<usize, Scores> = BTreeMap::new();
    for &i in remaining.iter() {
        let cq = entries[i].cq;
        let n = st.cqs[cq].node;
        // on the way to the root: is it in this tree, and did the last winner change it?
        let mut touched = false;
        let mut cur = n;
        while let Some(p) = st.tree.nodes[cur].parent {
            touched |= changed.contains(&cur);
            cur = p;
        }
        if cur != root {
            continue;
        }
        memo.by_cq[cq] = Some(i);
        if memo.scores[i].is_some() && !touched {
            continue;
        }
        let path = path_below_root(st, n);
        let usage = usage_of(&entries[i]).to_vec();
        st.tree.add_all(n, &usage);
        let mut vals: Scores = Vec::with_capacity(path.len());
        for &p in &path {
            let parent = st.tree.nodes[p].parent.expect("below root");
            vals.push((parent, drs(st, p)));
        }
        st.tree.remove_all(n, &usage);
        if let Some(old) = memo.scores[i].replace(vals) {
            before.insert(i, old);
        }
    }
    let winner = run_tournament(st, entries, &memo.scores, &memo.by_cq, root)?;
    remaining.remove(&winner);
    let mine = memo.scores[winner].take().unwrap_or_default();
    if let Some((prev, prev_scores)) = memo.last.get(&root)
        && entries[winner].fair_note.is_none()
    {
        let lost_with = before.get(&winner).unwrap_or(&mine);
        entries[winner].fair_note = loss_note(st, entries, *prev, prev_scores, winner, lost_with);
    }
    memo.last.insert(root, (winner, mine));
    Some(winner)
}

/// Why `loser` lost to `winner` at their lowest common ancestor, in words, from the
/// scores of that pop.
fn loss_note(
    st: &EngineState<'_>,
    entries: &[Entry],
    winner: usize,
    winner_scores: &Scores,
    loser: usize,
    loser_scores: &Scores,
) -> Option<String> {
    let n = st.cqs[entries[loser].cq].node;
    let wnode = st.cqs[entries[winner].cq].node;
    let wpath = st.tree.ancestors(wnode);
    // lowest common ancestor: where the two met in the tournament
    let lca = st
        .tree
        .ancestors(n)
        .into_iter()
        .find(|a| wpath.contains(a))?;
    let neg = Drs::negative();
    let dl = score_at(loser_scores, lca).unwrap_or(&neg);
    let dw = score_at(winner_scores, lca).unwrap_or(&neg);
    let (_, crit) = entry_less(st, &entries[winner], &entries[loser], dw, dl);
    let me = &st.tree.nodes[child_towards(st, n, lca)].name;
    let them = &st.tree.nodes[child_towards(st, wnode, lca)].name;
    let (sa, sb) = (dl.text(), dw.text());
    let cohort = &st.tree.nodes[lca].name;
    Some(match crit {
        Criterion::Preemptor => format!(
            "fair sharing in cohort {cohort}: {them} has a preemptor waiting for its victims, which goes first"
        ),
        Criterion::NonBorrowing => format!(
            "fair sharing in cohort {cohort}: {me} would borrow with this workload and {them} would not: {them} is admitted first"
        ),
        Criterion::Share => format!(
            "fair sharing in cohort {cohort}: {me} share {sa} > {them} {sb}: {them} is admitted first"
        ),
        Criterion::Priority => format!(
            "fair sharing in cohort {cohort}: {me} and {them} have equal share {sa}; {them}'s workload has higher priority and is admitted first"
        ),
        Criterion::Fifo => format!(
            "fair sharing in cohort {cohort}: {me} and {them} have equal share {sa} and priority; {them}'s workload is older and is admitted first"
        ),
    })
}

// ---------------------------------------------------------------------------
// Fair preemption (preemption.go fairPreemptions, fairsharing/*.go)

fn uses_needed(st: &EngineState<'_>, wl: WlIdx, ctx: &PreemptionCtx<'_>) -> bool {
    st.usage_of(wl)
        .iter()
        .any(|(fr, _)| ctx.frs_need.contains(fr))
}

/// `cqIsBorrowing`: usage above nominal on some fr needing preemption.
fn cq_is_borrowing(st: &EngineState<'_>, cq: CqIdx, frs: &[FrId]) -> bool {
    let n = st.cqs[cq].node;
    let node = &st.tree.nodes[n];
    node.parent.is_some()
        && frs
            .iter()
            .any(|&fr| st.tree.usage(n, fr) > node.nominal[fr])
}

/// `findCandidates`: same-ClusterQueue candidates by withinClusterQueue, plus the
/// workloads of every borrowing ClusterQueue of the tree by reclaimWithinCohort.
fn find_candidates(st: &EngineState<'_>, ctx: &PreemptionCtx<'_>) -> Vec<WlIdx> {
    let me = (ctx.priority, ctx.queue_ts);
    let mut out = Vec::new();
    let ok = |w: WlIdx| Some(w) != ctx.preemptor && uses_needed(st, w, ctx);
    if ctx.policy.within_cluster_queue != WithinClusterQueue::Never {
        for &w in &st.cqs[ctx.cq].admitted {
            let c = (st.wls[w].priority, st.wls[w].queue_ts);
            if ok(w) && policy_allows_within(ctx.policy.within_cluster_queue, me, c) {
                out.push(w);
            }
        }
    }
    if st.tree.nodes[st.cqs[ctx.cq].node].parent.is_some()
        && ctx.policy.reclaim_within_cohort != ReclaimWithinCohort::Never
    {
        let root = st.tree.root(st.cqs[ctx.cq].node);
        for &c in st.fair.tree_cqs(root) {
            if c == ctx.cq || !in_snapshot(st, c) || !cq_is_borrowing(st, c, &ctx.frs_need) {
                continue;
            }
            for &w in &st.cqs[c].admitted {
                let p = (st.wls[w].priority, st.wls[w].queue_ts);
                if ok(w) && policy_allows_reclaim(ctx.policy.reclaim_within_cohort, me, p) {
                    out.push(w);
                }
            }
        }
    }
    out
}

/// `TargetClusterQueueOrdering`: visits ClusterQueues from the root, choosing at
/// each cohort the child with the highest DRS.
struct TargetOrdering {
    preemptor_cq: CqIdx,
    preemptor_ancestors: BTreeSet<NodeId>,
    targets: BTreeMap<CqIdx, VecDeque<WlIdx>>,
    /// Pruned ClusterQueues (by index) and cohorts (by node).
    pruned_cqs: Vec<bool>,
    pruned_cohorts: Vec<bool>,
    /// DRS per node, valid until a victim's usage is removed ([`Self::removed`]).
    cache: Vec<Option<Drs>>,
}

impl TargetOrdering {
    fn new(st: &EngineState<'_>, cq: CqIdx, candidates: &[WlIdx]) -> Self {
        let mut targets: BTreeMap<CqIdx, VecDeque<WlIdx>> = BTreeMap::new();
        for &w in candidates {
            targets
                .entry(st.wls[w].cq.expect("admitted has cq"))
                .or_default()
                .push_back(w);
        }
        TargetOrdering {
            preemptor_cq: cq,
            preemptor_ancestors: st.tree.ancestors(st.cqs[cq].node).into_iter().collect(),
            targets,
            pruned_cqs: vec![false; st.cqs.len()],
            pruned_cohorts: vec![false; st.tree.nodes.len()],
            cache: vec![None; st.tree.nodes.len()],
        }
    }

    /// The node's DRS, computed once until [`Self::removed`].
    fn drs(&mut self, st: &EngineState<'_>, n: NodeId) -> &Drs {
        self.cache[n].get_or_insert_with(|| drs(st, n))
    }

    /// Takes `w` of `cq` as a victim: its usage leaves the snapshot, and the shares it
    /// changed (its queue's and its ancestors') are recomputed when next asked for.
    fn take(&mut self, st: &mut EngineState<'_>, cq: CqIdx, w: WlIdx) {
        st.remove_usage_of(w);
        self.removed(st, cq);
    }

    /// A victim of `cq` left the snapshot: its queue's and its ancestors' shares change.
    fn removed(&mut self, st: &EngineState<'_>, cq: CqIdx) {
        let mut cur = Some(st.cqs[cq].node);
        while let Some(n) = cur {
            self.cache[n] = None;
            cur = st.tree.nodes[n].parent;
        }
    }

    fn has_workload(&self, cq: CqIdx) -> bool {
        self.targets.get(&cq).is_some_and(|v| !v.is_empty())
    }

    fn pop(&mut self, cq: CqIdx) -> WlIdx {
        self.targets
            .get_mut(&cq)
            .and_then(VecDeque::pop_front)
            .expect("has workload")
    }

    /// The next ClusterQueue to take a victim from (`Iter`), or None when done.
    fn next(&mut self, st: &EngineState<'_>) -> Option<CqIdx> {
        let node = st.cqs[self.preemptor_cq].node;
        let Some(parent) = st.tree.nodes[node].parent else {
            let cq = self.preemptor_cq;
            return (!self.pruned_cqs[cq] && self.has_workload(cq)).then_some(cq);
        };
        let root = st.tree.root(parent);
        while !self.pruned_cohorts[root] {
            if let Some(cq) = self.next_target(st, root) {
                return Some(cq);
            }
        }
        None
    }

    fn next_target(&mut self, st: &EngineState<'_>, cohort: NodeId) -> Option<CqIdx> {
        let neg = Drs::negative();
        let mut highest_cq: Option<(CqIdx, NodeId)> = None;
        for &child in &st.tree.nodes[cohort].child_cqs {
            let cq = st.node_cq[child].expect("cq node");
            if self.pruned_cqs[cq] {
                continue;
            }
            if !self.has_workload(cq) || (cq != self.preemptor_cq && !self.drs(st, child).borrowing)
            {
                self.pruned_cqs[cq] = true;
                continue;
            }
            self.drs(st, child);
            let d = self.cache[child].as_ref().expect("computed");
            let h = highest_cq
                .and_then(|(_, n)| self.cache[n].as_ref())
                .unwrap_or(&neg);
            match compare(d, h) {
                Ordering::Equal => {
                    let (cur, _) = highest_cq.expect("equal to a real share");
                    let a = self.targets[&cq][0];
                    let b = self.targets[&cur][0];
                    if candidate_cmp(st, a, b, self.preemptor_cq) == Ordering::Less {
                        highest_cq = Some((cq, child));
                    }
                }
                Ordering::Greater => highest_cq = Some((cq, child)),
                Ordering::Less => {}
            }
        }
        let mut highest_cohort: Option<NodeId> = None;
        for &child in &st.tree.nodes[cohort].child_cohorts {
            if self.pruned_cohorts[child] {
                continue;
            }
            self.drs(st, child);
            let d = self.cache[child].as_ref().expect("computed");
            if !d.borrowing && !self.preemptor_ancestors.contains(&child) {
                self.pruned_cohorts[child] = true;
                continue;
            }
            let h = highest_cohort
                .and_then(|n| self.cache[n].as_ref())
                .unwrap_or(&neg);
            if compare(d, h) != Ordering::Less {
                highest_cohort = Some(child);
            }
        }
        if highest_cohort.is_none() && highest_cq.is_none() {
            self.pruned_cohorts[cohort] = true;
            return None;
        }
        let hc = highest_cohort
            .and_then(|n| self.cache[n].as_ref())
            .unwrap_or(&neg);
        let hq = highest_cq
            .and_then(|(_, n)| self.cache[n].as_ref())
            .unwrap_or(&neg);
        if compare(hc, hq) != Ordering::Less {
            return self.next_target(st, highest_cohort.expect("cohort chosen"));
        }
        highest_cq.map(|(cq, _)| cq)
    }
}

/// `CandidatesOrdering` as a comparison.
fn candidate_cmp(st: &EngineState<'_>, a: WlIdx, b: WlIdx, preemptor_cq: CqIdx) -> Ordering {
    candidate_key(st, a, preemptor_cq)
        .cmp(&candidate_key(st, b, preemptor_cq))
        .then_with(|| key_cmp(st.wls[a].wl, st.wls[b].wl))
}

/// The node just below `lca` on the path from `n` (`getAlmostLCA`).
fn almost_lca(st: &EngineState<'_>, n: NodeId, lca: NodeId) -> NodeId {
    child_towards(st, n, lca)
}

/// (preemptor's share, target's share) at the level below their lowest common
/// ancestor (`ComputeShares`).
fn shares(st: &EngineState<'_>, preemptor_cq: CqIdx, target_cq: CqIdx) -> (Drs, Drs) {
    let pn = st.cqs[preemptor_cq].node;
    let tn = st.cqs[target_cq].node;
    let pa = st.tree.ancestors(pn);
    let lca = st
        .tree
        .ancestors(tn)
        .into_iter()
        .find(|a| pa.contains(a))
        .expect("same tree");
    (
        drs(st, almost_lca(st, pn, lca)),
        drs(st, almost_lca(st, tn, lca)),
    )
}

fn target_share_after_removal(
    st: &mut EngineState<'_>,
    preemptor_cq: CqIdx,
    target_cq: CqIdx,
    wl: WlIdx,
) -> Drs {
    st.remove_usage_of(wl);
    let (_, t) = shares(st, preemptor_cq, target_cq);
    st.add_usage_of(wl);
    t
}

/// `workloadFitsForFairSharing`: the preemptor's usage is simulated in during the
/// search; take it out to test the fit.
fn fits_for_fair_sharing(st: &mut EngineState<'_>, ctx: &PreemptionCtx<'_>) -> bool {
    let node = st.cqs[ctx.cq].node;
    st.tree.remove_all(node, &ctx.usage);
    let ok = workload_fits(st, ctx, true);
    st.tree.add_all(node, &ctx.usage);
    ok
}

fn strategy_passes(s: PreemptionStrategy, preemptor_new: &Drs, old: &Drs, new: &Drs) -> bool {
    match s {
        PreemptionStrategy::LessThanOrEqualToFinalShare => {
            compare(preemptor_new, new) != Ordering::Greater
        }
        PreemptionStrategy::LessThanInitialShare => compare(preemptor_new, old) == Ordering::Less,
    }
}

/// The victims fair preemption chooses, or empty. The snapshot is left unchanged.
/// `st.fair.last_notes` gets one sentence per victim.
pub fn get_targets(st: &mut EngineState<'_>, ctx: &PreemptionCtx<'_>) -> Vec<Target> {
    st.fair.last_notes.clear();
    let candidates = find_candidates(st, ctx);
    if candidates.is_empty() {
        return Vec::new();
    }
    // keys computed once per candidate, not once per comparison
    let mut keyed: Vec<_> = candidates
        .into_iter()
        .map(|w| (candidate_key(st, w, ctx.cq), w))
        .collect();
    keyed.sort_by(|(ka, a), (kb, b)| {
        ka.cmp(kb)
            .then_with(|| key_cmp(st.wls[*a].wl, st.wls[*b].wl))
    });
    let candidates: Vec<WlIdx> = keyed.into_iter().map(|(_, w)| w).collect();
    let node = st.cqs[ctx.cq].node;
    st.tree.add_all(node, &ctx.usage);
    let strategies = st.fair.strategies.clone();
    let mut notes: Vec<(WlIdx, String)> = Vec::new();
    let (mut fits, mut targets, retry) =
        first_strategy(st, ctx, &candidates, strategies[0], &mut notes);
    if !fits && strategies.len() > 1 {
        fits = second_strategy(st, ctx, &retry, &mut targets, &mut notes);
    }
    st.tree.remove_all(node, &ctx.usage);
    if !fits {
        for t in &targets {
            st.add_usage_of(t.wl);
        }
        return Vec::new();
    }
    // fill back (fillBackWorkloads, borrowing allowed)
    let mut i = targets.len().saturating_sub(1);
    while i > 0 {
        i -= 1;
        st.add_usage_of(targets[i].wl);
        if workload_fits(st, ctx, true) {
            targets.swap_remove(i);
        } else {
            st.remove_usage_of(targets[i].wl);
        }
    }
    for t in &targets {
        st.add_usage_of(t.wl);
    }
    notes.retain(|(w, _)| targets.iter().any(|t| t.wl == *w));
    st.fair.last_notes = notes;
    targets
}

fn first_strategy(
    st: &mut EngineState<'_>,
    ctx: &PreemptionCtx<'_>,
    candidates: &[WlIdx],
    strategy: PreemptionStrategy,
    notes: &mut Vec<(WlIdx, String)>,
) -> (bool, Vec<Target>, Vec<WlIdx>) {
    let mut ordering = TargetOrdering::new(st, ctx.cq, candidates);
    let mut targets = Vec::new();
    let mut retry = Vec::new();
    let within_nominal = st.fair.preempt_within_nominal && {
        let n = st.cqs[ctx.cq].node;
        let nominal = &st.tree.nodes[n].nominal;
        ctx.frs_need
            .iter()
            .all(|&fr| st.tree.usage(n, fr) <= nominal[fr])
    };
    while let Some(cq) = ordering.next(st) {
        if cq == ctx.cq {
            let w = ordering.pop(cq);
            ordering.take(st, cq, w);
            targets.push(Target {
                wl: w,
                reason: PreemptionReason::InClusterQueue,
            });
            notes.push((
                w,
                "it is in our own ClusterQueue (withinClusterQueue)".to_string(),
            ));
            if fits_for_fair_sharing(st, ctx) {
                return (true, targets, Vec::new());
            }
            continue;
        }
        if within_nominal {
            let w = ordering.pop(cq);
            ordering.take(st, cq, w);
            targets.push(Target {
                wl: w,
                reason: PreemptionReason::InCohortReclamation,
            });
            notes.push((
                w,
                format!(
                    "{} stays within its nominal quota, so it reclaims regardless of shares",
                    st.cqs[ctx.cq].name()
                ),
            ));
            if fits_for_fair_sharing(st, ctx) {
                return (true, targets, Vec::new());
            }
            continue;
        }
        let (preemptor_new, target_old) = shares(st, ctx.cq, cq);
        if preemptor_new.weighted().is_infinite() && !target_old.weighted().is_infinite() {
            while ordering.has_workload(cq) {
                retry.push(ordering.pop(cq));
            }
            continue;
        }
        while ordering.has_workload(cq) {
            let w = ordering.pop(cq);
            let target_new = target_share_after_removal(st, ctx.cq, cq, w);
            if strategy_passes(strategy, &preemptor_new, &target_old, &target_new) {
                ordering.take(st, cq, w);
                targets.push(Target {
                    wl: w,
                    reason: PreemptionReason::InCohortFairSharing,
                });
                let (target_name, mine) = (st.cqs[cq].name(), st.cqs[ctx.cq].name());
                notes.push((
                    w,
                    match strategy {
                        PreemptionStrategy::LessThanOrEqualToFinalShare => format!(
                            "its queue's share after the preemption ({target_name} {}) stays at or above ours ({mine} {}) (LessThanOrEqualToFinalShare)",
                            target_new.text(),
                            preemptor_new.text()
                        ),
                        PreemptionStrategy::LessThanInitialShare => format!(
                            "its queue's share before the preemption ({target_name} {}) is above ours ({mine} {}) (LessThanInitialShare)",
                            target_old.text(),
                            preemptor_new.text()
                        ),
                    },
                ));
                if fits_for_fair_sharing(st, ctx) {
                    return (true, targets, Vec::new());
                }
                break;
            }
            retry.push(w);
        }
    }
    (false, targets, retry)
}

fn second_strategy(
    st: &mut EngineState<'_>,
    ctx: &PreemptionCtx<'_>,
    retry: &[WlIdx],
    targets: &mut Vec<Target>,
    notes: &mut Vec<(WlIdx, String)>,
) -> bool {
    let mut ordering = TargetOrdering::new(st, ctx.cq, retry);
    while let Some(cq) = ordering.next(st) {
        let (preemptor_new, target_old) = shares(st, ctx.cq, cq);
        let passed = compare(&preemptor_new, &target_old) == Ordering::Less;
        let w = ordering.pop(cq);
        if passed {
            ordering.take(st, cq, w);
            targets.push(Target {
                wl: w,
                reason: PreemptionReason::InCohortFairSharing,
            });
            notes.push((
                w,
                format!(
                    "its queue's share before the preemption ({} {}) is above ours ({} {}) (LessThanInitialShare)",
                    st.cqs[cq].name(),
                    target_old.text(),
                    st.cqs[ctx.cq].name(),
                    preemptor_new.text()
                ),
            ));
            if fits_for_fair_sharing(st, ctx) {
                return true;
            }
        }
        ordering.pruned_cqs[cq] = true;
    }
    false
}

// ---------------------------------------------------------------------------
// Report for the console

/// A node's fair-sharing figures as the console shows them.
#[derive(Clone, Debug, PartialEq)]
pub struct ShareFigures {
    pub weight: f64,
    pub drs: Drs,
}

impl ShareFigures {
    /// "w1 0.31", "w0 ∞", "w2 0.00": the weight and the dominant resource share.
    pub fn text(&self) -> String {
        let share = if self.drs.weighted().is_infinite() {
            "∞".to_string()
        } else {
            format!("{:.2}", self.drs.weighted() / 1000.0)
        };
        format!("w{} {share}", trim_weight(self.weight))
    }
}

fn trim_weight(w: f64) -> String {
    let s = format!("{w:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Current shares of every ClusterQueue and Cohort by name, or `None` when Kueue's
/// configuration does not enable fair sharing.
pub type ShareReport = (
    BTreeMap<String, ShareFigures>,
    BTreeMap<String, ShareFigures>,
);

pub fn share_report(cluster: &ClusterState) -> Option<ShareReport> {
    if !cluster
        .kueue_config
        .as_ref()
        .is_some_and(|c| c.fair_sharing_enabled())
    {
        return None;
    }
    let st = EngineState::new(cluster, &super::PlanOptions::default());
    let (mut cqs, mut cohorts) = (BTreeMap::new(), BTreeMap::new());
    for (n, node) in st.tree.nodes.iter().enumerate() {
        let f = ShareFigures {
            weight: st.fair.weights[n],
            drs: drs(&st, n),
        };
        if node.is_cq {
            cqs.insert(node.name.clone(), f);
        } else {
            cohorts.insert(node.name.clone(), f);
        }
    }
    Some((cqs, cohorts))
}
