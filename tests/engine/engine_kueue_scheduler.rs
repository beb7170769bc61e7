//! Cases ported from Kueue's `pkg/scheduler/scheduler_test.go` (`TestSchedule`), named after
//! the Kueue case. Each runs one cycle through the stepping API and checks what Kueue's test
//! checks: who is scheduled (and with which flavors), who is preempted, and who is left in
//! the heap or in the inadmissible set.

use std::collections::{BTreeMap, BTreeSet};

use gangplank::engine::testing::*;
use gangplank::engine::{CycleOutcome, PlanOptions, SchedulerMemory, schedule_cycle};
use gangplank::model::{
    ClusterState, FungibilityPolicy as F, LabelSelector, ReclaimWithinCohort as R,
    SelectorRequirement, WithinClusterQueue as W,
};

fn dep(v: &str) -> Option<LabelSelector> {
    Some(LabelSelector {
        match_expressions: vec![SelectorRequirement {
            key: "dep".into(),
            operator: "In".into(),
            values: vec![v.into()],
        }],
        ..Default::default()
    })
}

fn cpu(
    f: &str,
    nominal: &str,
    bl: Option<&str>,
    ll: Option<&str>,
) -> gangplank::model::FlavorQuotas {
    fq(f, vec![rq_limits("cpu", nominal, bl, ll)])
}

/// Kueue's TestSchedule fixtures: flavors, ClusterQueues, LocalQueues, namespaces.
fn base() -> ClusterBuilder {
    ClusterBuilder::new()
        .flavor("default")
        .flavor("on-demand")
        .flavor("spot")
        .flavor("model-a")
        .cq(CqBuilder::new("sales")
            .namespace_selector(dep("sales"))
            .strict_fifo()
            .group(rg(&["cpu"], vec![cpu("default", "50", Some("0"), None)])))
        .cq(CqBuilder::new("eng-alpha")
            .cohort("eng")
            .namespace_selector(dep("eng"))
            .strict_fifo()
            .group(rg(
                &["cpu"],
                vec![
                    cpu("on-demand", "50", Some("50"), None),
                    cpu("spot", "100", Some("0"), None),
                ],
            )))
        .cq(CqBuilder::new("eng-beta")
            .cohort("eng")
            .namespace_selector(dep("eng"))
            .strict_fifo()
            .preemption(W::LowerPriority, R::Any)
            .group(rg(
                &["cpu"],
                vec![
                    cpu("on-demand", "50", Some("10"), None),
                    cpu("spot", "0", Some("100"), None),
                ],
            ))
            .group(rg(
                &["example.com/gpu"],
                vec![fq(
                    "model-a",
                    vec![rq_limits("example.com/gpu", "20", Some("0"), None)],
                )],
            )))
        .cq(CqBuilder::new("flavor-nonexistent-cq")
            .strict_fifo()
            .group(rg(
                &["cpu"],
                vec![cpu("nonexistent-flavor", "50", None, None)],
            )))
        .cq(CqBuilder::new("lend-a")
            .cohort("lend")
            .namespace_selector(dep("lend"))
            .group(rg(&["cpu"], vec![cpu("default", "3", None, Some("2"))])))
        .cq(CqBuilder::new("lend-b")
            .cohort("lend")
            .namespace_selector(dep("lend"))
            .group(rg(&["cpu"], vec![cpu("default", "2", None, Some("2"))])))
        .lq("sales", "main", "sales")
        .lq("sales", "blocked", "eng-alpha")
        .lq("eng-alpha", "main", "eng-alpha")
        .lq("eng-beta", "main", "eng-beta")
        .lq("sales", "flavor-nonexistent-queue", "flavor-nonexistent-cq")
        .lq("sales", "cq-nonexistent-queue", "nonexistent-cq")
        .lq("lend", "lend-a-queue", "lend-a")
        .lq("lend", "lend-b-queue", "lend-b")
        .namespace("sales", &[("dep", "sales")])
        .namespace("eng-alpha", &[("dep", "eng")])
        .namespace("eng-beta", &[("dep", "eng")])
        .namespace("lend", &[("dep", "lend")])
}

fn pending(ns: &str, name: &str, queue: &str, count: i32, cpu: &str) -> WlBuilder {
    WlBuilder::new(ns, name)
        .queue(queue)
        .pod_set("main", count, &[("cpu", cpu)])
}

fn running(ns: &str, name: &str, cq: &str, flavor: &str, count: i32, cpu: &str) -> WlBuilder {
    WlBuilder::new(ns, name)
        .pod_set("main", count, &[("cpu", cpu)])
        .admitted(cq, flavor, 0)
}

fn cycle(s: &ClusterState) -> CycleOutcome {
    schedule_cycle(
        s,
        &SchedulerMemory::default(),
        &PlanOptions {
            now: 1_000,
            ..Default::default()
        },
    )
}

/// workload → pod set → resource → flavor, for the scheduled ones.
fn scheduled(o: &CycleOutcome) -> BTreeMap<String, BTreeMap<String, BTreeMap<String, String>>> {
    o.admitted
        .iter()
        .map(|a| {
            (
                a.workload.clone(),
                a.admission
                    .pod_set_assignments
                    .iter()
                    .map(|p| (p.name.clone(), p.flavors.clone().into()))
                    .collect(),
            )
        })
        .collect()
}

fn names(o: &CycleOutcome) -> BTreeSet<String> {
    o.admitted.iter().map(|a| a.workload.clone()).collect()
}

fn preempted(o: &CycleOutcome) -> BTreeSet<String> {
    o.preempted.iter().map(|p| p.workload.clone()).collect()
}

/// Evaluated but not admitted: (in heap, in inadmissible set).
fn left(o: &CycleOutcome) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut heap = BTreeSet::new();
    let mut inadmissible = BTreeSet::new();
    for p in o.pending.iter().filter(|p| p.evaluated) {
        if o.memory.inadmissible.contains(&p.workload) {
            inadmissible.insert(p.workload.clone());
        } else {
            heap.insert(p.workload.clone());
        }
    }
    (heap, inadmissible)
}

fn set(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn flavor(o: &CycleOutcome, wl: &str, ps: &str, res: &str) -> String {
    scheduled(o)[wl][ps][res].clone()
}

#[test]
fn use_second_flavor_when_the_first_has_no_preemption_candidates_when_can_preempt_preempt() {
    let s = base()
        .cq(CqBuilder::new("other-alpha")
            .preemption(W::LowerPriority, R::Never)
            .fungibility(F::MayStopSearch, F::MayStopSearch, None)
            .group(rg(
                &["cpu"],
                vec![
                    cpu("on-demand", "50", Some("50"), None),
                    cpu("spot", "100", Some("0"), None),
                ],
            )))
        .lq("eng-alpha", "other", "other-alpha")
        .wl(WlBuilder::new("eng-alpha", "admitted")
            .queue("other")
            .pod_set("main", 1, &[("cpu", "50")])
            .admitted("other-alpha", "on-demand", 0))
        .wl(pending("eng-alpha", "new", "other", 1, "20"))
        .build();
    let o = cycle(&s);
    assert!(preempted(&o).is_empty());
    assert_eq!(names(&o), set(&["eng-alpha/new"]));
    assert_eq!(flavor(&o, "eng-alpha/new", "main", "cpu"), "spot");
}

#[test]
fn workload_fits_in_single_cluster_queue() {
    let s = base().wl(pending("sales", "foo", "main", 10, "1")).build();
    let o = cycle(&s);
    assert_eq!(names(&o), set(&["sales/foo"]));
    let a = &o.admitted[0].admission.pod_set_assignments[0];
    assert_eq!(a.resource_usage["cpu"].to_string(), "10");
    assert_eq!(a.count, Some(10));
    assert_eq!(
        o.admitted[0].message,
        "Quota reserved in ClusterQueue sales"
    );
}

#[test]
fn skip_workload_with_missing_or_deleted_cluster_queue() {
    let s = base()
        .wl(pending(
            "sales",
            "missing-cq-workload",
            "non-existent-queue",
            1,
            "1",
        ))
        .build();
    let o = cycle(&s);
    assert!(o.admitted.is_empty());
    assert_eq!(left(&o), (set(&[]), set(&[])));
}

#[test]
fn single_cluster_queue_full() {
    let s = base()
        .wl(pending("sales", "new", "main", 11, "1"))
        .wl(running("sales", "assigned", "sales", "default", 40, "1"))
        .build();
    let o = cycle(&s);
    assert!(o.admitted.is_empty());
    assert_eq!(left(&o), (set(&["sales/new"]), set(&[])));
}

#[test]
fn failed_to_match_cluster_queue_selector() {
    let s = base()
        .wl(pending("sales", "new", "blocked", 1, "1"))
        .build();
    let o = cycle(&s);
    assert!(o.admitted.is_empty());
    assert_eq!(left(&o), (set(&[]), set(&["sales/new"])));
}

#[test]
fn admit_in_different_cohorts() {
    let s = base()
        .wl(pending("sales", "new", "main", 1, "1"))
        .wl(pending("eng-alpha", "new", "main", 51, "1"))
        .build();
    let o = cycle(&s);
    assert_eq!(names(&o), set(&["sales/new", "eng-alpha/new"]));
    assert_eq!(flavor(&o, "eng-alpha/new", "main", "cpu"), "on-demand");
    assert!(
        o.admitted
            .iter()
            .find(|a| a.workload == "eng-alpha/new")
            .unwrap()
            .borrowing
    );
}

#[test]
fn admit_in_same_cohort_with_no_borrowing() {
    let s = base()
        .wl(pending("eng-alpha", "new", "main", 40, "1"))
        .wl(pending("eng-beta", "new", "main", 40, "1"))
        .build();
    let o = cycle(&s);
    assert_eq!(names(&o), set(&["eng-alpha/new", "eng-beta/new"]));
    assert_eq!(flavor(&o, "eng-alpha/new", "main", "cpu"), "on-demand");
    assert_eq!(flavor(&o, "eng-beta/new", "main", "cpu"), "on-demand");
}

#[test]
fn assign_multiple_resources_and_flavors() {
    let s = base()
        .wl(WlBuilder::new("eng-beta", "new")
            .queue("main")
            .pod_set("one", 10, &[("cpu", "6"), ("example.com/gpu", "1")])
            .pod_set("two", 40, &[("cpu", "1")]))
        .build();
    let o = cycle(&s);
    assert_eq!(names(&o), set(&["eng-beta/new"]));
    assert_eq!(flavor(&o, "eng-beta/new", "one", "cpu"), "on-demand");
    assert_eq!(
        flavor(&o, "eng-beta/new", "one", "example.com/gpu"),
        "model-a"
    );
    assert_eq!(flavor(&o, "eng-beta/new", "two", "cpu"), "spot");
    let usage = &o.admitted[0].admission.pod_set_assignments[0].resource_usage;
    assert_eq!(
        (
            usage["cpu"].to_string(),
            usage["example.com/gpu"].to_string()
        ),
        ("60".into(), "10".into())
    );
}

#[test]
fn cannot_borrow_if_cohort_was_assigned_and_would_result_in_overadmission() {
    let s = base()
        .wl(pending("eng-alpha", "new", "main", 45, "1"))
        .wl(pending("eng-beta", "new", "main", 56, "1"))
        .build();
    let o = cycle(&s);
    assert_eq!(names(&o), set(&["eng-alpha/new"]));
    assert_eq!(left(&o), (set(&["eng-beta/new"]), set(&[])));
}

#[test]
fn can_borrow_if_cohort_was_assigned_and_will_not_result_in_overadmission() {
    let s = base()
        .wl(pending("eng-alpha", "new", "main", 45, "1"))
        .wl(pending("eng-beta", "new", "main", 55, "1"))
        .build();
    assert_eq!(names(&cycle(&s)), set(&["eng-alpha/new", "eng-beta/new"]));
}

#[test]
fn can_borrow_if_needs_reclaim_from_cohort_in_different_flavor() {
    let s = base()
        .wl(pending("eng-alpha", "can-reclaim", "main", 1, "100"))
        .wl(pending("eng-beta", "needs-to-borrow", "main", 1, "1"))
        .wl(running(
            "eng-beta",
            "user-on-demand",
            "eng-beta",
            "on-demand",
            1,
            "50",
        ))
        .wl(running("eng-beta", "user-spot", "eng-beta", "spot", 1, "1"))
        .build();
    let o = cycle(&s);
    assert_eq!(names(&o), set(&["eng-beta/needs-to-borrow"]));
    assert_eq!(
        flavor(&o, "eng-beta/needs-to-borrow", "main", "cpu"),
        "on-demand"
    );
    assert_eq!(left(&o), (set(&["eng-alpha/can-reclaim"]), set(&[])));
}

#[test]
fn workload_exceeds_lending_limit_when_borrow_in_cohort() {
    let s = base()
        .wl(running("lend", "a", "lend-b", "default", 1, "2"))
        .wl(pending("lend", "b", "lend-b-queue", 1, "3"))
        .build();
    let o = cycle(&s);
    assert!(o.admitted.is_empty());
    assert_eq!(left(&o), (set(&[]), set(&["lend/b"])));
}

#[test]
fn preempt_workloads_in_cluster_queue_and_cohort() {
    let s = base()
        .wl(pending("eng-beta", "preemptor", "main", 1, "20"))
        .wl(running(
            "eng-alpha",
            "use-all-spot",
            "eng-alpha",
            "spot",
            1,
            "100",
        ))
        .wl(running("eng-beta", "low-1", "eng-beta", "on-demand", 1, "30").priority(-1))
        .wl(running("eng-beta", "low-2", "eng-beta", "on-demand", 1, "10").priority(-2))
        .wl(running(
            "eng-alpha",
            "borrower",
            "eng-alpha",
            "on-demand",
            1,
            "60",
        ))
        .build();
    let o = cycle(&s);
    assert!(
        o.admitted.is_empty(),
        "the preemptor is not admitted in this cycle"
    );
    assert_eq!(
        preempted(&o),
        set(&["eng-alpha/borrower", "eng-beta/low-2"])
    );
    assert_eq!(left(&o), (set(&["eng-beta/preemptor"]), set(&[])));
}

#[test]
fn multiple_cqs_need_preemption() {
    let s = base()
        .cq(CqBuilder::new("other-alpha")
            .cohort("other")
            .group(rg(&["cpu"], vec![cpu("on-demand", "50", Some("50"), None)])))
        .cq(CqBuilder::new("other-beta")
            .cohort("other")
            .preemption(W::LowerPriority, R::Any)
            .group(rg(&["cpu"], vec![cpu("on-demand", "50", Some("10"), None)])))
        .lq("eng-alpha", "other", "other-alpha")
        .lq("eng-beta", "other", "other-beta")
        .wl(pending("eng-beta", "preemptor", "other", 1, "1").priority(-1))
        .wl(pending("eng-alpha", "pending", "other", 1, "1").priority(1))
        .wl(running(
            "eng-alpha",
            "use-all",
            "other-alpha",
            "on-demand",
            1,
            "100",
        ))
        .build();
    let o = cycle(&s);
    assert!(o.admitted.is_empty());
    assert_eq!(preempted(&o), set(&["eng-alpha/use-all"]));
    assert_eq!(
        left(&o),
        (set(&["eng-beta/preemptor"]), set(&["eng-alpha/pending"]))
    );
}

#[test]
fn cannot_borrow_resource_not_listed_in_cluster_queue() {
    let s = base()
        .wl(WlBuilder::new("eng-alpha", "new").queue("main").pod_set(
            "main",
            1,
            &[("example.com/gpu", "1")],
        ))
        .build();
    let o = cycle(&s);
    assert!(o.admitted.is_empty());
    assert_eq!(left(&o), (set(&["eng-alpha/new"]), set(&[])));
    assert_eq!(o.pending[0].condition_reason, "NoMatchingFlavor");
    assert_eq!(
        o.pending[0].message,
        "couldn't assign flavors to pod set main: resource example.com/gpu unavailable in ClusterQueue"
    );
}

#[test]
fn not_enough_resources_to_borrow_fallback_to_next_flavor_when_can_preempt_try_next_flavor() {
    let s = base()
        .wl(pending("eng-alpha", "new", "main", 60, "1"))
        .wl(running(
            "eng-beta",
            "existing",
            "eng-beta",
            "on-demand",
            45,
            "1",
        ))
        .build();
    let o = cycle(&s);
    assert_eq!(flavor(&o, "eng-alpha/new", "main", "cpu"), "spot");
}

#[test]
fn flavor_nonexistent_cluster_queue_admits_nothing() {
    let s = base()
        .wl(pending("sales", "foo", "flavor-nonexistent-queue", 1, "1"))
        .build();
    let o = cycle(&s);
    assert!(o.admitted.is_empty());
    assert_eq!(o.pending[0].condition_reason, "Suspended");
}
