//! Kueue's job integration for batch/v1 Job and Kubeflow PyTorchJob/TFJob/MPIJob:
//! the Workload a queued job gets, suspension while it is not admitted, priority
//! propagation, and the job's simulated run (start on admission, stop on eviction,
//! completion after its `sim.gangplank.io/duration`).

use serde_json::{Value, json};

use crate::model::parse::{job_pod_templates, job_priority, kubeflow_replicas};
use crate::model::well_known::{JOB_UID_LABEL, QUEUE_NAME_LABEL};
use crate::model::{PriorityClassKind, Quantity, ResourceList, well_known};
use crate::sim::clock::parse_duration;
use crate::sim::resources::{KUEUE_GROUP, ResourceKey};
use crate::sim::scenario::DURATION_ANNOTATION;
use crate::sim::store::UpdateScope;

use super::events::Reporter;
use super::json::{self, condition_true, map_at, set_condition, short_hash};
use super::mirror::parse_one;
use super::{ObjRef, Run, Scheduled, SimCluster};

/// A job kind Kueue integrates with.
#[derive(Debug)]
pub(crate) struct JobKind {
    pub res: ResourceKey,
    pub kind: &'static str,
    pub api_version: &'static str,
    /// Kueue's integration name (`batch/job`, `kubeflow.org/pytorchjob`).
    pub integration: &'static str,
    /// The job's own controller, as it signs its events.
    pub operator: &'static str,
}

impl JobKind {
    /// Whether the job has Kubeflow replica specs (`runPolicy`, replica-type labels,
    /// `Created`/`Running`/`Succeeded` conditions) rather than a batch Job's spec.
    pub fn is_kubeflow(&self) -> bool {
        kubeflow_replicas(self.kind).is_some()
    }
}

/// Kueue's job reconciler for `kind`, as it signs its events.
pub(crate) fn kueue_reporter(kind: &JobKind) -> Reporter<'static> {
    Reporter::KueueJob(kind.integration)
}

/// The integrated job kinds.
pub(crate) const JOB_RESOURCES: &[JobKind] = &[
    JobKind {
        res: ResourceKey::JOBS,
        kind: "Job",
        api_version: "batch/v1",
        integration: "batch/job",
        operator: "job-controller",
    },
    JobKind {
        res: ResourceKey::PYTORCH_JOBS,
        kind: "PyTorchJob",
        api_version: "kubeflow.org/v1",
        integration: "kubeflow.org/pytorchjob",
        operator: "pytorchjob-controller",
    },
    JobKind {
        res: ResourceKey::new_static("kubeflow.org", "tfjobs"),
        kind: "TFJob",
        api_version: "kubeflow.org/v1",
        integration: "kubeflow.org/tfjob",
        operator: "tfjob-controller",
    },
    JobKind {
        res: ResourceKey::new_static("kubeflow.org", "mpijobs"),
        kind: "MPIJob",
        api_version: "kubeflow.org/v1",
        integration: "kubeflow.org/mpijob",
        operator: "mpijob-controller",
    },
];

/// The integration for a resource, if it is a job kind.
pub(crate) fn job_kind(res: &ResourceKey) -> Option<&'static JobKind> {
    JOB_RESOURCES.iter().find(|k| k.res == *res)
}

/// The integration for a `kind` (owner references name kinds).
pub(crate) fn job_kind_by_name(kind: &str) -> Option<&'static JobKind> {
    JOB_RESOURCES.iter().find(|k| k.kind == kind)
}

fn suspend_path(kind: &JobKind) -> &'static [&'static str] {
    if kind.is_kubeflow() {
        &["spec", "runPolicy"]
    } else {
        &["spec"]
    }
}

pub(crate) fn is_suspended(kind: &JobKind, job: &Value) -> bool {
    let ptr = if kind.is_kubeflow() {
        "/spec/runPolicy/suspend"
    } else {
        "/spec/suspend"
    };
    job.pointer(ptr).and_then(Value::as_bool).unwrap_or(false)
}

fn is_finished(job: &Value) -> bool {
    ["Complete", "Failed", "Succeeded"]
        .iter()
        .any(|t| condition_true(job, t))
}

/// Kueue's pod sets for a job as a Workload's `spec.podSets` holds them (lower-case
/// names, counts and templates), read by the model's parser as the engine reads jobs.
pub(crate) fn raw_pod_sets(kind: &JobKind, job: &Value) -> Result<Vec<Value>, String> {
    Ok(job_pod_templates(kind.kind, job)?
        .into_iter()
        .map(|(name, count, template)| json!({"name": name, "count": count, "template": template}))
        .collect())
}

/// Accelerators ([`well_known::accelerator_units`]) in an admission's total usage.
pub(crate) fn admission_gpus(wl: &Value) -> i128 {
    let mut usage = ResourceList::new();
    for psa in wl
        .pointer("/status/admission/podSetAssignments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for (r, q) in psa
            .get("resourceUsage")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let text = match q {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => continue,
            };
            if let Ok(q) = Quantity::parse(&text) {
                *usage.entry(r.clone()).or_default() += q;
            }
        }
    }
    i128::from(well_known::accelerator_units(&usage))
}

/// The controlling job of a Workload, from its owner references.
pub(crate) fn owner_job(wl: &Value) -> Option<ObjRef> {
    let ns = json::namespace(wl).to_string();
    wl.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)?
        .iter()
        .find(|o| o.get("controller").and_then(Value::as_bool) == Some(true))
        .and_then(|o| {
            let kind = job_kind_by_name(o.get("kind")?.as_str()?)?;
            Some(ObjRef {
                res: kind.res.clone(),
                ns: ns.clone(),
                name: o.get("name")?.as_str()?.to_string(),
            })
        })
}

fn priority_ref_json(kind: PriorityClassKind, name: &str) -> Value {
    match kind {
        PriorityClassKind::WorkloadPriorityClass => {
            json!({"group": KUEUE_GROUP, "kind": "WorkloadPriorityClass", "name": name})
        }
        PriorityClassKind::PriorityClass => {
            json!({"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": name})
        }
    }
}

impl SimCluster {
    /// Job controller: suspend while not admitted, create the Workload, propagate priority.
    pub(super) fn reconcile_job(&mut self, j: &ObjRef) {
        let Some(kind) = job_kind(&j.res) else { return };
        let Some(job) = self.get(&j.res, &j.ns, &j.name) else {
            return;
        };
        if is_finished(&job) {
            return;
        }
        if json::label(&job, QUEUE_NAME_LABEL).is_none_or(str::is_empty) {
            // Not managed by Kueue (manageJobsWithoutQueueName defaults to false): the
            // job's own controller runs it through the default scheduler, without quota.
            if !kind.is_kubeflow() && !is_suspended(kind, &job) && !self.runs.contains_key(j) {
                self.start_run(j, &job, None);
            }
            return;
        }
        let wl = self
            .wl_of_job
            .get(j)
            .cloned()
            .and_then(|n| self.get(&ResourceKey::WORKLOADS, &j.ns, &n));
        let admitted = wl
            .as_ref()
            .is_some_and(|w| condition_true(w, "Admitted") && !condition_true(w, "Evicted"));
        if wl.is_none() && self.runs.contains_key(j) {
            // Its Workload vanished: Kueue stops the job before creating a new one.
            self.stop_run(j, true);
        }
        if !admitted && !self.runs.contains_key(j) && !is_suspended(kind, &job) {
            self.set_suspended(kind, j, true);
        }
        // Priority as Kueue derives it, from the parsed job.
        let info = match parse_one(&job) {
            Ok(mut st) if !st.jobs.is_empty() => st.jobs.swap_remove(0),
            Ok(_) => return,
            Err(e) => {
                self.warn(format!("{} {}/{}: {e}", kind.kind, j.ns, j.name));
                return;
            }
        };
        let p = job_priority(&info, &self.mirror.state);
        if let Some(err) = p.error {
            self.warn(format!("{} {}/{}: {err}", kind.kind, j.ns, j.name));
            return;
        }
        let class_ref = p.class.as_ref().map(|c| priority_ref_json(c.kind, &c.name));
        match wl {
            None => self.create_workload(kind, j, &job, p.value, class_ref),
            Some(w) => {
                let same = w.pointer("/spec/priority").and_then(Value::as_i64)
                    == Some(i64::from(p.value))
                    && w.pointer("/spec/priorityClassRef") == class_ref.as_ref();
                if !same {
                    let name = json::name(&w).to_string();
                    self.write(
                        &ResourceKey::WORKLOADS,
                        &j.ns,
                        &name,
                        UpdateScope::Main,
                        |o| {
                            let spec = map_at(o, &["spec"]);
                            spec.insert("priority".into(), json!(p.value));
                            match class_ref {
                                Some(r) => spec.insert("priorityClassRef".into(), r),
                                None => spec.remove("priorityClassRef"),
                            };
                        },
                    );
                }
            }
        }
    }

    fn create_workload(
        &mut self,
        kind: &JobKind,
        j: &ObjRef,
        job: &Value,
        priority: i32,
        class_ref: Option<Value>,
    ) {
        let uid = json::uid(job).to_string();
        let name = format!(
            "{}-{}-{}",
            kind.kind.to_lowercase(),
            j.name,
            short_hash(&uid, 5)
        );
        let queue = json::label(job, QUEUE_NAME_LABEL)
            .unwrap_or_default()
            .to_string();
        let pod_sets = match raw_pod_sets(kind, job) {
            Ok(sets) => sets,
            Err(e) => {
                self.warn(format!("{} {}/{}: {e}", kind.kind, j.ns, j.name));
                return;
            }
        };
        let mut spec = json!({
            "queueName": queue,
            "podSets": pod_sets,
            "priority": priority,
            "active": true,
        });
        if let Some(r) = &class_ref {
            spec["priorityClassRef"] = r.clone();
        }
        let obj = json!({
            "apiVersion": format!("{KUEUE_GROUP}/v1beta2"),
            "kind": "Workload",
            "metadata": {
                "name": name,
                "namespace": j.ns,
                "labels": {JOB_UID_LABEL: uid},
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
        if self.create(&ResourceKey::WORKLOADS, obj).is_some() {
            let msg = format!("Created Workload: {}/{name}", j.ns);
            self.record_event(job, false, "CreatedWorkload", &msg, kueue_reporter(kind));
            self.wl_of_job.insert(j.clone(), name.clone());
            self.job_of_wl
                .insert((j.ns.clone(), name.clone()), j.clone());
            let cq = self
                .mirror
                .state
                .local_queues
                .get(&(j.ns.clone(), queue))
                .map(|lq| lq.cluster_queue.clone());
            let class = class_ref
                .as_ref()
                .and_then(|r| r.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("(none)")
                .to_string();
            let (now, elapsed) = (self.now_ms(), self.clock.elapsed_ms());
            self.stats.on_created(&j.ns, &name, now, cq, class, elapsed);
        }
    }

    fn set_suspended(&mut self, kind: &JobKind, j: &ObjRef, suspend: bool) {
        let path = suspend_path(kind);
        self.write_quiet(&j.res, &j.ns, &j.name, UpdateScope::Main, |o| {
            map_at(o, path).insert("suspend".into(), json!(suspend));
        });
    }

    /// A deleted job takes its Workload and pods with it (owner-reference GC).
    pub(super) fn on_job_deleted(&mut self, j: &ObjRef) {
        if let Some(run) = self.runs.remove(j) {
            let now = self.now_ms();
            self.stats.on_run_end(&run, now, false);
        }
        if let Some(wl) = self.wl_of_job.remove(j) {
            self.job_of_wl.remove(&(j.ns.clone(), wl.clone()));
            self.delete(&ResourceKey::WORKLOADS, &j.ns, &wl);
        }
        if let Some(kind) = job_kind(&j.res) {
            self.delete_owned_pods(kind.kind, &j.ns, &j.name);
        }
    }

    /// Kueue's job reconciler reacting to its Workload: run when admitted, stop and
    /// release quota when evicted, deactivate/reactivate on `spec.active`.
    pub(super) fn reconcile_workload(&mut self, key: &(String, String)) {
        let Some(wl) = self.get(&ResourceKey::WORKLOADS, &key.0, &key.1) else {
            return;
        };
        if condition_true(&wl, "Finished") {
            return;
        }
        let job_ref = owner_job(&wl);
        let job = job_ref
            .as_ref()
            .and_then(|j| self.get(&j.res, &j.ns, &j.name));
        if let Some(j) = &job_ref {
            if job.is_none() {
                // Owner gone: garbage-collected.
                self.delete(&ResourceKey::WORKLOADS, &key.0, &key.1);
                return;
            }
            self.wl_of_job.insert(j.clone(), key.1.clone());
            self.job_of_wl.insert(key.clone(), j.clone());
        }
        let reserved = wl
            .pointer("/status/admission")
            .is_some_and(|a| !a.is_null())
            && condition_true(&wl, "QuotaReserved");
        let evicted = condition_true(&wl, "Evicted");
        let active = wl
            .pointer("/spec/active")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        let now = self.clock.rfc3339();
        let requeued =
            json::condition(&wl, "Requeued").map(|(s, r, _)| (s.to_string(), r.to_string()));
        if reserved && !active && !evicted {
            self.record_event(
                &wl,
                false,
                "EvictedDueToDeactivated",
                "The workload is deactivated",
                Reporter::KueueAdmission,
            );
            self.write(
                &ResourceKey::WORKLOADS,
                &key.0,
                &key.1,
                UpdateScope::Status,
                |o| {
                    set_condition(
                        o,
                        "Evicted",
                        true,
                        "Deactivated",
                        "The workload is deactivated",
                        &now,
                    );
                },
            );
            return;
        }
        if reserved && evicted {
            if let (Some(j), Some(job)) = (&job_ref, &job)
                && let Some(kind) = job_kind(&j.res)
                && (self.runs.contains_key(j) || !is_suspended(kind, job))
            {
                let msg = json::condition(&wl, "Evicted")
                    .map(|(_, _, m)| m.to_string())
                    .unwrap_or_default();
                self.record_event(job, false, "Stopped", &msg, kueue_reporter(kind));
            }
            if let Some(j) = &job_ref {
                if self.runs.contains_key(j) {
                    self.stop_run(j, true);
                } else if let (Some(kind), Some(job)) = (job_kind(&j.res), &job)
                    && !is_suspended(kind, job)
                {
                    self.set_suspended(kind, j, true);
                }
            }
            self.release(&wl);
            return;
        }
        let deactivated = requeued
            .as_ref()
            .is_some_and(|(s, r)| s == "False" && r == "Deactivated");
        if !reserved && !active && !deactivated {
            self.write(
                &ResourceKey::WORKLOADS,
                &key.0,
                &key.1,
                UpdateScope::Status,
                |o| {
                    set_condition(
                        o,
                        "Requeued",
                        false,
                        "Deactivated",
                        "The workload is deactivated",
                        &now,
                    );
                },
            );
            return;
        }
        if !reserved && active && deactivated {
            self.write(
                &ResourceKey::WORKLOADS,
                &key.0,
                &key.1,
                UpdateScope::Status,
                |o| {
                    set_condition(
                        o,
                        "Requeued",
                        true,
                        "Reactivated",
                        "The workload was reactivated",
                        &now,
                    );
                },
            );
            self.stats.event(
                self.clock.elapsed_ms(),
                "requeued",
                &format!("{}/{}", key.0, key.1),
                None,
                None,
                Some("Reactivated"),
            );
            return;
        }
        let admitted = reserved && condition_true(&wl, "Admitted") && !evicted;
        if admitted
            && let (Some(j), Some(job)) = (&job_ref, &job)
            && !self.runs.contains_key(j)
            && !is_finished(job)
        {
            if let Some(kind) = job_kind(&j.res) {
                let cq = json::str_at(&wl, "/status/admission/clusterQueue").unwrap_or_default();
                let msg = format!("Admitted by clusterQueue {cq}");
                self.record_event(job, false, "Started", &msg, kueue_reporter(kind));
            }
            self.start_run(j, job, Some(&wl));
        }
    }

    /// Starts the job: unsuspend, create its pods, schedule its completion. `wl` is its
    /// admitted Workload; `None` for a job Kueue does not manage.
    fn start_run(&mut self, j: &ObjRef, job: &Value, wl: Option<&Value>) {
        let Some(kind) = job_kind(&j.res) else { return };
        if wl.is_some() {
            self.set_suspended(kind, j, false);
        }
        let now = self.clock.rfc3339();
        let replicas = kind.is_kubeflow();
        self.write_quiet(&j.res, &j.ns, &j.name, UpdateScope::Status, |o| {
            let st = map_at(o, &["status"]);
            st.insert("startTime".into(), json!(now));
            if !replicas {
                st.remove("active");
            }
            if replicas {
                set_condition(o, "Created", true, "Created", "job created", &now);
                set_condition(o, "Suspended", false, "Resumed", "job resumed", &now);
                set_condition(o, "Running", true, "Running", "job is running", &now);
            } else if wl.is_some() {
                set_condition(o, "Suspended", false, "JobResumed", "Job resumed", &now);
            }
        });
        let pods = self.create_job_pods(kind, j, job, wl);
        if !replicas {
            self.write_quiet(&j.res, &j.ns, &j.name, UpdateScope::Status, |o| {
                map_at(o, &["status"]).insert("active".into(), json!(pods));
            });
        }
        self.run_seq += 1;
        let run = Run {
            id: self.run_seq,
            started_ms: self.now_ms(),
            workload: wl
                .map(|w| (json::namespace(w).to_string(), json::name(w).to_string()))
                .unwrap_or_default(),
            gpus: wl.map_or(0, admission_gpus),
        };
        if let Some(d) = json::annotation(job, DURATION_ANNOTATION) {
            match parse_duration(d) {
                Ok(ms) => {
                    let at = self.now_ms() + self.story_to_clock(ms);
                    self.schedule(
                        at,
                        Scheduled::Completion {
                            job: j.clone(),
                            run_id: run.id,
                        },
                    );
                }
                Err(e) => self.warn(format!(
                    "{} {}/{}: annotation {DURATION_ANNOTATION}: {e}; runs forever",
                    kind.kind, j.ns, j.name
                )),
            }
        }
        self.runs.insert(j.clone(), run);
    }

    /// Stops a running job (eviction): suspend it and delete its pods.
    pub(super) fn stop_run(&mut self, j: &ObjRef, lost: bool) {
        let Some(run) = self.runs.remove(j) else {
            return;
        };
        let now = self.now_ms();
        self.stats.on_run_end(&run, now, lost);
        let Some(kind) = job_kind(&j.res) else { return };
        self.set_suspended(kind, j, true);
        let ts = self.clock.rfc3339();
        let replicas = kind.is_kubeflow();
        self.write_quiet(&j.res, &j.ns, &j.name, UpdateScope::Status, |o| {
            if replicas {
                set_condition(o, "Running", false, "Suspended", "job suspended", &ts);
                set_condition(o, "Suspended", true, "Suspended", "job suspended", &ts);
            } else {
                map_at(o, &["status"]).insert("active".into(), json!(0));
                set_condition(o, "Suspended", true, "JobSuspended", "Job suspended", &ts);
            }
        });
        self.delete_owned_pods(kind.kind, &j.ns, &j.name);
    }

    /// A run reached its duration: pods succeed, the job completes, the Workload finishes.
    pub(super) fn complete_run(&mut self, j: &ObjRef, run_id: u64) {
        if self.runs.get(j).is_none_or(|r| r.id != run_id) {
            return; // evicted or deleted since
        }
        let Some(run) = self.runs.remove(j) else {
            return;
        };
        let Some(kind) = job_kind(&j.res) else { return };
        let now_ms = self.now_ms();
        self.stats.on_run_end(&run, now_ms, false);
        let now = self.clock.rfc3339();
        let owner = (kind.kind.to_string(), j.ns.clone(), j.name.clone());
        let pods: Vec<String> = self
            .pods_of_owner
            .get(&owner)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default();
        let n = pods.len();
        for p in pods {
            self.write(&ResourceKey::PODS, &j.ns, &p, UpdateScope::Status, |o| {
                super::pods::set_succeeded(o, &now);
            });
        }
        let replicas = kind.is_kubeflow();
        self.write_quiet(&j.res, &j.ns, &j.name, UpdateScope::Status, |o| {
            let st = map_at(o, &["status"]);
            st.insert("completionTime".into(), json!(now));
            if replicas {
                set_condition(o, "Running", false, "Succeeded", "job succeeded", &now);
                set_condition(
                    o,
                    "Succeeded",
                    true,
                    &format!("{}Succeeded", kind.kind),
                    &format!("{} {}/{} successfully completed.", kind.kind, j.ns, j.name),
                    &now,
                );
            } else {
                st.insert("active".into(), json!(0));
                st.insert("succeeded".into(), json!(n));
                set_condition(
                    o,
                    "SuccessCriteriaMet",
                    true,
                    "CompletionsReached",
                    "Reached expected number of succeeded pods",
                    &now,
                );
                set_condition(
                    o,
                    "Complete",
                    true,
                    "CompletionsReached",
                    "Reached expected number of succeeded pods",
                    &now,
                );
            }
        });
        if let Some(job) = self.get(&j.res, &j.ns, &j.name) {
            let (reason, msg, by) = if replicas {
                (
                    format!("{}Succeeded", kind.kind),
                    format!("{} {}/{} successfully completed.", kind.kind, j.ns, j.name),
                    Reporter::Controller(kind.operator),
                )
            } else {
                (
                    "Completed".to_string(),
                    "Job completed".to_string(),
                    Reporter::Controller("job-controller"),
                )
            };
            self.record_event(&job, false, &reason, &msg, by);
        }
        let (ns, name) = run.workload.clone();
        if name.is_empty() {
            return; // not managed by Kueue: no Workload to finish
        }
        let cq = self
            .get(&ResourceKey::WORKLOADS, &ns, &name)
            .and_then(|w| json::str_at(&w, "/status/admission/clusterQueue").map(str::to_string));
        self.write(
            &ResourceKey::WORKLOADS,
            &ns,
            &name,
            UpdateScope::Status,
            |o| {
                set_condition(
                    o,
                    "Finished",
                    true,
                    "Succeeded",
                    "Job finished successfully",
                    &now,
                );
            },
        );
        self.stats.event(
            self.clock.elapsed_ms(),
            "finished",
            &format!("{ns}/{name}"),
            cq.as_deref(),
            None,
            Some("Succeeded"),
        );
        self.stats.on_finished(&ns, &name);
        if let Some(cq) = cq {
            self.notify_cqs.insert(cq);
        }
    }
}
