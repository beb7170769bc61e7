//! Kueue's side: run the engine's scheduling cycle and write what Kueue writes
//! (semantics notes §7): admissions, evictions for preemption, pending reasons,
//! the release of an evicted workload's quota, and ClusterQueue/LocalQueue status.

use serde_json::{Map, Value, json};

use crate::engine::{PlanOptions, schedule_cycle};
use crate::model::Admission;
use crate::sim::resources::ResourceKey;
use crate::sim::store::{EventType, StoreEvent, UpdateScope};

use super::SimCluster;
use super::events::Reporter;
use super::jobs::owner_job;
use super::json::{self, condition, condition_true, map_at, set_condition};

fn split_key(key: &str) -> (String, String) {
    match key.split_once('/') {
        Some((ns, n)) => (ns.to_string(), n.to_string()),
        None => (String::new(), key.to_string()),
    }
}

/// `status.admission` as Kueue writes it.
fn admission_json(a: &Admission) -> Value {
    let psas: Vec<Value> = a
        .pod_set_assignments
        .iter()
        .map(|p| {
            let usage: Map<String, Value> = p
                .resource_usage
                .iter()
                .map(|(r, q)| (r.clone(), json!(q.to_string())))
                .collect();
            let mut o = json!({
                "name": p.name,
                "flavors": p.flavors,
                "resourceUsage": usage,
            });
            if let Some(c) = p.count {
                o["count"] = json!(c);
            }
            o
        })
        .collect();
    json!({"clusterQueue": a.cluster_queue, "podSetAssignments": psas})
}

/// When a workload last started waiting: its latest `Requeued=True`, else its creation.
fn queued_since_ms(wl: &Value) -> Option<i64> {
    let requeued = wl
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Requeued" && c["status"] == "True")
        .and_then(|c| c["lastTransitionTime"].as_str());
    requeued
        .or_else(|| json::str_at(wl, "/metadata/creationTimestamp"))
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map(|t| t.as_millisecond())
}

impl SimCluster {
    pub(super) fn on_workload_event(&mut self, e: &StoreEvent, quiet: bool) {
        let obj: &Value = &e.object;
        let key = (
            json::namespace(obj).to_string(),
            json::name(obj).to_string(),
        );
        if e.event_type == EventType::Deleted {
            let held = obj
                .pointer("/status/admission")
                .is_some_and(|a| !a.is_null())
                && condition_true(obj, "QuotaReserved")
                && !condition_true(obj, "Finished");
            if held && let Some(cq) = json::str_at(obj, "/status/admission/clusterQueue") {
                self.notify_cqs.insert(cq.to_string());
            }
            if let Some(j) = self.job_of_wl.remove(&key) {
                if self.wl_of_job.get(&j) == Some(&key.1) {
                    self.wl_of_job.remove(&j);
                }
                // Kueue recreates a Workload for a job that still exists.
                self.dirty.jobs.insert(j);
            }
        } else {
            if let Some(j) = owner_job(obj) {
                self.wl_of_job.insert(j.clone(), key.1.clone());
                self.job_of_wl.insert(key.clone(), j);
            }
            self.dirty.workloads.insert(key);
        }
        if !quiet {
            self.dirty.cycle = true;
        }
    }

    /// One scheduling cycle; `true` if it admitted, preempted or changed Kueue's
    /// queue memory (then another cycle may do more at this instant).
    pub(super) fn run_cycle(&mut self) -> bool {
        let any_pending = self
            .mirror
            .state
            .workloads
            .values()
            .any(|w| w.active && !w.has_quota_reservation());
        if !any_pending {
            return false;
        }
        let opts = PlanOptions {
            now: self.now_ms(),
            ..Default::default()
        };
        let out = schedule_cycle(&self.mirror.state, &self.memory, &opts);
        self.counters.cycles += 1;
        let changed =
            out.memory != self.memory || !out.admitted.is_empty() || !out.preempted.is_empty();
        self.memory = out.memory;
        let now = self.clock.rfc3339();
        let elapsed = self.clock.elapsed_ms();
        for p in &out.preempted {
            let (ns, name) = split_key(&p.workload);
            let (reason, msg) = (p.reason.as_str(), p.message.clone());
            self.write(
                &ResourceKey::WORKLOADS,
                &ns,
                &name,
                UpdateScope::Status,
                |o| {
                    set_condition(o, "Evicted", true, "Preempted", &msg, &now);
                    set_condition(o, "Preempted", true, reason, &msg, &now);
                },
            );
            self.record_preemption_events(&ns, &name, &p.by, &p.cluster_queue, &msg);
            self.stats.event(
                elapsed,
                "preempted",
                &p.workload,
                Some(&p.cluster_queue),
                Some(&p.by),
                Some(reason),
            );
            self.stats.on_preempted(&ns, &name);
            let n = self
                .preempted_this_instant
                .entry(p.workload.clone())
                .or_default();
            *n += 1;
            if *n > super::MAX_PREEMPTIONS_PER_INSTANT && !self.paused {
                self.paused = true;
                self.warn(format!(
                    "preemption loop at {}: {} preempted {} times (last by {}, {}); \
                     scheduling paused until the next event",
                    crate::sim::clock::format_offset(elapsed),
                    p.workload,
                    super::MAX_PREEMPTIONS_PER_INSTANT + 1,
                    p.by,
                    reason
                ));
            }
        }
        for a in &out.admitted {
            let (ns, name) = split_key(&a.workload);
            let adm = admission_json(&a.admission);
            let msg = a.message.clone();
            let queued_since = self
                .get(&ResourceKey::WORKLOADS, &ns, &name)
                .as_ref()
                .and_then(queued_since_ms);
            self.write(
                &ResourceKey::WORKLOADS,
                &ns,
                &name,
                UpdateScope::Status,
                |o| {
                    map_at(o, &["status"]).insert("admission".into(), adm);
                    set_condition(o, "QuotaReserved", true, "QuotaReserved", &msg, &now);
                    set_condition(
                        o,
                        "Admitted",
                        true,
                        "Admitted",
                        "The workload is admitted",
                        &now,
                    );
                    for t in ["Evicted", "Preempted"] {
                        if let Some((_, _, m)) = condition(o, t).filter(|(s, _, _)| *s == "True") {
                            let prev = format!("Previously: {m}");
                            set_condition(o, t, false, "QuotaReserved", &prev, &now);
                        }
                    }
                },
            );
            let waited = queued_since.map_or(0, |t| (self.now_ms() - t).max(0) / 1000);
            let cq = &a.cluster_queue;
            let reserved = format!(
                "Quota reserved in ClusterQueue {cq}, wait time since queued was {waited}s"
            );
            let admitted =
                format!("Admitted by ClusterQueue {cq}, wait time since reservation was 0s");
            for (reason, message) in [("QuotaReserved", reserved), ("Admitted", admitted)] {
                self.record_event_for(
                    &ResourceKey::WORKLOADS,
                    (&ns, &name),
                    false,
                    (reason, &message),
                    Reporter::KueueAdmission,
                );
            }
            self.stats.event(
                elapsed,
                "admitted",
                &a.workload,
                Some(&a.cluster_queue),
                None,
                None,
            );
            self.stats
                .on_admitted(&ns, &name, self.clock.now_ms(), &a.cluster_queue);
        }
        for p in out.pending.iter().filter(|p| p.evaluated) {
            let (ns, name) = split_key(&p.workload);
            let Some(wl) = self.get(&ResourceKey::WORKLOADS, &ns, &name) else {
                continue;
            };
            let current = condition(&wl, "QuotaReserved");
            if current == Some(("False", p.condition_reason.as_str(), p.message.as_str())) {
                continue;
            }
            let (reason, msg) = (p.condition_reason.clone(), p.message.clone());
            // A pending reason is information, not a reason for another cycle.
            self.write_quiet(
                &ResourceKey::WORKLOADS,
                &ns,
                &name,
                UpdateScope::Status,
                |o| {
                    set_condition(o, "QuotaReserved", false, &reason, &msg, &now);
                },
            );
            // Kueue records the condition's reason ("Pending") as a Warning event.
            self.record_event_for(
                &ResourceKey::WORKLOADS,
                (&ns, &name),
                true,
                (&reason, &msg),
                Reporter::KueueAdmission,
            );
        }
        changed
    }

    /// Kueue's events for one preemption: `Preempted` on the victim (its message names
    /// the preemptor's UID and the reason, plus both priorities), `EvictedDueToPreempted`
    /// on the victim and `PreemptedWorkload` on the preemptor.
    fn record_preemption_events(
        &mut self,
        ns: &str,
        name: &str,
        by: &str,
        cluster_queue: &str,
        message: &str,
    ) {
        let priority = |c: &SimCluster, key: &(String, String)| {
            c.mirror
                .state
                .workloads
                .get(key)
                .map_or(0, |w| i64::from(w.priority))
        };
        let victim_key = (ns.to_string(), name.to_string());
        let by_key = split_key(by);
        let (victim_p, by_p) = (priority(self, &victim_key), priority(self, &by_key));
        let priorities = format!(
            "preemptor effective priority: {by_p} (base: {by_p}, boost: 0); \
             preemptee effective priority: {victim_p} (base: {victim_p}, boost: 0)"
        );
        let res = &ResourceKey::WORKLOADS;
        let victim = self.get(res, ns, name);
        let victim_uid = victim
            .as_ref()
            .map(json::uid)
            .unwrap_or_default()
            .to_string();
        if let Some(v) = &victim {
            let preempted = format!("{message}; {priorities}");
            self.record_event(v, false, "Preempted", &preempted, Reporter::KueueAdmission);
            self.record_event(
                v,
                false,
                "EvictedDueToPreempted",
                message,
                Reporter::KueueAdmission,
            );
        }
        let note = format!(
            "Preempted workload {ns}/{name} (UID: {victim_uid}) in ClusterQueue {cluster_queue}; {priorities}"
        );
        self.record_event_for(
            res,
            (&by_key.0, &by_key.1),
            false,
            ("PreemptedWorkload", &note),
            Reporter::KueueAdmission,
        );
    }

    /// The victim's pods are gone: clear its admission and requeue it (§7.2).
    pub(super) fn release(&mut self, wl: &Value) {
        let ns = json::namespace(wl).to_string();
        let name = json::name(wl).to_string();
        let cq = json::str_at(wl, "/status/admission/clusterQueue").map(str::to_string);
        let (reason, msg) = condition(wl, "Evicted")
            .map(|(_, r, m)| (r.to_string(), m.to_string()))
            .unwrap_or_else(|| ("Preempted".into(), String::new()));
        let now = self.clock.rfc3339();
        let requeue = reason != "Deactivated";
        self.write(
            &ResourceKey::WORKLOADS,
            &ns,
            &name,
            UpdateScope::Status,
            |o| {
                map_at(o, &["status"]).remove("admission");
                set_condition(o, "QuotaReserved", false, "Pending", &msg, &now);
                set_condition(
                    o,
                    "Admitted",
                    false,
                    "NoReservation",
                    "The workload has no reservation",
                    &now,
                );
                set_condition(o, "Requeued", requeue, &reason, &msg, &now);
            },
        );
        let key = format!("{ns}/{name}");
        let elapsed = self.clock.elapsed_ms();
        self.stats
            .event(elapsed, "evicted", &key, cq.as_deref(), None, Some(&reason));
        if requeue {
            self.stats.event(
                elapsed,
                "requeued",
                &key,
                cq.as_deref(),
                None,
                Some(&reason),
            );
        }
        if let Some(cq) = cq {
            self.notify_cqs.insert(cq);
        }
    }
}
