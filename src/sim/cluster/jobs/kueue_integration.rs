//! Kueue's job integration as the simulator plays it: the Workload a queued job gets,
//! suspension while it is not admitted, priority propagation, garbage collection with
//! the job, and the reactions to the Workload (run when admitted, stop and release on
//! eviction, deactivation and reactivation).

use serde_json::{Value, json};

use crate::model::parse::job_priority;
use crate::model::well_known::{JOB_UID_LABEL, QUEUE_NAME_LABEL};
use crate::sim::resources::{KUEUE_GROUP, ResourceKey};
use crate::sim::store::UpdateScope;

use super::super::events::Reporter;
use super::super::json::{self, condition_true, map_at, set_condition, short_hash};
use super::super::mirror::parse_one;
use super::super::{ObjRef, SimCluster};
use super::{
    JobKind, is_finished, is_suspended, job_kind, kueue_reporter, owner_job, priority_ref_json,
    raw_pod_sets, suspend_path,
};

impl SimCluster {
    /// Job controller: suspend while not admitted, create the Workload, propagate priority.
    pub(in crate::sim::cluster) fn reconcile_job(&mut self, j: &ObjRef) {
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

    pub(in crate::sim::cluster) fn set_suspended(
        &mut self,
        kind: &JobKind,
        j: &ObjRef,
        suspend: bool,
    ) {
        let path = suspend_path(kind);
        self.write_quiet(&j.res, &j.ns, &j.name, UpdateScope::Main, |o| {
            map_at(o, path).insert("suspend".into(), json!(suspend));
        });
    }

    /// A deleted job takes its Workload and pods with it (owner-reference GC).
    pub(in crate::sim::cluster) fn on_job_deleted(&mut self, j: &ObjRef) {
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
    pub(in crate::sim::cluster) fn reconcile_workload(&mut self, key: &(String, String)) {
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
}
