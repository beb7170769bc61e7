use gangplank::doctor::{DoctorOptions, Severity, ids};

use crate::support::*;

const MIN: i64 = 60_000;

fn train_pod(name: &str, phase: &str, created: i64, gpus: &str) -> gangplank::model::Pod {
    let mut p = pod("team", name, &[(GPU, gpus)]);
    p.phase = phase.into();
    p.creation_timestamp = Some(created);
    p.owner_references.push(owner("Job", "train"));
    p
}

fn admitted_train(at: i64, gpus: &str) -> gangplank::model::Workload {
    let w = workload(
        "team",
        "job-train",
        "lq",
        vec![podset("main", 2, &[(GPU, gpus)])],
    );
    let mut w = w;
    w.owner = Some(owner("Job", "train"));
    admit(w, "cq", "gpu", at)
}

#[test]
fn admitted_gang_with_pods_pending_too_long() {
    let mut running = train_pod("train-0", "Running", NOW - 20 * MIN, "4");
    running.node_name = Some("gpu-1".into());
    let report = run(&healthy()
        .workload(admitted_train(NOW - 20 * MIN, "4"))
        .pod(running)
        .pod(train_pod("train-1", "Pending", NOW - 20 * MIN, "4"))
        .build());
    let f = one(&report, ids::ADMITTED_PODS_PENDING);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(objs(f), ["Workload/team/job-train", "Pod/team/train-1"]);
    mentions(
        f,
        &["1 of its 2 pods", "20 min", "train-1"],
        &["kubectl describe pod -n team train-1"],
    );
}

#[test]
fn recent_pending_pods_are_fine() {
    let report = run(&healthy()
        .workload(admitted_train(NOW - 5 * MIN, "4"))
        .pod(train_pod("train-0", "Pending", NOW - 5 * MIN, "4"))
        .build());
    none(&report, ids::ADMITTED_PODS_PENDING);
    // ... unless the threshold is lower.
    let opts = DoctorOptions {
        pending_pod_threshold_ms: 60_000,
        ..DoctorOptions::at(NOW)
    };
    let report = run_with(
        &healthy()
            .workload(admitted_train(NOW - 5 * MIN, "4"))
            .pod(train_pod("train-0", "Pending", NOW - 5 * MIN, "4"))
            .build(),
        &opts,
    );
    one(&report, ids::ADMITTED_PODS_PENDING);
}

fn two_half_full_nodes() -> State {
    let mut s = healthy().node(gpu_node("gpu-2", "8"));
    for (i, n) in ["gpu-1", "gpu-2"].iter().enumerate() {
        let mut p = pod("team", &format!("small-{i}"), &[(GPU, "4")]);
        p.node_name = Some(n.to_string());
        p.labels
            .insert(gangplank::doctor::QUEUE_NAME_LABEL.into(), "lq".into());
        s = s.pod(p);
    }
    s
}

#[test]
fn gpu_fragmentation_is_reported() {
    let mut pending = train_pod("train-0", "Pending", NOW, "8");
    pending.tolerations.push(toleration_exists(GPU));
    let report = run(&two_half_full_nodes()
        .workload(admitted_train(NOW, "8"))
        .pod(pending)
        .build());
    let f = one(&report, ids::GPU_FRAGMENTATION);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(
        objs(f),
        [
            "Workload/team/job-train",
            "Pod/team/train-0",
            "Node/gpu-1",
            "Node/gpu-2"
        ]
    );
    mentions(
        f,
        &[
            "8 nvidia.com/gpu",
            "most is 4",
            "8 free in total",
            "gpu-1: 4",
        ],
        &["spec.nodeName=gpu-1"],
    );
}

#[test]
fn whole_free_node_is_not_fragmentation() {
    let mut pending = train_pod("train-0", "Pending", NOW, "8");
    pending.tolerations.push(toleration_exists(GPU));
    let report = run(&healthy()
        .node(gpu_node("gpu-2", "8"))
        .workload(admitted_train(NOW, "8"))
        .pod(pending)
        .build());
    none(&report, ids::GPU_FRAGMENTATION);
}

#[test]
fn pod_larger_than_any_node() {
    let w = workload(
        "team",
        "huge",
        "lq",
        vec![podset("main", 1, &[(GPU, "16")])],
    );
    let c = cq("cq", vec![group(&[GPU, "cpu"], &[("gpu", &["16", "96"])])]);
    let report = run(&healthy()
        .cq(c)
        .node(gpu_node("gpu-2", "8"))
        .workload(w)
        .build());
    let f = one(&report, ids::POD_LARGER_THAN_ANY_NODE);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(objs(f), ["Workload/team/huge"]);
    mentions(
        f,
        &["16 nvidia.com/gpu per pod", "has 8 allocatable"],
        &["at most 8", "2 pods"],
    );
}

#[test]
fn pod_fitting_a_node_is_fine() {
    let w = workload("team", "ok", "lq", vec![podset("main", 2, &[(GPU, "8")])]);
    none(
        &run(&healthy().workload(w).build()),
        ids::POD_LARGER_THAN_ANY_NODE,
    );
}
