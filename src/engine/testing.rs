//! Builders for engine inputs, for tests and examples (there is no manifest parser
//! in the engine). Everything here is plain data construction.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::model::*;

/// Parses a quantity literal; panics on a bad literal (test input).
pub fn qty(s: &str) -> Quantity {
    Quantity::parse(s).unwrap_or_else(|e| panic!("{e}"))
}

/// A resource quota without limits.
pub fn rq(resource: &str, nominal: &str) -> ResourceQuota {
    ResourceQuota {
        name: resource.to_string(),
        nominal: qty(nominal),
        borrowing_limit: None,
        lending_limit: None,
    }
}

/// A resource quota with optional borrowing / lending limits.
pub fn rq_limits(
    resource: &str,
    nominal: &str,
    borrowing: Option<&str>,
    lending: Option<&str>,
) -> ResourceQuota {
    ResourceQuota {
        borrowing_limit: borrowing.map(qty),
        lending_limit: lending.map(qty),
        ..rq(resource, nominal)
    }
}

pub fn fq(flavor: &str, resources: Vec<ResourceQuota>) -> FlavorQuotas {
    FlavorQuotas {
        name: flavor.to_string(),
        resources,
    }
}

pub fn rg(covered: &[&str], flavors: Vec<FlavorQuotas>) -> ResourceGroup {
    ResourceGroup {
        covered_resources: covered.iter().map(|s| s.to_string()).collect(),
        flavors,
    }
}

/// ClusterQueue builder; defaults: namespaceSelector `{}`, BestEffortFIFO, no preemption.
#[derive(Clone, Debug)]
pub struct CqBuilder(pub ClusterQueue);

impl CqBuilder {
    pub fn new(name: &str) -> Self {
        CqBuilder(ClusterQueue {
            name: name.to_string(),
            namespace_selector: Some(LabelSelector::default()),
            ..Default::default()
        })
    }
    pub fn cohort(mut self, c: &str) -> Self {
        self.0.cohort = Some(c.to_string());
        self
    }
    pub fn group(mut self, g: ResourceGroup) -> Self {
        self.0.resource_groups.push(g);
        self
    }
    /// One flavor, one resource: the common single-quota queue.
    pub fn quota(self, flavor: &str, resource: &str, nominal: &str) -> Self {
        self.group(rg(
            &[resource],
            vec![fq(flavor, vec![rq(resource, nominal)])],
        ))
    }
    pub fn preemption(mut self, within: WithinClusterQueue, reclaim: ReclaimWithinCohort) -> Self {
        self.0.preemption.within_cluster_queue = within;
        self.0.preemption.reclaim_within_cohort = reclaim;
        self
    }
    pub fn borrow_within_cohort(
        mut self,
        policy: BorrowWithinCohortPolicy,
        threshold: Option<i32>,
    ) -> Self {
        self.0.preemption.borrow_within_cohort = BorrowWithinCohort {
            policy,
            max_priority_threshold: threshold,
        };
        self
    }
    pub fn strict_fifo(mut self) -> Self {
        self.0.queueing_strategy = QueueingStrategy::StrictFifo;
        self
    }
    pub fn namespace_selector(mut self, s: Option<LabelSelector>) -> Self {
        self.0.namespace_selector = s;
        self
    }
    pub fn fungibility(
        mut self,
        borrow: FungibilityPolicy,
        preempt: FungibilityPolicy,
        pref: Option<FungibilityPreference>,
    ) -> Self {
        self.0.flavor_fungibility = FlavorFungibility {
            when_can_borrow: borrow,
            when_can_preempt: preempt,
            preference: pref,
            deprecated_values: Vec::new(),
        };
        self
    }
    pub fn stop(mut self, p: StopPolicy) -> Self {
        self.0.stop_policy = p;
        self
    }
    pub fn fair_sharing_weight(mut self, w: &str) -> Self {
        self.0.fair_sharing_weight = Some(qty(w));
        self
    }
}

/// Workload builder. The uid defaults to "uid-<ns>-<name>"; creation to 0.
#[derive(Clone, Debug)]
pub struct WlBuilder(pub Workload);

impl WlBuilder {
    pub fn new(ns: &str, name: &str) -> Self {
        WlBuilder(Workload {
            namespace: ns.to_string(),
            name: name.to_string(),
            uid: format!("uid-{ns}-{name}"),
            active: true,
            ..Default::default()
        })
    }
    pub fn queue(mut self, lq: &str) -> Self {
        self.0.queue_name = Some(lq.to_string());
        self
    }
    pub fn priority(mut self, p: i32) -> Self {
        self.0.priority = p;
        self
    }
    pub fn created(mut self, ts: Timestamp) -> Self {
        self.0.creation_timestamp = ts;
        self
    }
    pub fn uid(mut self, uid: &str) -> Self {
        self.0.uid = uid.to_string();
        self
    }
    /// Adds a pod set of `count` pods with the given per-pod requests.
    pub fn pod_set(mut self, name: &str, count: i32, requests: &[(&str, &str)]) -> Self {
        let mut pod_sets = self.0.pod_sets.to_vec();
        pod_sets.push(PodSet {
            name: name.to_string(),
            count,
            requests: requests
                .iter()
                .map(|(r, q)| (r.to_string(), qty(q)))
                .collect(),
            ..Default::default()
        });
        self.0.pod_sets = pod_sets.into();
        self
    }
    /// Modifies the last pod set.
    pub fn with_last_pod_set(mut self, f: impl FnOnce(&mut PodSet)) -> Self {
        let mut pod_sets = self.0.pod_sets.to_vec();
        if let Some(p) = pod_sets.last_mut() {
            f(p);
        }
        self.0.pod_sets = pod_sets.into();
        self
    }
    pub fn inactive(mut self) -> Self {
        self.0.active = false;
        self
    }
    /// Holds quota in `cq`, every resource of every pod set in `flavor`, reserved at `at`.
    pub fn admitted(self, cq: &str, flavor: &str, at: Timestamp) -> Self {
        let flavors: Vec<(String, BTreeMap<String, String>)> = self
            .0
            .pod_sets
            .iter()
            .map(|p| {
                (
                    p.name.clone(),
                    p.requests
                        .keys()
                        .map(|r| (r.clone(), flavor.to_string()))
                        .collect(),
                )
            })
            .collect();
        self.admitted_with(cq, flavors, at)
    }
    /// Holds quota with explicit per-pod-set flavors.
    pub fn admitted_with(
        mut self,
        cq: &str,
        flavors: Vec<(String, BTreeMap<String, String>)>,
        at: Timestamp,
    ) -> Self {
        let psas = flavors
            .into_iter()
            .map(|(ps, fl)| {
                let spec = self
                    .0
                    .pod_sets
                    .iter()
                    .find(|p| p.name == ps)
                    .expect("pod set");
                PodSetAssignment {
                    name: ps.clone(),
                    flavors: fl.into(),
                    resource_usage: spec
                        .requests
                        .iter()
                        .map(|(r, q)| (r.clone(), *q * i64::from(spec.count)))
                        .collect(),
                    count: Some(spec.count),
                }
            })
            .collect();
        self.0.admission = Some(Admission {
            cluster_queue: cq.to_string(),
            pod_set_assignments: psas,
        });
        self.0.conditions.push(Condition {
            type_: "QuotaReserved".to_string(),
            status: ConditionStatus::True,
            reason: "QuotaReserved".to_string(),
            message: format!("Quota reserved in ClusterQueue {cq}"),
            last_transition_time: Some(at),
        });
        self
    }
    pub fn condition(
        mut self,
        type_: &str,
        status: ConditionStatus,
        reason: &str,
        at: Timestamp,
    ) -> Self {
        self.0.conditions.push(Condition {
            type_: type_.to_string(),
            status,
            reason: reason.to_string(),
            message: String::new(),
            last_transition_time: Some(at),
        });
        self
    }
}

/// ClusterState builder.
#[derive(Clone, Debug, Default)]
pub struct ClusterBuilder(pub ClusterState);

impl ClusterBuilder {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn flavor(mut self, name: &str) -> Self {
        self.0.resource_flavors.insert(
            name.to_string(),
            ResourceFlavor {
                name: name.to_string(),
                ..Default::default()
            },
        );
        self
    }
    pub fn flavor_obj(mut self, f: ResourceFlavor) -> Self {
        self.0.resource_flavors.insert(f.name.clone(), f);
        self
    }
    pub fn cq(mut self, b: CqBuilder) -> Self {
        self.0.cluster_queues.insert(b.0.name.clone(), b.0);
        self
    }
    pub fn cohort(mut self, name: &str, parent: Option<&str>, groups: Vec<ResourceGroup>) -> Self {
        self.0.cohorts.insert(
            name.to_string(),
            Cohort {
                name: name.to_string(),
                parent: parent.map(str::to_string),
                resource_groups: groups,
                ..Default::default()
            },
        );
        self
    }
    /// Sets `spec.fairSharing.weight` of a Cohort (created without quota if absent).
    pub fn cohort_weight(mut self, name: &str, weight: &str) -> Self {
        let c = self
            .0
            .cohorts
            .entry(name.to_string())
            .or_insert_with(|| Cohort {
                name: name.to_string(),
                ..Default::default()
            });
        c.fair_sharing_weight = Some(qty(weight));
        self
    }
    /// Kueue's configuration with fair sharing on and the given strategies (empty =
    /// Kueue's default, both in order).
    pub fn fair_sharing(mut self, strategies: &[kueue_config::PreemptionStrategy]) -> Self {
        let strategies = if strategies.is_empty() {
            vec![
                kueue_config::PreemptionStrategy::LessThanOrEqualToFinalShare,
                kueue_config::PreemptionStrategy::LessThanInitialShare,
            ]
        } else {
            strategies.to_vec()
        };
        let mut cfg = self.0.kueue_config.take().unwrap_or_default();
        cfg.fair_sharing = Some(kueue_config::FairSharingConfig {
            preemption_strategies: strategies,
        });
        self.0.kueue_config = Some(cfg);
        self
    }
    pub fn lq(mut self, ns: &str, name: &str, cq: &str) -> Self {
        self.0.local_queues.insert(
            (ns.to_string(), name.to_string()),
            LocalQueue {
                namespace: ns.to_string(),
                name: name.to_string(),
                cluster_queue: cq.to_string(),
                ..Default::default()
            },
        );
        self
    }
    pub fn namespace(mut self, ns: &str, labels: &[(&str, &str)]) -> Self {
        self.0.namespaces.insert(
            ns.to_string(),
            Namespace {
                name: ns.to_string(),
                labels: labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            },
        );
        self
    }
    pub fn wl(mut self, b: WlBuilder) -> Self {
        self.0
            .workloads
            .insert((b.0.namespace.clone(), b.0.name.clone()), Arc::new(b.0));
        self
    }
    pub fn build(self) -> ClusterState {
        self.0
    }
}

/// The engine's worst case, shared by the benchmark and the golden tests: `cohorts`
/// × 10 full ClusterQueues (20 GPUs, 20 admitted 1-GPU workloads each) and 50 pending
/// workloads per queue whose heads all need preemption.
pub fn preemption_heavy(cohorts: usize) -> ClusterState {
    let mut b = ClusterBuilder::new().flavor("gpu");
    for c in 0..cohorts {
        for q in 0..10 {
            let name = format!("cq-{c}-{q}");
            b = b
                .cq(CqBuilder::new(&name)
                    .cohort(&format!("co-{c}"))
                    .quota("gpu", "nvidia.com/gpu", "20")
                    .preemption(WithinClusterQueue::LowerPriority, ReclaimWithinCohort::Any))
                .lq("ns", &name, &name);
            for i in 0..20 {
                b = b.wl(WlBuilder::new("ns", &format!("run-{c}-{q}-{i}"))
                    .priority(i % 3)
                    .pod_set("main", 1, &[("nvidia.com/gpu", "1")])
                    .admitted(&name, "gpu", i64::from(i)));
            }
            for i in 0..50 {
                b = b.wl(WlBuilder::new("ns", &format!("pend-{c}-{q}-{i}"))
                    .queue(&name)
                    .priority(i % 5)
                    .created(i64::from(1000 + i))
                    .pod_set("main", 1, &[("nvidia.com/gpu", &(1 + i % 4).to_string())]));
            }
        }
    }
    b.build()
}
