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
use super::preemption::candidates::{policy_allows_reclaim, policy_allows_within};
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
    pub lendable: Vec<BTreeMap<String, i128>>,
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
        let mut lendable = vec![BTreeMap::new(); tree.nodes.len()];
        if enabled {
            for (n, l) in lendable.iter_mut().enumerate() {
                let root = tree.root(n);
                for (fr, &k) in keys[root].iter().enumerate() {
                    if k {
                        *l.entry(frs.resource(fr).to_string()).or_default() +=
                            tree.potential_available(n, fr);
                    }
                }
            }
        }
        FairState {
            enabled,
            lendable,
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
    drs_in(&st.tree, &st.fair, &st.frs, n)
}

/// [`drs`] on any copy of the quota tree.
pub fn drs_in(tree: &QuotaTree, fair: &FairState, frs: &super::quota::FrTable, n: NodeId) -> Drs {
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
    let mut borrowed: BTreeMap<&str, i128> = BTreeMap::new();
    for fr in 0..tree.nfr {
        if !fair.keys[n][fr] {
            continue;
        }
        let b = node.usage[fr] - node.subtree[fr];
        if b > 0 {
            *borrowed.entry(frs.resource(fr)).or_default() += b;
            out.borrowed_frs.push(fr);
        }
    }
    if borrowed.is_empty() {
        return out;
    }
    out.borrowing = true;
    // calculateLendable(parent), cached: it depends on quotas only
    let lendable = &fair.lendable[parent];
    // BTreeMap order: on equal ratios the alphabetically smaller resource wins
    for (res, b) in borrowed {
        let l = *lendable.get(res).unwrap_or(&0);
        if l > 0 {
            let ratio = b as f64 * 1000.0 / l as f64;
            if ratio > out.ratio {
                out.ratio = ratio;
                out.dominant = res.to_string();
            }
        }
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
    let mut tree = st.tree.clone();
    tree.add_all(node, usage);
    let mine = drs_in(&tree, &st.fair, &st.frs, node);
    let mut others: Vec<String> = Vec::new();
    for c in st.cqs_in_same_tree(cq) {
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

/// One head's DRS per cohort on its path, with its usage simulated in.
struct Scores {
    /// (parent cohort, entry) → DRS of the entry's ancestor just below that cohort.
    drs: BTreeMap<(NodeId, usize), Drs>,
}

fn entry_less(
    st: &EngineState<'_>,
    entries: &[Entry],
    scores: &Scores,
    a: usize,
    b: usize,
    cohort: NodeId,
) -> (bool, Criterion) {
    let (ea, eb) = (&entries[a], &entries[b]);
    if st.fair.prioritize_preemptors {
        let pa = st.cqs[ea.cq].sticky == Some(ea.wl);
        let pb = st.cqs[eb.cq].sticky == Some(eb.wl);
        if pa != pb {
            return (pa, Criterion::Preemptor);
        }
    }
    let neg = Drs::negative();
    let da = scores.drs.get(&(cohort, a)).unwrap_or(&neg);
    let db = scores.drs.get(&(cohort, b)).unwrap_or(&neg);
    if st.fair.prioritize_non_borrowing {
        let usage = |e: &Entry| {
            e.assignment
                .as_ref()
                .map(|a| a.usage.clone())
                .unwrap_or_default()
        };
        let ba = da.borrowing_on(&usage(ea));
        let bb = db.borrowing_on(&usage(eb));
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
    scores: &Scores,
    by_cq: &BTreeMap<CqIdx, usize>,
    cohort: NodeId,
) -> Option<usize> {
    let mut candidates = Vec::new();
    for &c in &st.tree.nodes[cohort].child_cohorts {
        if let Some(w) = run_tournament(st, entries, scores, by_cq, c) {
            candidates.push(w);
        }
    }
    for &c in &st.tree.nodes[cohort].child_cqs {
        if let Some(&e) = st.node_cq[c].and_then(|cq| by_cq.get(&cq)) {
            candidates.push(e);
        }
    }
    let mut best = *candidates.first()?;
    for &cur in &candidates[1..] {
        if entry_less(st, entries, scores, cur, best, cohort).0 {
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

/// Picks the next entry to process among `remaining` (indexes into `entries`, each
/// with an assignment). Entries that lose to the winner get a fair-sharing note in
/// words (the latest loss before they are processed: the head that went just before).
pub fn next_entry(
    st: &mut EngineState<'_>,
    entries: &mut [Entry],
    remaining: &mut BTreeSet<usize>,
) -> Option<usize> {
    let first = *remaining.iter().next()?;
    let node = st.cqs[entries[first].cq].node;
    let Some(parent) = st.tree.nodes[node].parent else {
        remaining.remove(&first);
        return Some(first);
    };
    let root = st.tree.root(parent);
    // computeDRS: each head's usage simulated in its ClusterQueue, one at a time
    let mut scores = Scores {
        drs: BTreeMap::new(),
    };
    let mut by_cq: BTreeMap<CqIdx, usize> = BTreeMap::new();
    for &i in remaining.iter() {
        let cq = entries[i].cq;
        let n = st.cqs[cq].node;
        if st.tree.root(n) != root {
            continue;
        }
        by_cq.insert(cq, i);
        let usage = entries[i]
            .assignment
            .as_ref()
            .map(|a| a.usage.clone())
            .unwrap_or_default();
        st.tree.add_all(n, &usage);
        let mut share = drs(st, n);
        for a in st.tree.ancestors(n) {
            let next = drs(st, a);
            scores.drs.insert((a, i), share);
            share = next;
        }
        st.tree.remove_all(n, &usage);
    }
    let winner = run_tournament(st, entries, &scores, &by_cq, root)?;
    remaining.remove(&winner);
    let wnode = st.cqs[entries[winner].cq].node;
    let wpath = st.tree.ancestors(wnode);
    for (&_cq, &i) in &by_cq {
        if i == winner {
            continue;
        }
        let n = st.cqs[entries[i].cq].node;
        // lowest common ancestor: where the two met in the tournament
        let Some(lca) = st.tree.ancestors(n).into_iter().find(|a| wpath.contains(a)) else {
            continue;
        };
        let (_, crit) = entry_less(st, entries, &scores, winner, i, lca);
        let me = &st.tree.nodes[child_towards(st, n, lca)].name;
        let them = &st.tree.nodes[child_towards(st, wnode, lca)].name;
        let neg = Drs::negative();
        let (sa, sb) = (
            scores.drs.get(&(lca, i)).unwrap_or(&neg).text(),
            scores.drs.get(&(lca, winner)).unwrap_or(&neg).text(),
        );
        let cohort = &st.tree.nodes[lca].name;
        let why = match crit {
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
        };
        entries[i].fair_note = Some(why);
    }
    Some(winner)
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
    let node = &st.tree.nodes[st.cqs[cq].node];
    node.parent.is_some() && frs.iter().any(|&fr| node.usage[fr] > node.nominal[fr])
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
        for c in st.cqs_in_same_tree(ctx.cq) {
            if c == ctx.cq || !cq_is_borrowing(st, c, &ctx.frs_need) {
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
    pruned_cqs: BTreeSet<CqIdx>,
    pruned_cohorts: BTreeSet<NodeId>,
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
            pruned_cqs: BTreeSet::new(),
            pruned_cohorts: BTreeSet::new(),
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
            return (!self.pruned_cqs.contains(&cq) && self.has_workload(cq)).then_some(cq);
        };
        let root = st.tree.root(parent);
        while !self.pruned_cohorts.contains(&root) {
            if let Some(cq) = self.next_target(st, root) {
                return Some(cq);
            }
        }
        None
    }

    fn next_target(&mut self, st: &EngineState<'_>, cohort: NodeId) -> Option<CqIdx> {
        let mut highest_cq: Option<CqIdx> = None;
        let mut highest_cq_drs = Drs::negative();
        for &child in &st.tree.nodes[cohort].child_cqs {
            let cq = st.node_cq[child].expect("cq node");
            if self.pruned_cqs.contains(&cq) {
                continue;
            }
            let d = drs(st, child);
            if (!d.borrowing && cq != self.preemptor_cq) || !self.has_workload(cq) {
                self.pruned_cqs.insert(cq);
                continue;
            }
            match compare(&d, &highest_cq_drs) {
                Ordering::Equal => {
                    let cur = highest_cq.expect("equal to a real share");
                    let a = self.targets[&cq][0];
                    let b = self.targets[&cur][0];
                    if candidate_cmp(st, a, b, self.preemptor_cq) == Ordering::Less {
                        highest_cq = Some(cq);
                    }
                }
                Ordering::Greater => {
                    highest_cq_drs = d;
                    highest_cq = Some(cq);
                }
                Ordering::Less => {}
            }
        }
        let mut highest_cohort: Option<NodeId> = None;
        let mut highest_cohort_drs = Drs::negative();
        for &child in &st.tree.nodes[cohort].child_cohorts {
            if self.pruned_cohorts.contains(&child) {
                continue;
            }
            let d = drs(st, child);
            if !d.borrowing && !self.preemptor_ancestors.contains(&child) {
                self.pruned_cohorts.insert(child);
            } else if compare(&d, &highest_cohort_drs) != Ordering::Less {
                highest_cohort_drs = d;
                highest_cohort = Some(child);
            }
        }
        if highest_cohort.is_none() && highest_cq.is_none() {
            self.pruned_cohorts.insert(cohort);
            return None;
        }
        if compare(&highest_cohort_drs, &highest_cq_drs) != Ordering::Less {
            return self.next_target(st, highest_cohort.expect("cohort chosen"));
        }
        highest_cq
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
    let mut candidates = find_candidates(st, ctx);
    if candidates.is_empty() {
        return Vec::new();
    }
    candidates.sort_by(|&a, &b| candidate_cmp(st, a, b, ctx.cq));
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
        let n = &st.tree.nodes[st.cqs[ctx.cq].node];
        ctx.frs_need.iter().all(|&fr| n.usage[fr] <= n.nominal[fr])
    };
    while let Some(cq) = ordering.next(st) {
        if cq == ctx.cq {
            let w = ordering.pop(cq);
            st.remove_usage_of(w);
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
            st.remove_usage_of(w);
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
                st.remove_usage_of(w);
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
            st.remove_usage_of(w);
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
        ordering.pruned_cqs.insert(cq);
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
