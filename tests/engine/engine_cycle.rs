//! Table tests of the scheduling cycle: queueing strategies, admissibility checks,
//! flavor fungibility, gangs, entry ordering and capacity reservation.

use gangplank::engine::testing::*;
use gangplank::engine::{PlanOptions, PolicyOverride, plan, propose_preemption};
use gangplank::model::{
    ClusterState, FungibilityPolicy as F, FungibilityPreference as P, LabelSelector,
    ReclaimWithinCohort as R, ResourceFlavor, StopPolicy, Taint, Toleration,
    WithinClusterQueue as W,
};

const NOW: i64 = 1_000_000;

/// These tests read each cycle's pending rows, so they ask for them in every cycle
/// (the default lists them only in the last one).
fn opts() -> PlanOptions {
    PlanOptions {
        now: NOW,
        pending_in_every_cycle: true,
        ..Default::default()
    }
}

fn job(name: &str, prio: i32, created: i64, cpu: &str) -> WlBuilder {
    WlBuilder::new("ns", name)
        .queue("lq")
        .priority(prio)
        .created(created)
        .pod_set("main", 1, &[("cpu", cpu)])
}

fn one_cq(cq: CqBuilder) -> ClusterBuilder {
    ClusterBuilder::new()
        .flavor("default")
        .cq(cq)
        .lq("ns", "lq", "cq")
}

/// All workloads admitted over the whole plan.
fn admitted_all(s: &ClusterState) -> Vec<String> {
    let p = plan(s, &opts());
    let mut v: Vec<String> = p
        .cycles
        .iter()
        .flat_map(|c| c.admitted.iter().map(|a| a.workload.clone()))
        .collect();
    v.sort();
    v
}

fn last_reason(s: &ClusterState, wl: &str) -> String {
    let p = plan(s, &opts());
    p.cycles
        .last()
        .unwrap()
        .pending
        .iter()
        .find(|x| x.workload == wl)
        .map(|x| x.reason.to_string())
        .unwrap_or_default()
}

// --- queueing strategy

fn fifo_case(strict: bool) -> ClusterState {
    let mut cq = CqBuilder::new("cq").quota("default", "cpu", "4");
    if strict {
        cq = cq.strict_fifo();
    }
    one_cq(cq)
        .wl(WlBuilder::new("ns", "running")
            .priority(5)
            .pod_set("main", 1, &[("cpu", "3")])
            .admitted("cq", "default", 10))
        .wl(job("big", 0, 100, "2"))
        .wl(job("small", 0, 200, "1"))
        .build()
}

#[test]
fn best_effort_fifo_lets_a_smaller_job_pass_a_blocked_head() {
    assert_eq!(admitted_all(&fifo_case(false)), ["ns/small"]);
}

#[test]
fn strict_fifo_blocks_behind_the_head() {
    let s = fifo_case(true);
    assert!(admitted_all(&s).is_empty());
    assert!(
        last_reason(&s, "ns/small").contains("blocked behind ns/big"),
        "{}",
        last_reason(&s, "ns/small")
    );
}

#[test]
fn strict_fifo_still_sorts_by_priority() {
    let s = one_cq(
        CqBuilder::new("cq")
            .quota("default", "cpu", "1")
            .strict_fifo(),
    )
    .wl(job("old-low", 0, 100, "1"))
    .wl(job("new-high", 9, 200, "1"))
    .build();
    let p = plan(&s, &opts());
    assert_eq!(p.cycles[0].admitted[0].workload, "ns/new-high");
}

// --- admissibility

#[test]
fn namespace_selector_absent_admits_nothing() {
    let s = one_cq(
        CqBuilder::new("cq")
            .quota("default", "cpu", "4")
            .namespace_selector(None),
    )
    .wl(job("a", 0, 1, "1"))
    .build();
    assert!(admitted_all(&s).is_empty());
    assert!(
        last_reason(&s, "ns/a").contains("has no namespaceSelector"),
        "{}",
        last_reason(&s, "ns/a")
    );
}

#[test]
fn namespace_selector_empty_admits_all() {
    let s = one_cq(CqBuilder::new("cq").quota("default", "cpu", "4"))
        .wl(job("a", 0, 1, "1"))
        .build();
    assert_eq!(admitted_all(&s), ["ns/a"]);
}

#[test]
fn namespace_selector_match_labels() {
    let sel = LabelSelector {
        match_labels: [("team".to_string(), "ml".to_string())].into(),
        ..Default::default()
    };
    let base = || {
        one_cq(
            CqBuilder::new("cq")
                .quota("default", "cpu", "4")
                .namespace_selector(Some(sel.clone())),
        )
        .wl(job("a", 0, 1, "1"))
    };
    let s = base().namespace("ns", &[("team", "ml")]).build();
    assert_eq!(admitted_all(&s), ["ns/a"]);
    let s = base().namespace("ns", &[("team", "web")]).build();
    assert!(admitted_all(&s).is_empty());
    assert_eq!(
        last_reason(&s, "ns/a"),
        "namespace ns does not match ClusterQueue cq's namespaceSelector"
    );
    // the well-known label is always present
    let sel2 = LabelSelector {
        match_labels: [("kubernetes.io/metadata.name".to_string(), "ns".to_string())].into(),
        ..Default::default()
    };
    let s = one_cq(
        CqBuilder::new("cq")
            .quota("default", "cpu", "4")
            .namespace_selector(Some(sel2)),
    )
    .wl(job("a", 0, 1, "1"))
    .build();
    assert_eq!(admitted_all(&s), ["ns/a"]);
}

#[test]
fn inactive_workloads_are_never_admitted() {
    let s = one_cq(CqBuilder::new("cq").quota("default", "cpu", "4"))
        .wl(job("a", 0, 1, "1").inactive())
        .build();
    assert!(admitted_all(&s).is_empty());
    let p = plan(&s, &opts());
    let pend = &p.cycles[0].pending[0];
    assert_eq!(pend.position, None);
    assert!(
        pend.reason.contains("spec.active: false"),
        "{}",
        pend.reason
    );
}

#[test]
fn missing_local_queue_and_cluster_queue() {
    let s = ClusterBuilder::new()
        .flavor("default")
        .lq("ns", "orphan", "nope")
        .wl(WlBuilder::new("ns", "a")
            .queue("foo")
            .pod_set("main", 1, &[("cpu", "1")]))
        .wl(WlBuilder::new("ns", "b")
            .queue("orphan")
            .pod_set("main", 1, &[("cpu", "1")]))
        .build();
    let p = plan(&s, &opts());
    let pend = &p.cycles[0].pending;
    assert_eq!(pend[0].reason, "LocalQueue ns/foo not found");
    assert_eq!(pend[0].cluster_queue, None);
    assert_eq!(
        pend[1].reason,
        "ClusterQueue nope (from LocalQueue ns/orphan) not found"
    );
    let v = serde_json::to_value(&p).unwrap();
    assert!(v["cycles"][0]["pending"][0]["clusterQueue"].is_null());
}

#[test]
fn stopped_cluster_queue_admits_nothing() {
    let s = one_cq(
        CqBuilder::new("cq")
            .quota("default", "cpu", "4")
            .stop(StopPolicy::Hold),
    )
    .wl(job("a", 0, 1, "1"))
    .build();
    assert!(admitted_all(&s).is_empty());
    assert!(
        last_reason(&s, "ns/a").contains("inactive: stopped"),
        "{}",
        last_reason(&s, "ns/a")
    );
}

#[test]
fn missing_flavor_makes_cluster_queue_inactive() {
    let s = ClusterBuilder::new()
        .cq(CqBuilder::new("cq").quota("ghost", "cpu", "4"))
        .lq("ns", "lq", "cq")
        .wl(job("a", 0, 1, "1"))
        .build();
    assert!(admitted_all(&s).is_empty());
    assert!(last_reason(&s, "ns/a").contains("ResourceFlavor ghost not found"));
}

#[test]
fn uncovered_resource_is_no_fit_but_zero_requests_are_ignored() {
    let cq = CqBuilder::new("hyperpod-global-queue").quota("p4d", "nvidia.com/gpu", "32");
    let base = || {
        ClusterBuilder::new()
            .flavor("p4d")
            .cq(cq.clone())
            .lq("ns", "lq", "hyperpod-global-queue")
    };
    let s = base()
        .wl(WlBuilder::new("ns", "a").queue("lq").pod_set(
            "main",
            1,
            &[("nvidia.com/gpu", "1"), ("cpu", "4")],
        ))
        .build();
    assert!(admitted_all(&s).is_empty());
    assert_eq!(
        last_reason(&s, "ns/a"),
        "resource cpu is not covered by ClusterQueue hyperpod-global-queue (covers nvidia.com/gpu)"
    );
    let s = base()
        .wl(WlBuilder::new("ns", "a").queue("lq").pod_set(
            "main",
            1,
            &[("nvidia.com/gpu", "1"), ("cpu", "0")],
        ))
        .build();
    assert_eq!(admitted_all(&s), ["ns/a"]);
}

#[test]
fn pods_resource_is_counted_when_covered() {
    let cq = CqBuilder::new("cq").group(rg(
        &["cpu", "pods"],
        vec![fq("default", vec![rq("cpu", "100"), rq("pods", "3")])],
    ));
    let s = one_cq(cq)
        .wl(job("a", 0, 1, "1"))
        .wl(WlBuilder::new("ns", "gang")
            .queue("lq")
            .created(2)
            .pod_set("w", 3, &[("cpu", "1")]))
        .build();
    // a takes 1 pod; the 3-pod gang no longer fits in 3 pods
    assert_eq!(admitted_all(&s), ["ns/a"]);
}

// --- gangs

#[test]
fn gang_pod_sets_are_all_or_nothing() {
    let cq = CqBuilder::new("cq")
        .group(rg(&["cpu"], vec![fq("default", vec![rq("cpu", "4")])]))
        .group(rg(
            &["nvidia.com/gpu"],
            vec![fq("gpu", vec![rq("nvidia.com/gpu", "2")])],
        ));
    let s = ClusterBuilder::new()
        .flavor("default")
        .flavor("gpu")
        .cq(cq)
        .lq("ns", "lq", "cq")
        .wl(WlBuilder::new("ns", "g")
            .queue("lq")
            .pod_set("driver", 1, &[("cpu", "2")])
            .pod_set("workers", 2, &[("nvidia.com/gpu", "2")]))
        .build();
    assert!(admitted_all(&s).is_empty());
    let r = last_reason(&s, "ns/g");
    assert!(
        r.contains("needs 4 nvidia.com/gpu in flavor gpu (pod set workers: 2 × 2)"),
        "{r}"
    );
}

#[test]
fn later_pod_sets_count_earlier_ones_in_the_same_flavor() {
    let s = one_cq(CqBuilder::new("cq").quota("default", "cpu", "4"))
        .wl(WlBuilder::new("ns", "g")
            .queue("lq")
            .pod_set("a", 1, &[("cpu", "3")])
            .pod_set("b", 1, &[("cpu", "2")]))
        .build();
    assert!(admitted_all(&s).is_empty());
    assert!(
        last_reason(&s, "ns/g").contains("needs 5 cpu"),
        "{}",
        last_reason(&s, "ns/g")
    );
}

// --- flavors and fungibility

/// Two flavors f1, f2 (2 cpu each) in cq; cohort partner lends 4 in f1.
fn two_flavors(cq: CqBuilder) -> ClusterBuilder {
    let cq = cq.cohort("co").group(rg(
        &["cpu"],
        vec![
            fq("f1", vec![rq("cpu", "2")]),
            fq("f2", vec![rq("cpu", "2")]),
        ],
    ));
    ClusterBuilder::new()
        .flavor("f1")
        .flavor("f2")
        .cq(cq)
        .cq(CqBuilder::new("lender").cohort("co").group(rg(
            &["cpu"],
            vec![
                fq("f1", vec![rq("cpu", "4")]),
                fq("f2", vec![rq("cpu", "0")]),
            ],
        )))
        .lq("ns", "lq", "cq")
}

fn flavor_of(s: &ClusterState, wl: &str) -> Option<(String, bool)> {
    let p = plan(s, &opts());
    p.cycles
        .iter()
        .flat_map(|c| c.admitted.iter())
        .find(|a| a.workload == wl)
        .map(|a| (a.flavors["main"]["cpu"].clone(), a.borrowing))
}

#[test]
fn when_can_borrow_may_stop_search_takes_the_first_flavor_borrowing() {
    let s = two_flavors(CqBuilder::new("cq"))
        .wl(job("a", 0, 1, "3"))
        .build();
    // f1: 3 > 2 nominal but fits by borrowing → stop (default MayStopSearch)
    assert_eq!(flavor_of(&s, "ns/a"), Some(("f1".into(), true)));
}

#[test]
fn when_can_borrow_try_next_flavor_prefers_no_borrowing() {
    let s = two_flavors(CqBuilder::new("cq").fungibility(F::TryNextFlavor, F::TryNextFlavor, None))
        .wl(job("a", 0, 1, "2"))
        .wl(WlBuilder::new("ns", "f1-user")
            .pod_set("main", 1, &[("cpu", "1")])
            .admitted("cq", "f1", 5))
        .build();
    // f1 would borrow (1 used + 2 > 2); f2 fits within nominal → f2
    assert_eq!(flavor_of(&s, "ns/a"), Some(("f2".into(), false)));
}

fn preempt_or_borrow(pref: Option<P>) -> ClusterState {
    // f1: full with a low-priority job (preemption possible, no borrowing);
    // f2: the request only fits by borrowing 1 from... f2 has no lender, so make f2 2+ lender 0:
    // instead use f1 preempt vs f2 fit-with-borrowing through the lender in f2.
    let cq = CqBuilder::new("cq")
        .cohort("co")
        .group(rg(
            &["cpu"],
            vec![
                fq("f1", vec![rq("cpu", "2")]),
                fq("f2", vec![rq("cpu", "1")]),
            ],
        ))
        .preemption(W::LowerPriority, R::Never)
        .fungibility(F::TryNextFlavor, F::TryNextFlavor, pref);
    ClusterBuilder::new()
        .flavor("f1")
        .flavor("f2")
        .cq(cq)
        .cq(CqBuilder::new("lender").cohort("co").group(rg(
            &["cpu"],
            vec![
                fq("f1", vec![rq("cpu", "0")]),
                fq("f2", vec![rq("cpu", "4")]),
            ],
        )))
        .lq("ns", "lq", "cq")
        .wl(WlBuilder::new("ns", "low")
            .priority(-1)
            .pod_set("main", 1, &[("cpu", "2")])
            .admitted("cq", "f1", 5))
        .wl(job("a", 10, 1, "2"))
        .build()
}

#[test]
fn default_preference_is_borrowing_over_preemption() {
    let s = preempt_or_borrow(None);
    let p = plan(&s, &opts());
    assert!(p.cycles[0].preempted.is_empty());
    assert_eq!(flavor_of(&s, "ns/a"), Some(("f2".into(), true)));
    let s = preempt_or_borrow(Some(P::BorrowingOverPreemption));
    assert_eq!(flavor_of(&s, "ns/a"), Some(("f2".into(), true)));
}

#[test]
fn preemption_over_borrowing_preempts_in_the_first_flavor() {
    let s = preempt_or_borrow(Some(P::PreemptionOverBorrowing));
    let p = plan(&s, &opts());
    assert_eq!(p.cycles[0].preempted.len(), 1);
    assert_eq!(p.cycles[0].preempted[0].workload, "ns/low");
    assert_eq!(flavor_of(&s, "ns/a"), Some(("f1".into(), false)));
}

#[test]
fn when_can_preempt_may_stop_search_preempts_rather_than_trying_next_flavor() {
    // f1 full of a low-priority job; f2 free. TryNextFlavor (default) → f2; MayStopSearch → preempt in f1.
    let build = |preempt: F| {
        let cq = CqBuilder::new("cq")
            .group(rg(
                &["cpu"],
                vec![
                    fq("f1", vec![rq("cpu", "2")]),
                    fq("f2", vec![rq("cpu", "2")]),
                ],
            ))
            .preemption(W::LowerPriority, R::Never)
            .fungibility(F::MayStopSearch, preempt, None);
        ClusterBuilder::new()
            .flavor("f1")
            .flavor("f2")
            .cq(cq)
            .lq("ns", "lq", "cq")
            .wl(WlBuilder::new("ns", "low")
                .priority(-1)
                .pod_set("main", 1, &[("cpu", "2")])
                .admitted("cq", "f1", 5))
            .wl(job("a", 10, 1, "2"))
            .build()
    };
    assert_eq!(
        flavor_of(&build(F::TryNextFlavor), "ns/a"),
        Some(("f2".into(), false))
    );
    let s = build(F::MayStopSearch);
    assert_eq!(plan(&s, &opts()).cycles[0].preempted[0].workload, "ns/low");
    assert_eq!(flavor_of(&s, "ns/a"), Some(("f1".into(), false)));
}

#[test]
fn taints_and_node_labels_filter_flavors() {
    let tainted = ResourceFlavor {
        name: "gpu-spot".into(),
        node_taints: vec![Taint {
            key: "spot".into(),
            value: Some("true".into()),
            effect: "NoSchedule".into(),
        }],
        ..Default::default()
    };
    let labelled = ResourceFlavor {
        name: "gpu-a100".into(),
        node_labels: [("gpu".to_string(), "a100".to_string())].into(),
        ..Default::default()
    };
    let cq = CqBuilder::new("cq").group(rg(
        &["cpu"],
        vec![
            fq("gpu-spot", vec![rq("cpu", "8")]),
            fq("gpu-a100", vec![rq("cpu", "8")]),
        ],
    ));
    let base = || {
        ClusterBuilder::new()
            .flavor_obj(tainted.clone())
            .flavor_obj(labelled.clone())
            .cq(cq.clone())
            .lq("ns", "lq", "cq")
    };
    // no toleration → skips the tainted flavor
    let s = base().wl(job("a", 0, 1, "1")).build();
    assert_eq!(flavor_of(&s, "ns/a"), Some(("gpu-a100".into(), false)));
    // toleration → first flavor
    let s = base()
        .wl(job("a", 0, 1, "1").with_last_pod_set(|p| {
            p.tolerations.push(Toleration {
                key: Some("spot".into()),
                operator: Some("Exists".into()),
                value: None,
                effect: None,
            })
        }))
        .build();
    assert_eq!(flavor_of(&s, "ns/a"), Some(("gpu-spot".into(), false)));
    // a node selector for another GPU model matches neither
    let s = base()
        .wl(job("a", 0, 1, "1").with_last_pod_set(|p| {
            p.node_selector.insert("gpu".into(), "h100".into());
        }))
        .build();
    assert!(admitted_all(&s).is_empty());
    let r = last_reason(&s, "ns/a");
    assert!(
        r.contains("untolerated taint spot=true:NoSchedule")
            && r.contains("doesn't match node selector gpu=h100"),
        "{r}"
    );
}

// --- entry ordering and reservation

fn two_heads(reclaim: R) -> ClusterState {
    // x: nominal 4, holds a high-priority 2-cpu job; x's head needs 4 (no candidates: the
    // running job has higher priority). y: nominal 0, its head borrows 2.
    ClusterBuilder::new()
        .flavor("default")
        .cq(CqBuilder::new("x")
            .cohort("co")
            .quota("default", "cpu", "4")
            .preemption(W::LowerPriority, reclaim))
        .cq(CqBuilder::new("y")
            .cohort("co")
            .quota("default", "cpu", "0"))
        .lq("ns", "lx", "x")
        .lq("ns", "ly", "y")
        .wl(WlBuilder::new("ns", "vip")
            .priority(100)
            .pod_set("main", 1, &[("cpu", "2")])
            .admitted("x", "default", 5))
        .wl(WlBuilder::new("ns", "x-head")
            .queue("lx")
            .priority(50)
            .created(1)
            .pod_set("main", 1, &[("cpu", "4")]))
        .wl(WlBuilder::new("ns", "y-head")
            .queue("ly")
            .priority(0)
            .created(2)
            .pod_set("main", 1, &[("cpu", "2")]))
        .build()
}

#[test]
fn preempt_without_targets_reserves_capacity() {
    let p = plan(&two_heads(R::LowerPriority), &opts());
    assert!(
        p.cycles[0].admitted.is_empty(),
        "{:?}",
        p.cycles[0].admitted
    );
}

#[test]
fn reclaim_any_does_not_reserve_capacity() {
    let p = plan(&two_heads(R::Any), &opts());
    assert_eq!(p.cycles[0].admitted[0].workload, "ns/y-head");
}

#[test]
fn non_borrowing_entries_go_first_and_later_ones_no_longer_fit() {
    // cohort of a (nominal 2) and b (nominal 0); both heads want 2 cpu. b's head has higher
    // priority but borrows, so a's head goes first and b's is skipped.
    let s = ClusterBuilder::new()
        .flavor("default")
        .cq(CqBuilder::new("a")
            .cohort("co")
            .quota("default", "cpu", "2"))
        .cq(CqBuilder::new("b")
            .cohort("co")
            .quota("default", "cpu", "0"))
        .lq("ns", "la", "a")
        .lq("ns", "lb", "b")
        .wl(WlBuilder::new("ns", "a-head")
            .queue("la")
            .priority(0)
            .created(1)
            .pod_set("main", 1, &[("cpu", "2")]))
        .wl(WlBuilder::new("ns", "b-head")
            .queue("lb")
            .priority(100)
            .created(1)
            .pod_set("main", 1, &[("cpu", "2")]))
        .build();
    let p = plan(&s, &opts());
    assert_eq!(p.cycles[0].admitted.len(), 1);
    assert_eq!(p.cycles[0].admitted[0].workload, "ns/a-head");
    let b = p.cycles[0]
        .pending
        .iter()
        .find(|x| x.workload == "ns/b-head")
        .unwrap();
    assert!(b.reason.contains("no longer fits"), "{}", b.reason);
}

// --- proposals

#[test]
fn propose_preemption_under_another_policy() {
    let s = one_cq(CqBuilder::new("cq").quota("default", "cpu", "4"))
        .wl(WlBuilder::new("ns", "old")
            .priority(0)
            .pod_set("main", 1, &[("cpu", "2")])
            .admitted("cq", "default", 10))
        .wl(WlBuilder::new("ns", "new")
            .priority(0)
            .pod_set("main", 1, &[("cpu", "2")])
            .admitted("cq", "default", 20))
        .wl(job("urgent", 100, 30, "2"))
        .build();
    // the real policy (Never) preempts nothing
    let p = plan(&s, &opts());
    assert!(p.cycles.iter().all(|c| c.preempted.is_empty()));
    assert!(last_reason(&s, "ns/urgent").contains("withinClusterQueue: Never forbids preemption"));
    let prop = propose_preemption(
        &s,
        "ns/urgent",
        &PolicyOverride {
            within_cluster_queue: Some(W::LowerPriority),
            ..Default::default()
        },
    )
    .unwrap();
    let v: Vec<&str> = prop.victims.iter().map(|v| v.workload.as_str()).collect();
    assert_eq!(v, ["ns/new"]);
    assert!(propose_preemption(&s, "ns/urgent", &PolicyOverride::default()).is_none());
    assert!(propose_preemption(&s, "ns/nope", &PolicyOverride::default()).is_none());
}

#[test]
fn fair_sharing_is_never_silent() {
    let s = one_cq(
        CqBuilder::new("cq")
            .quota("default", "cpu", "4")
            .fair_sharing_weight("2"),
    )
    .wl(job("a", 0, 1, "1"))
    .build();
    assert!(
        plan(&s, &opts())
            .warnings
            .iter()
            .any(|w| w.contains("fairSharing"))
    );
    // with fair sharing on in Kueue's configuration, the weight is used: no warning
    let s = one_cq(
        CqBuilder::new("cq")
            .quota("default", "cpu", "4")
            .fair_sharing_weight("2"),
    )
    .fair_sharing(&[])
    .wl(job("a", 0, 1, "1"))
    .build();
    let p = plan(&s, &opts());
    assert!(
        !p.warnings.iter().any(|w| w.contains("fairSharing")),
        "{:?}",
        p.warnings
    );
}

// --- partial admission

#[test]
fn partial_admission_takes_the_largest_count_that_fits() {
    let s = one_cq(CqBuilder::new("cq").quota("default", "cpu", "4"))
        .wl(WlBuilder::new("ns", "elastic")
            .queue("lq")
            .pod_set("workers", 8, &[("cpu", "1")])
            .with_last_pod_set(|p| p.min_count = Some(2)))
        .build();
    let out = gangplank::engine::schedule_cycle(&s, &Default::default(), &opts());
    assert_eq!(out.admitted.len(), 1);
    let psa = &out.admitted[0].admission.pod_set_assignments[0];
    assert_eq!(psa.count, Some(4));
    assert_eq!(psa.resource_usage["cpu"].to_string(), "4");
    // below minCount it stays pending
    let s = one_cq(CqBuilder::new("cq").quota("default", "cpu", "1"))
        .wl(WlBuilder::new("ns", "elastic")
            .queue("lq")
            .pod_set("workers", 8, &[("cpu", "1")])
            .with_last_pod_set(|p| p.min_count = Some(2)))
        .build();
    assert!(admitted_all(&s).is_empty());
}

// --- usage accounting and overlapping targets

#[test]
fn evicted_but_unreleased_workloads_still_hold_quota() {
    let s = one_cq(CqBuilder::new("cq").quota("default", "cpu", "4"))
        .wl(WlBuilder::new("ns", "leaving")
            .pod_set("main", 1, &[("cpu", "4")])
            .admitted("cq", "default", 5)
            .condition(
                "Evicted",
                gangplank::model::ConditionStatus::True,
                "Preempted",
                6,
            ))
        .wl(job("next", 0, 1, "1"))
        .build();
    let p = plan(&s, &opts());
    assert_eq!(
        p.cluster_queues[0].usage["default"]["cpu"].used.to_string(),
        "4"
    );
    assert!(
        p.cycles[0].admitted.is_empty(),
        "quota is still held in the first cycle"
    );
    assert_eq!(p.cycles[1].admitted[0].workload, "ns/next");
}

#[test]
fn reclaimable_pods_shrink_accounted_usage() {
    let mut running = WlBuilder::new("ns", "running")
        .pod_set("main", 4, &[("cpu", "1")])
        .admitted("cq", "default", 5);
    running.0.reclaimable_pods.insert("main".into(), 2);
    let s = one_cq(CqBuilder::new("cq").quota("default", "cpu", "4"))
        .wl(running)
        .wl(job("next", 0, 1, "2"))
        .build();
    let p = plan(&s, &opts());
    assert_eq!(
        p.cluster_queues[0].usage["default"]["cpu"].used.to_string(),
        "2"
    );
    assert_eq!(p.cycles[0].admitted[0].workload, "ns/next");
}

#[test]
fn overlapping_targets_defer_the_second_preemptor() {
    let s = ClusterBuilder::new()
        .flavor("default")
        .cq(CqBuilder::new("a")
            .cohort("co")
            .quota("default", "cpu", "2")
            .preemption(W::Never, R::Any))
        .cq(CqBuilder::new("b")
            .cohort("co")
            .quota("default", "cpu", "2")
            .preemption(W::Never, R::Any))
        .cq(CqBuilder::new("c")
            .cohort("co")
            .quota("default", "cpu", "0"))
        .lq("ns", "la", "a")
        .lq("ns", "lb", "b")
        .wl(WlBuilder::new("ns", "borrower")
            .priority(-1)
            .pod_set("main", 1, &[("cpu", "4")])
            .admitted("c", "default", 5))
        .wl(WlBuilder::new("ns", "a-head")
            .queue("la")
            .created(1)
            .pod_set("main", 1, &[("cpu", "2")]))
        .wl(WlBuilder::new("ns", "b-head")
            .queue("lb")
            .created(2)
            .pod_set("main", 1, &[("cpu", "2")]))
        .build();
    let p = plan(&s, &opts());
    let c1 = &p.cycles[0];
    assert_eq!(c1.preempted.len(), 1);
    assert_eq!(
        (
            c1.preempted[0].workload.as_str(),
            c1.preempted[0].by.as_str()
        ),
        ("ns/borrower", "ns/a-head")
    );
    let b = c1
        .pending
        .iter()
        .find(|x| x.workload == "ns/b-head")
        .unwrap();
    assert!(
        b.reason.contains("preempted by a higher-ranked workload"),
        "{}",
        b.reason
    );
    let mut second: Vec<&str> = p.cycles[1]
        .admitted
        .iter()
        .map(|a| a.workload.as_str())
        .collect();
    second.sort();
    assert_eq!(second, ["ns/a-head", "ns/b-head"]);
}

/// Positions in a LocalQueue count that LocalQueue's workloads only: two namespaces'
/// LocalQueues of the same name feeding one ClusterQueue are two queues (Kueue's
/// `utilqueue.KeyFromWorkload` in `pkg/visibility/storage/pending_workloads_cq.go`).
#[test]
fn positions_in_local_queues_of_the_same_name_in_two_namespaces_are_counted_apart() {
    let wl = |ns: &str, name: &str, created: i64| {
        WlBuilder::new(ns, name)
            .queue("lq")
            .priority(0)
            .created(created)
            .pod_set("main", 1, &[("cpu", "100")])
    };
    let s = ClusterBuilder::new()
        .flavor("default")
        .cq(CqBuilder::new("cq").quota("default", "cpu", "1"))
        .lq("a", "lq", "cq")
        .lq("b", "lq", "cq")
        .wl(wl("a", "w1", 1))
        .wl(wl("b", "w2", 2))
        .wl(wl("a", "w3", 3))
        .wl(wl("b", "w4", 4))
        .build();
    let expected = [
        ("a/w1", 1, 1, "a/lq"),
        ("b/w2", 2, 1, "b/lq"),
        ("a/w3", 3, 2, "a/lq"),
        ("b/w4", 4, 2, "b/lq"),
    ];
    let p = plan(
        &s,
        &PlanOptions {
            now: NOW,
            ..Default::default()
        },
    );
    let rows = &p.cycles.last().expect("a cycle").pending;
    for (wl, in_cq, in_lq, lq) in expected {
        let ex = rows
            .iter()
            .find(|r| r.workload == wl)
            .and_then(|r| r.explanation.as_ref())
            .unwrap_or_else(|| panic!("{wl} is pending with an explanation"));
        assert_eq!(ex.position_in_cluster_queue, Some(in_cq), "{wl}");
        assert_eq!(ex.position_in_local_queue, Some(in_lq), "{wl} in {lq}");
        assert_eq!(ex.local_queue.as_deref(), Some(lq), "{wl}");
    }
    // the one-cycle API the console and the simulator use says the same
    let out = gangplank::engine::schedule_cycle(
        &s,
        &Default::default(),
        &PlanOptions {
            now: NOW,
            ..Default::default()
        },
    );
    for (wl, in_cq, in_lq, _) in expected {
        let d = out
            .pending
            .iter()
            .find(|d| d.workload == wl)
            .unwrap_or_else(|| panic!("{wl} pending"));
        assert_eq!(d.explanation.position_in_cluster_queue, Some(in_cq), "{wl}");
        assert_eq!(d.explanation.position_in_local_queue, Some(in_lq), "{wl}");
    }
}

/// An admission requeues no parked workload. Kueue's workload controller handles a
/// Workload going from pending to QuotaReserved with `queues.DeleteWorkload` and
/// `cache.AddOrUpdateWorkload` only; the inadmissible workloads of a cohort tree return
/// to their heaps on a finish, a deletion, an eviction, a reclaimable-pod or priority
/// change (`QueueAssociatedInadmissibleWorkloadsAfter` in
/// `pkg/controller/core/workload_controller.go` `Update`/`Delete`) or a ClusterQueue,
/// Cohort or flavor spec change (`NotifyRetryInadmissible`).
///
/// Cycle 1: "a1" needs 4 of the cohort's 2 free CPUs; the only borrower, "x", has a
/// higher priority and "b0" is within cq-b's nominal quota, so there is nothing to
/// reclaim: "a1" reserves its quota and is parked, and "b1" no longer fits after that
/// reservation. Cycle 2: "b1" borrows the 2 free CPUs, which puts cq-b above its
/// nominal quota and so makes "b0" (lower priority than "a1") reclaimable. Nothing is
/// released afterwards, so Kueue never looks at "a1" again: "b0" keeps running.
#[test]
fn an_admission_that_creates_a_borrower_requeues_no_parked_workload() {
    let s = ClusterBuilder::new()
        .flavor("default")
        .cq(CqBuilder::new("cq-a")
            .cohort("c")
            .quota("default", "cpu", "4")
            .preemption(W::Never, R::LowerPriority))
        .cq(CqBuilder::new("cq-b")
            .cohort("c")
            .quota("default", "cpu", "4"))
        .cq(CqBuilder::new("cq-c")
            .cohort("c")
            .quota("default", "cpu", "0"))
        .lq("ns", "lq-a", "cq-a")
        .lq("ns", "lq-b", "cq-b")
        .lq("ns", "lq-c", "cq-c")
        .wl(WlBuilder::new("ns", "b0")
            .queue("lq-b")
            .priority(10)
            .created(1)
            .pod_set("main", 1, &[("cpu", "4")])
            .admitted("cq-b", "default", 10))
        .wl(WlBuilder::new("ns", "x")
            .queue("lq-c")
            .priority(100)
            .created(1)
            .pod_set("main", 1, &[("cpu", "2")])
            .admitted("cq-c", "default", 10))
        .wl(WlBuilder::new("ns", "a1")
            .queue("lq-a")
            .priority(50)
            .created(2)
            .pod_set("main", 1, &[("cpu", "4")]))
        .wl(WlBuilder::new("ns", "b1")
            .queue("lq-b")
            .priority(20)
            .created(3)
            .pod_set("main", 1, &[("cpu", "2")]))
        .build();
    let p = plan(&s, &opts());
    let admitted: Vec<Vec<&str>> = p
        .cycles
        .iter()
        .map(|c| c.admitted.iter().map(|a| a.workload.as_str()).collect())
        .collect();
    assert!(admitted[0].is_empty(), "{admitted:?}");
    assert_eq!(
        admitted[1],
        ["ns/b1"],
        "b1 borrows the free 2 CPUs in cycle 2"
    );
    assert!(
        p.cycles.iter().all(|c| c.preempted.is_empty()),
        "a1 stays parked: nobody reclaims b0 ({:?})",
        p.cycles.iter().map(|c| &c.preempted).collect::<Vec<_>>()
    );
    assert!(p.converged);
    let last = p.cycles.last().expect("cycles");
    assert!(last.pending.iter().any(|r| r.workload == "ns/a1"));

    // The one-cycle API (the simulator's Kueue) keeps "a1" parked across the admission.
    let o = PlanOptions {
        now: NOW,
        ..Default::default()
    };
    let first = gangplank::engine::schedule_cycle(&s, &Default::default(), &o);
    assert!(first.memory.inadmissible.contains("ns/a1"), "{first:?}");
    let second = gangplank::engine::schedule_cycle(&s, &first.memory, &o);
    let admitted: Vec<&str> = second
        .admitted
        .iter()
        .map(|a| a.workload.as_str())
        .collect();
    assert_eq!(admitted, ["ns/b1"]);
    assert!(
        second.memory.inadmissible.contains("ns/a1"),
        "the admission of b1 requeued a1: {:?}",
        second.memory
    );
}
