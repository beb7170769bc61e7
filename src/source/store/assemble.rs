//! Folding a batch of [`Changes`] into the next state. Runs on a blocking thread
//! while the store task keeps applying events.
//!
//! Each snapshot is a copy of the previous state's maps (resources relisted in the
//! batch are not copied, they are rebuilt) plus the batch. Nodes, pods and workloads
//! are shared (`Arc`), so the copy costs map nodes and keys, not objects: the previous
//! snapshot, still held by readers, and the next one share every unchanged object. The cross-object steps the model loader does at `finish` are redone here:
//! Workloads without `spec.priority` take their class's value, bound pods on nodes
//! without GPUs are left out, and `finalize` derives the pending workloads of jobs.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::changes::{Changes, KindChanges};
use crate::model::parse::finalize;
use crate::model::well_known::KUEUE_PREFIX;
use crate::model::{ClusterState, JobInfo, Pod, PriorityClassKind, WorkloadSource};
use crate::source::objects::{Item, ObjKey, is_gpu_resource};
use crate::source::resources::ResourceKind;

/// What the assembler carries from one snapshot to the next.
#[derive(Debug, Default)]
pub struct Assembler {
    /// The last assembled state (shared with the published snapshot).
    pub base: Arc<ClusterState>,
    /// Bound pods on nodes known to have no GPU, and neither Kueue's nor requesting
    /// GPUs: out of the state, but kept in case their node turns out to have GPUs.
    parked: BTreeMap<ObjKey, Arc<Pod>>,
    /// Jobs by resource and key (the state holds them as a sorted list).
    jobs: BTreeMap<(ResourceKind, ObjKey), Arc<JobInfo>>,
    /// Workloads without `spec.priority` → the priority their parse gave them.
    priority_missing: BTreeMap<ObjKey, i32>,
}

/// One assembled state.
#[derive(Debug)]
pub struct Assembled {
    pub state: Arc<ClusterState>,
    /// Objects per resource, as the sync status reports them.
    pub counts: BTreeMap<ResourceKind, usize>,
    pub took: Duration,
}

/// Applies a resource's changes to one of the state's maps, moving the objects.
fn fold<K: Ord, V>(
    map: &mut BTreeMap<K, V>,
    kc: KindChanges,
    key: impl Fn(ObjKey) -> K,
    take: impl Fn(Item) -> Option<V>,
) {
    if let Some(objects) = kc.replace {
        // Sorted input: the bulk build is linear.
        *map = objects
            .into_iter()
            .filter_map(|(k, i)| take(i).map(|v| (key(k), v)))
            .collect();
    }
    for (k, update) in kc.updates {
        match update.and_then(&take) {
            Some(v) => {
                map.insert(key(k), v);
            }
            None => {
                map.remove(&key(k));
            }
        }
    }
}

fn name(k: ObjKey) -> String {
    k.1
}

fn both(k: ObjKey) -> ObjKey {
    k
}

/// The state with every map copied except those `skip` says will be rebuilt.
fn copy_of(base: &ClusterState, changes: &Changes) -> ClusterState {
    let rebuilt = |k: ResourceKind| changes.kinds.get(&k).is_some_and(|kc| kc.replace.is_some());
    fn keep<T: Clone + Default>(skip: bool, v: &T) -> T {
        if skip { T::default() } else { v.clone() }
    }
    // Destructured so that a new field of the model is a compile error here.
    let ClusterState {
        resource_flavors,
        cluster_queues,
        cohorts,
        local_queues,
        priority_classes,
        workload_priority_classes,
        namespaces,
        nodes,
        pods,
        workloads,
        jobs,
        kueue_config,
        warnings: _,
    } = base;
    ClusterState {
        resource_flavors: keep(rebuilt(ResourceKind::ResourceFlavor), resource_flavors),
        cluster_queues: keep(rebuilt(ResourceKind::ClusterQueue), cluster_queues),
        cohorts: keep(rebuilt(ResourceKind::Cohort), cohorts),
        local_queues: keep(rebuilt(ResourceKind::LocalQueue), local_queues),
        priority_classes: keep(rebuilt(ResourceKind::PriorityClass), priority_classes),
        workload_priority_classes: keep(
            rebuilt(ResourceKind::WorkloadPriorityClass),
            workload_priority_classes,
        ),
        namespaces: keep(rebuilt(ResourceKind::Namespace), namespaces),
        nodes: keep(rebuilt(ResourceKind::Node), nodes),
        pods: keep(rebuilt(ResourceKind::Pod), pods),
        workloads: keep(rebuilt(ResourceKind::Workload), workloads),
        jobs: jobs.clone(),
        kueue_config: kueue_config.clone(),
        warnings: Vec::new(),
    }
}

impl Assembler {
    /// The next state: the previous one with `changes` applied; `warnings` are the
    /// store's lines (parser warning categories, skipped objects).
    pub fn assemble(&mut self, changes: Changes, warnings: Vec<String>) -> Assembled {
        let started = Instant::now();
        let mut st = copy_of(&self.base, &changes);
        let mut nodes_changed = false;
        let mut jobs_changed = false;
        let mut pods_rescan = false;
        let mut changed_pods: Vec<ObjKey> = Vec::new();
        for (kind, kc) in changes.kinds {
            match kind {
                ResourceKind::ResourceFlavor => {
                    fold(&mut st.resource_flavors, kc, name, |i| match i {
                        Item::ResourceFlavor(x) => Some(*x),
                        _ => None,
                    })
                }
                ResourceKind::ClusterQueue => fold(&mut st.cluster_queues, kc, name, |i| match i {
                    Item::ClusterQueue(x) => Some(*x),
                    _ => None,
                }),
                ResourceKind::LocalQueue => fold(&mut st.local_queues, kc, both, |i| match i {
                    Item::LocalQueue(x) => Some(*x),
                    _ => None,
                }),
                ResourceKind::Cohort => fold(&mut st.cohorts, kc, name, |i| match i {
                    Item::Cohort(x) => Some(*x),
                    _ => None,
                }),
                ResourceKind::WorkloadPriorityClass => {
                    fold(&mut st.workload_priority_classes, kc, name, |i| match i {
                        Item::WorkloadPriorityClass(x) => Some(x),
                        _ => None,
                    })
                }
                ResourceKind::PriorityClass => {
                    fold(&mut st.priority_classes, kc, name, |i| match i {
                        Item::PriorityClass(x) => Some(x),
                        _ => None,
                    })
                }
                ResourceKind::Namespace => fold(&mut st.namespaces, kc, name, |i| match i {
                    Item::Namespace(x) => Some(x),
                    _ => None,
                }),
                ResourceKind::Node => {
                    nodes_changed = true;
                    fold(&mut st.nodes, kc, name, |i| match i {
                        Item::Node(x) => Some(x),
                        _ => None,
                    })
                }
                ResourceKind::Pod => {
                    if kc.replace.is_some() {
                        self.parked.clear();
                        pods_rescan = true;
                    }
                    for k in kc.updates.keys() {
                        self.parked.remove(k);
                        changed_pods.push(k.clone());
                    }
                    fold(&mut st.pods, kc, both, |i| match i {
                        Item::Pod(x) => Some(x),
                        _ => None,
                    })
                }
                ResourceKind::Workload => {
                    self.note_priorities(&kc);
                    fold(&mut st.workloads, kc, both, |i| match i {
                        Item::Workload { workload, .. } => Some(workload),
                        _ => None,
                    })
                }
                ResourceKind::Job | ResourceKind::PyTorchJob => {
                    jobs_changed = true;
                    if let Some(objects) = kc.replace {
                        self.jobs.retain(|(k, _), _| *k != kind);
                        for (key, i) in objects {
                            if let Item::Job(j) = i {
                                self.jobs.insert((kind, key), j);
                            }
                        }
                    }
                    for (key, update) in kc.updates {
                        match update {
                            Some(Item::Job(j)) => {
                                self.jobs.insert((kind, key), j);
                            }
                            _ => {
                                self.jobs.remove(&(kind, key));
                            }
                        }
                    }
                }
            }
        }
        self.resolve_priorities(&mut st);
        if nodes_changed || pods_rescan {
            self.repark_all(&mut st);
        } else {
            self.park(&mut st, changed_pods);
        }
        if jobs_changed {
            st.jobs = self.jobs.values().cloned().collect();
            st.jobs.sort_by(|a, b| {
                (a.creation_timestamp, &a.namespace, &a.name).cmp(&(
                    b.creation_timestamp,
                    &b.namespace,
                    &b.name,
                ))
            });
        }
        finalize(&mut st);
        st.warnings.extend(warnings);
        let counts = self.counts(&st);
        let state = Arc::new(st);
        self.base = state.clone();
        Assembled {
            state,
            counts,
            took: started.elapsed(),
        }
    }

    fn note_priorities(&mut self, kc: &KindChanges) {
        let missing = |i: &Item| match i {
            Item::Workload {
                workload,
                priority_missing: true,
            } => Some(workload.priority),
            _ => None,
        };
        if let Some(objects) = &kc.replace {
            self.priority_missing = objects
                .iter()
                .filter_map(|(k, i)| missing(i).map(|p| (k.clone(), p)))
                .collect();
        }
        for (k, update) in &kc.updates {
            match update.as_ref().and_then(missing) {
                Some(p) => {
                    self.priority_missing.insert(k.clone(), p);
                }
                None => {
                    self.priority_missing.remove(k);
                }
            }
        }
    }

    /// Workloads without `spec.priority` take their class's value, as the loader does
    /// (the class may have arrived, changed or gone since).
    fn resolve_priorities(&self, st: &mut ClusterState) {
        for (key, &parsed) in &self.priority_missing {
            let Some(wl) = st.workloads.get(key) else {
                continue;
            };
            let value = wl
                .priority_class
                .as_ref()
                .and_then(|class| match class.kind {
                    PriorityClassKind::WorkloadPriorityClass => st
                        .workload_priority_classes
                        .get(&class.name)
                        .map(|c| c.value),
                    PriorityClassKind::PriorityClass => {
                        st.priority_classes.get(&class.name).map(|c| c.value)
                    }
                });
            let priority = value.unwrap_or(parsed);
            // Only a changed priority unshares the workload from the previous snapshot.
            if let Some(wl) = st.workloads.get_mut(key)
                && wl.priority != priority
            {
                Arc::make_mut(wl).priority = priority;
            }
        }
    }

    /// Moves every pod to where it belongs (after nodes changed or pods were relisted).
    fn repark_all(&mut self, st: &mut ClusterState) {
        let parked = std::mem::take(&mut self.parked);
        for (k, p) in parked {
            if keep_pod(st, &p) {
                st.pods.insert(k, p);
            } else {
                self.parked.insert(k, p);
            }
        }
        let out: Vec<ObjKey> = st
            .pods
            .iter()
            .filter(|(_, p)| !keep_pod(st, p))
            .map(|(k, _)| k.clone())
            .collect();
        for k in out {
            if let Some(p) = st.pods.remove(&k) {
                self.parked.insert(k, p);
            }
        }
    }

    /// Parks the changed pods that sit on nodes without GPUs.
    fn park(&mut self, st: &mut ClusterState, changed: Vec<ObjKey>) {
        for k in changed {
            if st.pods.get(&k).is_some_and(|p| !keep_pod(st, p))
                && let Some(p) = st.pods.remove(&k)
            {
                self.parked.insert(k, p);
            }
        }
    }

    fn counts(&self, st: &ClusterState) -> BTreeMap<ResourceKind, usize> {
        ResourceKind::ALL
            .iter()
            .map(|&k| {
                let n = match k {
                    ResourceKind::ResourceFlavor => st.resource_flavors.len(),
                    ResourceKind::ClusterQueue => st.cluster_queues.len(),
                    ResourceKind::LocalQueue => st.local_queues.len(),
                    ResourceKind::Cohort => st.cohorts.len(),
                    ResourceKind::WorkloadPriorityClass => st.workload_priority_classes.len(),
                    ResourceKind::PriorityClass => st.priority_classes.len(),
                    ResourceKind::Namespace => st.namespaces.len(),
                    ResourceKind::Node => st.nodes.len(),
                    ResourceKind::Pod => st.pods.len() + self.parked.len(),
                    ResourceKind::Workload => st
                        .workloads
                        .values()
                        .filter(|w| matches!(w.source, WorkloadSource::Workload))
                        .count(),
                    ResourceKind::Job | ResourceKind::PyTorchJob => {
                        self.jobs.keys().filter(|(j, _)| *j == k).count()
                    }
                };
                (k, n)
            })
            .collect()
    }
}

/// Pods the state keeps: Kueue's, those requesting GPUs, and those not bound to a
/// node known to have no GPU.
fn keep_pod(st: &ClusterState, p: &Pod) -> bool {
    let kueue = p.labels.keys().any(|k| k.starts_with(KUEUE_PREFIX));
    let gpu = p.requests.keys().any(|r| is_gpu_resource(r));
    let on_gpu_node = p.node_name.as_ref().is_none_or(|n| {
        st.nodes
            .get(n)
            .is_none_or(|node| node.allocatable.keys().any(|r| is_gpu_resource(r)))
    });
    kueue || gpu || on_gpu_node
}
