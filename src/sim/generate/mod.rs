//! A cluster generator that writes **real manifests** (what `kubectl get -o json|yaml`
//! prints), for benchmarks, tests and users (`gangplank sim generate`).
//!
//! Independent of [`crate::model::synthetic`] (which builds a `ClusterState` in memory):
//! the output goes through the same parser as `plan -f`, so a dump exercises reading
//! JSON `List`s and multi-document YAML, job ↔ Workload linking, namespaces and
//! LocalQueues, priority classes of both kinds, taints and tolerations, and Workloads with
//! `status.admission`. Deterministic: the same [`Shape`] gives the same bytes.
//!
//! Three named shapes, each scaled by `scale` (scale 1 ≈ 800 objects; scale 100 ≈ the
//! issue's large cluster: 100 cohorts × 10 ClusterQueues, 5,000 nodes, 20,000 admitted and
//! 50,000 pending Workloads):
//! * `flat` — the seed tutorial's single ClusterQueue (`hyperpod-global-queue`,
//!   `p4d-flavor`) scaled up, one LocalQueue per team namespace;
//! * `hyperpod` — cohorts of ClusterQueues with `borrowingLimit`, `reclaimWithinCohort:
//!   Any`, `borrowWithinCohort: LowerPriority` (with `maxPriorityThreshold`); half of each
//!   cohort's queues borrow from the other half, whose pending work reclaims;
//! * `hierarchical` — a `Cohort` tree (org → divisions → teams) with quota at the root,
//!   three flavors (one reserved by a taint only some teams tolerate) and `lendingLimit`.

mod manifests;

use serde_json::Value;

/// The named shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeKind {
    Flat,
    Hyperpod,
    Hierarchical,
}

impl ShapeKind {
    pub const ALL: [ShapeKind; 3] = [
        ShapeKind::Flat,
        ShapeKind::Hyperpod,
        ShapeKind::Hierarchical,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ShapeKind::Flat => "flat",
            ShapeKind::Hyperpod => "hyperpod",
            ShapeKind::Hierarchical => "hierarchical",
        }
    }

    /// Parses a shape name (for the command line).
    pub fn parse(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown shape {s:?} (expected flat, hyperpod or hierarchical)"))
    }
}

/// `spec.preemption` of every generated ClusterQueue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preemption {
    pub within_cluster_queue: &'static str,
    pub reclaim_within_cohort: &'static str,
    /// `borrowWithinCohort.policy` and `maxPriorityThreshold`; `None` = absent (Never).
    pub borrow_within_cohort: Option<(&'static str, Option<i32>)>,
}

/// Every knob of a generated cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    pub kind: ShapeKind,
    /// Leaf cohorts (ignored by `flat`, which has one ClusterQueue and no cohort).
    pub cohorts: usize,
    pub cluster_queues_per_cohort: usize,
    /// `hierarchical`: leaf cohorts per division cohort.
    pub cohorts_per_division: usize,
    pub nodes: usize,
    pub gpus_per_node: i64,
    /// GPU flavors (ResourceFlavors with node labels and a taint); nodes are dealt round-robin.
    pub flavors: usize,
    /// Team namespaces (each with a LocalQueue) per ClusterQueue (`flat`: in all).
    pub namespaces_per_cluster_queue: usize,
    pub admitted: usize,
    pub pending: usize,
    /// Largest gang (pods of one pending Workload), 1–64.
    pub max_gang: u32,
    /// `borrowingLimit` / `lendingLimit` as a percentage of nominal; `None` = absent.
    pub borrowing_limit_pct: Option<i64>,
    pub lending_limit_pct: Option<i64>,
    pub preemption: Preemption,
    /// Every n-th Workload is written with its job (a PyTorchJob or batch Job owning it);
    /// every (n × 5)-th pending one is a job alone (Kueue has not created its Workload yet).
    pub job_every: usize,
    pub seed: u64,
}

impl Shape {
    /// A named shape at `scale` (≥ 1).
    pub fn named(kind: ShapeKind, scale: usize) -> Shape {
        let s = scale.max(1);
        let base = Shape {
            kind,
            cohorts: s,
            cluster_queues_per_cohort: 10,
            cohorts_per_division: 4,
            nodes: 50 * s,
            gpus_per_node: 8,
            flavors: 1,
            namespaces_per_cluster_queue: 1,
            admitted: 200 * s,
            pending: 500 * s,
            max_gang: 64,
            borrowing_limit_pct: None,
            lending_limit_pct: None,
            preemption: Preemption {
                within_cluster_queue: "LowerPriority",
                reclaim_within_cohort: "Any",
                borrow_within_cohort: None,
            },
            job_every: 10,
            seed: 42,
        };
        match kind {
            ShapeKind::Flat => Shape {
                cohorts: 0,
                cluster_queues_per_cohort: 1,
                namespaces_per_cluster_queue: 10 * s,
                ..base
            },
            ShapeKind::Hyperpod => Shape {
                borrowing_limit_pct: Some(100),
                preemption: Preemption {
                    within_cluster_queue: "LowerPriority",
                    reclaim_within_cohort: "Any",
                    borrow_within_cohort: Some(("LowerPriority", Some(1000))),
                },
                ..base
            },
            ShapeKind::Hierarchical => Shape {
                flavors: 3,
                lending_limit_pct: Some(50),
                preemption: Preemption {
                    within_cluster_queue: "LowerOrNewerEqualPriority",
                    reclaim_within_cohort: "LowerPriority",
                    borrow_within_cohort: Some(("LowerPriority", None)),
                },
                ..base
            },
        }
    }

    /// ClusterQueues in all.
    pub fn cluster_queue_count(&self) -> usize {
        match self.kind {
            ShapeKind::Flat => 1,
            _ => self.cohorts.max(1) * self.cluster_queues_per_cohort.max(1),
        }
    }
}

/// The manifests of the cluster, in the order `kubectl apply` would want them (classes,
/// flavors, cohorts, queues, namespaces, nodes, then jobs and Workloads).
pub fn generate(shape: &Shape) -> Vec<Value> {
    manifests::build(shape)
}

/// One JSON `List`, as `kubectl get ... -o json` prints it.
pub fn to_json_list(objects: &[Value]) -> Vec<u8> {
    let list = serde_json::json!({
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": ""},
        "items": objects,
    });
    let mut out = serde_json::to_vec_pretty(&list).expect("a JSON value serializes");
    out.push(b'\n');
    out
}

/// Multi-document YAML (`---` between objects), as `kubectl get -o yaml` of single
/// objects concatenated.
pub fn to_yaml_documents(objects: &[Value]) -> Vec<u8> {
    let mut out = String::new();
    for o in objects {
        out.push_str("---\n");
        out.push_str(&serde_yaml_ng::to_string(o).expect("a JSON value serializes as YAML"));
    }
    out.into_bytes()
}
