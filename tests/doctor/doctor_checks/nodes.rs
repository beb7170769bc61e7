use gangplank::doctor::{QUEUE_NAME_LABEL, Severity, ids};

use crate::support::*;

#[test]
fn untainted_gpu_node_is_reported() {
    let mut bare = gpu_node("gpu-2", "8");
    bare.taints.clear();
    let report = run(&healthy().node(bare).build());
    let f = one(&report, ids::GPU_NODE_UNTAINTED);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(objs(f), ["Node/gpu-2"]);
    mentions(
        f,
        &["gpu-2", GPU, "NoSchedule"],
        &[
            "kubectl taint nodes gpu-2 nvidia.com/gpu=present:NoSchedule",
            "gpu",
        ],
    );
}

#[test]
fn tainted_gpu_node_and_cpu_node_are_fine() {
    let report = run(&healthy().node(node("cpu-1", &[], &[("cpu", "32")])).build());
    none(&report, ids::GPU_NODE_UNTAINTED);
}

#[test]
fn prefer_no_schedule_does_not_count() {
    let mut soft = gpu_node("gpu-2", "8");
    soft.taints = vec![taint(GPU, "present", "PreferNoSchedule")];
    let report = run(&healthy().node(soft).build());
    assert_eq!(objs(one(&report, ids::GPU_NODE_UNTAINTED)), ["Node/gpu-2"]);
}

#[test]
fn unmanaged_pod_on_gpu_node_is_reported() {
    let mut p = pod("default", "web", &[("cpu", "2")]);
    p.node_name = Some("gpu-1".into());
    p.owner_references.push(owner("ReplicaSet", "web-abc"));
    let report = run(&healthy().pod(p).build());
    let f = one(&report, ids::POD_BYPASSES_QUEUE_ON_GPU_NODE);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(objs(f), ["Pod/default/web", "Node/gpu-1"]);
    mentions(
        f,
        &["default/web", "gpu-1", "ReplicaSet/web-abc"],
        &["toleration", "web"],
    );
    none(&report, ids::GPU_POD_OUTSIDE_QUEUE);
}

#[test]
fn daemonset_and_managed_pods_on_gpu_node_are_fine() {
    let mut plugin = pod("kube-system", "nvidia-device-plugin-x", &[("cpu", "100m")]);
    plugin.node_name = Some("gpu-1".into());
    plugin
        .owner_references
        .push(owner("DaemonSet", "nvidia-device-plugin"));
    let mut worker = pod("team", "train-0", &[(GPU, "8")]);
    worker.node_name = Some("gpu-1".into());
    worker.owner_references.push(owner("Job", "train"));
    let mut labelled = pod("team", "solo", &[(GPU, "1")]);
    labelled.node_name = Some("gpu-1".into());
    labelled.labels.insert(QUEUE_NAME_LABEL.into(), "lq".into());
    let mut done = pod("default", "old", &[(GPU, "1")]);
    done.node_name = Some("gpu-1".into());
    done.phase = "Succeeded".into();
    let report = run(&healthy()
        .job(job("team", "train", Some("lq")))
        .pod(plugin)
        .pod(worker)
        .pod(labelled)
        .pod(done)
        .build());
    none(&report, ids::POD_BYPASSES_QUEUE_ON_GPU_NODE);
    none(&report, ids::GPU_POD_OUTSIDE_QUEUE);
}

#[test]
fn gpu_pod_outside_queue_is_reported() {
    let mut p = pod("team", "notebook", &[(GPU, "1"), ("cpu", "4")]);
    p.node_name = Some("gpu-1".into());
    let report = run(&healthy().pod(p).build());
    let f = one(&report, ids::GPU_POD_OUTSIDE_QUEUE);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(objs(f), ["Pod/team/notebook", "Node/gpu-1"]);
    mentions(
        f,
        &["team/notebook", "1 nvidia.com/gpu"],
        &[QUEUE_NAME_LABEL, "lq"],
    );
    none(&report, ids::POD_BYPASSES_QUEUE_ON_GPU_NODE);
}

#[test]
fn gpu_pod_owned_by_queued_workload_is_fine() {
    let mut p = pod("team", "train-0", &[(GPU, "1")]);
    p.owner_references.push(owner("Job", "train"));
    let w = workload(
        "team",
        "job-train-1234",
        "lq",
        vec![podset("main", 1, &[(GPU, "1")])],
    );
    let mut w = w;
    w.owner = Some(owner("Job", "train"));
    let report = run(&healthy().pod(p).workload(w).build());
    none(&report, ids::GPU_POD_OUTSIDE_QUEUE);
}
