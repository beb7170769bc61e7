//! Pods: the pods of admitted jobs (with the flavor's node labels and tolerations
//! injected, as Kueue does), Deployment replicas, and the simulated scheduler that
//! binds pending pods first-fit. There is no kubelet: a bound pod is `Running` at
//! once and stays so until its job completes (`Succeeded`) or is stopped (deleted).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::model::well_known::{self as wk, QUEUE_NAME_LABEL};
use crate::sim::resources::ResourceKey;
use crate::sim::store::{EventType, StoreEvent, UpdateScope};

use super::events::Reporter;
use super::jobs::{JobKind, raw_pod_sets};
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

fn container_names(pod: &Value) -> Vec<String> {
    pod.pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("name").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// A pod as the kubelet reports it once its containers run: `Running`, `Ready`, every
/// container started (`kubectl get pods` READY `n/n`), and an IP.
fn set_running(pod: &mut Value, node: &str, now: &str) {
    let statuses: Vec<Value> = container_names(pod)
        .into_iter()
        .map(|c| {
            let image = pod
                .pointer("/spec/containers")
                .and_then(Value::as_array)
                .and_then(|cs| cs.iter().find(|x| x["name"] == c.as_str()))
                .and_then(|x| x.get("image").cloned())
                .unwrap_or(Value::Null);
            json!({"name": c, "image": image, "ready": true, "started": true, "restartCount": 0,
                   "state": {"running": {"startedAt": now}}})
        })
        .collect();
    let h = short_hash(&format!("{}/{}", json::namespace(pod), json::name(pod)), 4);
    let (a, b) = (
        u8::from_str_radix(&h[..2], 16).unwrap_or(0),
        u8::from_str_radix(&h[2..], 16).unwrap_or(0).max(2),
    );
    let host = short_hash(node, 2);
    pod["status"] = json!({
        "phase": "Running",
        "startTime": now,
        "podIP": format!("10.{}.{a}.{b}", 64 + u8::from_str_radix(&host, 16).unwrap_or(0) % 64),
        "containerStatuses": statuses,
    });
    set_condition(pod, "PodScheduled", true, "", "", now);
    set_condition(pod, "Ready", true, "", "", now);
}

/// A finished pod: every container terminated with exit code 0.
pub(super) fn set_succeeded(pod: &mut Value, now: &str) {
    let statuses: Vec<Value> = container_names(pod)
        .into_iter()
        .map(|c| {
            json!({"name": c, "ready": false, "started": false, "restartCount": 0,
                   "state": {"terminated": {"exitCode": 0, "reason": "Completed", "finishedAt": now}}})
        })
        .collect();
    let st = map_at(pod, &["status"]);
    st.insert("phase".into(), json!("Succeeded"));
    st.insert("containerStatuses".into(), json!(statuses));
    set_condition(pod, "Ready", false, "PodCompleted", "", now);
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
                    self.nodes.bind(key, node, needs.requests());
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

    /// Creates a pod, bound to the first node it fits on (else Pending), unless the
    /// cluster holds [`SimLimits::max_pods`](super::SimLimits) already; `owner` (the
    /// controller's object) gets a `FailedCreate` event then. Returns whether it was created.
    fn create_pod(&mut self, mut pod: Value, owner: Option<&Value>) -> bool {
        let max = self.limits.max_pods;
        if self.store.count(&ResourceKey::PODS) >= max {
            let msg = format!(
                "Error creating: pods \"{}\" is forbidden: the simulated cluster already holds its limit of {max} pods (--max-pods)",
                json::name(&pod)
            );
            if let Some(o) = owner {
                self.record_event(
                    o,
                    true,
                    "FailedCreate",
                    &msg,
                    Reporter::Controller("simulator"),
                );
            }
            if !self.pod_cap_warned {
                self.pod_cap_warned = true;
                self.warn(format!("{msg}; further pods are not created"));
            }
            return false;
        }
        let needs = pod_needs(&pod);
        let now = self.clock.rfc3339();
        match self.nodes.find_fit(&needs) {
            Some(node) => {
                let key = (
                    json::namespace(&pod).to_string(),
                    json::name(&pod).to_string(),
                );
                pod["spec"]["nodeName"] = json!(node);
                set_running(&mut pod, &node, &now);
                // Account before the create so the next pod sees the usage.
                self.nodes.bind(key.clone(), &node, needs.requests());
                match self.create(&ResourceKey::PODS, pod) {
                    Some(p) => self.record_pod_started(&p, &node),
                    None => {
                        self.nodes.release(&key);
                        return false;
                    }
                }
            }
            None => {
                pod["status"] = json!({"phase": "Pending"});
                let msg = self.nodes.no_fit_message(&needs);
                set_condition(&mut pod, "PodScheduled", false, "Unschedulable", &msg, &now);
                match self.create(&ResourceKey::PODS, pod) {
                    Some(p) => {
                        self.record_event(&p, true, "FailedScheduling", &msg, Reporter::Scheduler)
                    }
                    None => return false,
                }
            }
        }
        true
    }

    /// The scheduler's `Scheduled` and the kubelet's `Started` events of a bound pod.
    fn record_pod_started(&mut self, pod: &Value, node: &str) {
        let (ns, name) = (json::namespace(pod), json::name(pod));
        let msg = format!("Successfully assigned {ns}/{name} to {node}");
        self.record_event(pod, false, "Scheduled", &msg, Reporter::Scheduler);
        let containers: Vec<String> = container_names(pod);
        for c in containers {
            let msg = format!("Started container {c}");
            self.record_event(pod, false, "Started", &msg, Reporter::Kubelet(node));
        }
    }

    /// The pods of an admitted job's Workload; returns how many were created.
    pub(super) fn create_job_pods(
        &mut self,
        kind: &JobKind,
        j: &ObjRef,
        job: &Value,
        wl: Option<&Value>,
    ) -> usize {
        let uid = json::uid(job).to_string();
        let queue = json::label(job, QUEUE_NAME_LABEL).map(str::to_string);
        let pod_sets = match wl {
            Some(w) => w
                .pointer("/spec/podSets")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            None => match raw_pod_sets(kind, job) {
                Ok(sets) => sets,
                Err(e) => {
                    self.warn(format!(
                        "{} {}/{}: {e}; no pods created",
                        kind.kind, j.ns, j.name
                    ));
                    return 0;
                }
            },
        };
        let psas = wl
            .and_then(|w| w.pointer("/status/admission/podSetAssignments"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        // The counts come from the user's object: never allocate for more than the cap.
        let counts = json!({"spec": {"podSets": pod_sets.iter().map(|ps| {
            json!({"count": ps.get("count").cloned().unwrap_or(json!(1))})
        }).collect::<Vec<_>>()}});
        if let Err(v) = self.limits.check("Workload", &counts) {
            let msg = format!(
                "Error creating pods: {} asks for {} pods: {}",
                kind.kind, v.value, v.detail
            );
            self.record_event(
                job,
                true,
                "FailedCreate",
                &msg,
                Reporter::Controller(kind.operator),
            );
            self.warn(format!(
                "{} {}/{}: {msg}; no pods created",
                kind.kind, j.ns, j.name
            ));
            return 0;
        }
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
                if let Some(q) = &queue {
                    labels[QUEUE_NAME_LABEL] = json!(q);
                }
                if kind.is_kubeflow() {
                    labels[wk::KUBEFLOW_JOB_NAME_LABEL] = json!(j.name);
                    labels[wk::KUBEFLOW_REPLICA_TYPE_LABEL] = json!(ps_name);
                    labels[wk::KUBEFLOW_REPLICA_INDEX_LABEL] = json!(i.to_string());
                    labels[wk::KUBEFLOW_OPERATOR_NAME_LABEL] =
                        json!(format!("{}-controller", kind.kind.to_lowercase()));
                } else {
                    labels[wk::BATCH_JOB_NAME_LABEL] = json!(j.name);
                    labels[wk::LEGACY_JOB_NAME_LABEL] = json!(j.name);
                    labels[wk::BATCH_CONTROLLER_UID_LABEL] = json!(uid);
                }
                let mut pod = json!({
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": format!("{}-{ps_name}-{i}", j.name),
                        "namespace": j.ns,
                        "labels": labels,
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
                if let Some(w) = wl {
                    pod["metadata"]["annotations"] =
                        json!({wk::WORKLOAD_ANNOTATION: json::name(w)});
                }
                let pod_name = json::name(&pod).to_string();
                if !self.create_pod(pod, Some(job)) {
                    return created;
                }
                let (reason, msg) = if kind.is_kubeflow() {
                    ("SuccessfulCreatePod", format!("Created pod: {pod_name}"))
                } else {
                    ("SuccessfulCreate", format!("Created pod: {pod_name}"))
                };
                self.record_event(
                    job,
                    false,
                    reason,
                    &msg,
                    Reporter::Controller(kind.operator),
                );
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
                    self.nodes.bind(key.clone(), &node, needs.requests());
                    let n = node.clone();
                    let bound =
                        self.write(&ResourceKey::PODS, &key.0, &key.1, UpdateScope::All, |o| {
                            map_at(o, &["spec"]).insert("nodeName".into(), json!(n));
                            set_running(o, &n, &now);
                        });
                    if let Some(p) = bound {
                        self.record_pod_started(&p, &node);
                    }
                }
                None => {
                    let msg = self.nodes.no_fit_message(&needs);
                    if condition(&pod, "PodScheduled").map(|c| (c.1, c.2))
                        != Some(("Unschedulable", msg.as_str()))
                    {
                        self.record_event(
                            &pod,
                            true,
                            "FailedScheduling",
                            &msg,
                            Reporter::Scheduler,
                        );
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
        let replicas = match self.limits.check("Deployment", &dep) {
            Ok(()) => dep
                .pointer("/spec/replicas")
                .and_then(Value::as_i64)
                .unwrap_or(1)
                .max(0),
            Err(v) => {
                let msg = format!("Error creating pods: {v}");
                self.record_event(
                    &dep,
                    true,
                    "FailedCreate",
                    &msg,
                    Reporter::Controller("deployment-controller"),
                );
                self.warn(format!(
                    "Deployment {}/{}: {v}; no pods created",
                    key.0, key.1
                ));
                0
            }
        };
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
            if !self.create_pod(pod, Some(&dep)) {
                break;
            }
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
