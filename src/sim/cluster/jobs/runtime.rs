//! A job's simulated run: unsuspended with its pods created when admitted (or at once
//! when Kueue does not manage it), stopped with its pods deleted on eviction, and
//! completed after its `sim.gangplank.io/duration`.

use serde_json::{Value, json};

use crate::model::{Quantity, ResourceList, well_known};
use crate::sim::clock::parse_duration;
use crate::sim::resources::ResourceKey;
use crate::sim::scenario::DURATION_ANNOTATION;
use crate::sim::store::UpdateScope;

use super::super::events::Reporter;
use super::super::json::{self, map_at, set_condition};
use super::super::{ObjRef, Run, Scheduled, SimCluster};
use super::job_kind;

/// Accelerators ([`well_known::accelerator_units`]) in an admission's total usage.
fn admission_gpus(wl: &Value) -> i128 {
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

impl SimCluster {
    /// Starts the job: unsuspend, create its pods, schedule its completion. `wl` is its
    /// admitted Workload; `None` for a job Kueue does not manage.
    pub(in crate::sim::cluster) fn start_run(
        &mut self,
        j: &ObjRef,
        job: &Value,
        wl: Option<&Value>,
    ) {
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
    pub(in crate::sim::cluster) fn stop_run(&mut self, j: &ObjRef, lost: bool) {
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
    pub(in crate::sim::cluster) fn complete_run(&mut self, j: &ObjRef, run_id: u64) {
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
                super::super::pods::set_succeeded(o, &now);
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
