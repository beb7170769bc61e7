//! Fair sharing cases ported from Kueue (revision in docs/engine.md):
//! * `pkg/scheduler/preemption/preemption_fair_test.go` `TestFairPreemptions` and
//!   `TestFairPreemptionSkipsUnsatisfiableTournament` — named after the Kueue case.
//!   Kueue's test hands the preemptor a fixed assignment (cpu in one flavor, mode
//!   Preempt) and asks `GetTargets`; here the engine's own target search
//!   (`preemption::search::get_targets`, which dispatches to fair preemption) gets the
//!   same input, and the victims (key and reason) are compared.
//! * `pkg/scheduler/scheduler_test.go` / `scheduler_fs_test.go` fair-sharing cases,
//!   run through whole cycles (`schedule_cycle` / `plan`).

use std::collections::BTreeSet;

use gangplank::engine::PlanOptions;
use gangplank::engine::preemption::PreemptionCtx;
use gangplank::engine::preemption::search::get_targets;
use gangplank::engine::state::EngineState;
use gangplank::engine::testing::*;
use gangplank::model::kueue_config::PreemptionStrategy as S;
use gangplank::model::{
    BorrowWithinCohortPolicy as B, ClusterState, FungibilityPolicy, ReclaimWithinCohort as R,
    WithinClusterQueue as W,
};

const NOW: i64 = 1_000_000;

/// An admitted one-pod workload of `cpu` in `flavor`, uid = name (as Kueue's test sets).
fn adm(name: &str, prio: i32, cq: &str, cpu: &str, flavor: &str) -> WlBuilder {
    WlBuilder::new("", name)
        .uid(name)
        .priority(prio)
        .pod_set("main", 1, &[("cpu", cpu)])
        .admitted(cq, flavor, NOW)
}

/// `unitWl` (1 cpu) admitted in flavor "default".
fn unit(name: &str, cq: &str) -> WlBuilder {
    adm(name, 0, cq, "1", "default")
}

fn unit_p(name: &str, prio: i32, cq: &str) -> WlBuilder {
    adm(name, prio, cq, "1", "default")
}

fn cpu(name: &str, cq: &str, q: &str) -> WlBuilder {
    adm(name, 0, cq, q, "default")
}

fn cq(name: &str, cohort: Option<&str>, nominal: &str) -> CqBuilder {
    let mut b = CqBuilder::new(name).quota("default", "cpu", nominal);
    if let Some(c) = cohort {
        b = b.cohort(c);
    }
    b
}

/// Kueue's `baseCQs`: a, b, c (3 cpu, LowerPriority/Any, borrowWithinCohort
/// LowerPriority threshold -3) and "preemptible" (0 cpu), all in cohort "all".
fn base_cqs() -> ClusterBuilder {
    let mut b = ClusterBuilder::new().flavor("default");
    for n in ["a", "b", "c"] {
        b = b.cq(cq(n, Some("all"), "3")
            .preemption(W::LowerPriority, R::Any)
            .borrow_within_cohort(B::LowerPriority, Some(-3)));
    }
    b.cq(cq("preemptible", Some("all"), "0"))
}

/// CQs a, b, c of 3 cpu with LowerPriority / Any and an optional weight each.
fn weighted_abc(weights: [Option<&str>; 3], with_c: bool) -> ClusterBuilder {
    let mut b = ClusterBuilder::new().flavor("default");
    for (n, w) in ["a", "b", "c"].into_iter().zip(weights) {
        if n == "c" && !with_c {
            continue;
        }
        let mut q = cq(n, Some("all"), "3").preemption(W::LowerPriority, R::Any);
        if let Some(w) = w {
            q = q.fair_sharing_weight(w);
        }
        b = b.cq(q);
    }
    b
}

fn cohort_obj(
    b: ClusterBuilder,
    name: &str,
    parent: Option<&str>,
    cpu: Option<&str>,
) -> ClusterBuilder {
    let groups = match cpu {
        Some(q) => vec![rg(&["cpu"], vec![fq("default", vec![rq("cpu", q)])])],
        None => Vec::new(),
    };
    b.cohort(name, parent, groups)
}

/// Runs the engine's target search for `incoming` (one pod of `cpu` cpu) queued in
/// `target_cq`, assigned to `flavor` in Preempt mode, as Kueue's test does.
fn targets_in(
    b: ClusterBuilder,
    strategies: &[S],
    incoming: (&str, i32, &str),
    target_cq: &str,
    flavor: &str,
) -> BTreeSet<(String, String)> {
    let (name, prio, q) = incoming;
    let cluster: ClusterState = b
        .lq("", "lq-in", target_cq)
        .wl(WlBuilder::new("", name)
            .uid(name)
            .priority(prio)
            .queue("lq-in")
            .created(NOW - 1000)
            .pod_set("main", 1, &[("cpu", q)]))
        .fair_sharing(strategies)
        .build();
    let opts = PlanOptions {
        now: NOW,
        ..Default::default()
    };
    let mut st = EngineState::new(&cluster, &opts);
    assert!(st.fair.enabled);
    let wl = st.wl_index(&format!("/{name}")).expect("incoming");
    let c = st.cq_by_name[target_cq];
    let spec = st.cqs[c].spec;
    let fr = st.frs.get(flavor, "cpu").expect("flavor cpu");
    let milli = gangplank::model::Quantity::parse(q).unwrap().milli();
    let ctx = PreemptionCtx {
        priority: prio,
        queue_ts: st.wls[wl].queue_ts,
        preemptor: Some(wl),
        cq: c,
        usage: vec![(fr, milli)],
        frs_need: vec![fr],
        policy: &spec.preemption,
    };
    let before: Vec<Vec<i128>> = st.tree.nodes.iter().map(|n| n.usage.clone()).collect();
    let got = get_targets(&mut st, &ctx);
    let after: Vec<Vec<i128>> = st.tree.nodes.iter().map(|n| n.usage.clone()).collect();
    assert_eq!(
        before, after,
        "the search must leave the snapshot unchanged"
    );
    got.iter()
        .map(|t| (st.wls[t.wl].key(), t.reason.as_str().to_string()))
        .collect()
}

fn targets(
    b: ClusterBuilder,
    strategies: &[S],
    incoming: (&str, i32, &str),
    target_cq: &str,
) -> BTreeSet<(String, String)> {
    targets_in(b, strategies, incoming, target_cq, "default")
}

fn want(v: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    v.iter()
        .map(|(a, b)| (format!("/{a}"), b.to_string()))
        .collect()
}

fn with(b: ClusterBuilder, wls: Vec<WlBuilder>) -> ClusterBuilder {
    wls.into_iter().fold(b, |b, w| b.wl(w))
}

const RECLAIM: &str = "InCohortReclamation";
const FAIR: &str = "InCohortFairSharing";
const IN_CQ: &str = "InClusterQueue";

// --- TestFairPreemptions

#[test]
fn reclaim_nominal_from_user_using_the_most() {
    let b = with(
        base_cqs(),
        vec![
            unit("a1", "a"),
            unit("a2", "a"),
            unit("a3", "a"),
            unit("b1", "b"),
            unit("b2", "b"),
            unit("b3", "b"),
            unit("b4", "b"),
            unit("b5", "b"),
            unit("c1", "c"),
        ],
    );
    assert_eq!(
        targets(b, &[], ("c_incoming", 0, "1"), "c"),
        want(&[("b1", RECLAIM)])
    );
}

#[test]
fn can_reclaim_from_queue_using_less_if_taking_the_latest_workload_from_user_using_the_most_isnt_enough()
 {
    let b = with(
        base_cqs(),
        vec![
            cpu("a1", "a", "3"),
            cpu("a2", "a", "1"),
            cpu("b1", "b", "2"),
            cpu("b2", "b", "3"),
        ],
    );
    assert_eq!(
        targets(b, &[], ("c_incoming", 0, "3"), "c"),
        want(&[("a1", RECLAIM)])
    );
}

#[test]
fn reclaim_borrowable_quota_from_user_using_the_most() {
    let b = with(
        base_cqs(),
        vec![
            unit("a1", "a"),
            unit("a2", "a"),
            unit("a3", "a"),
            unit("b1", "b"),
            unit("b2", "b"),
            unit("b3", "b"),
            unit("b4", "b"),
            unit("b5", "b"),
            unit("c1", "c"),
        ],
    );
    assert_eq!(
        targets(b, &[], ("a_incoming", 0, "1"), "a"),
        want(&[("b1", FAIR)])
    );
}

#[test]
fn preempt_one_from_each_cq_borrowing() {
    let b = with(
        base_cqs(),
        vec![
            cpu("a1", "a", "0.5"),
            cpu("a2", "a", "0.5"),
            cpu("a3", "a", "3"),
            cpu("b1", "b", "0.5"),
            cpu("b2", "b", "0.5"),
            cpu("b3", "b", "3"),
        ],
    );
    assert_eq!(
        targets(b, &[], ("c_incoming", 0, "2"), "c"),
        want(&[("a1", RECLAIM), ("b1", RECLAIM)])
    );
}

#[test]
fn cant_preempt_when_everyone_under_nominal() {
    let b = with(
        base_cqs(),
        vec![
            unit("a1", "a"),
            unit("a2", "a"),
            unit("a3", "a"),
            unit("b1", "b"),
            unit("b2", "b"),
            unit("b3", "b"),
            unit("c1", "c"),
            unit("c2", "c"),
            unit("c3", "c"),
        ],
    );
    assert_eq!(targets(b, &[], ("c_incoming", 0, "1"), "c"), want(&[]));
}

#[test]
fn cant_preempt_when_it_would_switch_the_imbalance() {
    let b = with(
        base_cqs(),
        vec![
            unit("a1", "a"),
            unit("a2", "a"),
            unit("a3", "a"),
            unit("b1", "b"),
            unit("b2", "b"),
            unit("b3", "b"),
            unit("b4", "b"),
            unit("b5", "b"),
        ],
    );
    assert_eq!(targets(b, &[], ("a_incoming", 0, "2"), "a"), want(&[]));
}

#[test]
fn can_preempt_lower_priority_workloads_from_same_cq() {
    let b = with(
        base_cqs(),
        vec![
            unit_p("a1_low", -1, "a"),
            unit_p("a2_low", -1, "a"),
            unit("a3", "a"),
            unit("a4", "a"),
            unit("b1", "b"),
            unit("b2", "b"),
            unit("b3", "b"),
            unit("b4", "b"),
            unit("b5", "b"),
        ],
    );
    assert_eq!(
        targets(b, &[], ("a_incoming", 0, "2"), "a"),
        want(&[("a1_low", IN_CQ), ("a2_low", IN_CQ)])
    );
}

#[test]
fn can_preempt_a_combination_of_same_cq_and_highest_user() {
    let b = with(
        base_cqs(),
        vec![
            unit_p("a_low", -1, "a"),
            unit("a2", "a"),
            unit("a3", "a"),
            unit("b1", "b"),
            unit("b2", "b"),
            unit("b3", "b"),
            unit("b4", "b"),
            unit("b5", "b"),
            unit("b6", "b"),
        ],
    );
    assert_eq!(
        targets(b, &[], ("a_incoming", 0, "2"), "a"),
        want(&[("a_low", IN_CQ), ("b1", FAIR)])
    );
}

#[test]
fn preempt_huge_workload_if_there_is_no_other_option_as_long_as_the_target_cq_gets_a_lower_share() {
    let b = with(base_cqs(), vec![cpu("b1", "b", "9")]);
    assert_eq!(
        targets(b, &[], ("a_incoming", 0, "2"), "a"),
        want(&[("b1", RECLAIM)])
    );
}

#[test]
fn cant_preempt_huge_workload_if_the_incoming_is_also_huge() {
    let b = with(base_cqs(), vec![cpu("a1", "a", "2"), cpu("b1", "b", "7")]);
    assert_eq!(targets(b, &[], ("a_incoming", 0, "5"), "a"), want(&[]));
}

#[test]
fn cant_preempt_2_smaller_workloads_if_the_incoming_is_huge() {
    let b = with(
        base_cqs(),
        vec![
            cpu("b1", "b", "2"),
            cpu("b2", "b", "2"),
            cpu("b3", "b", "3"),
        ],
    );
    assert_eq!(targets(b, &[], ("a_incoming", 0, "6"), "a"), want(&[]));
}

#[test]
fn preempt_from_target_and_others_even_if_over_nominal() {
    let b = with(
        base_cqs(),
        vec![
            adm("a1_low", -1, "a", "2", "default"),
            adm("a2_low", -1, "a", "1", "default"),
            cpu("b1", "b", "3"),
            cpu("b2", "b", "3"),
        ],
    );
    assert_eq!(
        targets(b, &[], ("a_incoming", 0, "4"), "a"),
        want(&[("a1_low", IN_CQ), ("b1", FAIR)])
    );
}

#[test]
fn prefer_to_preempt_workloads_that_dont_make_the_target_cq_have_the_biggest_share() {
    let b = with(
        base_cqs(),
        vec![
            cpu("b1", "b", "2"),
            cpu("b2", "b", "1"),
            cpu("b3", "b", "2"),
            cpu("c1", "c", "1"),
        ],
    );
    // S2-b could preempt b1, but S2-a finds b2 first.
    assert_eq!(
        targets(b, &[], ("a_incoming", 0, "3.5"), "a"),
        want(&[("b2", FAIR)])
    );
}

#[test]
fn preempt_from_different_cluster_queues_if_the_end_result_has_a_smaller_max_share() {
    let b = with(
        base_cqs(),
        vec![
            cpu("b1", "b", "2"),
            cpu("b2", "b", "2.5"),
            cpu("c1", "c", "2"),
            cpu("c2", "c", "2.5"),
        ],
    );
    assert_eq!(
        targets(b, &[], ("a_incoming", 0, "3.5"), "a"),
        want(&[("b1", FAIR), ("c1", FAIR)])
    );
}

#[test]
fn scenario_above_does_not_flap() {
    let b = with(
        base_cqs(),
        vec![
            cpu("a1", "a", "3.5"),
            cpu("b2", "b", "2.5"),
            cpu("c2", "c", "2.5"),
        ],
    );
    assert_eq!(targets(b, &[], ("b_incoming", 0, "2"), "b"), want(&[]));
}

#[test]
fn cannot_preempt_if_it_would_make_the_candidate_cq_go_under_nominal_after_preempting_one_element()
{
    let b = with(
        base_cqs(),
        vec![
            cpu("b1", "b", "3"),
            cpu("b2", "b", "3"),
            cpu("c1", "c", "3"),
        ],
    );
    assert_eq!(targets(b, &[], ("a_incoming", 0, "4"), "a"), want(&[]));
}

#[test]
fn workloads_under_priority_threshold_not_capriciously_preempted() {
    let b = with(
        base_cqs(),
        vec![
            unit("a1", "a"),
            unit("a2", "a"),
            unit("a3", "a"),
            unit("b1", "b"),
            unit("b2", "b"),
            unit("b3", "b"),
            unit_p("preemptible1", -3, "preemptible"),
            unit_p("preemptible2", -3, "preemptible"),
            unit_p("preemptible3", -3, "preemptible"),
        ],
    );
    assert_eq!(targets(b, &[], ("a_incoming", 0, "2"), "a"), want(&[]));
}

#[test]
fn preempt_lower_priority_first_even_if_big() {
    let b = with(
        base_cqs(),
        vec![
            cpu("a1", "a", "3"),
            adm("b_low", 0, "b", "5", "default"),
            adm("b_high", 1, "b", "1", "default"),
        ],
    );
    assert_eq!(
        targets(b, &[S::LessThanInitialShare], ("a_incoming", 0, "1"), "a"),
        want(&[("b_low", FAIR)])
    );
}

#[test]
fn preempt_workload_that_doesnt_transfer_the_imbalance_even_if_high_priority() {
    let b = with(
        base_cqs(),
        vec![
            cpu("a1", "a", "3"),
            adm("b_low", 0, "b", "5", "default"),
            adm("b_high", 1, "b", "1", "default"),
        ],
    );
    assert_eq!(
        targets(
            b,
            &[S::LessThanOrEqualToFinalShare],
            ("a_incoming", 0, "1"),
            "a"
        ),
        want(&[("b_high", FAIR)])
    );
}

#[test]
fn cq_with_higher_weight_can_preempt_more() {
    let b = with(
        weighted_abc([Some("2"), None, None], true),
        vec![
            unit("a1", "a"),
            unit("a2", "a"),
            unit("a3", "a"),
            unit("b1", "b"),
            unit("b2", "b"),
            unit("b3", "b"),
            unit("b4", "b"),
            unit("b5", "b"),
            unit("b6", "b"),
        ],
    );
    assert_eq!(
        targets(b, &[], ("a_incoming", 0, "2"), "a"),
        want(&[("b1", FAIR), ("b2", FAIR)])
    );
}

#[test]
fn can_preempt_anything_borrowing_from_cq_with_0_weight() {
    let b = with(
        weighted_abc([None, Some("0"), None], true),
        vec![
            unit("a1", "a"),
            unit("a2", "a"),
            unit("a3", "a"),
            unit("b1", "b"),
            unit("b2", "b"),
            unit("b3", "b"),
            unit("b4", "b"),
            unit("b5", "b"),
            unit("b6", "b"),
        ],
    );
    assert_eq!(
        targets(b, &[], ("a_incoming", 0, "3"), "a"),
        want(&[("b1", FAIR), ("b2", FAIR), ("b3", FAIR)])
    );
}

#[test]
fn cant_preempt_nominal_from_cq_with_0_weight() {
    let b = with(
        weighted_abc([None, Some("0"), None], false),
        vec![
            unit("a1", "a"),
            unit("a2", "a"),
            unit("a3", "a"),
            unit("b1", "b"),
            unit("b2", "b"),
            unit("b3", "b"),
        ],
    );
    assert_eq!(targets(b, &[], ("a_incoming", 0, "1"), "a"), want(&[]));
}

#[test]
fn cant_preempt_nominal_from_cohort_with_0_weight() {
    let b = ClusterBuilder::new()
        .flavor("default")
        .cq(cq("left-cq", Some("root"), "0").preemption(W::Never, R::Any))
        .cq(cq("right-cq", Some("right-cohort"), "0")
            .preemption(W::Never, R::Any)
            .fair_sharing_weight("0"));
    let b =
        cohort_obj(b, "right-cohort", Some("root"), Some("1")).cohort_weight("right-cohort", "0");
    let b = with(b, vec![unit("right-1", "right-cq")]);
    assert_eq!(targets(b, &[], ("left-1", 0, "1"), "left-cq"), want(&[]));
}

#[test]
fn can_preempt_within_cluster_queue_when_no_cohort() {
    let b = ClusterBuilder::new()
        .flavor("default")
        .cq(cq("a", None, "1").preemption(W::LowerPriority, R::Never));
    let b = with(b, vec![unit("a1", "a")]);
    assert_eq!(
        targets(b, &[], ("a_incoming", 1000, "1"), "a"),
        want(&[("a1", IN_CQ)])
    );
}

/// The tree of "hierarchical preemption": ROOT(5) with LEFT(5, weight 2) {a (1,
/// weight 2), b (1)}, c (1), RIGHT(5) {d (1), e (1, weight 0.99)}.
#[test]
fn hierarchical_preemption() {
    let mut b = ClusterBuilder::new()
        .flavor("default")
        .cq(cq("a", Some("LEFT"), "1")
            .fair_sharing_weight("2")
            .preemption(W::Never, R::Any))
        .cq(cq("b", Some("LEFT"), "1"))
        .cq(cq("c", Some("ROOT"), "1"))
        .cq(cq("d", Some("RIGHT"), "1"))
        .cq(cq("e", Some("RIGHT"), "1").fair_sharing_weight("0.99"));
    b = cohort_obj(b, "ROOT", None, Some("5"));
    b = cohort_obj(b, "LEFT", Some("ROOT"), Some("5")).cohort_weight("LEFT", "2");
    b = cohort_obj(b, "RIGHT", Some("ROOT"), Some("5"));
    let mut wls = Vec::new();
    for q in ["b", "c", "d", "e"] {
        for p in 1..=5 {
            wls.push(unit_p(&format!("{q}{p}"), p, q));
        }
    }
    let b = with(b, wls);
    assert_eq!(
        targets(b, &[], ("unit", 0, "5"), "a"),
        want(&[
            ("b1", FAIR),
            ("b2", FAIR),
            ("c1", FAIR),
            ("c2", FAIR),
            ("e1", FAIR)
        ])
    );
}

#[test]
fn borrowing_cq_in_non_borrowing_cohort_is_protected() {
    let mut b = ClusterBuilder::new()
        .flavor("default")
        .cq(cq("a", Some("ROOT"), "5")
            .fair_sharing_weight("10")
            .preemption(W::LowerPriority, R::Any))
        .cq(cq("b", Some("RIGHT"), "0").fair_sharing_weight("0.1"));
    b = cohort_obj(b, "ROOT", None, None);
    b = cohort_obj(b, "RIGHT", Some("ROOT"), Some("1")).cohort_weight("RIGHT", "0.1");
    let b = with(
        b,
        vec![
            unit_p("a1", -1, "a"),
            unit_p("a2", -1, "a"),
            unit_p("a3", -1, "a"),
            unit_p("b1", -1, "b"),
        ],
    );
    assert_eq!(
        targets(b, &[], ("unit", 0, "5"), "a"),
        want(&[("a1", IN_CQ), ("a2", IN_CQ), ("a3", IN_CQ)])
    );
}

#[test]
fn forced_to_preempt_within_clusterqueue_because_borrowing_workload_too_important() {
    let mut b = ClusterBuilder::new()
        .flavor("default")
        .cq(cq("a", Some("ROOT"), "5")
            .fair_sharing_weight("10")
            .preemption(W::LowerPriority, R::LowerPriority))
        .cq(cq("b", Some("RIGHT"), "0").fair_sharing_weight("0.1"));
    b = cohort_obj(b, "ROOT", None, None);
    b = cohort_obj(b, "RIGHT", Some("ROOT"), Some("3")).cohort_weight("RIGHT", "0.1");
    let b = with(
        b,
        vec![
            unit_p("a1", -1, "a"),
            unit_p("a2", -1, "a"),
            unit_p("a3", -1, "a"),
            adm("b1", 100, "b", "4", "default"),
        ],
    );
    assert_eq!(
        targets(b, &[], ("unit", 0, "4"), "a"),
        want(&[("a1", IN_CQ), ("a2", IN_CQ), ("a3", IN_CQ)])
    );
}

#[test]
fn deep_preemption() {
    let mut b = ClusterBuilder::new()
        .flavor("default")
        .cq(cq("a", Some("AAA"), "0").preemption(W::Never, R::Any))
        .cq(cq("b", Some("BBB"), "0"));
    b = cohort_obj(b, "ROOT", None, None);
    for (c, p) in [
        ("A", "ROOT"),
        ("AA", "A"),
        ("AAA", "AA"),
        ("B", "ROOT"),
        ("BB", "B"),
        ("BBB", "BB"),
        ("C", "ROOT"),
        ("CC", "C"),
        ("CCC", "CC"),
    ] {
        b = cohort_obj(b, c, Some(p), None);
    }
    b = cohort_obj(b, "CCCC", Some("CCC"), Some("1"));
    b = b.cohort_weight("A", "1.01").cohort_weight("B", "0.99");
    let b = with(b, vec![unit("b1", "b")]);
    assert_eq!(targets(b, &[], ("a1", 0, "1"), "a"), want(&[("b1", FAIR)]));
}

#[test]
fn cq_with_zero_weight_can_reclaim_nominal_quota() {
    let b = ClusterBuilder::new()
        .flavor("default")
        .cq(cq("a", Some("ROOT"), "1")
            .fair_sharing_weight("0.0")
            .preemption(W::Never, R::Any))
        .cq(cq("b", Some("ROOT"), "0").fair_sharing_weight("1.0"));
    let b = with(b, vec![unit("b1", "b")]);
    assert_eq!(
        targets(b, &[], ("a1", 0, "1"), "a"),
        want(&[("b1", RECLAIM)])
    );
}

#[test]
fn cohort_with_zero_weight_can_reclaim_nominal_quota() {
    let b = ClusterBuilder::new()
        .flavor("default")
        .cq(cq("a", Some("A"), "0")
            .fair_sharing_weight("0.0")
            .preemption(W::Never, R::Any))
        .cq(cq("b", Some("ROOT"), "0").fair_sharing_weight("1.0"));
    let b = cohort_obj(b, "A", Some("ROOT"), Some("1")).cohort_weight("A", "0.0");
    let b = with(b, vec![unit("b1", "b")]);
    assert_eq!(targets(b, &[], ("a1", 0, "1"), "a"), want(&[("b1", FAIR)]));
}

#[test]
fn nominal_first_workload_fitting_within_nominal_can_preempt_despite_high_aggregate_drs() {
    let b = ClusterBuilder::new()
        .flavor("premium")
        .flavor("cheap")
        .cq(CqBuilder::new("a")
            .cohort("all")
            .group(rg(
                &["cpu"],
                vec![
                    fq("premium", vec![rq("cpu", "3")]),
                    fq("cheap", vec![rq("cpu", "0")]),
                ],
            ))
            .preemption(W::Never, R::Any)
            .fungibility(
                FungibilityPolicy::MayStopSearch,
                FungibilityPolicy::MayStopSearch,
                None,
            ))
        .cq(CqBuilder::new("b").cohort("all").group(rg(
            &["cpu"],
            vec![
                fq("premium", vec![rq("cpu", "0")]),
                fq("cheap", vec![rq("cpu", "6")]),
            ],
        )));
    let b = with(
        b,
        vec![
            adm("a_prem1", 0, "a", "1", "premium"),
            adm("a_prem2", 0, "a", "1", "premium"),
            adm("a_cheap1", 0, "a", "1", "cheap"),
            adm("a_cheap2", 0, "a", "1", "cheap"),
            adm("a_cheap3", 0, "a", "1", "cheap"),
            adm("a_cheap4", 0, "a", "1", "cheap"),
            adm("a_cheap5", 0, "a", "1", "cheap"),
            adm("b_prem1", 0, "b", "1", "premium"),
        ],
    );
    assert_eq!(
        targets_in(b, &[], ("a_incoming", 0, "1"), "a", "premium"),
        want(&[("b_prem1", RECLAIM)])
    );
}

#[test]
fn zero_weight_borrowing_preemptor_cannot_preempt_from_a_borrowing_cq_with_a_non_zero_weight() {
    let b = ClusterBuilder::new()
        .flavor("default")
        .cq(cq("a", Some("all"), "1")
            .fair_sharing_weight("0")
            .preemption(W::Never, R::Any))
        .cq(cq("b", Some("all"), "1").fair_sharing_weight("1"));
    let b = with(b, vec![unit("a1", "a"), unit("b1", "b"), unit("b2", "b")]);
    assert_eq!(targets(b, &[], ("a_incoming", 0, "1"), "a"), want(&[]));
}

fn zero_or_not(weight: &str) -> ClusterBuilder {
    let b = ClusterBuilder::new()
        .flavor("default")
        .cq(cq("a", Some("all"), "1")
            .fair_sharing_weight(weight)
            .preemption(W::Never, R::Any))
        .cq(cq("b", Some("all"), "0").fair_sharing_weight(weight));
    let b = cohort_obj(b, "all", None, Some("3"));
    with(b, vec![unit("b1", "b"), unit("b2", "b"), unit("b3", "b")])
}

#[test]
fn zero_weight_borrowing_preemptor_can_preempt_from_a_borrowing_cq_which_also_has_zero_weight() {
    assert_eq!(
        targets(zero_or_not("0"), &[], ("a_incoming", 0, "2"), "a"),
        want(&[("b1", FAIR)])
    );
}

#[test]
fn non_zero_weight_borrowing_preemptor_preempts_from_a_borrowing_cq() {
    assert_eq!(
        targets(zero_or_not("1"), &[], ("a_incoming", 0, "2"), "a"),
        want(&[("b1", FAIR)])
    );
}

#[test]
fn candidates_skipped_by_the_first_strategy_are_still_available_to_the_second_strategy() {
    let b = ClusterBuilder::new()
        .flavor("default")
        .cq(cq("p", Some("A"), "2")
            .fair_sharing_weight("1")
            .preemption(W::Never, R::Any))
        .cq(cq("y", Some("A"), "2").fair_sharing_weight("1"))
        .cq(cq("x", Some("ROOT"), "1").fair_sharing_weight("1"));
    let b = cohort_obj(b, "A", Some("ROOT"), Some("1")).cohort_weight("A", "0");
    let b = with(
        b,
        vec![
            cpu("p1", "p", "2"),
            cpu("y1", "y", "2"),
            cpu("y2", "y", "2"),
            unit("x1", "x"),
            unit("x2", "x"),
        ],
    );
    assert_eq!(
        targets(b, &[], ("p_incoming", 0, "1"), "p"),
        want(&[("y1", FAIR), ("x1", FAIR)])
    );
}

// --- TestFairPreemptionSkipsUnsatisfiableTournament (outcome only: no targets)

fn skips(weight: &str) -> BTreeSet<(String, String)> {
    let b = ClusterBuilder::new()
        .flavor("default")
        .cq(cq("a", Some("all"), "1")
            .fair_sharing_weight(weight)
            .preemption(W::Never, R::Any))
        .cq(cq("b", Some("all"), "1").fair_sharing_weight("1"));
    let b = with(b, vec![unit("a1", "a"), unit("b1", "b"), unit("b2", "b")]);
    targets(b, &[], ("a_incoming", 0, "1"), "a")
}

#[test]
fn zero_weight_preemptor_share_is_inf_and_the_tournament_is_skipped() {
    assert_eq!(skips("0"), want(&[]));
}

#[test]
fn non_zero_weight_preemptor_share_is_finite_so_the_tournament_runs() {
    assert_eq!(skips("1"), want(&[]));
}
