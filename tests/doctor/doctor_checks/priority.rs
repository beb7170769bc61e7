use gangplank::doctor::{PRIORITY_CLASS_LABEL, Severity, ids};
use gangplank::model::{WithinClusterQueue, WorkloadSource};

use crate::support::*;

#[test]
fn several_global_defaults() {
    let report = run(&healthy()
        .pc("low", 100, true)
        .pc("normal", 1000, true)
        .build());
    let f = one(&report, ids::MULTIPLE_GLOBAL_DEFAULT_PRIORITYCLASSES);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(objs(f), ["PriorityClass/low", "PriorityClass/normal"]);
    mentions(
        f,
        &["low (100)", "normal (1000)", "lowest value, low"],
        &["kubectl patch priorityclass normal"],
    );
}

#[test]
fn one_global_default_is_fine() {
    let report = run(&healthy()
        .pc("low", 100, false)
        .pc("normal", 1000, true)
        .build());
    none(&report, ids::MULTIPLE_GLOBAL_DEFAULT_PRIORITYCLASSES);
}

#[test]
fn job_naming_missing_workload_priority_class() {
    let mut j = job("team", "train", Some("lq"));
    j.labels
        .insert(PRIORITY_CLASS_LABEL.into(), "urgent".into());
    let report = run(&healthy().wpc("batch", 10).job(j).build());
    let f = one(&report, ids::UNKNOWN_PRIORITY_CLASS);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(objs(f), ["Job/team/train", "WorkloadPriorityClass/urgent"]);
    mentions(
        f,
        &["\"urgent\"", "batch", "does not fall back"],
        &["kind: WorkloadPriorityClass", "name: urgent"],
    );
}

#[test]
fn job_pod_template_naming_missing_priority_class() {
    let mut j = job("team", "train", Some("lq"));
    let mut ps = podset("main", 1, &[("cpu", "1")]);
    ps.priority_class_name = Some("boss-urgent".into());
    j.pod_sets.push(ps);
    let report = run(&healthy().job(j).build());
    let f = one(&report, ids::UNKNOWN_PRIORITY_CLASS);
    assert_eq!(objs(f), ["Job/team/train", "PriorityClass/boss-urgent"]);
    mentions(
        f,
        &["boss-urgent"],
        &["kind: PriorityClass", "name: boss-urgent"],
    );
}

#[test]
fn workload_priority_error_without_job() {
    let mut w = workload("team", "w", "lq", vec![podset("main", 1, &[("cpu", "1")])]);
    w.source = WorkloadSource::Job {
        kind: "PyTorchJob".into(),
    };
    w.owner = None;
    w.priority_error = Some("WorkloadPriorityClass \"x\" not found".into());
    let report = run(&healthy().workload(w).build());
    let f = one(&report, ids::UNKNOWN_PRIORITY_CLASS);
    assert_eq!(objs(f), ["PyTorchJob/team/w"]);
    mentions(f, &["\"x\" not found"], &[]);
}

#[test]
fn existing_and_builtin_classes_are_fine() {
    let mut j = job("team", "train", Some("lq"));
    j.labels.insert(PRIORITY_CLASS_LABEL.into(), "batch".into());
    let mut ps = podset("main", 1, &[("cpu", "1")]);
    ps.priority_class_name = Some("system-node-critical".into());
    j.pod_sets.push(ps);
    let report = run(&healthy().wpc("batch", 10).job(j).build());
    none(&report, ids::UNKNOWN_PRIORITY_CLASS);
}

#[test]
fn priority_without_any_preemption() {
    let report = run(&healthy().pc("high", 1000, false).wpc("batch", 10).build());
    let f = one(&report, ids::PRIORITY_WITHOUT_PREEMPTION);
    assert_eq!(f.severity, Severity::Info);
    assert_eq!(objs(f), ["ClusterQueue/cq"]);
    mentions(
        f,
        &[
            "PriorityClass/high",
            "WorkloadPriorityClass/batch",
            "only orders",
        ],
        &["withinClusterQueue: LowerPriority"],
    );
}

#[test]
fn preemption_enabled_or_no_classes_is_fine() {
    none(&run(&healthy().build()), ids::PRIORITY_WITHOUT_PREEMPTION);
    let mut c = cq("cq", vec![group(&[GPU, "cpu"], &[("gpu", &["8", "96"])])]);
    c.preemption.within_cluster_queue = WithinClusterQueue::LowerPriority;
    let report = run(&healthy().cq(c).pc("high", 1000, false).build());
    none(&report, ids::PRIORITY_WITHOUT_PREEMPTION);
}
