//! Builders for `doctor` test inputs: small, explicit `ClusterState`s in Rust (manifest
//! parsing lives on another branch; manifest-based tests come after the merge).
#![allow(dead_code)] // each test binary uses a different subset

use gangplank::doctor::{self, DoctorOptions, Finding, Report};
use gangplank::model::*;

pub const GPU: &str = "nvidia.com/gpu";

pub fn q(s: &str) -> Quantity {
    Quantity::parse(s).expect("test quantity")
}

pub fn rl(items: &[(&str, &str)]) -> ResourceList {
    items.iter().map(|(k, v)| (k.to_string(), q(v))).collect()
}

pub fn labels(items: &[(&str, &str)]) -> Labels {
    items
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A resource group: covered resources, and per flavor the nominal quotas (in order).
pub fn group(covered: &[&str], flavors: &[(&str, &[&str])]) -> ResourceGroup {
    ResourceGroup {
        covered_resources: covered.iter().map(|s| s.to_string()).collect(),
        flavors: flavors
            .iter()
            .map(|(name, nominals)| FlavorQuotas {
                name: name.to_string(),
                resources: covered
                    .iter()
                    .zip(nominals.iter())
                    .map(|(r, n)| ResourceQuota {
                        name: r.to_string(),
                        nominal: q(n),
                        borrowing_limit: None,
                        lending_limit: None,
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// A ClusterQueue admitting every namespace (`namespaceSelector: {}`).
pub fn cq(name: &str, groups: Vec<ResourceGroup>) -> ClusterQueue {
    ClusterQueue {
        name: name.to_string(),
        namespace_selector: Some(LabelSelector::default()),
        resource_groups: groups,
        ..Default::default()
    }
}

pub fn flavor(name: &str, node_labels: &[(&str, &str)]) -> ResourceFlavor {
    ResourceFlavor {
        name: name.to_string(),
        node_labels: labels(node_labels),
        ..Default::default()
    }
}

pub fn lq(ns: &str, name: &str, cq: &str) -> LocalQueue {
    LocalQueue {
        namespace: ns.to_string(),
        name: name.to_string(),
        cluster_queue: cq.to_string(),
        ..Default::default()
    }
}

pub fn taint(key: &str, value: &str, effect: &str) -> Taint {
    Taint {
        key: key.to_string(),
        value: if value.is_empty() {
            None
        } else {
            Some(value.to_string())
        },
        effect: effect.to_string(),
    }
}

pub fn toleration_exists(key: &str) -> Toleration {
    Toleration {
        key: Some(key.to_string()),
        operator: Some("Exists".to_string()),
        value: None,
        effect: None,
    }
}

pub fn node(name: &str, node_labels: &[(&str, &str)], alloc: &[(&str, &str)]) -> Node {
    Node {
        name: name.to_string(),
        labels: labels(node_labels),
        allocatable: rl(alloc),
        capacity: rl(alloc),
        ready: true,
        ..Default::default()
    }
}

pub fn gpu_node(name: &str, gpus: &str) -> Node {
    let mut n = node(name, &[("pool", "gpu")], &[(GPU, gpus), ("cpu", "96")]);
    n.taints.push(taint(GPU, "present", "NoSchedule"));
    n
}

pub fn owner(kind: &str, name: &str) -> OwnerReference {
    OwnerReference {
        api_version: "batch/v1".to_string(),
        kind: kind.to_string(),
        name: name.to_string(),
        uid: format!("uid-{kind}-{name}"),
        controller: true,
    }
}

pub fn pod(ns: &str, name: &str, requests: &[(&str, &str)]) -> Pod {
    Pod {
        namespace: ns.to_string(),
        name: name.to_string(),
        uid: format!("uid-pod-{name}"),
        phase: "Running".to_string(),
        requests: rl(requests),
        ..Default::default()
    }
}

pub fn podset(name: &str, count: i32, requests: &[(&str, &str)]) -> PodSet {
    PodSet {
        name: name.to_string(),
        count,
        requests: rl(requests),
        ..Default::default()
    }
}

/// A batch/v1 Job, optionally labelled for a LocalQueue.
pub fn job(ns: &str, name: &str, queue: Option<&str>) -> JobInfo {
    let mut j = JobInfo {
        api_version: "batch/v1".to_string(),
        kind: "Job".to_string(),
        namespace: ns.to_string(),
        name: name.to_string(),
        uid: format!("uid-Job-{name}"),
        suspended: true,
        ..Default::default()
    };
    if let Some(qn) = queue {
        j.labels
            .insert(doctor::QUEUE_NAME_LABEL.to_string(), qn.to_string());
    }
    j
}

/// A pending Workload object owned by Job `name`.
pub fn workload(ns: &str, name: &str, queue: &str, pod_sets: Vec<PodSet>) -> Workload {
    Workload {
        namespace: ns.to_string(),
        name: name.to_string(),
        uid: format!("uid-wl-{name}"),
        queue_name: Some(queue.to_string()),
        pod_sets: pod_sets.into(),
        active: true,
        owner: Some(owner("Job", name)),
        ..Default::default()
    }
}

pub fn condition(type_: &str, at: Timestamp) -> Condition {
    Condition {
        type_: type_.to_string(),
        status: ConditionStatus::True,
        reason: type_.to_string(),
        message: String::new(),
        last_transition_time: Some(at),
    }
}

/// Marks a workload admitted to `cq` at `at`, every resource of every pod set on `flavor`.
pub fn admit(mut w: Workload, cq: &str, flavor: &str, at: Timestamp) -> Workload {
    let assignments = w
        .pod_sets
        .iter()
        .map(|ps| PodSetAssignment {
            name: ps.name.clone(),
            flavors: ps
                .requests
                .keys()
                .map(|r| (r.clone(), flavor.to_string()))
                .collect(),
            resource_usage: ps
                .requests
                .iter()
                .map(|(r, v)| (r.clone(), *v * i64::from(ps.count)))
                .collect(),
            count: Some(ps.count),
        })
        .collect();
    w.admission = Some(Admission {
        cluster_queue: cq.to_string(),
        pod_set_assignments: assignments,
    });
    w.conditions.push(condition("QuotaReserved", at));
    w.conditions.push(condition("Admitted", at));
    w
}

/// Fluent `ClusterState` builder.
#[derive(Default)]
pub struct State(pub ClusterState);

impl State {
    pub fn new() -> Self {
        State::default()
    }
    pub fn flavor(mut self, f: ResourceFlavor) -> Self {
        self.0.resource_flavors.insert(f.name.clone(), f);
        self
    }
    pub fn cq(mut self, c: ClusterQueue) -> Self {
        self.0.cluster_queues.insert(c.name.clone(), c);
        self
    }
    pub fn cohort(mut self, c: Cohort) -> Self {
        self.0.cohorts.insert(c.name.clone(), c);
        self
    }
    pub fn lq(mut self, l: LocalQueue) -> Self {
        self.0
            .local_queues
            .insert((l.namespace.clone(), l.name.clone()), l);
        self
    }
    pub fn ns(mut self, name: &str, ls: &[(&str, &str)]) -> Self {
        self.0.namespaces.insert(
            name.to_string(),
            Namespace {
                name: name.to_string(),
                labels: labels(ls),
            },
        );
        self
    }
    pub fn node(mut self, n: Node) -> Self {
        self.0.nodes.insert(n.name.clone(), std::sync::Arc::new(n));
        self
    }
    pub fn pod(mut self, p: Pod) -> Self {
        self.0.pods.insert(
            (p.namespace.clone(), p.name.clone()),
            std::sync::Arc::new(p),
        );
        self
    }
    pub fn job(mut self, j: JobInfo) -> Self {
        self.0.jobs.push(std::sync::Arc::new(j));
        self
    }
    pub fn workload(mut self, w: Workload) -> Self {
        self.0.workloads.insert(
            (w.namespace.clone(), w.name.clone()),
            std::sync::Arc::new(w),
        );
        self
    }
    pub fn pc(mut self, name: &str, value: i32, global_default: bool) -> Self {
        self.0.priority_classes.insert(
            name.to_string(),
            PriorityClass {
                name: name.to_string(),
                value,
                global_default,
                ..Default::default()
            },
        );
        self
    }
    pub fn wpc(mut self, name: &str, value: i32) -> Self {
        self.0.workload_priority_classes.insert(
            name.to_string(),
            WorkloadPriorityClass {
                name: name.to_string(),
                value,
                ..Default::default()
            },
        );
        self
    }
    pub fn build(self) -> ClusterState {
        self.0
    }
}

/// A healthy base: one tainted 8-GPU node, flavor `gpu` tolerating it, ClusterQueue
/// `cq` with 8 GPUs and 96 cpu, LocalQueue `team/lq`.
pub fn healthy() -> State {
    let mut f = flavor("gpu", &[("pool", "gpu")]);
    f.tolerations.push(toleration_exists(GPU));
    State::new()
        .flavor(f)
        .node(gpu_node("gpu-1", "8"))
        .cq(cq(
            "cq",
            vec![group(&[GPU, "cpu"], &[("gpu", &["8", "96"])])],
        ))
        .lq(lq("team", "lq", "cq"))
        .ns("team", &[])
}

pub const NOW: Timestamp = 1_800_000_000_000;

pub fn run(state: &ClusterState) -> Report {
    doctor::run(state, &DoctorOptions::at(NOW))
}

pub fn run_with(state: &ClusterState, opts: &DoctorOptions) -> Report {
    doctor::run(state, opts)
}

/// The findings of one check.
pub fn only<'a>(report: &'a Report, check: &str) -> Vec<&'a Finding> {
    report
        .findings
        .iter()
        .filter(|f| f.check == check)
        .collect()
}

/// Exactly one finding of `check`; panics with the whole report otherwise.
pub fn one<'a>(report: &'a Report, check: &str) -> &'a Finding {
    let found = only(report, check);
    assert_eq!(
        found.len(),
        1,
        "expected one {check} finding, got {}:\n{}",
        found.len(),
        report.render_table(100)
    );
    found[0]
}

/// No finding of `check`.
pub fn none(report: &Report, check: &str) {
    let found = only(report, check);
    assert!(
        found.is_empty(),
        "expected no {check} finding, got:\n{}",
        report.render_table(100)
    );
}

pub fn objs(f: &Finding) -> Vec<&str> {
    f.objects.iter().map(String::as_str).collect()
}

/// Message and fix both mention every name.
pub fn mentions(f: &Finding, in_message: &[&str], in_fix: &[&str]) {
    for n in in_message {
        assert!(f.message.contains(n), "message lacks {n:?}: {}", f.message);
    }
    for n in in_fix {
        assert!(f.fix.contains(n), "fix lacks {n:?}: {}", f.fix);
    }
}
