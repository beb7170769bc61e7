use gangplank::doctor::{Severity, ids};

use crate::support::*;

#[test]
fn quota_beyond_hardware() {
    let report = run(&healthy()
        .cq(cq(
            "cq",
            vec![group(&[GPU, "cpu"], &[("gpu", &["16", "96"])])],
        ))
        .build());
    let f = one(&report, ids::FLAVOR_QUOTA_EXCEEDS_CAPACITY);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(objs(f), ["ResourceFlavor/gpu", "ClusterQueue/cq"]);
    mentions(
        f,
        &["16 nvidia.com/gpu", "ClusterQueue/cq 16", "8 allocatable"],
        &["kubectl get nodes -l pool=gpu", "at most 8"],
    );
}

#[test]
fn cordoned_nodes_do_not_count() {
    let mut cordoned = gpu_node("gpu-2", "8");
    cordoned.unschedulable = true;
    let report = run(&healthy()
        .node(cordoned)
        .cq(cq(
            "cq",
            vec![group(&[GPU, "cpu"], &[("gpu", &["16", "192"])])],
        ))
        .build());
    let found = only(&report, ids::FLAVOR_QUOTA_EXCEEDS_CAPACITY);
    assert_eq!(found.len(), 2, "gpu and cpu");
    mentions(found[0], &["1 more cordoned or not Ready"], &[]);
}

#[test]
fn quota_matching_hardware_is_fine() {
    let report = run(&healthy().build());
    none(&report, ids::FLAVOR_QUOTA_EXCEEDS_CAPACITY);
    none(&report, ids::FLAVOR_IDLE_CAPACITY);
}

#[test]
fn hardware_far_beyond_quota_is_idle() {
    let report = run(&healthy()
        .node(gpu_node("gpu-2", "8"))
        .node(gpu_node("gpu-3", "8"))
        .cq(cq("cq", vec![group(&[GPU], &[("gpu", &["8"])])]))
        .build());
    let f = one(&report, ids::FLAVOR_IDLE_CAPACITY);
    assert_eq!(f.severity, Severity::Info);
    assert_eq!(objs(f), ["ResourceFlavor/gpu", "ClusterQueue/cq"]);
    mentions(f, &["8 nvidia.com/gpu", "24 allocatable"], &["towards 24"]);
}

#[test]
fn flavor_selecting_no_node() {
    let report = run(&healthy()
        .flavor(flavor("h100", &[("pool", "h100")]))
        .build());
    let f = one(&report, ids::FLAVOR_MATCHES_NO_NODE);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(objs(f), ["ResourceFlavor/h100"]);
    mentions(
        f,
        &["h100", "pool=h100", "pool ∈ {gpu}"],
        &["kubectl label nodes <node> pool=h100", "h100"],
    );
}

#[test]
fn flavors_without_nodes_in_input_are_not_judged() {
    let mut s = healthy()
        .flavor(flavor("h100", &[("pool", "h100")]))
        .build();
    s.nodes.clear();
    let report = run(&s);
    none(&report, ids::FLAVOR_MATCHES_NO_NODE);
    none(&report, ids::FLAVOR_QUOTA_EXCEEDS_CAPACITY);
}

#[test]
fn flavor_not_tolerating_node_taint() {
    let report = run(&healthy().flavor(flavor("gpu", &[("pool", "gpu")])).build());
    let f = one(&report, ids::FLAVOR_TAINTS_NOT_TOLERATED);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(objs(f), ["ResourceFlavor/gpu", "Node/gpu-1"]);
    mentions(
        f,
        &["nvidia.com/gpu=present:NoSchedule", "gpu-1"],
        &[
            "kubectl edit resourceflavor gpu",
            "key: nvidia.com/gpu",
            "value: \"present\"",
            "effect: NoSchedule",
        ],
    );
}

#[test]
fn tolerated_or_declared_taints_are_fine() {
    none(&run(&healthy().build()), ids::FLAVOR_TAINTS_NOT_TOLERATED);
    let mut declared = flavor("gpu", &[("pool", "gpu")]);
    declared
        .node_taints
        .push(taint(GPU, "present", "NoSchedule"));
    none(
        &run(&healthy().flavor(declared).build()),
        ids::FLAVOR_TAINTS_NOT_TOLERATED,
    );
}

#[test]
fn unlabelled_flavor_is_not_blamed_for_some_tainted_nodes() {
    let report = run(&healthy()
        .flavor(flavor("default", &[]))
        .node(node("cpu-1", &[], &[("cpu", "32")]))
        .build());
    none(&report, ids::FLAVOR_TAINTS_NOT_TOLERATED);
}
