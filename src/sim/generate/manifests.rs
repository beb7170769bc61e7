//! The manifests of a generated cluster (see the module docs of `generate`).

use serde_json::{Value, json};

use super::{Shape, ShapeKind};

const GPU: &str = "nvidia.com/gpu";
const GPU_CLASS_LABEL: &str = "gangplank.io/gpu-class";
/// 2026-01-01T00:00:00Z in seconds.
const BASE_SECS: i64 = 1_767_225_600;
/// CPU and memory quota per GPU of quota; pods ask for a little less per GPU.
const CPU_PER_GPU: i64 = 12;
const MEM_GI_PER_GPU: i64 = 144;
/// WorkloadPriorityClasses and PriorityClasses: (name, value).
const WPCS: [(&str, i32); 3] = [("low", 100), ("normal", 1000), ("high", 10_000)];
const PCS: [(&str, i32, bool); 2] = [
    ("batch-default", 500, true),
    ("prod-critical", 100_000, false),
];

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        // xorshift64*
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }
}

fn uid(kind: u8, n: usize) -> String {
    format!("{kind:08x}-0000-4000-8000-{n:012x}")
}

fn ts(secs: i64) -> String {
    jiff::Timestamp::from_second(BASE_SECS + secs)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

fn flavor_name(shape: &Shape, f: usize) -> String {
    match (shape.kind, f) {
        (ShapeKind::Flat, 0) => "p4d-flavor".into(),
        (_, 0) => "a100".into(),
        (_, 1) => "h100".into(),
        (_, 2) => "h200".into(),
        (_, n) => format!("gpu-{n}"),
    }
}

/// The taint key of flavor `f`: every GPU node carries `nvidia.com/gpu`; the third flavor
/// is also reserved (`gangplank.io/reserved`), tolerated by odd-numbered teams only.
fn reserved(f: usize) -> bool {
    f == 2
}

/// One ClusterQueue's place in the cluster.
struct Queue {
    name: String,
    cohort: Option<String>,
    /// Index in its cohort (hyperpod: odd ones borrow).
    slot: usize,
}

fn queues(shape: &Shape) -> Vec<Queue> {
    if shape.kind == ShapeKind::Flat {
        return vec![Queue {
            name: "hyperpod-global-queue".into(),
            cohort: None,
            slot: 0,
        }];
    }
    let per = shape.cluster_queues_per_cohort.max(1);
    (0..shape.cluster_queue_count())
        .map(|i| Queue {
            name: format!("cq-{:03}-{:02}", i / per, i % per),
            cohort: Some(format!("team-{:03}", i / per)),
            slot: i % per,
        })
        .collect()
}

/// Per-queue GPU quota in each flavor (the cluster's GPUs of that flavor, split evenly).
fn nominal_gpus(shape: &Shape, cqs: usize) -> Vec<i64> {
    (0..shape.flavors.max(1))
        .map(|f| {
            let nodes = (0..shape.nodes)
                .filter(|n| n % shape.flavors.max(1) == f)
                .count() as i64;
            (nodes * shape.gpus_per_node / cqs as i64).max(1)
        })
        .collect()
}

fn resources(shape: &Shape, gpus: i64, quota_root: bool) -> Value {
    let mut out = Vec::new();
    for (name, v) in [
        ("cpu", gpus * CPU_PER_GPU),
        ("memory", gpus * MEM_GI_PER_GPU),
        (GPU, gpus),
    ] {
        let q = |v: i64| {
            if name == "memory" {
                format!("{v}Gi")
            } else {
                v.to_string()
            }
        };
        let mut r = json!({"name": name, "nominalQuota": q(v)});
        if !quota_root {
            if let Some(p) = shape.borrowing_limit_pct {
                r["borrowingLimit"] = json!(q(v * p / 100));
            }
            if let Some(p) = shape.lending_limit_pct {
                r["lendingLimit"] = json!(q(v * p / 100));
            }
        }
        out.push(r);
    }
    Value::Array(out)
}

fn resource_groups(shape: &Shape, gpus: &[i64], quota_root: bool) -> Value {
    let flavors: Vec<Value> = gpus
        .iter()
        .enumerate()
        .map(|(f, &g)| json!({"name": flavor_name(shape, f), "resources": resources(shape, g, quota_root)}))
        .collect();
    json!([{"coveredResources": ["cpu", "memory", GPU], "flavors": flavors}])
}

fn priority_classes(out: &mut Vec<Value>) {
    for (name, value) in WPCS {
        out.push(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "WorkloadPriorityClass",
            "metadata": {"name": name}, "value": value,
            "description": format!("{name} priority training"),
        }));
    }
    for (name, value, global_default) in PCS {
        out.push(json!({
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value, "globalDefault": global_default,
            "preemptionPolicy": "PreemptLowerPriority",
        }));
    }
}

fn flavors_and_nodes(shape: &Shape, out: &mut Vec<Value>) {
    let nf = shape.flavors.max(1);
    for f in 0..nf {
        let name = flavor_name(shape, f);
        let mut taints = vec![json!({"key": GPU, "value": "present", "effect": "NoSchedule"})];
        if reserved(f) {
            taints.push(json!({"key": "gangplank.io/reserved", "value": "research", "effect": "NoSchedule"}));
        }
        out.push(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
            "metadata": {"name": name},
            "spec": {"nodeLabels": {GPU_CLASS_LABEL: name}, "nodeTaints": taints},
        }));
    }
    for n in 0..shape.nodes {
        let f = n % nf;
        let mut taints = vec![json!({"key": GPU, "value": "present", "effect": "NoSchedule"})];
        if reserved(f) {
            taints.push(json!({"key": "gangplank.io/reserved", "value": "research", "effect": "NoSchedule"}));
        }
        let g = shape.gpus_per_node;
        let alloc = json!({"cpu": (g * CPU_PER_GPU).to_string(), "memory": format!("{}Gi", g * MEM_GI_PER_GPU),
            GPU: g.to_string(), "pods": "110"});
        out.push(json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": format!("gpu-node-{n:05}"), "uid": uid(1, n),
                "labels": {GPU_CLASS_LABEL: flavor_name(shape, f), "kubernetes.io/hostname": format!("gpu-node-{n:05}"),
                    "node.kubernetes.io/instance-type": "ml.p4d.24xlarge"}},
            "spec": {"taints": taints},
            "status": {"allocatable": alloc, "capacity": alloc,
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]},
        }));
    }
}

fn cohorts(shape: &Shape, gpus: &[i64], out: &mut Vec<Value>) {
    match shape.kind {
        ShapeKind::Flat => {}
        // Implicit cohorts (named by the ClusterQueues), as HyperPod task governance makes them.
        ShapeKind::Hyperpod => {}
        ShapeKind::Hierarchical => {
            // A shared pool at the root: one queue's worth of quota per division.
            let divisions = shape.cohorts.div_ceil(shape.cohorts_per_division.max(1));
            let pool: Vec<i64> = gpus.iter().map(|g| g * divisions as i64).collect();
            out.push(json!({
                "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Cohort", "metadata": {"name": "org"},
                "spec": {"resourceGroups": resource_groups(shape, &pool, true)},
            }));
            for d in 0..divisions {
                out.push(json!({
                    "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Cohort",
                    "metadata": {"name": format!("division-{d:02}")}, "spec": {"parentName": "org"},
                }));
            }
            for c in 0..shape.cohorts {
                out.push(json!({
                    "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Cohort",
                    "metadata": {"name": format!("team-{c:03}")},
                    "spec": {"parentName": format!("division-{:02}", c / shape.cohorts_per_division.max(1))},
                }));
            }
        }
    }
}

fn cluster_queues(shape: &Shape, qs: &[Queue], gpus: &[i64], out: &mut Vec<Value>) {
    let p = &shape.preemption;
    let mut preemption = json!({
        "withinClusterQueue": p.within_cluster_queue,
        "reclaimWithinCohort": p.reclaim_within_cohort,
    });
    if let Some((policy, threshold)) = p.borrow_within_cohort {
        preemption["borrowWithinCohort"] = json!({"policy": policy});
        if let Some(t) = threshold {
            preemption["borrowWithinCohort"]["maxPriorityThreshold"] = json!(t);
        }
    }
    for q in qs {
        let mut spec = json!({
            "namespaceSelector": {},
            "queueingStrategy": "BestEffortFIFO",
            "preemption": preemption,
            "flavorFungibility": {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"},
            "resourceGroups": resource_groups(shape, gpus, false),
        });
        if let Some(c) = &q.cohort {
            spec["cohort"] = json!(c);
        }
        out.push(json!({
            "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
            "metadata": {"name": q.name}, "spec": spec,
        }));
    }
}

/// Team namespaces with their LocalQueue: (namespace, LocalQueue name, queue index).
fn teams(shape: &Shape, qs: &[Queue], out: &mut Vec<Value>) -> Vec<(String, String, usize)> {
    let per = shape.namespaces_per_cluster_queue.max(1);
    let mut teams = Vec::new();
    for (qi, q) in qs.iter().enumerate() {
        for t in 0..per {
            let ns = format!("team-{:05}", qi * per + t);
            let lq = format!("{ns}-queue");
            out.push(json!({
                "apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns, "gangplank.io/team": "ml"}},
            }));
            out.push(json!({
                "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
                "metadata": {"name": lq, "namespace": ns}, "spec": {"clusterQueue": q.name},
            }));
            teams.push((ns, lq, qi));
        }
    }
    teams
}

/// One Workload (or job) to write.
struct Gang {
    n: usize,
    team: usize,
    /// Pods and GPUs per pod.
    pods: i64,
    gpus: i64,
    /// Flavor index it is admitted on (admitted ones).
    admitted_flavor: Option<usize>,
    /// WorkloadPriorityClass or PriorityClass (name, value, is_wpc).
    priority: (&'static str, i32, bool),
    created: i64,
}

fn pod_template(shape: &Shape, g: &Gang, pc: Option<&str>) -> Value {
    let mut tolerations = vec![json!({"key": GPU, "operator": "Exists", "effect": "NoSchedule"})];
    let on_reserved = g.admitted_flavor.is_some_and(reserved);
    if shape.flavors > 2 && (g.team % 2 == 1 || on_reserved) {
        tolerations.push(json!({"key": "gangplank.io/reserved", "operator": "Equal", "value": "research", "effect": "NoSchedule"}));
    }
    let req = json!({"cpu": (g.gpus * (CPU_PER_GPU - 2)).to_string(),
        "memory": format!("{}Gi", g.gpus * (MEM_GI_PER_GPU - 16)), GPU: g.gpus.to_string()});
    let mut spec = json!({
        "restartPolicy": "Never",
        "tolerations": tolerations,
        "containers": [{"name": "trainer", "image": "registry.example.com/train:2026.1",
            "resources": {"requests": req, "limits": {GPU: g.gpus.to_string()}}}],
    });
    if let Some(pc) = pc {
        spec["priorityClassName"] = json!(pc);
    }
    json!({"metadata": {"labels": {"app": "train"}}, "spec": spec})
}

/// Which jobs are PyTorchJobs (master + workers); the others are batch Jobs.
fn pytorch(n: usize) -> bool {
    (n / 7) % 2 == 1
}

fn job_name(g: &Gang) -> String {
    format!("train-{:06}", g.n)
}

/// The job owning a gang: a PyTorchJob or a batch Job ([`pytorch`]).
fn job(shape: &Shape, g: &Gang, ns: &str, lq: &str) -> Value {
    let mut labels = json!({"kueue.x-k8s.io/queue-name": lq});
    let (_, _, is_wpc) = g.priority;
    if is_wpc {
        labels["kueue.x-k8s.io/priority-class"] = json!(g.priority.0);
    }
    let pc = (!is_wpc).then_some(g.priority.0);
    let meta = json!({"name": job_name(g), "namespace": ns, "uid": uid(3, g.n),
        "creationTimestamp": ts(g.created), "labels": labels});
    if pytorch(g.n) {
        let mut replicas = json!({"Master": {"replicas": 1, "restartPolicy": "OnFailure",
            "template": pod_template(shape, g, pc)}});
        if g.pods > 1 {
            replicas["Worker"] = json!({"replicas": g.pods - 1, "restartPolicy": "OnFailure",
                "template": pod_template(shape, g, pc)});
        }
        json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": meta,
            "spec": {"runPolicy": {"suspend": g.admitted_flavor.is_none()}, "pytorchReplicaSpecs": replicas}})
    } else {
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
            "spec": {"parallelism": g.pods, "completions": g.pods, "suspend": g.admitted_flavor.is_none(),
                "template": pod_template(shape, g, pc)}})
    }
}

fn pod_sets(g: &Gang, with_job: bool) -> Vec<(String, i64)> {
    if with_job && pytorch(g.n) {
        let mut v = vec![("master".to_string(), 1)];
        if g.pods > 1 {
            v.push(("worker".to_string(), g.pods - 1));
        }
        v
    } else {
        vec![("main".to_string(), g.pods)]
    }
}

fn workload(
    shape: &Shape,
    g: &Gang,
    teams: &[(String, String, usize)],
    qs: &[Queue],
    with_job: bool,
) -> Value {
    let (ns, lq, qi) = &teams[g.team];
    let (pclass, pvalue, is_wpc) = g.priority;
    let sets = pod_sets(g, with_job);
    let pc = (!is_wpc).then_some(pclass);
    let pod_sets: Vec<Value> = sets
        .iter()
        .map(|(name, count)| json!({"name": name, "count": count, "template": pod_template(shape, g, pc)}))
        .collect();
    let name = if with_job {
        let kind = if pytorch(g.n) { "pytorchjob" } else { "job" };
        format!("{kind}-{}-{:05x}", job_name(g), g.n % 0xfffff)
    } else {
        format!("wl-{:06}", g.n)
    };
    let mut meta = json!({"name": name, "namespace": ns, "uid": uid(2, g.n),
        "creationTimestamp": ts(g.created), "resourceVersion": (1000 + g.n).to_string()});
    if with_job {
        let (api, kind) = if pytorch(g.n) {
            ("kubeflow.org/v1", "PyTorchJob")
        } else {
            ("batch/v1", "Job")
        };
        meta["labels"] = json!({"kueue.x-k8s.io/job-uid": uid(3, g.n)});
        meta["ownerReferences"] = json!([{"apiVersion": api, "kind": kind, "name": job_name(g),
            "uid": uid(3, g.n), "controller": true, "blockOwnerDeletion": true}]);
    }
    let source = if is_wpc {
        "kueue.x-k8s.io/workloadpriorityclass"
    } else {
        "scheduling.k8s.io/priorityclass"
    };
    let mut wl = json!({
        "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload", "metadata": meta,
        "spec": {"queueName": lq, "podSets": pod_sets, "priority": pvalue,
            "priorityClassName": pclass, "priorityClassSource": source, "active": true},
    });
    if let Some(f) = g.admitted_flavor {
        let at = ts(g.created + 30);
        let assignments: Vec<Value> = sets
            .iter()
            .map(|(name, count)| json!({"name": name, "count": count,
                "flavors": {"cpu": flavor_name(shape, f), "memory": flavor_name(shape, f), GPU: flavor_name(shape, f)},
                "resourceUsage": {"cpu": (count * g.gpus * (CPU_PER_GPU - 2)).to_string(),
                    "memory": format!("{}Gi", count * g.gpus * (MEM_GI_PER_GPU - 16)),
                    GPU: (count * g.gpus).to_string()}}))
            .collect();
        wl["status"] = json!({
            "admission": {"clusterQueue": qs[*qi].name, "podSetAssignments": assignments},
            "conditions": [
                {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
                 "message": format!("Quota reserved in ClusterQueue {}", qs[*qi].name), "lastTransitionTime": at},
                {"type": "Admitted", "status": "True", "reason": "Admitted",
                 "message": "The workload is admitted", "lastTransitionTime": at},
            ],
        });
    } else {
        wl["status"] = json!({"conditions": [{"type": "QuotaReserved", "status": "False", "reason": "Pending",
            "message": "couldn't assign flavors to pod set main: insufficient unused quota",
            "lastTransitionTime": ts(g.created + 1)}]});
    }
    wl
}

fn priority(rng: &mut Rng) -> (&'static str, i32, bool) {
    match rng.below(10) {
        0..=2 => (WPCS[0].0, WPCS[0].1, true),
        3..=5 => (WPCS[1].0, WPCS[1].1, true),
        6 => (WPCS[2].0, WPCS[2].1, true),
        7 | 8 => (PCS[0].0, PCS[0].1, false),
        _ => (PCS[1].0, PCS[1].1, false),
    }
}

/// A pending gang: mostly single pods, some mid-size, a few large (up to `max_gang`).
fn gang_size(rng: &mut Rng, max_gang: u32) -> (i64, i64) {
    let (pods, gpus) = match rng.below(20) {
        0..=9 => (1, [1, 2, 4, 8][rng.below(4) as usize]),
        10..=16 => (
            [2, 4, 8][rng.below(3) as usize],
            [1, 8][rng.below(2) as usize],
        ),
        _ => ([16, 32, 64][rng.below(3) as usize], 1),
    };
    (pods.min(max_gang.clamp(1, 64) as i64), gpus)
}

fn gangs(
    shape: &Shape,
    qs: &[Queue],
    teams: &[(String, String, usize)],
    gpus: &[i64],
    out: &mut Vec<Value>,
) {
    let mut rng = Rng(shape.seed.max(1) ^ 0x9E37_79B9_7F4A_7C15);
    let nq = qs.len();
    let per_team = shape.namespaces_per_cluster_queue.max(1);
    let job_every = shape.job_every.max(1);
    let mut n = 0usize;
    // Admitted: each queue gets its share of the admitted Workloads, filling a GPU budget
    // of its nominal quota (hyperpod: odd slots borrow 50 % more, even ones use half).
    let base = shape.admitted / nq;
    for (qi, q) in qs.iter().enumerate() {
        let count = base + usize::from(qi < shape.admitted % nq);
        if count == 0 {
            continue;
        }
        let flavor = qi % gpus.len();
        let budget = match (shape.kind, q.slot % 2) {
            (ShapeKind::Hyperpod, 1) => gpus[flavor] * 3 / 2,
            (ShapeKind::Hyperpod, _) => gpus[flavor] / 2,
            _ => gpus[flavor] * 9 / 10,
        };
        let each = (budget / count as i64).max(1);
        for k in 0..count {
            let team = qi * per_team + k % per_team;
            let (pods, g) = if each >= 8 && each % 8 == 0 {
                (each / 8, 8)
            } else {
                (1, each)
            };
            let gang = Gang {
                n,
                team,
                pods,
                gpus: g,
                admitted_flavor: Some(flavor),
                priority: priority(&mut rng),
                created: n as i64,
            };
            emit(shape, &gang, teams, qs, out);
            n += 1;
        }
    }
    for k in 0..shape.pending {
        let team = (k * 7919) % teams.len();
        let (pods, g) = gang_size(&mut rng, shape.max_gang);
        let gang = Gang {
            n,
            team,
            pods,
            gpus: g,
            admitted_flavor: None,
            priority: priority(&mut rng),
            created: 3600 + n as i64,
        };
        if n % (job_every * 5) == 3 {
            // Just submitted: Kueue's job integration has not created the Workload yet.
            let (ns, lq, _) = &teams[team];
            out.push(job(shape, &gang, ns, lq));
        } else {
            emit(shape, &gang, teams, qs, out);
        }
        n += 1;
    }
}

fn emit(
    shape: &Shape,
    g: &Gang,
    teams: &[(String, String, usize)],
    qs: &[Queue],
    out: &mut Vec<Value>,
) {
    let with_job = g.n.is_multiple_of(shape.job_every.max(1));
    if with_job {
        let (ns, lq, _) = &teams[g.team];
        out.push(job(shape, g, ns, lq));
    }
    out.push(workload(shape, g, teams, qs, with_job));
}

pub(super) fn build(shape: &Shape) -> Vec<Value> {
    let qs = queues(shape);
    let gpus = nominal_gpus(shape, qs.len());
    let mut out = Vec::new();
    priority_classes(&mut out);
    flavors_and_nodes(shape, &mut out);
    cohorts(shape, &gpus, &mut out);
    cluster_queues(shape, &qs, &gpus, &mut out);
    let teams = teams(shape, &qs, &mut out);
    gangs(shape, &qs, &teams, &gpus, &mut out);
    out
}
