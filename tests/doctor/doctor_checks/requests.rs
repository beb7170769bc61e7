use gangplank::doctor::{Severity, ids};
use gangplank::model::{ClusterQueue, Quantity};

use crate::support::*;

#[test]
fn uncovered_resource_is_an_error_with_snippet() {
    let w = workload(
        "team",
        "w",
        "lq",
        vec![podset("main", 2, &[(GPU, "1"), ("memory", "1Gi")])],
    );
    let report = run(&healthy().workload(w).build());
    let f = one(&report, ids::WORKLOAD_UNCOVERED_RESOURCE);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(objs(f), ["Workload/team/w", "ClusterQueue/cq"]);
    mentions(
        f,
        &["memory", "ClusterQueue cq", "nvidia.com/gpu, cpu"],
        &[
            "coveredResources: [\"nvidia.com/gpu\", \"cpu\", \"memory\"]",
            "- name: \"memory\"\n        nominalQuota: 2Gi",
            "- name: \"gpu\"",
        ],
    );
}

#[test]
fn covered_and_zero_requests_are_fine() {
    let w = workload(
        "team",
        "w",
        "lq",
        vec![podset(
            "main",
            1,
            &[(GPU, "1"), ("cpu", "4"), ("memory", "0")],
        )],
    );
    none(
        &run(&healthy().workload(w).build()),
        ids::WORKLOAD_UNCOVERED_RESOURCE,
    );
}

#[test]
fn admitted_workload_is_not_judged_for_coverage() {
    let w = workload(
        "team",
        "w",
        "lq",
        vec![podset("main", 1, &[("memory", "1Gi")])],
    );
    let w = admit(w, "cq", "gpu", NOW);
    none(
        &run(&healthy().workload(w).build()),
        ids::WORKLOAD_UNCOVERED_RESOURCE,
    );
}

#[test]
fn request_beyond_nominal_without_cohort() {
    let w = workload(
        "team",
        "big",
        "lq",
        vec![podset("worker", 2, &[(GPU, "8")])],
    );
    let report = run(&healthy().workload(w).build());
    let f = one(&report, ids::WORKLOAD_EXCEEDS_MAX_QUOTA);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(objs(f), ["Workload/team/big", "ClusterQueue/cq"]);
    mentions(
        f,
        &[
            "16 nvidia.com/gpu",
            "worker",
            "8 in flavor gpu",
            "no cohort",
        ],
        &["nominalQuota: 16", "kubectl edit clusterqueue cq"],
    );
}

#[test]
fn request_within_nominal_is_fine() {
    let w = workload("team", "ok", "lq", vec![podset("worker", 1, &[(GPU, "8")])]);
    none(
        &run(&healthy().workload(w).build()),
        ids::WORKLOAD_EXCEEDS_MAX_QUOTA,
    );
}

#[test]
fn pod_sets_together_beyond_quota() {
    let w = workload(
        "team",
        "pt",
        "lq",
        vec![
            podset("master", 1, &[(GPU, "4")]),
            podset("worker", 1, &[(GPU, "8")]),
        ],
    );
    let report = run(&healthy().workload(w).build());
    let f = one(&report, ids::WORKLOAD_EXCEEDS_MAX_QUOTA);
    mentions(f, &["12 nvidia.com/gpu", "all pod sets together"], &[]);
}

#[test]
fn min_count_is_honoured() {
    let mut ps = podset("worker", 4, &[(GPU, "4")]);
    ps.min_count = Some(2);
    let w = workload("team", "elastic", "lq", vec![ps]);
    none(
        &run(&healthy().workload(w).build()),
        ids::WORKLOAD_EXCEEDS_MAX_QUOTA,
    );
}

fn cohort_pair(borrow_a: Option<&str>, lend_b: Option<&str>) -> gangplank::model::ClusterState {
    let mut a: ClusterQueue = cq("cq", vec![group(&[GPU, "cpu"], &[("gpu", &["8", "96"])])]);
    a.cohort = Some("pool".into());
    a.resource_groups[0].flavors[0].resources[0].borrowing_limit = borrow_a.map(q);
    let mut b = cq("cq-b", vec![group(&[GPU, "cpu"], &[("gpu", &["8", "96"])])]);
    b.cohort = Some("pool".into());
    b.resource_groups[0].flavors[0].resources[0].lending_limit = lend_b.map(q);
    healthy().cq(a).cq(b).build()
}

fn big(state: &mut gangplank::model::ClusterState) {
    let w = workload(
        "team",
        "big",
        "lq",
        vec![podset("worker", 2, &[(GPU, "8")])],
    );
    state
        .workloads
        .insert(("team".into(), "big".into()), std::sync::Arc::new(w));
}

#[test]
fn cohort_capacity_makes_it_fit() {
    let mut s = cohort_pair(None, None);
    big(&mut s);
    none(&run(&s), ids::WORKLOAD_EXCEEDS_MAX_QUOTA);
}

#[test]
fn borrowing_limit_caps_the_cohort() {
    let mut s = cohort_pair(Some("4"), None);
    big(&mut s);
    let report = run(&s);
    let f = one(&report, ids::WORKLOAD_EXCEEDS_MAX_QUOTA);
    mentions(f, &["12 in flavor gpu", "borrowingLimit 4"], &[]);
}

#[test]
fn lending_limit_of_the_other_queue_caps_the_cohort() {
    let mut s = cohort_pair(None, Some("2"));
    big(&mut s);
    let report = run(&s);
    let f = one(&report, ids::WORKLOAD_EXCEEDS_MAX_QUOTA);
    mentions(f, &["10 in flavor gpu", "cohort pool"], &[]);
}

#[test]
fn zero_quota_and_missing_refs_do_not_panic() {
    let mut c = cq("cq", vec![group(&[GPU, "cpu"], &[("gpu", &["0", "0"])])]);
    c.cohort = Some("loop".into());
    let cohort = gangplank::model::Cohort {
        name: "loop".into(),
        parent: Some("loop".into()),
        ..Default::default()
    };
    let mut ps = podset("x", -3, &[(GPU, "1")]);
    ps.min_count = Some(-1);
    let w = workload("team", "odd", "lq", vec![ps, podset("y", 0, &[])]);
    let report = run(&healthy().cq(c).cohort(cohort).workload(w).build());
    let _ = report.render_table(10);
    assert!(report.findings.iter().all(|f| !f.check.is_empty()));
    let _ = Quantity::ZERO;
}
