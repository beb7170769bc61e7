use gangplank::doctor::{Severity, ids};

use crate::support::*;

#[test]
fn job_without_queue_label_in_queued_namespace() {
    let report = run(&healthy().job(job("team", "etl", None)).build());
    let f = one(&report, ids::JOB_MISSING_QUEUE_LABEL);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(objs(f), ["Job/team/etl", "LocalQueue/team/lq"]);
    mentions(
        f,
        &["Job/team/etl", "lq", "team"],
        &["kueue.x-k8s.io/queue-name: lq"],
    );
}

#[test]
fn job_without_label_elsewhere_or_with_label_is_fine() {
    let report = run(&healthy()
        .job(job("web", "migrate", None))
        .job(job("team", "train", Some("lq")))
        .build());
    none(&report, ids::JOB_MISSING_QUEUE_LABEL);
    none(&report, ids::JOB_UNKNOWN_LOCAL_QUEUE);
}

#[test]
fn job_naming_missing_local_queue() {
    let report = run(&healthy()
        .job(job("team", "train", Some("nlp-queue")))
        .build());
    let f = one(&report, ids::JOB_UNKNOWN_LOCAL_QUEUE);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(objs(f), ["Job/team/train", "LocalQueue/team/nlp-queue"]);
    mentions(
        f,
        &["nlp-queue", "team", "lq"],
        &[
            "name: nlp-queue",
            "namespace: team",
            "clusterQueue: cq",
            "lq",
        ],
    );
    none(&report, ids::JOB_MISSING_QUEUE_LABEL);
}

#[test]
fn workload_without_listed_job_naming_missing_local_queue() {
    let w = workload(
        "team",
        "wl-1",
        "ghost",
        vec![podset("main", 1, &[("cpu", "1")])],
    );
    let report = run(&healthy().workload(w).build());
    let f = one(&report, ids::JOB_UNKNOWN_LOCAL_QUEUE);
    assert_eq!(objs(f), ["Workload/team/wl-1", "LocalQueue/team/ghost"]);
}

#[test]
fn job_and_its_workload_give_one_finding() {
    let mut w = workload(
        "team",
        "train",
        "ghost",
        vec![podset("main", 1, &[("cpu", "1")])],
    );
    w.source = gangplank::model::WorkloadSource::Job { kind: "Job".into() };
    w.owner = None;
    let report = run(&healthy()
        .job(job("team", "train", Some("ghost")))
        .workload(w)
        .build());
    assert_eq!(only(&report, ids::JOB_UNKNOWN_LOCAL_QUEUE).len(), 1);
}
