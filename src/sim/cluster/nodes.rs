//! Node bookkeeping for the simulated scheduler: allocatable and requested
//! resources per node, and first-fit placement (by node name) honouring node
//! selectors and NoSchedule/NoExecute taints. Quantities are in milli-units.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use serde_json::json;

use crate::model::{Node, Quantity, Taint, Toleration};
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

/// Resources as (name → milli-units).
pub(crate) type Milli = BTreeMap<String, i128>;

#[derive(Debug, Default)]
struct Slot {
    labels: BTreeMap<String, String>,
    taints: Vec<Taint>,
    alloc: Milli,
    used: Milli,
    pods: i128,
    schedulable: bool,
}

/// Nodes, the pods bound to them, and the pods waiting for one.
#[derive(Debug, Default)]
pub(crate) struct NodeIndex {
    nodes: BTreeMap<String, Slot>,
    bound: HashMap<(String, String), (String, Milli)>,
    /// Pods the simulated scheduler should place, in name order.
    pub unbound: BTreeSet<(String, String)>,
}

/// What placement needs from a pod spec.
#[derive(Debug, Default, Clone)]
pub(crate) struct PodNeeds {
    pub requests: Milli,
    pub node_selector: BTreeMap<String, String>,
    pub tolerations: Vec<Toleration>,
}

impl NodeIndex {
    /// Adds or refreshes a node (its bound pods stay accounted).
    pub fn upsert(&mut self, node: &Node) {
        let slot = self.nodes.entry(node.name.clone()).or_default();
        slot.labels = node.labels.clone();
        slot.taints = node.taints.clone();
        slot.alloc = node
            .allocatable
            .iter()
            .map(|(k, q)| (k.clone(), q.milli()))
            .collect();
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
            .find(|(_, s)| fits(s, needs))
            .map(|(n, _)| n.clone())
    }

    /// Why a pod fits nowhere, as kube-scheduler's `FailedScheduling` says it:
    /// `0/6 nodes are available: 2 Insufficient nvidia.com/gpu, 4 node(s) had
    /// untolerated taint {nvidia.com/gpu: present}.`
    pub fn no_fit_message(&self, needs: &PodNeeds) -> String {
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
    pub fn bind(&mut self, key: (String, String), node: &str, requests: Milli) {
        if self.bound.contains_key(&key) {
            return;
        }
        if let Some(s) = self.nodes.get_mut(node) {
            for (r, q) in &requests {
                *s.used.entry(r.clone()).or_default() += q;
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
                *s.used.entry(r.clone()).or_default() -= q;
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

fn fits(s: &Slot, needs: &PodNeeds) -> bool {
    misfit(s, needs).is_none()
}

/// The first reason the pod does not fit the node, in kube-scheduler's words.
fn misfit(s: &Slot, needs: &PodNeeds) -> Option<String> {
    if !s.schedulable {
        return Some("node(s) were unschedulable".into());
    }
    if !needs
        .node_selector
        .iter()
        .all(|(k, v)| s.labels.get(k) == Some(v))
    {
        return Some("node(s) didn't match Pod's node affinity/selector".into());
    }
    let hard = |t: &&Taint| t.effect == "NoSchedule" || t.effect == "NoExecute";
    if let Some(t) = s
        .taints
        .iter()
        .filter(hard)
        .find(|t| !needs.tolerations.iter().any(|tol| tol.tolerates(t)))
    {
        let value = t.value.as_deref().unwrap_or("");
        return Some(format!(
            "node(s) had untolerated taint {{{}: {value}}}",
            t.key
        ));
    }
    if let Some(max) = s.alloc.get("pods")
        && (s.pods + 1) * 1000 > *max
    {
        return Some("Too many pods".into());
    }
    needs
        .requests
        .iter()
        .find(|(r, q)| {
            **q > 0 && {
                let alloc = s.alloc.get(*r).copied().unwrap_or(0);
                let used = s.used.get(*r).copied().unwrap_or(0);
                used + **q > alloc
            }
        })
        .map(|(r, _)| format!("Insufficient {r}"))
}

/// A quantity in a manifest (string or number) in milli-units.
pub(crate) fn qty_milli(v: &Value) -> Option<i128> {
    let q = match v {
        Value::String(s) => Quantity::parse(s).ok()?,
        Value::Number(n) => Quantity::parse(&n.to_string()).ok()?,
        _ => return None,
    };
    Some(q.milli())
}

fn container_requests(c: &Value) -> Milli {
    let mut out = Milli::new();
    let res = c.get("resources");
    // The API server defaults missing requests from limits.
    for field in ["limits", "requests"] {
        if let Some(m) = res.and_then(|r| r.get(field)).and_then(Value::as_object) {
            for (k, v) in m {
                if let Some(q) = qty_milli(v) {
                    out.insert(k.clone(), q);
                }
            }
        }
    }
    out
}

/// Effective requests of a pod spec: sum of containers, at least each init
/// container's (sidecars and overhead are not modelled).
pub(crate) fn pod_requests(spec: &Value) -> Milli {
    let mut total = Milli::new();
    for c in spec
        .get("containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for (k, v) in container_requests(c) {
            *total.entry(k).or_default() += v;
        }
    }
    for c in spec
        .get("initContainers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for (k, v) in container_requests(c) {
            let e = total.entry(k).or_default();
            *e = (*e).max(v);
        }
    }
    total
}

/// Tolerations of a pod spec.
pub(crate) fn tolerations(spec: &Value) -> Vec<Toleration> {
    let s = |t: &Value, k: &str| t.get(k).and_then(Value::as_str).map(str::to_string);
    spec.get("tolerations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|t| Toleration {
            key: s(t, "key"),
            operator: s(t, "operator"),
            value: s(t, "value"),
            effect: s(t, "effect"),
        })
        .collect()
}

/// What placement needs from a pod object.
pub(crate) fn pod_needs(pod: &Value) -> PodNeeds {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    PodNeeds {
        requests: pod_requests(spec),
        node_selector: spec
            .get("nodeSelector")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                    .collect()
            })
            .unwrap_or_default(),
        tolerations: tolerations(spec),
    }
}
