//! Pods: the pods of admitted jobs (with the flavor's node labels and tolerations
//! injected, as Kueue does), Deployment replicas, and the simulated scheduler that
//! binds pending pods first-fit. There is no kubelet: a bound pod is `Running` at
//! once and stays so until its job completes (`Succeeded`) or is stopped (deleted).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::model::parse::QUEUE_NAME_LABEL;
use crate::sim::resources::ResourceKey;
use crate::sim::store::{EventType, StoreEvent, UpdateScope};

use super::jobs::JobKind;
use super::json::{self, condition, map_at, set_condition, short_hash};
use super::nodes::pod_needs;
use super::{ObjRef, SimCluster};

/// The controlling owner of an object: (kind, name).
fn controller_owner(obj: &Value) -> Option<(String, String)> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)?
        .iter()
        .find(|o| o.get("controller").and_then(Value::as_bool) == Some(true))
        .and_then(|o| {
            Some((
                o.get("kind")?.as_str()?.to_string(),
                o.get("name")?.as_str()?.to_string(),
            ))
        })
}

/// Copies missing container requests from limits, as the API server defaults them.
fn default_requests(spec: &mut Value) {
    for field in ["containers", "initContainers"] {
        let Some(list) = spec.get_mut(field).and_then(Value::as_array_mut) else {
            continue;
        };
        for c in list {
            let Some(limits) = c.pointer("/resources/limits").cloned() else {
                continue;
            };
            let req = map_at(c, &["resources", "requests"]);
            for (k, v) in limits.as_object().into_iter().flatten() {
                req.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
}

impl SimCluster {
    pub(super) fn on_pod_event(&mut self, e: &StoreEvent) {
        let obj: &Value = &e.object;
        let key = (
            json::namespace(obj).to_string(),
            json::name(obj).to_string(),
        );
        let owner = controller_owner(obj);
        if let Some((kind, name)) = &owner
            && kind == "Deployment"
        {
            self.dirty
                .deployment_status
                .insert((key.0.clone(), name.clone()));
        }
        if e.event_type == EventType::Deleted {
            if self.nodes.release(&key) {
                self.dirty.bind = true;
            }
            self.nodes.unbound.remove(&key);
            if let Some((kind, name)) = owner
                && let Some(set) = self.pods_of_owner.get_mut(&(kind, key.0.clone(), name))
            {
                set.remove(&key.1);
            }
            return;
        }
        if let Some((kind, name)) = owner.clone() {
            self.pods_of_owner
                .entry((kind, key.0.clone(), name))
                .or_default()
                .insert(key.1.clone());
        }
        let phase = json::str_at(obj, "/status/phase").unwrap_or("Pending");
        if matches!(phase, "Succeeded" | "Failed") {
            if self.nodes.release(&key) {
                self.dirty.bind = true;
            }
            self.nodes.unbound.remove(&key);
            return;
        }
        match json::str_at(obj, "/spec/nodeName").filter(|n| !n.is_empty()) {
            Some(node) => {
                if !self.nodes.is_bound(&key) {
                    let needs = pod_needs(obj);
                    self.nodes.bind(key, node, needs.requests);
                }
            }
            None => {
                // Pods with a queue name and no owner belong to Kueue's pod
                // integration, which is not simulated: they stay Pending.
                let pod_integration =
                    owner.is_none() && json::label(obj, QUEUE_NAME_LABEL).is_some();
                if !pod_integration && self.nodes.unbound.insert(key) {
                    self.dirty.bind = true;
                }
            }
        }
    }

    /// Creates a pod, bound to the first node it fits on (else Pending).
    fn create_pod(&mut self, mut pod: Value) {
        let needs = pod_needs(&pod);
        let now = self.clock.rfc3339();
        match self.nodes.find_fit(&needs) {
            Some(node) => {
                let key = (
                    json::namespace(&pod).to_string(),
                    json::name(&pod).to_string(),
                );
                pod["spec"]["nodeName"] = json!(node);
                pod["status"] = json!({"phase": "Running", "startTime": now});
                set_condition(&mut pod, "PodScheduled", true, "", "", &now);
                set_condition(&mut pod, "Ready", true, "", "", &now);
                // Account before the create so the next pod sees the usage.
                self.nodes.bind(key.clone(), &node, needs.requests);
                if self.create(&ResourceKey::PODS, pod).is_none() {
                    self.nodes.release(&key);
                }
            }
            None => {
                pod["status"] = json!({"phase": "Pending"});
                let msg = format!("0/{} nodes are available", self.nodes.len());
                set_condition(&mut pod, "PodScheduled", false, "Unschedulable", &msg, &now);
                self.create(&ResourceKey::PODS, pod);
            }
        }
    }

    /// The pods of an admitted job's Workload; returns how many were created.
    pub(super) fn create_job_pods(
        &mut self,
        kind: &JobKind,
        j: &ObjRef,
        job: &Value,
        wl: &Value,
    ) -> usize {
        let uid = json::uid(job).to_string();
        let queue = json::label(job, QUEUE_NAME_LABEL)
            .unwrap_or_default()
            .to_string();
        let pod_sets = wl
            .pointer("/spec/podSets")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let psas = wl
            .pointer("/status/admission/podSetAssignments")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut created = 0;
        for ps in &pod_sets {
            let ps_name = ps.get("name").and_then(Value::as_str).unwrap_or("main");
            let psa = psas
                .iter()
                .find(|a| a.get("name").and_then(Value::as_str) == Some(ps_name));
            let count = psa
                .and_then(|a| a.get("count"))
                .or_else(|| ps.get("count"))
                .and_then(Value::as_i64)
                .unwrap_or(1);
            // Kueue injects the assigned flavor's node labels and tolerations.
            let flavor = psa
                .and_then(|a| a.get("flavors"))
                .and_then(Value::as_object)
                .and_then(|m| m.values().next())
                .and_then(Value::as_str)
                .and_then(|f| self.get(&ResourceKey::RESOURCE_FLAVORS, "", f));
            let template = ps.get("template").cloned().unwrap_or(json!({}));
            for i in 0..count {
                let mut spec = template.get("spec").cloned().unwrap_or(json!({}));
                if !spec.is_object() {
                    spec = json!({});
                }
                default_requests(&mut spec);
                if let Some(f) = &flavor {
                    if let Some(labels) = f.pointer("/spec/nodeLabels").and_then(Value::as_object) {
                        let sel = map_at(&mut spec, &["nodeSelector"]);
                        for (k, v) in labels {
                            sel.insert(k.clone(), v.clone());
                        }
                    }
                    if let Some(tols) = f.pointer("/spec/tolerations").and_then(Value::as_array) {
                        let list = spec
                            .as_object_mut()
                            .expect("object")
                            .entry("tolerations")
                            .or_insert_with(|| json!([]));
                        if let Some(list) = list.as_array_mut() {
                            list.extend(tols.iter().cloned());
                        }
                    }
                }
                let mut labels = template
                    .pointer("/metadata/labels")
                    .cloned()
                    .filter(Value::is_object)
                    .unwrap_or(json!({}));
                labels[QUEUE_NAME_LABEL] = json!(queue);
                if kind.replicas.is_some() {
                    labels["training.kubeflow.org/job-name"] = json!(j.name);
                    labels["training.kubeflow.org/replica-type"] = json!(ps_name);
                    labels["training.kubeflow.org/replica-index"] = json!(i.to_string());
                    labels["training.kubeflow.org/operator-name"] =
                        json!(format!("{}-controller", kind.kind.to_lowercase()));
                } else {
                    labels["batch.kubernetes.io/job-name"] = json!(j.name);
                    labels["job-name"] = json!(j.name);
                    labels["batch.kubernetes.io/controller-uid"] = json!(uid);
                }
                let pod = json!({
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": format!("{}-{ps_name}-{i}", j.name),
                        "namespace": j.ns,
                        "labels": labels,
                        "annotations": {"kueue.x-k8s.io/workload": json::name(wl)},
                        "ownerReferences": [{
                            "apiVersion": kind.api_version,
                            "kind": kind.kind,
                            "name": j.name,
                            "uid": uid,
                            "controller": true,
                            "blockOwnerDeletion": true,
                        }],
                    },
                    "spec": spec,
                });
                self.create_pod(pod);
                created += 1;
            }
        }
        created
    }

    /// Deletes every pod controlled by `(kind, ns, name)`.
    pub(super) fn delete_owned_pods(&mut self, kind: &str, ns: &str, name: &str) {
        let owner = (kind.to_string(), ns.to_string(), name.to_string());
        let pods = self.pods_of_owner.remove(&owner).unwrap_or_default();
        for p in pods {
            self.delete(&ResourceKey::PODS, ns, &p);
        }
    }

    /// The simulated kube-scheduler: binds pending pods first-fit, in name order.
    pub(super) fn bind_pending_pods(&mut self) {
        let pending: Vec<(String, String)> = self.nodes.unbound.iter().cloned().collect();
        let now = self.clock.rfc3339();
        for key in pending {
            let Some(pod) = self.get(&ResourceKey::PODS, &key.0, &key.1) else {
                self.nodes.unbound.remove(&key);
                continue;
            };
            if json::str_at(&pod, "/spec/nodeName").is_some_and(|n| !n.is_empty()) {
                self.nodes.unbound.remove(&key);
                continue;
            }
            let needs = pod_needs(&pod);
            match self.nodes.find_fit(&needs) {
                Some(node) => {
                    self.nodes.bind(key.clone(), &node, needs.requests);
                    let n = node.clone();
                    self.write(&ResourceKey::PODS, &key.0, &key.1, UpdateScope::All, |o| {
                        map_at(o, &["spec"]).insert("nodeName".into(), json!(n));
                        let st = map_at(o, &["status"]);
                        st.insert("phase".into(), json!("Running"));
                        st.insert("startTime".into(), json!(now));
                        set_condition(o, "PodScheduled", true, "", "", &now);
                        set_condition(o, "Ready", true, "", "", &now);
                    });
                }
                None => {
                    if condition(&pod, "PodScheduled").map(|c| c.1) != Some("Unschedulable") {
                        let msg = format!("0/{} nodes are available", self.nodes.len());
                        self.write(
                            &ResourceKey::PODS,
                            &key.0,
                            &key.1,
                            UpdateScope::Status,
                            |o| {
                                map_at(o, &["status"]).insert("phase".into(), json!("Pending"));
                                set_condition(
                                    o,
                                    "PodScheduled",
                                    false,
                                    "Unschedulable",
                                    &msg,
                                    &now,
                                );
                            },
                        );
                    }
                }
            }
        }
    }

    /// Deployment controller: `replicas` pods named `<name>-<hash>-<i>`.
    pub(super) fn reconcile_deployment(&mut self, key: &(String, String)) {
        let owner = ("Deployment".to_string(), key.0.clone(), key.1.clone());
        let Some(dep) = self.get(&ResourceKey::DEPLOYMENTS, &key.0, &key.1) else {
            self.delete_owned_pods("Deployment", &key.0, &key.1);
            return;
        };
        let replicas = dep
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(1)
            .max(0);
        let hash = short_hash(json::uid(&dep), 10);
        let wanted: BTreeSet<String> = (0..replicas)
            .map(|i| format!("{}-{hash}-{i}", key.1))
            .collect();
        let existing = self.pods_of_owner.get(&owner).cloned().unwrap_or_default();
        for extra in existing.difference(&wanted) {
            self.delete(&ResourceKey::PODS, &key.0, extra);
        }
        let template = dep.pointer("/spec/template").cloned().unwrap_or(json!({}));
        for name in wanted.difference(&existing) {
            let mut spec = template.get("spec").cloned().unwrap_or(json!({}));
            if !spec.is_object() {
                spec = json!({});
            }
            default_requests(&mut spec);
            let mut labels = template
                .pointer("/metadata/labels")
                .cloned()
                .filter(Value::is_object)
                .unwrap_or(json!({}));
            labels["pod-template-hash"] = json!(hash);
            let pod = json!({
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": name,
                    "namespace": key.0,
                    "labels": labels,
                    "ownerReferences": [{
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": key.1,
                        "uid": json::uid(&dep),
                        "controller": true,
                    }],
                },
                "spec": spec,
            });
            self.create_pod(pod);
        }
        self.dirty.deployment_status.insert(key.clone());
    }

    pub(super) fn write_deployment_status(&mut self, key: &(String, String)) {
        let Some(dep) = self.get(&ResourceKey::DEPLOYMENTS, &key.0, &key.1) else {
            return;
        };
        let owner = ("Deployment".to_string(), key.0.clone(), key.1.clone());
        let pods = self.pods_of_owner.get(&owner).cloned().unwrap_or_default();
        let total = pods.len();
        let running = pods
            .iter()
            .filter_map(|p| self.get(&ResourceKey::PODS, &key.0, p))
            .filter(|p| json::str_at(p, "/status/phase") == Some("Running"))
            .count();
        let generation = dep
            .pointer("/metadata/generation")
            .cloned()
            .unwrap_or(json!(1));
        let now = self.clock.rfc3339();
        let wanted = dep
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(1) as usize;
        self.write(
            &ResourceKey::DEPLOYMENTS,
            &key.0,
            &key.1,
            UpdateScope::Status,
            |o| {
                let st = map_at(o, &["status"]);
                st.insert("observedGeneration".into(), generation);
                st.insert("replicas".into(), json!(total));
                st.insert("updatedReplicas".into(), json!(total));
                st.insert("readyReplicas".into(), json!(running));
                st.insert("availableReplicas".into(), json!(running));
                let available = running >= wanted;
                set_condition(
                    o,
                    "Available",
                    available,
                    if available {
                        "MinimumReplicasAvailable"
                    } else {
                        "MinimumReplicasUnavailable"
                    },
                    if available {
                        "Deployment has minimum availability."
                    } else {
                        "Deployment does not have minimum availability."
                    },
                    &now,
                );
            },
        );
    }
}
