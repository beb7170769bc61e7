//! Node rows: flavor, GPU allocatable / used, taints, workloads placed, fragmentation.

use std::collections::HashMap;

use super::gpus;
use super::workloads::WlState;
use crate::model::ClusterState;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeRow {
    pub name: String,
    /// Flavors whose nodeLabels all match the node's labels, joined by ",".
    pub flavor: String,
    pub ready: bool,
    pub unschedulable: bool,
    pub gpu_allocatable: i64,
    /// Sum of the GPU requests of pods bound to the node and not yet terminated.
    pub gpu_used: i64,
    pub taints: String,
    /// Workload keys ("ns/name") with pods on the node, or pod names without one.
    pub workloads: Vec<String>,
}

impl NodeRow {
    /// The largest free GPU block: a pod's GPUs must all come from one node.
    pub fn gpu_free(&self) -> i64 {
        (self.gpu_allocatable - self.gpu_used).max(0)
    }
}

#[derive(Clone, Debug, Default)]
pub struct NodeTable {
    pub rows: Vec<NodeRow>,
    /// The largest per-pod GPU request among pending workloads, and its workload.
    pub largest_pending_pod: Option<(i64, String)>,
}

impl NodeTable {
    pub fn build(state: &ClusterState) -> NodeTable {
        // (namespace, owner name) → workload key, to attribute pods to workloads.
        let mut by_owner: HashMap<(&str, &str), &crate::model::Workload> = HashMap::new();
        let mut largest_pending_pod: Option<(i64, String)> = None;
        for wl in state.workloads.values() {
            if let Some(o) = &wl.owner {
                by_owner.insert((wl.namespace.as_str(), o.name.as_str()), wl);
            }
            if matches!(
                WlState::of(wl),
                WlState::Pending | WlState::Preempted | WlState::Evicted
            ) {
                for ps in wl.pod_sets.iter() {
                    let g = gpus(&ps.requests);
                    if largest_pending_pod.as_ref().is_none_or(|(m, _)| g > *m) && g > 0 {
                        largest_pending_pod = Some((g, wl.key()));
                    }
                }
            }
        }
        let mut used: HashMap<&str, i64> = HashMap::new();
        let mut placed: HashMap<&str, Vec<String>> = HashMap::new();
        for pod in state.pods.values() {
            let Some(node) = pod.node_name.as_deref() else {
                continue;
            };
            if matches!(pod.phase.as_str(), "Succeeded" | "Failed") {
                continue;
            }
            *used.entry(node).or_default() += gpus(&pod.requests);
            let owner = pod
                .owner_references
                .iter()
                .find_map(|o| by_owner.get(&(pod.namespace.as_str(), o.name.as_str())));
            let label =
                owner.map_or_else(|| format!("{}/{}", pod.namespace, pod.name), |wl| wl.key());
            let list = placed.entry(node).or_default();
            if !list.contains(&label) {
                list.push(label);
            }
        }
        let rows = state
            .nodes
            .values()
            .map(|n| {
                let flavors: Vec<&str> = state
                    .resource_flavors
                    .values()
                    .filter(|f| {
                        !f.node_labels.is_empty()
                            && f.node_labels
                                .iter()
                                .all(|(k, v)| n.labels.get(k) == Some(v))
                    })
                    .map(|f| f.name.as_str())
                    .collect();
                let taints: Vec<String> = n
                    .taints
                    .iter()
                    .map(|t| match &t.value {
                        Some(v) => format!("{}={}:{}", t.key, v, t.effect),
                        None => format!("{}:{}", t.key, t.effect),
                    })
                    .collect();
                NodeRow {
                    name: n.name.clone(),
                    flavor: flavors.join(","),
                    ready: n.ready,
                    unschedulable: n.unschedulable,
                    gpu_allocatable: gpus(&n.allocatable),
                    gpu_used: used.get(n.name.as_str()).copied().unwrap_or(0),
                    taints: taints.join(","),
                    workloads: placed.remove(n.name.as_str()).unwrap_or_default(),
                }
            })
            .collect();
        NodeTable {
            rows,
            largest_pending_pod,
        }
    }

    /// The node with the largest free GPU block (first by name on ties).
    pub fn largest_free(&self) -> Option<&NodeRow> {
        self.rows
            .iter()
            .filter(|r| r.ready && !r.unschedulable && r.gpu_allocatable > 0)
            .max_by(|a, b| a.gpu_free().cmp(&b.gpu_free()).then(b.name.cmp(&a.name)))
    }
}
