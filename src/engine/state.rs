//! The engine's working state, built from a [`ClusterState`]: the quota tree with
//! current usage, per-ClusterQueue queues and admitted sets, and a compact record per
//! workload. Building it is linear in the input plus one sort of the pending workloads.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{ClusterQueue, ClusterState, StopPolicy, Timestamp, Workload};

use super::PlanOptions;
use super::quota::{FrId, FrTable, Node, NodeId, QuotaTree};

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

/// Why a pending workload is not in any ClusterQueue's queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotQueued {
    NoQueueName,
    LocalQueueNotFound { namespace: String, name: String },
    ClusterQueueNotFound { local_queue: String, cluster_queue: String },
    LocalQueueStopped { local_queue: String },
    Inactive,
    PriorityError(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
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

/// The engine's compact record of one workload.
#[derive(Clone, Debug)]
pub struct WlInfo<'a> {
    pub wl: &'a Workload,
    pub key: String,
    pub priority: i32,
    /// Queue-order timestamp (§5.1).
    pub queue_ts: i64,
    /// Rank of (uid, key): the deterministic last tie-break.
    pub tie: u32,
    pub cq: Option<CqIdx>,
    pub state: WlState,
    /// Quota held, per (flavor, resource), while admitted.
    pub usage: Vec<(FrId, i128)>,
    /// QuotaReserved transition time (candidate ordering).
    pub reserve_time: i64,
    pub evicted: bool,
    /// Being evicted by someone other than the scheduler (evicted, deactivated, or its
    /// ClusterQueue drains): releases its quota before the next simulated cycle.
    pub releasing: bool,
    /// Flavors per pod set per resource while admitted.
    pub flavors: BTreeMap<String, BTreeMap<String, String>>,
}

impl WlInfo<'_> {
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
    pub rg_of: BTreeMap<String, usize>,
    pub admitted: BTreeSet<WlIdx>,
    pub heap: BTreeSet<QKey>,
    pub inadmissible: BTreeSet<QKey>,
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
    pub frs: FrTable,
    pub tree: QuotaTree,
    pub cqs: Vec<CqInfo<'a>>,
    pub cq_by_name: BTreeMap<String, CqIdx>,
    pub node_cq: Vec<Option<CqIdx>>,
    pub wls: Vec<WlInfo<'a>>,
    pub wl_by_key: BTreeMap<String, WlIdx>,
    pub warnings: Vec<String>,
    /// Logical time of the simulated cycles (ms); starts at `opts.now`.
    pub clock: Timestamp,
    /// Usage added to the snapshot for the current cycle only (preemptors waiting for
    /// victims, DeferredFit, capacity held for a Preempt-without-targets entry).
    pub reserved: Vec<(NodeId, Vec<(FrId, i128)>)>,
}

const NS_NAME_LABEL: &str = "kubernetes.io/metadata.name";

fn quota_reserved_time(wl: &Workload, now: Timestamp) -> Timestamp {
    wl.condition("QuotaReserved")
        .filter(|c| c.status == crate::model::ConditionStatus::True)
        .and_then(|c| c.last_transition_time)
        .unwrap_or(now)
}

/// Queue-order timestamp (`pkg/workload/workload.go` `GetQueueOrderTimestamp`): the
/// eviction time for PodsReadyTimeout / AdmissionCheck evictions, else creation.
fn queue_order_ts(wl: &Workload) -> Timestamp {
    if let Some(c) = wl.condition("Evicted")
        && c.status == crate::model::ConditionStatus::True
        && (c.reason == "PodsReadyTimeout" || c.reason == "AdmissionCheck")
        && let Some(t) = c.last_transition_time
    {
        return t;
    }
    wl.creation_timestamp
}

impl<'a> EngineState<'a> {
    /// Builds the snapshot: quota tree with the usage of every workload holding a
    /// reservation, and every pending workload placed in its ClusterQueue's heap.
    pub fn new(cluster: &'a ClusterState, opts: &PlanOptions) -> Self {
        let mut warnings = Vec::new();
        if opts.fair_sharing {
            warnings.push(
                "fair sharing is enabled in the options, but gangplank implements only classical preemption; \
                 admission order and preemption targets may differ from Kueue"
                    .to_string(),
            );
        }
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

        let mut tree = QuotaTree { nodes: Vec::new(), nfr };
        let mut cohort_node: BTreeMap<String, NodeId> = BTreeMap::new();
        for name in &cohort_names {
            let id = tree.nodes.len();
            let mut node = Node::new(name, false, nfr);
            if let Some(co) = cluster.cohorts.get(name) {
                if co.fair_sharing_weight.is_some() {
                    warnings.push(format!(
                        "Cohort {name} sets fairSharing, which gangplank does not implement; its weight is ignored"
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
        let mut cq_by_name = BTreeMap::new();
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
                    rg_of.insert(r.clone(), i);
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
            if spec.fair_sharing_weight.is_some() {
                warnings.push(format!(
                    "ClusterQueue {name} sets fairSharing, which gangplank does not implement; classical preemption is assumed"
                ));
            }
            if !spec.admission_checks.is_empty() {
                warnings.push(format!(
                    "ClusterQueue {name} uses admission checks ({}); gangplank treats quota reservation as admission",
                    spec.admission_checks.join(", ")
                ));
            }
            cq_by_name.insert(name.clone(), cqs.len());
            cqs.push(CqInfo {
                spec,
                node: id,
                inactive,
                rg_of,
                admitted: BTreeSet::new(),
                heap: BTreeSet::new(),
                inadmissible: BTreeSet::new(),
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
        let mut order: Vec<(&str, String)> = Vec::new();
        for wl in cluster.workloads.values() {
            order.push((wl.uid.as_str(), wl.key()));
        }
        order.sort();
        let tie_of: BTreeMap<&String, u32> = order
            .iter()
            .enumerate()
            .map(|(i, (_, k))| (k, i as u32))
            .collect();

        let mut wls: Vec<WlInfo<'a>> = Vec::with_capacity(cluster.workloads.len());
        let mut wl_by_key = BTreeMap::new();
        let mut partial_warned = false;
        for wl in cluster.workloads.values() {
            if wl.is_finished() {
                continue;
            }
            let key = wl.key();
            let tie = tie_of[&key];
            let idx = wls.len();
            let mut info = WlInfo {
                wl,
                key: key.clone(),
                priority: wl.priority,
                queue_ts: queue_order_ts(wl),
                tie,
                cq: None,
                state: WlState::Queued,
                usage: Vec::new(),
                reserve_time: quota_reserved_time(wl, opts.now),
                evicted: wl.is_evicted(),
                releasing: false,
                flavors: BTreeMap::new(),
            };
            if !partial_warned && wl.pod_sets.iter().any(|p| p.min_count.is_some()) {
                partial_warned = true;
                warnings.push(
                    "some workloads set minCount (partial admission); gangplank only considers full counts"
                        .to_string(),
                );
            }
            if wl.has_quota_reservation() {
                let adm = wl.admission.as_ref().expect("reservation has admission");
                match cq_by_name.get(&adm.cluster_queue) {
                    Some(&c) => {
                        info.cq = Some(c);
                        info.state = WlState::Admitted;
                        info.usage = admitted_usage(wl, &frs);
                        for psa in &adm.pod_set_assignments {
                            info.flavors.insert(psa.name.clone(), psa.flavors.clone());
                        }
                        let drains = cqs[c].spec.stop_policy == StopPolicy::HoldAndDrain;
                        info.releasing = info.evicted || !wl.active || drains;
                        tree.add_all(cqs[c].node, &info.usage);
                        cqs[c].admitted.insert(idx);
                    }
                    None => {
                        warnings.push(format!(
                            "workload {key} holds quota in unknown ClusterQueue {}; its usage is ignored",
                            adm.cluster_queue
                        ));
                        info.state = WlState::Gone;
                    }
                }
            } else {
                let (cq, state) = resolve_queue(cluster, wl, &cq_by_name);
                info.cq = cq;
                info.state = state;
                if info.state == WlState::Queued {
                    let c = info.cq.expect("queued has cq");
                    cqs[c].heap.insert(info.qkey(idx));
                }
            }
            wl_by_key.insert(key, idx);
            wls.push(info);
        }

        EngineState {
            cluster,
            opts: opts.clone(),
            frs,
            tree,
            cqs,
            cq_by_name,
            node_cq,
            wls,
            wl_by_key,
            warnings,
            clock: opts.now,
            reserved: Vec::new(),
        }
    }

    /// Namespace labels as Kubernetes sets them (`kubernetes.io/metadata.name` always present).
    pub fn namespace_labels(&self, ns: &str) -> BTreeMap<String, String> {
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
        let root = self.tree.root(self.cqs[cq].node);
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

    /// Moves every inadmissible workload of the tree containing `cq` back to its heap.
    pub fn flush_inadmissible(&mut self, cq: CqIdx) {
        for c in self.cqs_in_same_tree(cq) {
            let moved = std::mem::take(&mut self.cqs[c].inadmissible);
            self.cqs[c].heap.extend(moved);
        }
    }

    /// Admits a workload in the snapshot (usage added, moved to the admitted set).
    pub fn admit(&mut self, idx: WlIdx, cq: CqIdx, usage: Vec<(FrId, i128)>, flavors: BTreeMap<String, BTreeMap<String, String>>) {
        let key = self.wls[idx].qkey(idx);
        self.cqs[cq].heap.remove(&key);
        self.cqs[cq].inadmissible.remove(&key);
        if self.cqs[cq].sticky == Some(idx) {
            self.cqs[cq].sticky = None;
        }
        self.tree.add_all(self.cqs[cq].node, &usage);
        self.cqs[cq].admitted.insert(idx);
        let w = &mut self.wls[idx];
        w.usage = usage;
        w.flavors = flavors;
        w.state = WlState::Admitted;
        w.reserve_time = self.clock;
        w.evicted = false;
        w.releasing = false;
    }

    /// Releases an admitted workload's quota and, if it is still active (and its
    /// LocalQueue is usable), requeues it with its original queue position.
    pub fn release(&mut self, idx: WlIdx) {
        let Some(cq) = self.wls[idx].cq else { return };
        if self.wls[idx].state != WlState::Admitted {
            return;
        }
        let usage = std::mem::take(&mut self.wls[idx].usage);
        self.tree.remove_all(self.cqs[cq].node, &usage);
        self.cqs[cq].admitted.remove(&idx);
        let wl = self.wls[idx].wl;
        let (rcq, state) = resolve_queue(self.cluster, wl, &self.cq_by_name);
        let w = &mut self.wls[idx];
        w.evicted = false;
        w.releasing = false;
        w.flavors.clear();
        w.cq = rcq.or(Some(cq));
        w.state = state;
        if w.state == WlState::Queued {
            let c = w.cq.expect("queued has cq");
            let k = w.qkey(idx);
            self.cqs[c].heap.insert(k);
        }
    }
}

/// Looks the workload's queue up: LocalQueue → ClusterQueue (§1.3).
fn resolve_queue(
    cluster: &ClusterState,
    wl: &Workload,
    cq_by_name: &BTreeMap<String, CqIdx>,
) -> (Option<CqIdx>, WlState) {
    let lq_cq = wl.queue_name.as_ref().and_then(|q| {
        cluster
            .local_queues
            .get(&(wl.namespace.clone(), q.clone()))
    });
    let cq = lq_cq.and_then(|lq| cq_by_name.get(&lq.cluster_queue).copied());
    if let Some(e) = &wl.priority_error {
        return (cq, WlState::NotQueued(NotQueued::PriorityError(e.clone())));
    }
    if !wl.active {
        return (cq, WlState::NotQueued(NotQueued::Inactive));
    }
    let Some(q) = &wl.queue_name else {
        return (None, WlState::NotQueued(NotQueued::NoQueueName));
    };
    let Some(lq) = lq_cq else {
        return (
            None,
            WlState::NotQueued(NotQueued::LocalQueueNotFound {
                namespace: wl.namespace.clone(),
                name: q.clone(),
            }),
        );
    };
    if lq.stop_policy != StopPolicy::None {
        return (
            cq,
            WlState::NotQueued(NotQueued::LocalQueueStopped {
                local_queue: format!("{}/{}", lq.namespace, lq.name),
            }),
        );
    }
    match cq {
        Some(c) => (Some(c), WlState::Queued),
        None => (
            None,
            WlState::NotQueued(NotQueued::ClusterQueueNotFound {
                local_queue: format!("{}/{}", lq.namespace, lq.name),
                cluster_queue: lq.cluster_queue.clone(),
            }),
        ),
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
/// reclaimable pods (`totalRequestsFromAdmission`). Resources without a flavor are
/// not counted.
pub fn admitted_usage(wl: &Workload, frs: &FrTable) -> Vec<(FrId, i128)> {
    let mut acc: BTreeMap<FrId, i128> = BTreeMap::new();
    let Some(adm) = &wl.admission else {
        return Vec::new();
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
            *acc.entry(fr).or_default() += v;
        }
    }
    acc.into_iter().collect()
}
