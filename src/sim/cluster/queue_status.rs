//! ClusterQueue and LocalQueue status, kept incrementally: each Workload change
//! moves its contribution (pending / reserving / admitted, quota per flavor and
//! resource) between per-queue totals, and only queues whose totals changed are
//! written. Any queue, flavor or namespace change rebuilds the totals from scratch.

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::{Value, json};

use crate::model::{ClusterState, Quantity, StopPolicy, Workload};
use crate::sim::resources::ResourceKey;
use crate::sim::store::UpdateScope;

use super::SimCluster;
use super::json::{map_at, set_condition};

/// (flavor, resource) → milli-units.
type Usage = BTreeMap<(String, String), i128>;

/// One queue's totals.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(super) struct Counts {
    pending: i64,
    reserving: i64,
    admitted: i64,
    reservation: Usage,
    usage: Usage,
}

/// What one Workload adds to its queues' totals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Contribution {
    cq: Option<String>,
    lq: Option<(String, String)>,
    pending: bool,
    reserving: bool,
    admitted: bool,
    usage: Vec<((String, String), i128)>,
}

/// A Workload's contribution; the ClusterQueue is its admission's, else its
/// LocalQueue's.
pub(super) fn contribution(st: &ClusterState, w: &Workload) -> Contribution {
    let reserving = w.has_quota_reservation();
    let lq = w
        .queue_name
        .as_ref()
        .map(|q| (w.namespace.clone(), q.clone()));
    let cq = match w.admission.as_ref().filter(|_| reserving) {
        Some(a) => Some(a.cluster_queue.clone()),
        None => lq
            .as_ref()
            .and_then(|k| st.local_queues.get(k))
            .map(|l| l.cluster_queue.clone()),
    };
    let mut usage = Vec::new();
    if reserving && let Some(a) = &w.admission {
        for p in &a.pod_set_assignments {
            for (r, q) in &p.resource_usage {
                if let Some(f) = p.flavors.get(r) {
                    usage.push(((f.clone(), r.clone()), q.milli()));
                }
            }
        }
    }
    Contribution {
        cq,
        lq,
        pending: !reserving && w.active,
        reserving,
        admitted: reserving && w.condition_true("Admitted"),
        usage,
    }
}

fn add(map: &mut Usage, key: &(String, String), v: i128) {
    let e = map.entry(key.clone()).or_default();
    *e += v;
    if *e == 0 {
        map.remove(key);
    }
}

impl Counts {
    fn apply(&mut self, c: &Contribution, sign: i64) {
        self.pending += sign * i64::from(c.pending);
        self.reserving += sign * i64::from(c.reserving);
        self.admitted += sign * i64::from(c.admitted);
        for (k, q) in &c.usage {
            let v = i128::from(sign) * q;
            if c.reserving {
                add(&mut self.reservation, k, v);
            }
            if c.admitted {
                add(&mut self.usage, k, v);
            }
        }
    }
}

/// Per-queue totals and which queues need a status write.
#[derive(Debug, Default)]
pub(super) struct QueueTotals {
    cq: BTreeMap<String, Counts>,
    lq: BTreeMap<(String, String), Counts>,
    dirty_cq: BTreeSet<String>,
    dirty_lq: BTreeSet<(String, String)>,
    /// Recompute everything before the next write.
    pub rebuild: bool,
}

impl QueueTotals {
    /// Adds (`sign` 1) or removes (`-1`) a contribution.
    pub fn apply(&mut self, c: &Contribution, sign: i64) {
        if let Some(cq) = &c.cq {
            self.cq.entry(cq.clone()).or_default().apply(c, sign);
            self.dirty_cq.insert(cq.clone());
        }
        if let Some(lq) = &c.lq {
            self.lq.entry(lq.clone()).or_default().apply(c, sign);
            self.dirty_lq.insert(lq.clone());
        }
    }

    fn rebuild_from(&mut self, st: &ClusterState) {
        *self = QueueTotals::default();
        for w in st.workloads.values() {
            self.apply(&contribution(st, w), 1);
        }
        self.dirty_cq.extend(st.cluster_queues.keys().cloned());
        self.dirty_lq.extend(st.local_queues.keys().cloned());
    }
}

fn qty(milli: i128) -> String {
    Quantity::from_milli(milli).to_string()
}

/// A fingerprint of what a status is computed from: unchanged ⇒ not written again.
fn fingerprint(v: impl Hash) -> u64 {
    let mut h = DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

/// `status` of a ClusterQueue and its `Active` condition.
fn cq_status(st: &ClusterState, name: &str, c: &Counts) -> Option<(Value, bool, String, String)> {
    let cq = st.cluster_queues.get(name)?;
    let mut frs: Vec<(&str, &str, i128)> = Vec::new();
    for rg in &cq.resource_groups {
        for f in &rg.flavors {
            for r in &f.resources {
                frs.push((&f.name, &r.name, r.nominal.milli()));
            }
        }
    }
    let render = |u: &Usage| {
        let mut out: Vec<Value> = Vec::new();
        let mut last: Option<&str> = None;
        for (f, r, nominal) in &frs {
            let total = u.get(&(f.to_string(), r.to_string())).copied().unwrap_or(0);
            let res =
                json!({"name": r, "total": qty(total), "borrowed": qty((total - nominal).max(0))});
            if last == Some(f) {
                if let Some(list) = out.last_mut().and_then(|v| v["resources"].as_array_mut()) {
                    list.push(res);
                }
            } else {
                out.push(json!({"name": f, "resources": [res]}));
                last = Some(f);
            }
        }
        out
    };
    let missing = cq
        .resource_groups
        .iter()
        .flat_map(|rg| &rg.flavors)
        .find(|f| !st.resource_flavors.contains_key(&f.name));
    let (active, reason, msg) = match (missing, cq.stop_policy) {
        (Some(f), _) => (
            false,
            "FlavorNotFound".to_string(),
            format!(
                "Can't admit new workloads: references missing ResourceFlavor(s): {}",
                f.name
            ),
        ),
        (None, StopPolicy::None) => (true, "Ready".into(), "Can admit new workloads".into()),
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
    Some((status, active, reason, msg))
}

/// `status` of a LocalQueue.
fn lq_status(c: &Counts) -> Value {
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
    json!({
        "pendingWorkloads": c.pending,
        "reservingWorkloads": c.reserving,
        "admittedWorkloads": c.admitted,
        "flavorsReservation": render(&c.reservation),
        "flavorUsage": render(&c.usage),
    })
}

impl SimCluster {
    /// Writes the status of every queue whose totals changed.
    pub(super) fn write_queue_status(&mut self) {
        if self.totals.rebuild {
            self.totals.rebuild_from(&self.mirror.state);
        }
        let now = self.clock.rfc3339();
        let mut writes = Vec::new();
        for name in std::mem::take(&mut self.totals.dirty_cq) {
            let c = self.totals.cq.get(&name).cloned().unwrap_or_default();
            let Some((status, active, reason, msg)) = cq_status(&self.mirror.state, &name, &c)
            else {
                continue;
            };
            let key = (ResourceKey::CLUSTER_QUEUES, String::new(), name);
            let memo = fingerprint((&c, active, &reason));
            if self.written_status.get(&key) != Some(&memo) {
                writes.push((key, memo, status, (active, reason, msg)));
            }
        }
        for lq in std::mem::take(&mut self.totals.dirty_lq) {
            if !self.mirror.state.local_queues.contains_key(&lq) {
                continue;
            }
            let c = self.totals.lq.get(&lq).cloned().unwrap_or_default();
            let key = (ResourceKey::LOCAL_QUEUES, lq.0, lq.1);
            let memo = fingerprint(&c);
            if self.written_status.get(&key) != Some(&memo) {
                let cond = (
                    true,
                    "Ready".to_string(),
                    "Can submit new workloads to localQueue".to_string(),
                );
                writes.push((key, memo, lq_status(&c), cond));
            }
        }
        for (key, memo, status, (active, reason, msg)) in writes {
            self.written_status.insert(key.clone(), memo);
            let (res, ns, name) = key;
            self.write(&res, &ns, &name, UpdateScope::Status, |o| {
                let st = map_at(o, &["status"]);
                for (k, v) in status.as_object().into_iter().flatten() {
                    st.insert(k.clone(), v.clone());
                }
                set_condition(o, "Active", active, &reason, &msg, &now);
            });
        }
    }
}
