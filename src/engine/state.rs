//! The engine's working state, built from a [`ClusterState`]: the quota tree with
//! current usage, per-ClusterQueue queues and admitted sets, and a compact record per
//! workload. Building it is linear in the input plus one sort of the workloads by uid.
//!
//! The snapshot is cloned and rebuilt often (every `schedule_cycle`, every benchmark
//! cycle), so a workload's record owns no heap memory: its key is formatted on demand,
//! its usage lives in one shared arena ([`EngineState::usages`]) and lookups by key
//! binary-search the records, which are in `(namespace, name)` order.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::model::{
    ClusterQueue, ClusterState, Condition, ConditionStatus, LocalQueue, StopPolicy, Timestamp,
    Workload,
};

use super::PlanOptions;
use super::digest::{QueueSet, workload_word};
use super::quota::{FrId, FrTable, Node, NodeId, QuotaTree};
use super::shared::Shared;

pub type CqIdx = usize;
pub type WlIdx = usize;

/// Heap order of a ClusterQueue (`pkg/cache/queue/cluster_queue.go` `baseCompareFunc`):
/// higher priority, then earlier queue-order timestamp, then (gangplank's tie-break)
/// uid and key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct QKey {
    pub neg_priority: i64,
    pub ts: i64,
    pub tie: u32,
    pub idx: WlIdx,
}

/// Why a pending workload is not in any ClusterQueue's queue. The details (queue
/// names, the priority error) are read from the workload and its LocalQueue when an
/// explanation is written, so the record stays small.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotQueued {
    NoQueueName,
    LocalQueueNotFound,
    ClusterQueueNotFound,
    LocalQueueStopped,
    Inactive,
    PriorityError,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WlState {
    /// Pending but Kueue holds it in no queue.
    NotQueued(NotQueued),
    /// In its ClusterQueue's heap or inadmissible set.
    Queued,
    /// Holds a quota reservation.
    Admitted,
    /// Gone from the engine's view (a released workload that is inactive).
    Gone,
}

/// A workload's slice of [`EngineState::usages`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UsageSpan {
    pub start: u32,
    pub len: u32,
}

impl UsageSpan {
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// The engine's compact record of one workload (no heap memory of its own).
#[derive(Clone, Debug)]
pub struct WlInfo<'a> {
    pub wl: &'a Workload,
    pub priority: i32,
    /// Queue-order timestamp (§5.1).
    pub queue_ts: i64,
    /// Rank of (uid, namespace, name): the deterministic last tie-break.
    pub tie: u32,
    /// Dense rank of the uid alone: candidate ordering compares uid, then the key
    /// string, which orders differently from (namespace, name) (see [`key_cmp`]).
    pub uid_rank: u32,
    pub cq: Option<CqIdx>,
    pub state: WlState,
    /// Quota held, per (flavor, resource) sorted by id, while admitted.
    pub usage: UsageSpan,
    /// QuotaReserved transition time (candidate ordering).
    pub reserve_time: i64,
    pub evicted: bool,
    /// Being evicted by someone other than the scheduler (evicted, deactivated, or its
    /// ClusterQueue drains): releases its quota before the next simulated cycle.
    pub releasing: bool,
}

impl WlInfo<'_> {
    /// `namespace/name`, as the output spells a workload.
    pub fn key(&self) -> String {
        let (ns, name) = (&self.wl.namespace, &self.wl.name);
        let mut k = String::with_capacity(ns.len() + 1 + name.len());
        k.push_str(ns);
        k.push('/');
        k.push_str(name);
        k
    }

    pub fn qkey(&self, idx: WlIdx) -> QKey {
        QKey {
            neg_priority: -i64::from(self.priority),
            ts: self.queue_ts,
            tie: self.tie,
            idx,
        }
    }
}

/// Per-ClusterQueue state.
#[derive(Clone, Debug)]
pub struct CqInfo<'a> {
    pub spec: &'a ClusterQueue,
    pub node: NodeId,
    /// Why Kueue would consider this ClusterQueue inactive (no admissions), if so.
    pub inactive: Option<String>,
    /// resource → index of the resource group covering it.
    pub rg_of: BTreeMap<&'a str, usize>,
    pub admitted: BTreeSet<WlIdx>,
    pub heap: QueueSet,
    pub inadmissible: QueueSet,
    /// BestEffortFIFO: the preemptor waiting for its victims sorts first.
    pub sticky: Option<WlIdx>,
}

impl CqInfo<'_> {
    pub fn name(&self) -> &str {
        &self.spec.name
    }
}

/// The snapshot the cycle and the preemption search work on.
#[derive(Clone, Debug)]
pub struct EngineState<'a> {
    pub cluster: &'a ClusterState,
    pub opts: PlanOptions,
    pub frs: Shared<FrTable>,
    pub tree: QuotaTree,
    pub cqs: Shared<Vec<CqInfo<'a>>>,
    pub cq_by_name: Shared<NameMap<&'a str, CqIdx>>,
    pub node_cq: Shared<Vec<Option<CqIdx>>>,
    /// Every non-finished workload, in `(namespace, name)` order (see [`Self::wl_index`]).
    pub wls: Shared<Vec<WlInfo<'a>>>,
    /// Usage arena: each admitted workload's (flavor, resource) usage is a span of it.
    /// Admissions append; a released span is simply abandoned (a plan admits at most
    /// one workload per ClusterQueue per cycle, so the waste is bounded).
    pub usages: Shared<Vec<(FrId, i128)>>,
    /// (namespace, LocalQueue) → LocalQueue, for allocation-free lookups.
    pub lq_index: Shared<NameMap<(&'a str, &'a str), &'a LocalQueue>>,
    pub warnings: Vec<String>,
    /// Logical time of the simulated cycles (ms); starts at `opts.now`.
    pub clock: Timestamp,
    /// Usage added to the snapshot for the current cycle only (preemptors waiting for
    /// victims, DeferredFit, capacity held for a Preempt-without-targets entry).
    pub reserved: Vec<(NodeId, Vec<(FrId, i128)>)>,
    /// Kueue's fair sharing: on/off, strategies, weights ([`super::fair`]).
    pub fair: Shared<super::fair::FairState>,
    /// Work counter (preemption candidates classified + fit checks), for scale guards:
    /// see [`crate::engine::PlanStats`].
    pub steps: std::cell::Cell<u64>,
    /// Heads nominated in cycles that shared their nominations among threads.
    pub parallel_heads: u64,
    /// Kueue's configuration (defaults when the input has none): request rewriting,
    /// feature gates.
    pub kueue: Shared<crate::model::kueue_config::KueueConfig>,
    /// While a cycle nominates its heads (admitted sets do not change then): each
    /// ClusterQueue's admitted workloads in Kueue's candidate order, walked lazily by
    /// each preemptor's search. `None` otherwise.
    pub cand_order: Option<super::preemption::candidates::CandOrder>,
    /// While one head is nominated: the classical searches already run for it (the
    /// flavor assigner's oracle, then the search for the chosen flavors), so the final
    /// search reuses an oracle's result when its inputs are the same. The snapshot does
    /// not change in between (every search restores it).
    pub search_memo: Option<Vec<super::preemption::search::MemoEntry>>,
    /// The admitted workloads in candidate order as the last cycle sorted them, and the
    /// workloads admitted or released since: the next cycle's order is merged from them
    /// ([`super::preemption::candidates::CandOrder::build_for_cycle`]).
    pub cand_sorted: Vec<super::preemption::candidates::Ranked>,
    pub changed_since: Vec<WlIdx>,
    /// Sum of every workload's [`workload_word`], kept by [`Self::admit`] and
    /// [`Self::release`] (the only writers of a workload's state, queue and usage).
    pub wl_digest: u64,
}

use crate::model::well_known::NAMESPACE_NAME_LABEL as NS_NAME_LABEL;

/// Lookups by name (ClusterQueues; LocalQueues by namespace and name): hashed with
/// foldhash, the snapshot looks up every workload's queue (70,000 on a large cluster).
/// Only looked up, never iterated, so the order of entries never reaches the output.
pub type NameMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// The conditions the snapshot reads of a workload (the first of each type, as
/// [`Workload::condition`] finds it), found in one pass: on a large cluster the snapshot
/// reads 70,000 workloads, and a pass per question over conditions whose type strings
/// are scattered over memory was most of its time.
#[derive(Default)]
struct ConditionsRead<'c> {
    quota_reserved: Option<&'c Condition>,
    evicted: Option<&'c Condition>,
    finished: Option<&'c Condition>,
}

impl<'c> ConditionsRead<'c> {
    fn of(wl: &'c Workload) -> Self {
        let mut read = ConditionsRead::default();
        for c in &wl.conditions {
            let slot = match c.type_.as_str() {
                "QuotaReserved" => &mut read.quota_reserved,
                "Evicted" => &mut read.evicted,
                "Finished" => &mut read.finished,
                _ => continue,
            };
            slot.get_or_insert(c);
        }
        read
    }

    fn is_true(c: Option<&Condition>) -> bool {
        c.is_some_and(|c| c.status == ConditionStatus::True)
    }

    /// [`Workload::is_finished`].
    fn finished(&self) -> bool {
        Self::is_true(self.finished)
    }

    /// [`Workload::is_evicted`].
    fn evicted(&self) -> bool {
        Self::is_true(self.evicted)
    }

    /// [`Workload::has_quota_reservation`].
    fn holds_quota(&self, wl: &Workload) -> bool {
        wl.admission.is_some() && Self::is_true(self.quota_reserved)
    }

    /// QuotaReserved transition time (candidate ordering); `now` without one.
    fn quota_reserved_time(&self, now: Timestamp) -> Timestamp {
        self.quota_reserved
            .filter(|c| c.status == ConditionStatus::True)
            .and_then(|c| c.last_transition_time)
            .unwrap_or(now)
    }

    /// Queue-order timestamp (`pkg/workload/workload.go` `GetQueueOrderTimestamp`): the
    /// eviction time for PodsReadyTimeout / AdmissionCheck evictions, else creation.
    fn queue_order_ts(&self, wl: &Workload) -> Timestamp {
        if let Some(c) = self.evicted
            && c.status == ConditionStatus::True
            && (c.reason == "PodsReadyTimeout" || c.reason == "AdmissionCheck")
            && let Some(t) = c.last_transition_time
        {
            return t;
        }
        wl.creation_timestamp
    }
}

impl<'a> EngineState<'a> {
    /// Builds the snapshot: quota tree with the usage of every workload holding a
    /// reservation, and every pending workload placed in its ClusterQueue's heap.
    pub fn new(cluster: &'a ClusterState, opts: &PlanOptions) -> Self {
        let mut warnings = Vec::new();
        let fair_on = opts.fair_sharing
            || cluster
                .kueue_config
                .as_ref()
                .is_some_and(|c| c.fair_sharing_enabled());
        // --- intern (flavor, resource) pairs in a deterministic order
        let mut frs = FrTable::default();
        for cq in cluster.cluster_queues.values() {
            for rg in &cq.resource_groups {
                for f in &rg.flavors {
                    for r in &f.resources {
                        frs.intern(&f.name, &r.name);
                    }
                }
            }
        }
        for co in cluster.cohorts.values() {
            for rg in &co.resource_groups {
                for f in &rg.flavors {
                    for r in &f.resources {
                        frs.intern(&f.name, &r.name);
                    }
                }
            }
        }
        for wl in cluster.workloads.values() {
            if let Some(adm) = &wl.admission {
                for psa in &adm.pod_set_assignments {
                    for (res, fl) in &psa.flavors {
                        frs.intern(fl, res);
                    }
                }
            }
        }
        let nfr = frs.len();

        // --- cohorts: explicit objects, parents they name, cohorts CQs name
        let mut cohort_names: BTreeSet<String> = cluster.cohorts.keys().cloned().collect();
        for co in cluster.cohorts.values() {
            if let Some(p) = &co.parent {
                cohort_names.insert(p.clone());
            }
        }
        for cq in cluster.cluster_queues.values() {
            if let Some(c) = &cq.cohort {
                cohort_names.insert(c.clone());
            }
        }
        // cycle detection: a cohort whose parent chain revisits a cohort
        let mut cycled: BTreeSet<String> = BTreeSet::new();
        for name in &cohort_names {
            let mut seen = BTreeSet::new();
            let mut cur = Some(name.clone());
            while let Some(c) = cur {
                if !seen.insert(c.clone()) {
                    cycled.insert(name.clone());
                    break;
                }
                cur = cluster.cohorts.get(&c).and_then(|o| o.parent.clone());
            }
        }
        if !cycled.is_empty() {
            warnings.push(format!(
                "cohort hierarchy has a cycle through {}; as in Kueue, that tree is ignored and its ClusterQueues admit nothing",
                cycled.iter().cloned().collect::<Vec<_>>().join(", ")
            ));
        }

        let mut tree = QuotaTree::new(Vec::new(), nfr);
        let mut cohort_node: BTreeMap<String, NodeId> = BTreeMap::new();
        for name in &cohort_names {
            let id = tree.nodes.len();
            let mut node = Node::new(name, false, nfr);
            if let Some(co) = cluster.cohorts.get(name) {
                if co.fair_sharing_weight.is_some() && !fair_on {
                    warnings.push(format!(
                        "Cohort {name} sets fairSharing.weight, but Kueue's configuration does not enable fair sharing; the weight has no effect"
                    ));
                }
                apply_quotas(&mut node, &co.resource_groups, &frs);
            }
            tree.nodes.push(node);
            cohort_node.insert(name.clone(), id);
        }
        for name in &cohort_names {
            if cycled.contains(name) {
                continue;
            }
            if let Some(p) = cluster.cohorts.get(name).and_then(|c| c.parent.as_ref()) {
                let (c, pid) = (cohort_node[name], cohort_node[p]);
                tree.nodes[c].parent = Some(pid);
                tree.nodes[pid].child_cohorts.push(c);
            }
        }

        // --- ClusterQueues
        let mut cqs = Vec::new();
        let mut cq_by_name = NameMap::default();
        for (name, spec) in &cluster.cluster_queues {
            let id = tree.nodes.len();
            let mut node = Node::new(name, true, nfr);
            apply_quotas(&mut node, &spec.resource_groups, &frs);
            tree.nodes.push(node);
            let mut inactive = None;
            if let Some(c) = &spec.cohort {
                if cycled.contains(c) {
                    inactive = Some(format!("its cohort {c} is part of a cohort cycle"));
                } else {
                    let pid = cohort_node[c];
                    tree.nodes[id].parent = Some(pid);
                    tree.nodes[pid].child_cqs.push(id);
                }
            }
            let mut rg_of = BTreeMap::new();
            for (i, rg) in spec.resource_groups.iter().enumerate() {
                for r in &rg.covered_resources {
                    rg_of.insert(r.as_str(), i);
                }
                for f in &rg.flavors {
                    if inactive.is_none() && !cluster.resource_flavors.contains_key(&f.name) {
                        inactive = Some(format!("ResourceFlavor {} not found", f.name));
                    }
                }
            }
            match spec.stop_policy {
                StopPolicy::None => {}
                StopPolicy::Hold => inactive = Some("stopped (stopPolicy: Hold)".to_string()),
                StopPolicy::HoldAndDrain => {
                    inactive = Some("stopped (stopPolicy: HoldAndDrain)".to_string())
                }
            }
            if spec.fair_sharing_weight.is_some() && !fair_on {
                warnings.push(format!(
                    "ClusterQueue {name} sets fairSharing.weight, but Kueue's configuration does not enable fair sharing; the weight has no effect (classical preemption)"
                ));
            }
            if !spec.admission_checks.is_empty() {
                warnings.push(format!(
                    "ClusterQueue {name} uses admission checks ({}); gangplank treats quota reservation as admission",
                    spec.admission_checks.join(", ")
                ));
            }
            cq_by_name.insert(name.as_str(), cqs.len());
            cqs.push(CqInfo {
                spec,
                node: id,
                inactive,
                rg_of,
                admitted: BTreeSet::new(),
                heap: QueueSet::default(),
                inadmissible: QueueSet::default(),
                sticky: None,
            });
        }
        tree.finish();
        let mut node_cq = vec![None; tree.nodes.len()];
        for (i, cq) in cqs.iter().enumerate() {
            node_cq[cq.node] = Some(i);
        }
        for f in cluster.resource_flavors.values() {
            if f.topology_name.is_some() {
                warnings.push(format!(
                    "ResourceFlavor {} uses topology-aware scheduling, which gangplank does not model",
                    f.name
                ));
            }
        }

        // --- workloads
        let all: Vec<&Workload> = cluster.workloads.values().map(|w| &**w).collect();
        let (tie_of, uid_rank_of) = tie_ranks(&all);
        let lq_index: NameMap<(&'a str, &'a str), &'a LocalQueue> = cluster
            .local_queues
            .values()
            .map(|lq| ((lq.namespace.as_str(), lq.name.as_str()), lq))
            .collect();

        let mut wls: Vec<WlInfo<'a>> = Vec::with_capacity(all.len());
        let mut usages: Vec<(FrId, i128)> = Vec::new();
        // Queues are collected first and built in bulk: cheaper than one insert each.
        let mut heaps: Vec<Vec<QKey>> = vec![Vec::new(); cqs.len()];
        let mut admitted: Vec<Vec<WlIdx>> = vec![Vec::new(); cqs.len()];
        for (i, wl) in all.iter().copied().enumerate() {
            let conditions = ConditionsRead::of(wl);
            if conditions.finished() {
                continue;
            }
            let idx = wls.len();
            let mut info = WlInfo {
                wl,
                priority: wl.priority,
                queue_ts: conditions.queue_order_ts(wl),
                tie: tie_of[i],
                uid_rank: uid_rank_of[i],
                cq: None,
                state: WlState::Queued,
                usage: UsageSpan::default(),
                reserve_time: conditions.quota_reserved_time(opts.now),
                evicted: conditions.evicted(),
                releasing: false,
            };
            if conditions.holds_quota(wl) {
                let adm = wl.admission.as_ref().expect("reservation has admission");
                match cq_by_name.get(adm.cluster_queue.as_str()) {
                    Some(&c) => {
                        info.cq = Some(c);
                        info.state = WlState::Admitted;
                        info.usage = push_admitted_usage(wl, &frs, &mut usages);
                        let drains = cqs[c].spec.stop_policy == StopPolicy::HoldAndDrain;
                        info.releasing = info.evicted || !wl.active || drains;
                        tree.add_all(cqs[c].node, &usages[info.usage.range()]);
                        admitted[c].push(idx);
                    }
                    None => {
                        warnings.push(format!(
                            "workload {} holds quota in unknown ClusterQueue {}; its usage is ignored",
                            info.key(),
                            adm.cluster_queue
                        ));
                        info.state = WlState::Gone;
                    }
                }
            } else {
                let (cq, state) = resolve_queue(&lq_index, wl, &cq_by_name);
                info.cq = cq;
                info.state = state;
                if info.state == WlState::Queued {
                    let c = info.cq.expect("queued has cq");
                    heaps[c].push(info.qkey(idx));
                }
            }
            wls.push(info);
        }
        for ((cq, heap), admitted) in cqs.iter_mut().zip(heaps).zip(admitted) {
            cq.heap = heap.into_iter().collect();
            cq.admitted = admitted.into_iter().collect();
        }

        let fair = super::fair::FairState::new(cluster, &tree, &frs, &node_cq, opts.fair_sharing);
        warnings.extend(super::kueue_cfg::config_warnings(cluster));
        let mut st = EngineState {
            cluster,
            opts: opts.clone(),
            fair: Shared::new(fair),
            kueue: Shared::new(cluster.kueue_config.clone().unwrap_or_default()),
            frs: Shared::new(frs),
            tree,
            cqs: Shared::new(cqs),
            cq_by_name: Shared::new(cq_by_name),
            node_cq: Shared::new(node_cq),
            wls: Shared::new(wls),
            usages: Shared::new(usages),
            lq_index: Shared::new(lq_index),
            warnings,
            clock: opts.now,
            reserved: Vec::new(),
            steps: std::cell::Cell::new(0),
            parallel_heads: 0,
            cand_order: None,
            search_memo: None,
            cand_sorted: Vec::new(),
            changed_since: Vec::new(),
            wl_digest: 0,
        };
        st.wl_digest = st.recomputed_wl_digest();
        st
    }

    /// A worker's copy for nominating heads in parallel ([`super::cycle`]): its own quota
    /// tree (every search moves usage and restores it), work counter and search memo;
    /// everything else shared with `self` ([`Shared`]: nothing writes it while heads are
    /// nominated). The candidate order is shared too; cohort lists the worker needs are
    /// built in its copy.
    pub fn fork(&self) -> EngineState<'a> {
        EngineState {
            cluster: self.cluster,
            opts: self.opts.clone(),
            frs: self.frs.clone(),
            tree: self.tree.clone(),
            cqs: self.cqs.clone(),
            cq_by_name: self.cq_by_name.clone(),
            node_cq: self.node_cq.clone(),
            wls: self.wls.clone(),
            usages: self.usages.clone(),
            lq_index: self.lq_index.clone(),
            warnings: Vec::new(),
            clock: self.clock,
            reserved: self.reserved.clone(),
            fair: self.fair.clone(),
            steps: std::cell::Cell::new(0),
            parallel_heads: 0,
            kueue: self.kueue.clone(),
            cand_order: self.cand_order.clone(),
            search_memo: None,
            // a fork nominates; it never builds a cycle's order
            cand_sorted: Vec::new(),
            changed_since: Vec::new(),
            wl_digest: self.wl_digest,
        }
    }

    /// Namespace labels as Kubernetes sets them (`kubernetes.io/metadata.name` always present).
    pub fn namespace_labels(&self, ns: &str) -> crate::model::Labels {
        let mut labels = self
            .cluster
            .namespaces
            .get(ns)
            .map(|n| n.labels.clone())
            .unwrap_or_default();
        labels.insert(NS_NAME_LABEL.to_string(), ns.to_string());
        labels
    }

    /// ClusterQueues whose queues are affected by a quota change in `cq`: the whole
    /// tree under its root cohort (Kueue requeues inadmissible workloads per root).
    pub fn cqs_in_same_tree(&self, cq: CqIdx) -> Vec<CqIdx> {
        self.cqs_under(self.tree.root(self.cqs[cq].node))
    }

    /// The ClusterQueues under `root` (itself included if it is one), sorted.
    fn cqs_under(&self, root: NodeId) -> Vec<CqIdx> {
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            if let Some(c) = self.node_cq[n] {
                out.push(c);
            }
            stack.extend(self.tree.nodes[n].child_cohorts.iter().copied());
            stack.extend(self.tree.nodes[n].child_cqs.iter().copied());
        }
        out.sort_unstable();
        out
    }

    /// Kueue's hierarchy path of a ClusterQueue, e.g. "/root/team/cq".
    pub fn cq_path(&self, cq: CqIdx) -> String {
        let node = self.cqs[cq].node;
        let mut parts: Vec<&str> = self
            .tree
            .ancestors(node)
            .iter()
            .map(|&n| self.tree.nodes[n].name.as_str())
            .collect();
        parts.reverse();
        parts.push(self.cqs[cq].name());
        format!("/{}", parts.join("/"))
    }

    /// Moves every inadmissible workload of the trees containing `cqs` back to its heap
    /// (Kueue requeues per root cohort), walking each tree once however many of its
    /// ClusterQueues are listed: a cycle that releases hundreds of victims in one tree
    /// would otherwise walk it hundreds of times.
    pub fn flush_inadmissible_of(&mut self, cqs: impl IntoIterator<Item = CqIdx>) {
        let mut roots: Vec<NodeId> = cqs
            .into_iter()
            .map(|c| self.tree.root(self.cqs[c].node))
            .collect();
        roots.sort_unstable();
        roots.dedup();
        for root in roots {
            let in_tree = self.cqs_under(root);
            let queues = &mut *self.cqs;
            for c in in_tree {
                let q = &mut queues[c];
                if !q.inadmissible.is_empty() {
                    let moved = q.inadmissible.take();
                    q.heap.extend(moved);
                }
            }
        }
    }

    /// The index of the workload whose key is `namespace/name`, if it is in the snapshot.
    pub fn wl_index(&self, key: &str) -> Option<WlIdx> {
        // `wls` is in (namespace, name) order. A key with several '/' could come from
        // several workloads; the one with the longest namespace is the last in that
        // order, which is the one a key → index map filled in order would keep.
        key.match_indices('/').rev().find_map(|(i, _)| {
            let target = (&key[..i], &key[i + 1..]);
            self.wls
                .binary_search_by(|w| (w.wl.namespace.as_str(), w.wl.name.as_str()).cmp(&target))
                .ok()
        })
    }

    /// The quota a workload holds (empty unless admitted).
    /// Counts one unit of engine work ([`EngineState::steps`]).
    #[inline]
    pub fn step(&self) {
        self.steps.set(self.steps.get() + 1);
    }

    pub fn usage_of(&self, w: WlIdx) -> &[(FrId, i128)] {
        &self.usages[self.wls[w].usage.range()]
    }

    /// Removes an admitted workload's usage from the tree (it keeps its record).
    pub fn remove_usage_of(&mut self, w: WlIdx) {
        let node = self.cqs[self.wls[w].cq.expect("admitted has cq")].node;
        let span = self.wls[w].usage;
        self.tree.remove_all(node, &self.usages[span.range()]);
    }

    /// [`Self::remove_usage_of`] for the (flavor, resource) pairs in `frs` only: the
    /// preemption search reads no other, and a workload's usage of each pair moves
    /// through the tree independently of the others.
    pub fn remove_usage_in(&mut self, w: WlIdx, frs: &[FrId]) {
        self.move_usage_in(w, frs, QuotaTree::remove_usage);
    }

    /// Adds back what [`Self::remove_usage_in`] removed.
    pub fn add_usage_in(&mut self, w: WlIdx, frs: &[FrId]) {
        self.move_usage_in(w, frs, QuotaTree::add_usage);
    }

    /// Removes what [`Self::remove_usage_in`] left of a workload's usage: the pairs
    /// not in `frs` (both together are [`Self::remove_usage_of`]).
    pub fn remove_usage_outside(&mut self, w: WlIdx, frs: &[FrId]) {
        self.move_usage_where(w, |fr| !frs.contains(&fr), QuotaTree::remove_usage);
    }

    fn move_usage_in(
        &mut self,
        w: WlIdx,
        frs: &[FrId],
        apply: fn(&mut QuotaTree, NodeId, FrId, i128),
    ) {
        self.move_usage_where(w, |fr| frs.contains(&fr), apply);
    }

    fn move_usage_where(
        &mut self,
        w: WlIdx,
        moved: impl Fn(FrId) -> bool,
        apply: fn(&mut QuotaTree, NodeId, FrId, i128),
    ) {
        let node = self.cqs[self.wls[w].cq.expect("admitted has cq")].node;
        let span = self.wls[w].usage;
        for &(fr, v) in &self.usages[span.range()] {
            if moved(fr) {
                apply(&mut self.tree, node, fr, v);
            }
        }
    }

    /// Adds back what [`Self::remove_usage_of`] removed.
    pub fn add_usage_of(&mut self, w: WlIdx) {
        let node = self.cqs[self.wls[w].cq.expect("admitted has cq")].node;
        let span = self.wls[w].usage;
        self.tree.add_all(node, &self.usages[span.range()]);
    }

    /// The LocalQueue the workload names, if it exists.
    pub fn local_queue_of(&self, w: WlIdx) -> Option<&'a LocalQueue> {
        let wl = self.wls[w].wl;
        let q = wl.queue_name.as_ref()?;
        self.lq_index
            .get(&(wl.namespace.as_str(), q.as_str()))
            .copied()
    }

    /// Admits a workload in the snapshot (usage added, moved to the admitted set).
    pub fn admit(&mut self, idx: WlIdx, cq: CqIdx, usage: &[(FrId, i128)]) {
        let key = self.wls[idx].qkey(idx);
        self.cqs[cq].heap.remove(&key);
        self.cqs[cq].inadmissible.remove(&key);
        if self.cqs[cq].sticky == Some(idx) {
            self.cqs[cq].sticky = None;
        }
        self.tree.add_all(self.cqs[cq].node, usage);
        self.cqs[cq].admitted.insert(idx);
        if !self.cand_sorted.is_empty() {
            self.changed_since.push(idx);
        }
        let span = UsageSpan {
            start: self.usages.len() as u32,
            len: usage.len() as u32,
        };
        self.usages.extend_from_slice(usage);
        let before = self.workload_word(idx);
        let w = &mut self.wls[idx];
        w.usage = span;
        w.state = WlState::Admitted;
        w.reserve_time = self.clock;
        w.evicted = false;
        w.releasing = false;
        self.rehash_workload(idx, before);
    }

    /// This workload's part of [`Self::wl_digest`].
    pub fn workload_word(&self, w: WlIdx) -> u64 {
        let info = &self.wls[w];
        workload_word(w, info.state, info.cq, self.usage_of(w))
    }

    /// Replaces the word `before` of a workload that just changed in the digest.
    fn rehash_workload(&mut self, w: WlIdx, before: u64) {
        self.wl_digest = self
            .wl_digest
            .wrapping_sub(before)
            .wrapping_add(self.workload_word(w));
    }

    /// [`Self::wl_digest`] recomputed from every record (the snapshot's first; debug
    /// checks after that).
    pub fn recomputed_wl_digest(&self) -> u64 {
        (0..self.wls.len()).fold(0, |d: u64, w| d.wrapping_add(self.workload_word(w)))
    }

    /// Releases an admitted workload's quota and, if it is still active (and its
    /// LocalQueue is usable), requeues it with its original queue position.
    pub fn release(&mut self, idx: WlIdx) {
        let Some(cq) = self.wls[idx].cq else { return };
        if self.wls[idx].state != WlState::Admitted {
            return;
        }
        if !self.cand_sorted.is_empty() {
            self.changed_since.push(idx);
        }
        let before = self.workload_word(idx);
        let span = std::mem::take(&mut self.wls[idx].usage);
        self.tree
            .remove_all(self.cqs[cq].node, &self.usages[span.range()]);
        self.cqs[cq].admitted.remove(&idx);
        let wl = self.wls[idx].wl;
        let (rcq, state) = resolve_queue(&self.lq_index, wl, &self.cq_by_name);
        let w = &mut self.wls[idx];
        w.evicted = false;
        w.releasing = false;
        w.cq = rcq.or(Some(cq));
        w.state = state;
        if w.state == WlState::Queued {
            let c = w.cq.expect("queued has cq");
            let k = w.qkey(idx);
            self.cqs[c].heap.insert(k);
        }
        self.rehash_workload(idx, before);
    }
}

/// Compares two workloads' keys (`namespace/name`) without formatting them. This is
/// not (namespace, name) order: `a-b/x` sorts before `a/x` because '-' < '/'.
pub fn key_cmp(a: &Workload, b: &Workload) -> Ordering {
    let bytes = |w: &Workload| {
        let (ns, name) = (w.namespace.as_bytes(), w.name.as_bytes());
        ns.iter()
            .chain([b'/'].iter())
            .chain(name.iter())
            .copied()
            .collect::<Vec<u8>>()
    };
    if a.namespace == b.namespace {
        return a.name.cmp(&b.name);
    }
    // only reached for equal uids in different namespaces: rare, allocation is fine
    bytes(a).cmp(&bytes(b))
}

/// The tie rank of every workload by (uid, namespace, name) and the dense rank of its
/// uid alone. `all` is in (namespace, name) order, so its index breaks uid ties.
fn tie_ranks(all: &[&Workload]) -> (Vec<u32>, Vec<u32>) {
    // Sorting on the uid's first 48 bytes as integers avoids most string compares (a
    // UUID has 36; uids sharing a long prefix, as generated ones do, made every compare
    // a string compare); zero padding keeps that order consistent with the full one.
    let prefix = |s: &str| {
        let mut b = [0u8; 48];
        let n = s.len().min(48);
        b[..n].copy_from_slice(&s.as_bytes()[..n]);
        let word = |i: usize| u128::from_be_bytes(b[i..i + 16].try_into().expect("16 bytes"));
        (word(0), word(16), word(32))
    };
    let mut order: Vec<((u128, u128, u128), u32)> = all
        .iter()
        .enumerate()
        .map(|(i, w)| (prefix(&w.uid), i as u32))
        .collect();
    let uid = |i: u32| all[i as usize].uid.as_str();
    order.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| uid(a.1).cmp(uid(b.1)))
            .then(a.1.cmp(&b.1))
    });
    let mut tie = vec![0u32; all.len()];
    let mut uid_rank = vec![0u32; all.len()];
    let mut rank = 0u32;
    for (r, pair) in order.iter().enumerate() {
        if r > 0 && (order[r - 1].0 != pair.0 || uid(order[r - 1].1) != uid(pair.1)) {
            rank += 1;
        }
        tie[pair.1 as usize] = r as u32;
        uid_rank[pair.1 as usize] = rank;
    }
    (tie, uid_rank)
}

/// Looks the workload's queue up: LocalQueue → ClusterQueue (§1.3).
fn resolve_queue(
    lq_index: &NameMap<(&str, &str), &LocalQueue>,
    wl: &Workload,
    cq_by_name: &NameMap<&str, CqIdx>,
) -> (Option<CqIdx>, WlState) {
    let lq_cq = wl
        .queue_name
        .as_ref()
        .and_then(|q| lq_index.get(&(wl.namespace.as_str(), q.as_str())).copied());
    let cq = lq_cq.and_then(|lq| cq_by_name.get(lq.cluster_queue.as_str()).copied());
    let not_queued = |cq, why| (cq, WlState::NotQueued(why));
    if wl.priority_error.is_some() {
        return not_queued(cq, NotQueued::PriorityError);
    }
    if !wl.active {
        return not_queued(cq, NotQueued::Inactive);
    }
    if wl.queue_name.is_none() {
        return not_queued(None, NotQueued::NoQueueName);
    }
    let Some(lq) = lq_cq else {
        return not_queued(None, NotQueued::LocalQueueNotFound);
    };
    if lq.stop_policy != StopPolicy::None {
        return not_queued(cq, NotQueued::LocalQueueStopped);
    }
    match cq {
        Some(c) => (Some(c), WlState::Queued),
        None => not_queued(None, NotQueued::ClusterQueueNotFound),
    }
}

fn apply_quotas(node: &mut Node, groups: &[crate::model::ResourceGroup], frs: &FrTable) {
    for rg in groups {
        for f in &rg.flavors {
            for r in &f.resources {
                let fr = frs.get(&f.name, &r.name).expect("interned");
                node.has_quota[fr] = true;
                node.nominal[fr] = r.nominal.milli();
                node.borrowing_limit[fr] = r.borrowing_limit.map(|q| q.milli());
                node.lending_limit[fr] = r.lending_limit.map(|q| q.milli());
            }
        }
    }
}

/// Usage of an admitted workload: `resourceUsage` from its admission, scaled down by
/// reclaimable pods (`totalRequestsFromAdmission`), summed per (flavor, resource) and
/// sorted by id, appended to `out`. Resources without a flavor are not counted.
fn push_admitted_usage(wl: &Workload, frs: &FrTable, out: &mut Vec<(FrId, i128)>) -> UsageSpan {
    let start = out.len();
    let Some(adm) = &wl.admission else {
        return UsageSpan::default();
    };
    for psa in &adm.pod_set_assignments {
        let spec_count = wl
            .pod_sets
            .iter()
            .find(|p| p.name == psa.name)
            .map(|p| p.count);
        let count = i128::from(psa.count.or(spec_count).unwrap_or(1).max(0));
        let reclaim = i128::from(*wl.reclaimable_pods.get(&psa.name).unwrap_or(&0)).clamp(0, count);
        for (res, q) in &psa.resource_usage {
            let Some(fl) = psa.flavors.get(res) else {
                continue;
            };
            let Some(fr) = frs.get(fl, res) else { continue };
            let v = if reclaim > 0 && count > 0 {
                q.milli() * (count - reclaim) / count
            } else {
                q.milli()
            };
            // a handful of entries: a linear scan beats a map
            match out[start..].iter_mut().find(|(f, _)| *f == fr) {
                Some((_, acc)) => *acc += v,
                None => out.push((fr, v)),
            }
        }
    }
    out[start..].sort_unstable_by_key(|&(fr, _)| fr);
    UsageSpan {
        start: start as u32,
        len: (out.len() - start) as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wl(ns: &str, name: &str, uid: &str) -> Workload {
        Workload {
            namespace: ns.into(),
            name: name.into(),
            uid: uid.into(),
            ..Default::default()
        }
    }

    #[test]
    fn key_cmp_is_the_order_of_formatted_keys() {
        let names = [
            ("a", "x"),
            ("a-b", "x"),
            ("a", "b/x"),
            ("a/b", "x"),
            ("ab", ""),
            ("a", ""),
        ];
        for (n1, w1) in names {
            for (n2, w2) in names {
                let (a, b) = (wl(n1, w1, ""), wl(n2, w2, ""));
                assert_eq!(
                    key_cmp(&a, &b),
                    a.key().cmp(&b.key()),
                    "{n1}/{w1} vs {n2}/{w2}"
                );
            }
        }
    }

    #[test]
    fn tie_ranks_sort_by_uid_then_input_order() {
        let uids = [
            "uid-2",
            "uid-10",
            "same",
            "",
            "a-very-long-uid-beyond-sixteen-bytes-1",
            "a-very-long-uid-beyond-sixteen-bytes-0",
            "an-even-longer-uid-beyond-forty-eight-bytes-of-the-key-01",
            "an-even-longer-uid-beyond-forty-eight-bytes-of-the-key-00",
            "same",
            "uid-2\0",
        ];
        let wls: Vec<Workload> = uids
            .iter()
            .enumerate()
            .map(|(i, u)| wl("ns", &format!("w{i}"), u))
            .collect();
        let all: Vec<&Workload> = wls.iter().collect();
        let (tie, uid_rank) = tie_ranks(&all);
        let mut expected: Vec<usize> = (0..all.len()).collect();
        expected.sort_by(|&a, &b| (uids[a], a).cmp(&(uids[b], b)));
        for (rank, &i) in expected.iter().enumerate() {
            assert_eq!(tie[i] as usize, rank);
        }
        for a in 0..all.len() {
            for b in 0..all.len() {
                assert_eq!(uid_rank[a].cmp(&uid_rank[b]), uids[a].cmp(uids[b]));
            }
        }
    }
}
