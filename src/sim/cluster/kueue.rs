//! Kueue's side: run the engine's scheduling cycle and write what Kueue writes
//! (semantics notes §7): admissions, evictions for preemption, pending reasons,
//! the release of an evicted workload's quota, and ClusterQueue/LocalQueue status.

use std::collections::{BTreeMap, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::{Map, Value, json};

use crate::engine::{PlanOptions, schedule_cycle};
use crate::model::{Admission, Workload};
use crate::sim::resources::ResourceKey;
use crate::sim::store::{EventType, StoreEvent, UpdateScope};

use super::SimCluster;
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

/// Per (flavor, resource) totals in milli-units, keyed by borrowed names.
type Usage<'a> = BTreeMap<(&'a str, &'a str), i128>;

fn add_usage<'a>(acc: &mut Usage<'a>, w: &'a Workload) {
    if let Some(a) = &w.admission {
        for p in &a.pod_set_assignments {
            for (r, q) in &p.resource_usage {
                if let Some(f) = p.flavors.get(r) {
                    *acc.entry((f.as_str(), r.as_str())).or_default() += q.milli();
                }
            }
        }
    }
}

fn qty(milli: i128) -> String {
    crate::model::Quantity::from_milli(milli).to_string()
}

/// What a queue's status is computed from.
#[derive(Debug, Default, Hash)]
struct Counts<'a> {
    pending: i64,
    reserving: i64,
    admitted: i64,
    reservation: Usage<'a>,
    usage: Usage<'a>,
}

/// A fingerprint of what a status is computed from: unchanged ⇒ not written again.
fn fingerprint(v: impl Hash) -> u64 {
    let mut h = DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
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
        self.dirty.queue_status = true;
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
            self.stats.event(
                elapsed,
                "preempted",
                &p.workload,
                Some(&p.cluster_queue),
                Some(&p.by),
                Some(reason),
            );
            self.stats.on_preempted(&ns, &name);
        }
        for a in &out.admitted {
            let (ns, name) = split_key(&a.workload);
            let adm = admission_json(&a.admission);
            let msg = a.message.clone();
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
            self.write_quiet(&ResourceKey::WORKLOADS, &ns, &name, UpdateScope::Status, |o| {
                set_condition(o, "QuotaReserved", false, &reason, &msg, &now);
            });
        }
        changed
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

    /// ClusterQueue and LocalQueue status from the mirrored workloads.
    pub(super) fn write_queue_status(&mut self) {
        let st = &self.mirror.state;
        let lq_cq: HashMap<(&str, &str), &str> = st
            .local_queues
            .values()
            .map(|lq| ((lq.namespace.as_str(), lq.name.as_str()), lq.cluster_queue.as_str()))
            .collect();
        let mut per_cq: BTreeMap<&str, Counts> = BTreeMap::new();
        let mut per_lq: BTreeMap<(&str, &str), Counts> = BTreeMap::new();
        for w in st.workloads.values() {
            let reserving = w.has_quota_reservation();
            let admitted = reserving && w.condition_true("Admitted");
            let pending = !reserving && w.active;
            let bump = |c: &mut Counts<'_>| {
                c.pending += i64::from(pending);
                c.reserving += i64::from(reserving);
                c.admitted += i64::from(admitted);
            };
            let lq = w
                .queue_name
                .as_deref()
                .map(|q| (w.namespace.as_str(), q));
            // The ClusterQueue it counts against: its admission's, else its LocalQueue's.
            let cq = match w.admission.as_ref().filter(|_| reserving) {
                Some(a) => Some(a.cluster_queue.as_str()),
                None => lq.and_then(|k| lq_cq.get(&k).copied()),
            };
            for c in cq
                .map(|cq| per_cq.entry(cq).or_default())
                .into_iter()
                .chain(lq.map(|k| per_lq.entry(k).or_default()))
            {
                bump(c);
                if reserving {
                    add_usage(&mut c.reservation, w);
                }
                if admitted {
                    add_usage(&mut c.usage, w);
                }
            }
        }
        let now = self.clock.rfc3339();
        let mut cq_writes = Vec::new();
        for (name, cq) in &st.cluster_queues {
            let c = per_cq.remove(name.as_str()).unwrap_or_default();
            let missing_flavor = cq
                .resource_groups
                .iter()
                .flat_map(|rg| &rg.flavors)
                .find(|f| !st.resource_flavors.contains_key(&f.name))
                .map(|f| f.name.clone());
            let memo_key = (ResourceKey::CLUSTER_QUEUES, String::new(), name.clone());
            let memo = fingerprint((&c, &missing_flavor));
            if self.written_status.get(&memo_key) == Some(&memo) {
                continue;
            }
            let mut nominal: Usage = BTreeMap::new();
            let mut frs = Vec::new();
            for rg in &cq.resource_groups {
                for f in &rg.flavors {
                    for r in &f.resources {
                        nominal.insert((f.name.as_str(), r.name.as_str()), r.nominal.milli());
                        frs.push((f.name.clone(), r.name.clone()));
                    }
                }
            }
            let render = |u: &Usage| {
                let mut by_flavor: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
                let mut order: Vec<&str> = Vec::new();
                for (f, r) in &frs {
                    let total = u.get(&(f.as_str(), r.as_str())).copied().unwrap_or(0);
                    let nom = nominal.get(&(f.as_str(), r.as_str())).copied().unwrap_or(0);
                    if !order.contains(&f.as_str()) {
                        order.push(f);
                    }
                    by_flavor.entry(f).or_default().push(json!({
                        "name": r, "total": qty(total), "borrowed": qty((total - nom).max(0)),
                    }));
                }
                order
                    .iter()
                    .map(|f| json!({"name": f, "resources": by_flavor.remove(f).unwrap_or_default()}))
                    .collect::<Vec<_>>()
            };
            let (active, reason, msg) = match (&missing_flavor, cq.stop_policy) {
                (Some(f), _) => (
                    false,
                    "FlavorNotFound".to_string(),
                    format!("Can't admit new workloads: references missing ResourceFlavor(s): {f}"),
                ),
                (None, crate::model::StopPolicy::None) => {
                    (true, "Ready".into(), "Can admit new workloads".into())
                }
                (None, _) => (
                    false,
                    "Stopped".into(),
                    "Can't admit new workloads: is stopped".into(),
                ),
            };
            let status = json!({
                "flavorsReservation": render(&c.reservation),
                "flavorsUsage": render(&c.usage),
                "pendingWorkloads": c.pending,
                "reservingWorkloads": c.reserving,
                "admittedWorkloads": c.admitted,
            });
            cq_writes.push((name.clone(), status, active, reason, msg, memo_key, memo));
        }
        let mut lq_writes = Vec::new();
        for key in st.local_queues.keys() {
            let c = per_lq
                .remove(&(key.0.as_str(), key.1.as_str()))
                .unwrap_or_default();
            let memo_key = (ResourceKey::LOCAL_QUEUES, key.0.clone(), key.1.clone());
            let memo = fingerprint(&c);
            if self.written_status.get(&memo_key) == Some(&memo) {
                continue;
            }
            let render = |u: &Usage| {
                let mut by_flavor: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
                for ((f, r), q) in u {
                    by_flavor
                        .entry(f)
                        .or_default()
                        .push(json!({"name": r, "total": qty(*q)}));
                }
                by_flavor
                    .into_iter()
                    .map(|(f, rs)| json!({"name": f, "resources": rs}))
                    .collect::<Vec<_>>()
            };
            let status = json!({
                "pendingWorkloads": c.pending,
                "reservingWorkloads": c.reserving,
                "admittedWorkloads": c.admitted,
                "flavorsReservation": render(&c.reservation),
                "flavorUsage": render(&c.usage),
            });
            lq_writes.push((key.clone(), status, memo_key, memo));
        }
        for (name, status, active, reason, msg, memo_key, memo) in cq_writes {
            self.written_status.insert(memo_key, memo);
            self.write(
                &ResourceKey::CLUSTER_QUEUES,
                "",
                &name,
                UpdateScope::Status,
                |o| {
                    let st = map_at(o, &["status"]);
                    for (k, v) in status.as_object().into_iter().flatten() {
                        st.insert(k.clone(), v.clone());
                    }
                    set_condition(o, "Active", active, &reason, &msg, &now);
                },
            );
        }
        for ((ns, name), status, memo_key, memo) in lq_writes {
            self.written_status.insert(memo_key, memo);
            let cq_active = true;
            self.write(
                &ResourceKey::LOCAL_QUEUES,
                &ns,
                &name,
                UpdateScope::Status,
                |o| {
                    let st = map_at(o, &["status"]);
                    for (k, v) in status.as_object().into_iter().flatten() {
                        st.insert(k.clone(), v.clone());
                    }
                    set_condition(
                        o,
                        "Active",
                        cq_active,
                        "Ready",
                        "Can submit new workloads to localQueue",
                        &now,
                    );
                },
            );
        }
    }
}
