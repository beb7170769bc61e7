//! Cases ported from Kueue's `pkg/scheduler/preemption/preemption_test.go`
//! (`TestPreemption`), named after the Kueue case. Kueue's test hands the preemptor a
//! fixed flavor assignment; here the engine computes it, and each case asserts the
//! victims (key and reason) that one cycle chooses.

use std::collections::BTreeSet;

use gangplank::engine::testing::*;
use gangplank::engine::{PlanOptions, SchedulerMemory, schedule_cycle};
use gangplank::model::{
    BorrowWithinCohortPolicy as B, ReclaimWithinCohort as R, WithinClusterQueue as W,
};

const NOW: i64 = 1_000_000;

/// Kueue's `defaultClusterQueues` (Resource(r, nominal, borrowingLimit, lendingLimit)).
fn default_cluster_queues() -> ClusterBuilder {
    let cpu_mem = |nom_cpu: &str, bl_cpu: Option<&str>, nom_mem: &str, bl_mem: Option<&str>| {
        rg(
            &["cpu", "memory"],
            vec![fq(
                "default",
                vec![
                    rq_limits("cpu", nom_cpu, bl_cpu, None),
                    rq_limits("memory", nom_mem, bl_mem, None),
                ],
            )],
        )
    };
    let cpu_only = |nom: &str, bl: Option<&str>, ll: Option<&str>| {
        rg(
            &["cpu"],
            vec![fq("default", vec![rq_limits("cpu", nom, bl, ll)])],
        )
    };
    let mut b = ClusterBuilder::new()
        .flavor("default")
        .flavor("alpha")
        .flavor("beta");
    b = b.cq(CqBuilder::new("standalone")
        .group(cpu_only("6", None, None))
        .group(rg(
            &["memory"],
            vec![
                fq("alpha", vec![rq("memory", "3Gi")]),
                fq("beta", vec![rq("memory", "3Gi")]),
            ],
        ))
        .preemption(W::LowerPriority, R::Never));
    b = b.cq(CqBuilder::new("c1")
        .cohort("cohort")
        .group(cpu_mem("6", Some("6"), "3Gi", Some("3Gi")))
        .preemption(W::LowerPriority, R::LowerPriority));
    b = b.cq(CqBuilder::new("c2")
        .cohort("cohort")
        .group(cpu_mem("6", Some("6"), "3Gi", Some("3Gi")))
        .preemption(W::Never, R::Any));
    b = b.cq(CqBuilder::new("d1")
        .cohort("cohort-no-limits")
        .group(cpu_mem("6", None, "3Gi", None))
        .preemption(W::LowerPriority, R::LowerPriority));
    b = b.cq(CqBuilder::new("d2")
        .cohort("cohort-no-limits")
        .group(cpu_mem("6", None, "3Gi", None))
        .preemption(W::Never, R::Any));
    b = b.cq(CqBuilder::new("l1")
        .cohort("legion")
        .group(cpu_mem("6", Some("12"), "3Gi", Some("6Gi")))
        .preemption(W::LowerPriority, R::LowerPriority));
    b = b.cq(CqBuilder::new("preventStarvation")
        .group(cpu_only("6", None, None))
        .preemption(W::LowerOrNewerEqualPriority, R::Never));
    b = b.cq(CqBuilder::new("a_standard")
        .cohort("with_shared_cq")
        .group(cpu_only("1", Some("12"), None))
        .preemption(W::Never, R::LowerPriority)
        .borrow_within_cohort(B::LowerPriority, Some(0)));
    b = b.cq(CqBuilder::new("b_standard")
        .cohort("with_shared_cq")
        .group(cpu_only("1", Some("12"), None))
        .preemption(W::LowerPriority, R::Any)
        .borrow_within_cohort(B::LowerPriority, Some(0)));
    b = b.cq(CqBuilder::new("a_best_effort")
        .cohort("with_shared_cq")
        .group(cpu_only("1", Some("12"), None))
        .preemption(W::Never, R::LowerPriority)
        .borrow_within_cohort(B::LowerPriority, Some(0)));
    b = b.cq(CqBuilder::new("b_best_effort")
        .cohort("with_shared_cq")
        .group(cpu_only("0", Some("13"), None))
        .preemption(W::Never, R::LowerPriority)
        .borrow_within_cohort(B::LowerPriority, Some(0)));
    b = b.cq(CqBuilder::new("shared")
        .cohort("with_shared_cq")
        .group(cpu_only("10", None, None)));
    b = b.cq(CqBuilder::new("lend1")
        .cohort("cohort-lend")
        .group(cpu_only("6", None, Some("4")))
        .preemption(W::LowerPriority, R::LowerPriority));
    b = b.cq(CqBuilder::new("lend2")
        .cohort("cohort-lend")
        .group(cpu_only("6", None, Some("2")))
        .preemption(W::LowerPriority, R::LowerPriority));
    b
}

/// An admitted workload with one pod set "main" of one pod.
fn adm(name: &str, prio: i32, cq: &str, reqs: &[(&str, &str)], flavor: &str) -> WlBuilder {
    WlBuilder::new("", name)
        .priority(prio)
        .pod_set("main", 1, reqs)
        .admitted(cq, flavor, NOW)
}

fn incoming(prio: i32, reqs: &[(&str, &str)]) -> WlBuilder {
    WlBuilder::new("", "in")
        .priority(prio)
        .pod_set("main", 1, reqs)
}

/// Runs one cycle with `incoming` queued in `target_cq`; returns {(key, reason)}.
fn preempted(
    admitted: Vec<WlBuilder>,
    incoming: WlBuilder,
    target_cq: &str,
) -> BTreeSet<(String, String)> {
    let mut b = default_cluster_queues().lq("", "lq", target_cq);
    for w in admitted {
        b = b.wl(w);
    }
    b = b.wl(incoming.queue("lq").created(NOW - 60_000));
    let out = schedule_cycle(
        &b.build(),
        &SchedulerMemory::default(),
        &PlanOptions {
            now: NOW,
            ..Default::default()
        },
    );
    out.preempted
        .iter()
        .map(|p| (p.workload.clone(), p.reason.as_str().to_string()))
        .collect()
}

fn want(v: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

const IN_CQ: &str = "InClusterQueue";
const RECLAIM: &str = "InCohortReclamation";
const WHILE_BORROWING: &str = "InCohortReclaimWhileBorrowing";

#[test]
fn preempt_lowest_priority() {
    let got = preempted(
        vec![
            adm("low", -1, "standalone", &[("cpu", "2")], "default"),
            adm("mid", 0, "standalone", &[("cpu", "2")], "default"),
            adm("high", 1, "standalone", &[("cpu", "2")], "default"),
        ],
        incoming(1, &[("cpu", "2")]),
        "standalone",
    );
    assert_eq!(got, want(&[("/low", IN_CQ)]));
}

#[test]
fn preempt_multiple() {
    let got = preempted(
        vec![
            adm("low", -1, "standalone", &[("cpu", "2")], "default"),
            adm("mid", 0, "standalone", &[("cpu", "2")], "default"),
            adm("high", 1, "standalone", &[("cpu", "2")], "default"),
        ],
        incoming(1, &[("cpu", "3")]),
        "standalone",
    );
    assert_eq!(got, want(&[("/low", IN_CQ), ("/mid", IN_CQ)]));
}

#[test]
fn no_preemption_for_low_priority() {
    let got = preempted(
        vec![
            adm("low", -1, "standalone", &[("cpu", "3")], "default"),
            adm("mid", 0, "standalone", &[("cpu", "3")], "default"),
        ],
        incoming(-1, &[("cpu", "1")]),
        "standalone",
    );
    assert_eq!(got, want(&[]));
}

#[test]
fn not_enough_low_priority_workloads() {
    let got = preempted(
        vec![
            adm("low", -1, "standalone", &[("cpu", "3")], "default"),
            adm("mid", 0, "standalone", &[("cpu", "3")], "default"),
        ],
        incoming(0, &[("cpu", "4")]),
        "standalone",
    );
    assert_eq!(got, want(&[]));
}

#[test]
fn some_free_quota_preempt_low_priority() {
    let got = preempted(
        vec![
            adm("low", -1, "standalone", &[("cpu", "1")], "default"),
            adm("mid", 0, "standalone", &[("cpu", "1")], "default"),
            adm("high", 1, "standalone", &[("cpu", "3")], "default"),
        ],
        incoming(1, &[("cpu", "2")]),
        "standalone",
    );
    assert_eq!(got, want(&[("/low", IN_CQ)]));
}

#[test]
fn minimal_set_excludes_low_priority() {
    let got = preempted(
        vec![
            adm("low", -1, "standalone", &[("cpu", "1")], "default"),
            adm("mid", 0, "standalone", &[("cpu", "2")], "default"),
            adm("high", 1, "standalone", &[("cpu", "3")], "default"),
        ],
        incoming(1, &[("cpu", "2")]),
        "standalone",
    );
    assert_eq!(got, want(&[("/mid", IN_CQ)]));
}

#[test]
fn reclaim_quota_from_borrower() {
    let got = preempted(
        vec![
            adm("c1-low", -1, "c1", &[("cpu", "3")], "default"),
            adm("c2-mid", 0, "c2", &[("cpu", "3")], "default"),
            adm("c2-high", 1, "c2", &[("cpu", "6")], "default"),
        ],
        incoming(1, &[("cpu", "3")]),
        "c1",
    );
    assert_eq!(got, want(&[("/c2-mid", RECLAIM)]));
}

#[test]
fn reclaim_quota_if_workload_requests_0_resources_for_a_resource_at_nominal_quota() {
    let got = preempted(
        vec![
            adm(
                "c1-low",
                -1,
                "c1",
                &[("cpu", "3"), ("memory", "3Gi")],
                "default",
            ),
            adm("c2-mid", 0, "c2", &[("cpu", "3")], "default"),
            adm("c2-high", 1, "c2", &[("cpu", "6")], "default"),
        ],
        incoming(1, &[("cpu", "3"), ("memory", "0")]),
        "c1",
    );
    assert_eq!(got, want(&[("/c2-mid", RECLAIM)]));
}

#[test]
fn no_workloads_borrowing() {
    let got = preempted(
        vec![
            adm("c1-high", 1, "c1", &[("cpu", "4")], "default"),
            adm("c2-low-1", -1, "c2", &[("cpu", "4")], "default"),
        ],
        incoming(1, &[("cpu", "4")]),
        "c1",
    );
    assert_eq!(got, want(&[]));
}

#[test]
fn not_enough_workloads_borrowing() {
    let got = preempted(
        vec![
            adm("c1-high", 1, "c1", &[("cpu", "4")], "default"),
            adm("c2-low-1", -1, "c2", &[("cpu", "4")], "default"),
            adm("c2-low-2", -1, "c2", &[("cpu", "4")], "default"),
        ],
        incoming(1, &[("cpu", "4")]),
        "c1",
    );
    assert_eq!(got, want(&[]));
}

#[test]
fn preempting_locally_and_borrowing_same_resource_in_cohort() {
    let got = preempted(
        vec![
            adm("c1-med", 0, "c1", &[("cpu", "4")], "default"),
            adm("c1-low", -1, "c1", &[("cpu", "4")], "default"),
            adm("c2-low-1", -1, "c2", &[("cpu", "4")], "default"),
        ],
        incoming(1, &[("cpu", "4")]),
        "c1",
    );
    assert_eq!(got, want(&[("/c1-low", IN_CQ)]));
}

#[test]
fn preempting_locally_and_borrowing_same_resource_in_cohort_no_borrowing_limit_in_the_cohort() {
    let got = preempted(
        vec![
            adm("d1-med", 0, "d1", &[("cpu", "4")], "default"),
            adm("d1-low", -1, "d1", &[("cpu", "4")], "default"),
            adm("d2-low-1", -1, "d2", &[("cpu", "4")], "default"),
        ],
        incoming(1, &[("cpu", "4")]),
        "d1",
    );
    assert_eq!(got, want(&[("/d1-low", IN_CQ)]));
}

#[test]
fn preempting_locally_and_not_borrowing_same_resource_in_1_queue_cohort() {
    let got = preempted(
        vec![
            adm("l1-med", 0, "l1", &[("cpu", "4")], "default"),
            adm("l1-low", -1, "l1", &[("cpu", "2")], "default"),
        ],
        incoming(1, &[("cpu", "4")]),
        "l1",
    );
    assert_eq!(got, want(&[("/l1-med", IN_CQ)]));
}

#[test]
fn do_not_reclaim_borrowed_quota_from_same_priority_for_within_cohort_reclaim_from_lower_priority()
{
    let got = preempted(
        vec![
            adm("c1", 0, "c1", &[("cpu", "2")], "default"),
            adm("c2-1", 0, "c2", &[("cpu", "4")], "default"),
            adm("c2-2", 0, "c2", &[("cpu", "4")], "default"),
        ],
        incoming(0, &[("cpu", "4")]),
        "c1",
    );
    assert_eq!(got, want(&[]));
}

#[test]
fn reclaim_borrowed_quota_from_same_priority_for_within_cohort_reclaim_from_any() {
    let got = preempted(
        vec![
            adm("c1-1", 0, "c1", &[("cpu", "4")], "default"),
            adm("c1-2", 1, "c1", &[("cpu", "4")], "default"),
            adm("c2", 0, "c2", &[("cpu", "2")], "default"),
        ],
        incoming(0, &[("cpu", "4")]),
        "c2",
    );
    assert_eq!(got, want(&[("/c1-1", RECLAIM)]));
}

#[test]
fn preempt_from_all_cluster_queues_in_cohort() {
    let got = preempted(
        vec![
            adm("c1-low", -1, "c1", &[("cpu", "3")], "default"),
            adm("c1-mid", 0, "c1", &[("cpu", "2")], "default"),
            adm("c2-low", -1, "c2", &[("cpu", "3")], "default"),
            adm("c2-mid", 0, "c2", &[("cpu", "4")], "default"),
        ],
        incoming(0, &[("cpu", "4")]),
        "c1",
    );
    assert_eq!(got, want(&[("/c1-low", IN_CQ), ("/c2-low", RECLAIM)]));
}

#[test]
fn cant_preempt_workloads_in_cluster_queue_for_within_cluster_queue_never() {
    let got = preempted(
        vec![adm("c2-low", -1, "c2", &[("cpu", "3")], "default")],
        incoming(1, &[("cpu", "4")]),
        "c2",
    );
    assert_eq!(got, want(&[]));
}

#[test]
fn each_podset_preempts_a_different_flavor() {
    let got = preempted(
        vec![
            adm("low-alpha", -1, "standalone", &[("memory", "2Gi")], "alpha"),
            adm("low-beta", -1, "standalone", &[("memory", "2Gi")], "beta"),
        ],
        WlBuilder::new("", "in")
            .pod_set("launcher", 1, &[("memory", "2Gi")])
            .pod_set("workers", 2, &[("memory", "1Gi")]),
        "standalone",
    );
    assert_eq!(got, want(&[("/low-alpha", IN_CQ), ("/low-beta", IN_CQ)]));
}

#[test]
fn preempt_newer_workloads_with_the_same_priority() {
    let wl2 = WlBuilder::new("", "wl2")
        .priority(1)
        .created(NOW)
        .pod_set("main", 1, &[("cpu", "2")])
        .admitted("preventStarvation", "default", NOW + 1000);
    let wl3 = WlBuilder::new("", "wl3")
        .priority(1)
        .created(NOW)
        .pod_set("main", 1, &[("cpu", "2")])
        .admitted("preventStarvation", "default", NOW);
    let mut b = default_cluster_queues().lq("", "lq", "preventStarvation");
    b = b
        .wl(adm(
            "wl1",
            2,
            "preventStarvation",
            &[("cpu", "2")],
            "default",
        ))
        .wl(wl2)
        .wl(wl3);
    b = b.wl(WlBuilder::new("", "in")
        .priority(1)
        .created(NOW - 15_000)
        .queue("lq")
        .pod_set("launcher", 1, &[("cpu", "2")]));
    let out = schedule_cycle(
        &b.build(),
        &SchedulerMemory::default(),
        &PlanOptions {
            now: NOW,
            ..Default::default()
        },
    );
    let got: Vec<_> = out
        .preempted
        .iter()
        .map(|p| (p.workload.as_str(), p.reason.as_str()))
        .collect();
    assert_eq!(got, [("/wl2", IN_CQ)]);
}

#[test]
fn use_borrow_within_cohort_allow_preempting_a_lower_priority_workload_from_another_cluster_queue_while_borrowing()
 {
    let got = preempted(
        vec![
            adm(
                "a_best_effort_low",
                -1,
                "a_best_effort",
                &[("cpu", "10")],
                "default",
            ),
            adm(
                "b_best_effort_low",
                -1,
                "b_best_effort",
                &[("cpu", "1")],
                "default",
            ),
        ],
        incoming(0, &[("cpu", "10")]),
        "a_standard",
    );
    assert_eq!(got, want(&[("/a_best_effort_low", WHILE_BORROWING)]));
}

#[test]
fn use_borrow_within_cohort_dont_allow_preempting_above_max_priority_threshold_if_borrowing_after()
{
    let got = preempted(
        vec![adm(
            "b_standard",
            1,
            "b_standard",
            &[("cpu", "10")],
            "default",
        )],
        incoming(2, &[("cpu", "10")]),
        "a_standard",
    );
    assert_eq!(got, want(&[]));
}

#[test]
fn use_borrow_within_cohort_allow_preempting_above_max_priority_threshold_if_not_borrowing_after() {
    let got = preempted(
        vec![adm(
            "b_standard",
            1,
            "b_standard",
            &[("cpu", "13")],
            "default",
        )],
        incoming(2, &[("cpu", "1")]),
        "a_standard",
    );
    assert_eq!(got, want(&[("/b_standard", RECLAIM)]));
}

#[test]
fn use_borrow_within_cohort_dont_allow_for_preemption_of_lower_priority_workload_from_the_same_cluster_queue()
 {
    let got = preempted(
        vec![adm(
            "a_standard",
            1,
            "a_standard",
            &[("cpu", "13")],
            "default",
        )],
        incoming(2, &[("cpu", "1")]),
        "a_standard",
    );
    assert_eq!(got, want(&[]));
}

#[test]
fn use_borrow_within_cohort_only_preempt_from_cq_if_no_workloads_below_threshold_and_already_above_nominal()
 {
    let got = preempted(
        vec![
            adm("a_standard_1", 1, "a_standard", &[("cpu", "10")], "default"),
            adm("a_standard_2", 1, "a_standard", &[("cpu", "1")], "default"),
            adm("b_standard_1", 1, "b_standard", &[("cpu", "1")], "default"),
            adm("b_standard_2", 2, "b_standard", &[("cpu", "1")], "default"),
        ],
        incoming(3, &[("cpu", "1")]),
        "b_standard",
    );
    assert_eq!(got, want(&[("/b_standard_1", IN_CQ)]));
}

#[test]
fn use_borrow_within_cohort_preempt_from_cq_and_from_other_cqs_with_workloads_below_threshold() {
    let got = preempted(
        vec![
            adm(
                "b_standard_high",
                2,
                "b_standard",
                &[("cpu", "10")],
                "default",
            ),
            adm(
                "b_standard_mid",
                1,
                "b_standard",
                &[("cpu", "1")],
                "default",
            ),
            adm(
                "a_best_effort_low",
                -1,
                "a_best_effort",
                &[("cpu", "1")],
                "default",
            ),
            adm(
                "a_best_effort_lower",
                -2,
                "a_best_effort",
                &[("cpu", "1")],
                "default",
            ),
        ],
        incoming(2, &[("cpu", "2")]),
        "b_standard",
    );
    assert_eq!(
        got,
        want(&[
            ("/b_standard_mid", IN_CQ),
            ("/a_best_effort_lower", WHILE_BORROWING)
        ])
    );
}

#[test]
fn reclaim_quota_from_lender() {
    let got = preempted(
        vec![
            adm("lend1-low", -1, "lend1", &[("cpu", "3")], "default"),
            adm("lend2-mid", 0, "lend2", &[("cpu", "3")], "default"),
            adm("lend2-high", 1, "lend2", &[("cpu", "4")], "default"),
        ],
        incoming(1, &[("cpu", "3")]),
        "lend1",
    );
    assert_eq!(got, want(&[("/lend2-mid", RECLAIM)]));
}

/// Issue 16's question, as a table: in a cohort with `reclaimWithinCohort: Any` and
/// `borrowWithinCohort: LowerPriority (maxPriorityThreshold 100)` (the hyperpod shape),
/// which workloads of OTHER ClusterQueues may a preemptor take?
///
/// Kueue (`pkg/scheduler/preemption/classical/hierarchical_preemption.go`
/// `collectCandidatesInSubtree`, and `candidate_generator.go` `candidateIsValid`) only
/// takes candidates from queues that are above nominal in the contested resources
/// (`IsWithinNominalInResources`): a queue within its nominal quota is protected, whatever
/// the priorities. A borrowing preemptor may take a lower-priority workload of a
/// borrowing queue only at or below the threshold (`classifyPreemptionVariant` →
/// `ReclaimWhileBorrowing`); above it the candidate is `ReclaimWithoutBorrowing`, valid
/// only if the preemptor would not borrow (`preemption.go` `classicalPreemptions`,
/// `workloadFits(allowBorrowing=false)`). A preemptor within its nominal reclaims from a
/// borrowing queue at any priority under `Any` (Kueue's `TestPreemption` cases "reclaim
/// borrowed quota from same priority for withinCohort=ReclaimFromAny", "no workloads
/// borrowing", "use BorrowWithinCohort; don't allow preempting a lower-priority workload
/// with priority above MaxPriorityThreshold, if borrowing is required even after the
/// preemption").
#[test]
fn other_queues_within_nominal_are_protected_from_a_borrowing_preemptor() {
    // cohort "hp": a (nominal 2), b (nominal 2), c (nominal 4), cpu only, borrowingLimit 8
    let cq = |name: &str, nominal: &str, reclaim: R| {
        CqBuilder::new(name)
            .cohort("hp")
            .group(rg(
                &["cpu"],
                vec![fq(
                    "default",
                    vec![rq_limits("cpu", nominal, Some("8"), None)],
                )],
            ))
            .preemption(W::LowerPriority, reclaim)
            .borrow_within_cohort(B::LowerPriority, Some(100))
    };
    let held = |name: &str, prio: i32, cq: &str, age: i64| {
        WlBuilder::new("", name)
            .priority(prio)
            .pod_set("main", 1, &[("cpu", "2")])
            .admitted(cq, "default", NOW - age)
    };
    struct Case {
        name: &'static str,
        reclaim: R,
        admitted: Vec<WlBuilder>,
        incoming: (i32, &'static str),
        want: Vec<(&'static str, &'static str)>,
    }
    let cases = [
        Case {
            // b and c are exactly at nominal: no candidate although both are priority 0
            name: "queues within nominal are protected (Kueue: no workloads borrowing)",
            reclaim: R::Any,
            admitted: vec![
                held("b1", 0, "b", 3000),
                held("c1", 0, "c", 3000),
                held("c2", 0, "c", 2000),
            ],
            incoming: (1000, "4"),
            want: vec![],
        },
        Case {
            // b borrows 4; a must borrow 2 after the preemption; b's workloads are below
            // the threshold: the most recently admitted one goes
            name: "a borrowing queue's workloads below the threshold",
            reclaim: R::Any,
            admitted: vec![
                held("b1", 0, "b", 3000),
                held("b2", 0, "b", 2000),
                held("b3", 0, "b", 1000),
            ],
            incoming: (1000, "4"),
            want: vec![("/b3", WHILE_BORROWING)],
        },
        Case {
            name: "above the threshold while the preemptor still borrows: none",
            reclaim: R::Any,
            admitted: vec![
                held("b1", 500, "b", 3000),
                held("b2", 500, "b", 2000),
                held("b3", 500, "b", 1000),
            ],
            incoming: (1000, "4"),
            want: vec![],
        },
        Case {
            // a is under nominal: reclaiming its own quota from the borrower b, even from
            // higher priority (Any); c stays within nominal and keeps its workload
            name: "a queue under nominal reclaims from a borrower at any priority",
            reclaim: R::Any,
            admitted: vec![
                held("b1", 500, "b", 3000),
                held("b2", 500, "b", 2000),
                held("b3", 500, "b", 1000),
                held("c1", 0, "c", 500),
            ],
            incoming: (0, "2"),
            want: vec![("/b3", RECLAIM)],
        },
        Case {
            name: "the same with reclaimWithinCohort: LowerPriority: none",
            reclaim: R::LowerPriority,
            admitted: vec![
                held("b1", 500, "b", 3000),
                held("b2", 500, "b", 2000),
                held("b3", 500, "b", 1000),
                held("c1", 0, "c", 500),
            ],
            incoming: (0, "2"),
            want: vec![],
        },
    ];
    for case in cases {
        let mut b = ClusterBuilder::new()
            .flavor("default")
            .cq(cq("a", "2", case.reclaim))
            .cq(cq("b", "2", case.reclaim))
            .cq(cq("c", "4", case.reclaim))
            .lq("", "lq", "a");
        for w in case.admitted {
            b = b.wl(w);
        }
        b = b.wl(WlBuilder::new("", "in")
            .priority(case.incoming.0)
            .pod_set("main", 1, &[("cpu", case.incoming.1)])
            .queue("lq")
            .created(NOW - 60_000));
        let out = schedule_cycle(
            &b.build(),
            &SchedulerMemory::default(),
            &PlanOptions {
                now: NOW,
                ..Default::default()
            },
        );
        let got: BTreeSet<(String, String)> = out
            .preempted
            .iter()
            .map(|p| (p.workload.clone(), p.reason.as_str().to_string()))
            .collect();
        assert_eq!(got, want(&case.want), "{}", case.name);
    }
}
