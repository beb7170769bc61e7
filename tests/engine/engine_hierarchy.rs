//! Hierarchical cohorts: cases ported from Kueue's
//! `pkg/scheduler/preemption/preemption_hierarchical_test.go` (`TestHierarchicalPreemptions`),
//! plus quota-tree behaviour (lending limits, cohort-owned quota, cycles).

use gangplank::engine::testing::*;
use gangplank::engine::{PlanOptions, SchedulerMemory, plan, schedule_cycle};
use gangplank::model::{ClusterState, ReclaimWithinCohort as R, WithinClusterQueue as W};

const NOW: i64 = 1_000_000;

fn opts() -> PlanOptions {
    PlanOptions {
        now: NOW,
        ..Default::default()
    }
}

fn cpu_cq(name: &str, cohort: &str, nominal: &str) -> CqBuilder {
    CqBuilder::new(name)
        .cohort(cohort)
        .quota("default", "cpu", nominal)
        .preemption(W::LowerPriority, R::Any)
}

fn adm(name: &str, prio: i32, cq: &str, cpu: &str) -> WlBuilder {
    WlBuilder::new("", name)
        .priority(prio)
        .pod_set("main", 1, &[("cpu", cpu)])
        .admitted(cq, "default", NOW)
}

fn with_incoming(b: ClusterBuilder, cq: &str, prio: i32, cpu: &str) -> ClusterState {
    b.lq("", "lq", cq)
        .wl(WlBuilder::new("", "in")
            .uid("wl-in")
            .priority(prio)
            .created(NOW - 1)
            .queue("lq")
            .pod_set("main", 1, &[("cpu", cpu)]))
        .build()
}

fn victims(state: &ClusterState) -> Vec<(String, String, String)> {
    let out = schedule_cycle(state, &SchedulerMemory::default(), &opts());
    let mut v: Vec<_> = out
        .preempted
        .iter()
        .map(|p| {
            (
                p.workload.clone(),
                p.reason.as_str().to_string(),
                p.message.clone(),
            )
        })
        .collect();
    v.sort();
    v
}

/// R ← C(2) ← q ; R ← q_borrowing(0)
fn r_c_q() -> ClusterBuilder {
    ClusterBuilder::new()
        .flavor("default")
        .cohort("r", None, vec![])
        .cohort(
            "c",
            Some("r"),
            vec![rg(&["cpu"], vec![fq("default", vec![rq("cpu", "2")])])],
        )
        .cq(cpu_cq("q", "c", "0"))
        .cq(cpu_cq("q_borrowing", "r", "0"))
}

#[test]
fn preempt_with_hierarchical_advantage() {
    let s = with_incoming(
        r_c_q().wl(adm("admitted2", 0, "q_borrowing", "2")),
        "q",
        0,
        "2",
    );
    let v = victims(&s);
    assert_eq!(v.len(), 1);
    assert_eq!(
        (v[0].0.as_str(), v[0].1.as_str()),
        ("/admitted2", "InCohortReclamation")
    );
    assert_eq!(
        v[0].2,
        "Preempted to accommodate a workload (UID: wl-in, JobUID: UNKNOWN) due to reclamation within the cohort; preemptor path: /r/c/q; preemptee path: /r/q_borrowing"
    );
}

#[test]
fn avoid_queues_within_nominal_quota() {
    let b = r_c_q()
        .cq(cpu_cq("q_nominal", "r", "2"))
        .wl(adm("admitted1", -10, "q_nominal", "2"))
        .wl(adm("admitted2", 0, "q_borrowing", "2"));
    let v = victims(&with_incoming(b, "q", 0, "2"));
    let names: Vec<&str> = v.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(names, ["/admitted2"]);
}

#[test]
fn preempt_multiple_with_hierarchical_advantage() {
    let b = r_c_q().wl(adm("admitted1", 1, "q_borrowing", "1")).wl(adm(
        "admitted2",
        2,
        "q_borrowing",
        "1",
    ));
    let v = victims(&with_incoming(b, "q", 0, "2"));
    let got: Vec<(&str, &str)> = v.iter().map(|x| (x.0.as_str(), x.1.as_str())).collect();
    assert_eq!(
        got,
        [
            ("/admitted1", "InCohortReclamation"),
            ("/admitted2", "InCohortReclamation")
        ]
    );
}

#[test]
fn cohort_owned_quota_is_borrowable_and_usage_bubbles() {
    // q has no quota of its own; cohort c owns 2 cpu → a 2-cpu job is admitted, borrowing.
    let s = with_incoming(r_c_q(), "q", 0, "2");
    let p = plan(&s, &opts());
    assert_eq!(p.cycles[0].admitted.len(), 1);
    assert!(p.cycles[0].admitted[0].borrowing);
    // a 3-cpu job exceeds what the tree can ever give q
    let s = with_incoming(r_c_q(), "q", 0, "3");
    let p = plan(&s, &opts());
    assert!(p.cycles[0].admitted.is_empty());
    assert!(
        p.cycles[0].pending[0].reason.contains("can ever use"),
        "{}",
        p.cycles[0].pending[0].reason
    );
}

#[test]
fn lending_limit_keeps_guaranteed_quota_local() {
    // lender: nominal 6, lendingLimit 2 → only 2 are visible to borrower.
    let b = ClusterBuilder::new()
        .flavor("default")
        .cq(CqBuilder::new("lender").cohort("co").group(rg(
            &["cpu"],
            vec![fq("default", vec![rq_limits("cpu", "6", None, Some("2"))])],
        )))
        .cq(CqBuilder::new("borrower")
            .cohort("co")
            .quota("default", "cpu", "0"));
    let p = plan(&with_incoming(b.clone(), "borrower", 0, "2"), &opts());
    assert_eq!(p.cycles[0].admitted.len(), 1);
    let p = plan(&with_incoming(b, "borrower", 0, "3"), &opts());
    assert!(p.cycles[0].admitted.is_empty());
}

#[test]
fn borrowing_limit_caps_borrowing() {
    let b = ClusterBuilder::new()
        .flavor("default")
        .cq(CqBuilder::new("a").cohort("co").group(rg(
            &["cpu"],
            vec![fq("default", vec![rq_limits("cpu", "2", Some("1"), None)])],
        )))
        .cq(CqBuilder::new("b")
            .cohort("co")
            .quota("default", "cpu", "10"));
    assert_eq!(
        plan(&with_incoming(b.clone(), "a", 0, "3"), &opts()).cycles[0]
            .admitted
            .len(),
        1
    );
    assert!(
        plan(&with_incoming(b, "a", 0, "4"), &opts()).cycles[0]
            .admitted
            .is_empty()
    );
}

#[test]
fn cohort_cycle_is_ignored_with_a_warning() {
    let b = ClusterBuilder::new()
        .flavor("default")
        .cohort("x", Some("y"), vec![])
        .cohort("y", Some("x"), vec![])
        .cq(cpu_cq("q", "x", "4"));
    let p = plan(&with_incoming(b, "q", 0, "1"), &opts());
    assert!(
        p.warnings.iter().any(|w| w.contains("cycle")),
        "{:?}",
        p.warnings
    );
    assert!(p.cycles.iter().all(|c| c.admitted.is_empty()));
    assert!(
        p.cycles[0].pending[0].reason.contains("inactive"),
        "{}",
        p.cycles[0].pending[0].reason
    );
}

#[test]
fn reclaim_within_cohort_never_protects_borrowers() {
    let b = ClusterBuilder::new()
        .flavor("default")
        .cq(CqBuilder::new("a")
            .cohort("co")
            .quota("default", "cpu", "4")
            .preemption(W::Never, R::Never))
        .cq(CqBuilder::new("b")
            .cohort("co")
            .quota("default", "cpu", "0"))
        .wl(adm("borrower", -5, "b", "4"));
    let s = with_incoming(b, "a", 10, "4");
    assert!(victims(&s).is_empty());
    let p = plan(&s, &opts());
    assert!(
        p.cycles[0]
            .pending
            .iter()
            .any(|x| x.reason.contains("reclaimWithinCohort: Never")),
        "{:?}",
        p.cycles[0].pending
    );
}
