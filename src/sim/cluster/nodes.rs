//! Node bookkeeping for the simulated scheduler: allocatable and requested
//! resources per node, and first-fit placement (by node name) honouring node
//! selectors, required node affinity and NoSchedule/NoExecute taints. A pod is sized
//! by the model's parser ([`pod_scheduling`]), as the engine sizes it: init
//! containers, restartable sidecars, pod-level resources and overhead included.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{Value, json};

use crate::model::parse::pod_scheduling;
use crate::model::{Node, PodSet, Quantity, ResourceList, Taint};
use crate::sim::resources::ResourceKey;
use crate::sim::store::UpdateScope;

use super::SimCluster;
use super::json::{map_at, set_condition, short_hash};

impl SimCluster {
    /// What a node's kubelet reports when it joins: `Ready`, its version and address
    /// (`kubectl get nodes` STATUS, VERSION, INTERNAL-IP). A node whose scenario gives it
    /// a `Ready` condition keeps its own.
    pub(super) fn report_node_status(&mut self, name: &str) {
        let now = self.clock.rfc3339();
        let h = short_hash(name, 4);
        let ip = format!(
            "10.0.{}.{}",
            u8::from_str_radix(&h[..2], 16).unwrap_or(0),
            u8::from_str_radix(&h[2..], 16).unwrap_or(0).max(2)
        );
        self.write(&ResourceKey::NODES, "", name, UpdateScope::Status, |o| {
            if super::json::condition(o, "Ready").is_some() {
                return;
            }
            set_condition(o, "Ready", true, "KubeletReady", "kubelet is posting ready status", &now);
            let st = map_at(o, &["status"]);
            st.entry("nodeInfo").or_insert_with(|| {
                json!({"kubeletVersion": "v1.32.0", "osImage": "gangplank simulated node",
                       "kernelVersion": "simulated", "containerRuntimeVersion": "simulated://1.0",
                       "operatingSystem": "linux", "architecture": "amd64"})
            });
            st.entry("addresses").or_insert_with(|| {
                json!([{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}])
            });
        });
    }
}

#[derive(Debug, Default)]
struct Slot {
    labels: crate::model::Labels,
    taints: Vec<Taint>,
    alloc: ResourceList,
    used: ResourceList,
    pods: i64,
    schedulable: bool,
}

/// Nodes, the pods bound to them, and the pods waiting for one.
#[derive(Debug, Default)]
pub(crate) struct NodeIndex {
    nodes: BTreeMap<String, Slot>,
    bound: HashMap<(String, String), (String, ResourceList)>,
    /// Pods the simulated scheduler should place, in name order.
    pub unbound: BTreeSet<(String, String)>,
}

/// What placement needs from a pod: the model's reading of it as one pod set, or why
/// it could not be read (such a pod fits nowhere).
#[derive(Debug, Clone)]
pub(crate) struct PodNeeds(Result<PodSet, String>);

impl PodNeeds {
    /// The effective per-pod requests (empty when the spec could not be read).
    pub fn requests(&self) -> ResourceList {
        self.0
            .as_ref()
            .map(|p| p.requests.clone())
            .unwrap_or_default()
    }
}

impl NodeIndex {
    /// Adds or refreshes a node (its bound pods stay accounted).
    pub fn upsert(&mut self, node: &Node) {
        let slot = self.nodes.entry(node.name.clone()).or_default();
        slot.labels = node.labels.clone();
        slot.taints = node.taints.clone();
        slot.alloc = node.allocatable.clone();
        slot.schedulable = node.ready && !node.unschedulable;
    }

    /// Forgets a node.
    pub fn remove(&mut self, name: &str) {
        self.nodes.remove(name);
    }

    /// Whether the pod is accounted on a node.
    pub fn is_bound(&self, key: &(String, String)) -> bool {
        self.bound.contains_key(key)
    }

    /// The first node (by name) the pod fits on.
    pub fn find_fit(&self, needs: &PodNeeds) -> Option<String> {
        self.nodes
            .iter()
            .find(|(_, s)| misfit(s, needs).is_none())
            .map(|(n, _)| n.clone())
    }

    /// Why a pod fits nowhere, as kube-scheduler's `FailedScheduling` says it:
    /// `0/6 nodes are available: 2 Insufficient nvidia.com/gpu, 4 node(s) had
    /// untolerated taint {nvidia.com/gpu: present}.`
    pub fn no_fit_message(&self, needs: &PodNeeds) -> String {
        if let Err(e) = &needs.0 {
            return format!(
                "0/{} nodes are available: invalid pod spec: {e}.",
                self.nodes.len()
            );
        }
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        for s in self.nodes.values() {
            if let Some(r) = misfit(s, needs) {
                *reasons.entry(r).or_default() += 1;
            }
        }
        let parts: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
        let mut msg = format!("0/{} nodes are available", self.nodes.len());
        if !parts.is_empty() {
            msg.push_str(": ");
            msg.push_str(&parts.join(", "));
        }
        msg.push('.');
        msg
    }

    /// Accounts a pod on a node.
    pub fn bind(&mut self, key: (String, String), node: &str, requests: ResourceList) {
        if self.bound.contains_key(&key) {
            return;
        }
        if let Some(s) = self.nodes.get_mut(node) {
            for (r, q) in &requests {
                *s.used.entry(r.clone()).or_default() += *q;
            }
            s.pods += 1;
        }
        self.unbound.remove(&key);
        self.bound.insert(key, (node.to_string(), requests));
    }

    /// Frees a pod's resources; `true` if it was bound.
    pub fn release(&mut self, key: &(String, String)) -> bool {
        let Some((node, req)) = self.bound.remove(key) else {
            return false;
        };
        if let Some(s) = self.nodes.get_mut(&node) {
            for (r, q) in &req {
                *s.used.entry(r.clone()).or_default() -= *q;
            }
            s.pods -= 1;
        }
        true
    }

    /// Drops all pod accounting (for a resync).
    pub fn clear_pods(&mut self) {
        self.bound.clear();
        self.unbound.clear();
        for s in self.nodes.values_mut() {
            s.used.clear();
            s.pods = 0;
        }
    }
}

/// The first reason the pod does not fit the node, in kube-scheduler's words.
fn misfit(s: &Slot, needs: &PodNeeds) -> Option<String> {
    let pod = match &needs.0 {
        Ok(pod) => pod,
        Err(e) => return Some(format!("invalid pod spec: {e}")),
    };
    if !s.schedulable {
        return Some("node(s) were unschedulable".into());
    }
    let selected = pod
        .node_selector
        .iter()
        .all(|(k, v)| s.labels.get(k) == Some(v));
    let affine = pod
        .required_affinity
        .as_ref()
        .is_none_or(|a| a.matches(&s.labels));
    if !selected || !affine {
        return Some("node(s) didn't match Pod's node affinity/selector".into());
    }
    let hard = |t: &&Taint| t.effect == "NoSchedule" || t.effect == "NoExecute";
    if let Some(t) = s
        .taints
        .iter()
        .filter(hard)
        .find(|t| !pod.tolerations.iter().any(|tol| tol.tolerates(t)))
    {
        let value = t.value.as_deref().unwrap_or("");
        return Some(format!(
            "node(s) had untolerated taint {{{}: {value}}}",
            t.key
        ));
    }
    if let Some(max) = s.alloc.get("pods")
        && Quantity::from_units(s.pods + 1) > *max
    {
        return Some("Too many pods".into());
    }
    pod.requests
        .iter()
        .find(|(r, q)| {
            **q > Quantity::ZERO && {
                let alloc = s.alloc.get(*r).copied().unwrap_or_default();
                let used = s.used.get(*r).copied().unwrap_or_default();
                used + **q > alloc
            }
        })
        .map(|(r, _)| format!("Insufficient {r}"))
}

/// What placement needs from a pod object, read by the model's parser.
pub(crate) fn pod_needs(pod: &Value) -> PodNeeds {
    PodNeeds(pod_scheduling(pod))
}
