//! Generated clusters of any size, for benchmarks and load tests.
//!
//! Deterministic: the same [`SyntheticSpec`] always yields the same cluster (a small
//! xorshift generator, so no global randomness and no extra dependency).

use std::sync::Arc;

use super::quantity::Quantity;
use super::types::*;

/// The shape of a generated cluster.
#[derive(Clone, Debug)]
pub struct SyntheticSpec {
    pub cohorts: usize,
    pub cluster_queues_per_cohort: usize,
    pub nodes: usize,
    pub gpus_per_node: i64,
    pub admitted_workloads: usize,
    pub pending_workloads: usize,
    pub seed: u64,
}

impl SyntheticSpec {
    /// The benchmark cluster: 100 cohorts × 10 ClusterQueues, 5,000 nodes of
    /// 8 GPUs, 20,000 admitted and 50,000 pending workloads of mixed priorities.
    pub fn large() -> Self {
        SyntheticSpec {
            cohorts: 100,
            cluster_queues_per_cohort: 10,
            nodes: 5_000,
            gpus_per_node: 8,
            admitted_workloads: 20_000,
            pending_workloads: 50_000,
            seed: 42,
        }
    }
}

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

use super::well_known::{NAMESPACE_NAME_LABEL, NVIDIA_GPU as GPU};

const FLAVORS: [&str; 2] = ["a100", "h100"];
const PRIORITIES: [(&str, i32); 3] = [("low", 100), ("normal", 1000), ("high", 10000)];

/// Builds the cluster: quota split evenly over the ClusterQueues (3/4 on a100, 1/4 on
/// h100), admitted workloads filling each queue's a100 quota up to its share, and the
/// pending ones spread round-robin with random sizes and priorities.
pub fn generate(spec: &SyntheticSpec) -> ClusterState {
    let mut rng = XorShift(spec.seed.max(1));
    let mut state = ClusterState::default();
    let base_time: Timestamp = 1_767_225_600_000; // 2026-01-01T00:00:00Z

    for (i, flavor) in FLAVORS.iter().enumerate() {
        state.resource_flavors.insert(
            flavor.to_string(),
            ResourceFlavor {
                name: flavor.to_string(),
                node_labels: SmallMap::from([("gpu.class".to_string(), flavor.to_string())]),
                tolerations: vec![Toleration {
                    key: Some(GPU.to_string()),
                    operator: Some("Exists".to_string()),
                    ..Default::default()
                }],
                origin: Origin {
                    source: "synthetic".into(),
                    document: i,
                },
                ..Default::default()
            },
        );
    }
    for (name, value) in PRIORITIES {
        state.priority_classes.insert(
            name.to_string(),
            PriorityClass {
                name: name.to_string(),
                value,
                global_default: name == "normal",
                ..Default::default()
            },
        );
    }
    for n in 0..spec.nodes {
        let flavor = if n % 4 == 3 { FLAVORS[1] } else { FLAVORS[0] };
        let name = format!("node-{n:05}");
        state.nodes.insert(
            name.clone(),
            Arc::new(Node {
                name,
                labels: SmallMap::from([("gpu.class".to_string(), flavor.to_string())]),
                taints: vec![Taint {
                    key: GPU.into(),
                    value: Some("present".into()),
                    effect: "NoSchedule".into(),
                }],
                allocatable: SmallMap::from([(
                    GPU.to_string(),
                    Quantity::from_units(spec.gpus_per_node),
                )]),
                ready: true,
                ..Default::default()
            }),
        );
    }

    let cq_count = (spec.cohorts * spec.cluster_queues_per_cohort).max(1);
    let total_gpus = spec.nodes as i64 * spec.gpus_per_node;
    let per_cq = (total_gpus / cq_count as i64).max(4);
    let (a100_quota, h100_quota) = (per_cq * 3 / 4, per_cq - per_cq * 3 / 4);
    let mut cq_names = Vec::with_capacity(cq_count);
    for c in 0..spec.cohorts.max(1) {
        let cohort = format!("cohort-{c:03}");
        state.cohorts.insert(
            cohort.clone(),
            Cohort {
                name: cohort.clone(),
                ..Default::default()
            },
        );
        for q in 0..spec.cluster_queues_per_cohort.max(1) {
            let name = format!("{cohort}-cq-{q:02}");
            let ns = format!("team-{c:03}-{q:02}");
            let quota = |nominal: i64| ResourceQuota {
                name: GPU.into(),
                nominal: Quantity::from_units(nominal),
                borrowing_limit: Some(Quantity::from_units(nominal)),
                lending_limit: None,
            };
            state.cluster_queues.insert(
                name.clone(),
                ClusterQueue {
                    name: name.clone(),
                    cohort: Some(cohort.clone()),
                    namespace_selector: Some(LabelSelector::default()),
                    resource_groups: vec![ResourceGroup {
                        covered_resources: vec![GPU.into()],
                        flavors: vec![
                            FlavorQuotas {
                                name: FLAVORS[0].into(),
                                resources: vec![quota(a100_quota)],
                            },
                            FlavorQuotas {
                                name: FLAVORS[1].into(),
                                resources: vec![quota(h100_quota)],
                            },
                        ],
                    }],
                    preemption: PreemptionPolicy {
                        within_cluster_queue: WithinClusterQueue::LowerPriority,
                        reclaim_within_cohort: ReclaimWithinCohort::Any,
                        ..Default::default()
                    },
                    ..Default::default()
                },
            );
            state.namespaces.insert(
                ns.clone(),
                Namespace {
                    name: ns.clone(),
                    labels: SmallMap::from([(NAMESPACE_NAME_LABEL.to_string(), ns.clone())]),
                },
            );
            state.local_queues.insert(
                (ns.clone(), "queue".to_string()),
                LocalQueue {
                    namespace: ns.clone(),
                    name: "queue".into(),
                    cluster_queue: name.clone(),
                    ..Default::default()
                },
            );
            cq_names.push((name, ns));
        }
    }

    let mut used = vec![0i64; cq_names.len()];
    let mut seq: i64 = 0;
    let make = |rng: &mut XorShift, cq_index: usize, gpus: i64, admitted: bool, seq: &mut i64| {
        let (cq, ns) = &cq_names[cq_index];
        *seq += 1;
        let (pc, priority) = PRIORITIES[rng.below(PRIORITIES.len() as u64) as usize];
        let name = format!("wl-{:06}", *seq);
        let created = base_time + *seq * 1000;
        let requests = SmallMap::from([(GPU.to_string(), Quantity::from_units(gpus))]);
        let mut wl = Workload {
            namespace: ns.clone(),
            name: name.clone(),
            uid: format!("uid-{:06}", *seq),
            creation_timestamp: created,
            queue_name: Some("queue".into()),
            pod_sets: [PodSet {
                name: "main".into(),
                count: 1,
                requests: requests.clone(),
                ..Default::default()
            }]
            .into(),
            priority,
            priority_class: Some(PriorityClassRef {
                kind: PriorityClassKind::PriorityClass,
                name: pc.into(),
            }),
            active: true,
            ..Default::default()
        };
        if admitted {
            wl.admission = Some(Admission {
                cluster_queue: cq.clone(),
                pod_set_assignments: vec![PodSetAssignment {
                    name: "main".into(),
                    flavors: SmallMap::from([(GPU.to_string(), FLAVORS[0].to_string())]),
                    resource_usage: requests,
                    count: Some(1),
                }],
            });
            for type_ in ["QuotaReserved", "Admitted"] {
                wl.conditions.push(Condition {
                    type_: type_.into(),
                    status: ConditionStatus::True,
                    reason: type_.into(),
                    message: format!("Quota reserved in ClusterQueue {cq}"),
                    last_transition_time: Some(created + 500),
                });
            }
        }
        wl
    };

    // Admitted: round-robin over queues, 1 or 2 GPUs each, on a100 while the queue's
    // a100 share lasts, then on h100 (so 20,000 admitted fit 40,000 GPUs of quota).
    let mut used_h100 = vec![0i64; cq_names.len()];
    let mut placed = 0;
    let mut cursor = 0usize;
    let mut misses = 0usize;
    while placed < spec.admitted_workloads && misses < cq_names.len() {
        let i = cursor % cq_names.len();
        cursor += 1;
        let gpus = [1, 2][rng.below(2) as usize];
        let flavor = if used[i] + gpus <= a100_quota {
            used[i] += gpus;
            FLAVORS[0]
        } else if used_h100[i] + gpus <= h100_quota {
            used_h100[i] += gpus;
            FLAVORS[1]
        } else {
            misses += 1;
            continue;
        };
        misses = 0;
        let mut wl = make(&mut rng, i, gpus, true, &mut seq);
        if let Some(adm) = wl.admission.as_mut() {
            for psa in &mut adm.pod_set_assignments {
                for f in psa.flavors.values_mut() {
                    *f = flavor.to_string();
                }
            }
        }
        state
            .workloads
            .insert((wl.namespace.clone(), wl.name.clone()), Arc::new(wl));
        placed += 1;
    }
    for p in 0..spec.pending_workloads {
        let i = p % cq_names.len();
        let gpus = [1, 2, 4, 8, 16][rng.below(5) as usize];
        let wl = make(&mut rng, i, gpus, false, &mut seq);
        state
            .workloads
            .insert((wl.namespace.clone(), wl.name.clone()), Arc::new(wl));
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_cluster_has_the_requested_shape() {
        let spec = SyntheticSpec {
            cohorts: 2,
            cluster_queues_per_cohort: 3,
            nodes: 24,
            gpus_per_node: 8,
            admitted_workloads: 20,
            pending_workloads: 30,
            seed: 1,
        };
        let state = generate(&spec);
        assert_eq!(state.cluster_queues.len(), 6);
        assert_eq!(state.nodes.len(), 24);
        let admitted = state
            .workloads
            .values()
            .filter(|w| w.admission.is_some())
            .count();
        assert_eq!(admitted, 20);
        assert_eq!(state.workloads.len(), 50);
        // Deterministic.
        let again = generate(&spec);
        assert_eq!(
            state.workloads.keys().collect::<Vec<_>>(),
            again.workloads.keys().collect::<Vec<_>>()
        );
    }
}
