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
    let before: Vec<Vec<i128>> = (0..st.tree.nodes.len())
        .map(|n| (0..st.tree.nfr).map(|fr| st.tree.usage(n, fr)).collect())
        .collect();
    let got = get_targets(&mut st, &ctx);
    let after: Vec<Vec<i128>> = (0..st.tree.nodes.len())
        .map(|n| (0..st.tree.nfr).map(|fr| st.tree.usage(n, fr)).collect())
        .collect();
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

// --- scheduler_fs_test.go TestScheduleForFairSharing: one cycle, admitted and preempted

use gangplank::engine::{SchedulerMemory, schedule_cycle};

type Cycle = (BTreeSet<String>, BTreeSet<(String, String)>);

/// One cycle with fair sharing on: (admitted keys, (victim key, reason)).
fn cycle(b: ClusterBuilder) -> Cycle {
    let s = b.fair_sharing(&[]).build();
    let out = schedule_cycle(
        &s,
        &SchedulerMemory::default(),
        &PlanOptions {
            now: NOW,
            ..Default::default()
        },
    );
    (
        out.admitted.iter().map(|a| a.workload.clone()).collect(),
        out.preempted
            .iter()
            .map(|p| (p.workload.clone(), p.reason.as_str().to_string()))
            .collect(),
    )
}

fn keys(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn victims(v: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// A pending workload of one pod in namespace `ns`, queued in LocalQueue `lq`.
fn pend(
    ns: &str,
    name: &str,
    lq: &str,
    prio: i32,
    created: i64,
    reqs: &[(&str, &str)],
) -> WlBuilder {
    WlBuilder::new(ns, name)
        .uid(name)
        .queue(lq)
        .priority(prio)
        .created(created)
        .pod_set("one", 1, reqs)
}

/// An admitted workload of one pod; every resource in `flavor`.
fn held(
    ns: &str,
    name: &str,
    cq: &str,
    prio: i32,
    flavor: &str,
    reqs: &[(&str, &str)],
) -> WlBuilder {
    WlBuilder::new(ns, name)
        .uid(name)
        .priority(prio)
        .pod_set("one", 1, reqs)
        .admitted(cq, flavor, NOW - 10_000)
}

/// Flavors of the suite and a LocalQueue `lq-<cq>` in "eng-alpha" per ClusterQueue.
fn suite(cqs: Vec<CqBuilder>) -> ClusterBuilder {
    let mut b = ClusterBuilder::new()
        .flavor("default")
        .flavor("on-demand")
        .flavor("spot")
        .flavor("model-a");
    for q in cqs {
        let name = q.0.name.clone();
        b = b.cq(q).lq("eng-alpha", &format!("lq-{name}"), &name);
    }
    b
}

fn cpu_q(name: &str, cohort: &str, flavors: &[(&str, &str, Option<&str>)]) -> CqBuilder {
    CqBuilder::new(name).cohort(cohort).group(rg(
        &["cpu"],
        flavors
            .iter()
            .map(|(f, n, bl)| fq(f, vec![rq_limits("cpu", n, *bl, None)]))
            .collect(),
    ))
}

/// The suite's eng-alpha / eng-beta ClusterQueues (cohort "eng").
fn eng_alpha() -> CqBuilder {
    cpu_q(
        "eng-alpha",
        "eng",
        &[("on-demand", "50", Some("50")), ("spot", "100", Some("0"))],
    )
}

fn eng_beta() -> CqBuilder {
    cpu_q(
        "eng-beta",
        "eng",
        &[("on-demand", "50", Some("10")), ("spot", "0", Some("100"))],
    )
    .group(rg(
        &["example.com/gpu"],
        vec![fq(
            "model-a",
            vec![rq_limits("example.com/gpu", "20", Some("0"), None)],
        )],
    ))
    .preemption(W::LowerPriority, R::Any)
}

fn od(n: &str) -> Vec<(&'static str, &str, Option<&'static str>)> {
    vec![("on-demand", n, None)]
}

#[test]
fn with_fair_sharing_schedule_workload_with_lowest_share_first() {
    let b = suite(vec![
        eng_alpha(),
        eng_beta(),
        cpu_q("eng-shared", "eng", &[("on-demand", "10", Some("0"))]),
    ])
    .lq("eng-alpha", "main", "eng-alpha")
    .lq("eng-beta", "main", "eng-beta")
    .wl(WlBuilder::new("eng-alpha", "all_nominal")
        .pod_set("one", 50, &[("cpu", "1")])
        .admitted("eng-alpha", "on-demand", NOW))
    .wl(WlBuilder::new("eng-beta", "borrowing")
        .pod_set("one", 55, &[("cpu", "1")])
        .admitted("eng-beta", "on-demand", NOW))
    .wl(WlBuilder::new("eng-beta", "older_new")
        .queue("main")
        .created(NOW - 60_000)
        .pod_set("one", 1, &[("cpu", "1")]))
    .wl(WlBuilder::new("eng-alpha", "new")
        .queue("main")
        .created(NOW)
        .pod_set("one", 5, &[("cpu", "1")]));
    assert_eq!(cycle(b), (keys(&["eng-alpha/new"]), victims(&[])));
}

/// ROOT { Cohort-A (10) { cq-a (0) }, Cohort-B { cq-b (5), cq-c (0, 10 used) } }.
#[test]
fn with_fair_sharing_hierarchical_nominal_first_prefers_non_borrowing_subtree() {
    let b = suite(vec![
        cpu_q("cq-a", "Cohort-A", &od("0")),
        cpu_q("cq-b", "Cohort-B", &od("5")),
        cpu_q("cq-c", "Cohort-B", &od("0")),
    ]);
    let b = cohort_obj(b, "root", None, None);
    let b = b.cohort(
        "Cohort-A",
        Some("root"),
        vec![rg(&["cpu"], vec![fq("on-demand", vec![rq("cpu", "10")])])],
    );
    let b = cohort_obj(b, "Cohort-B", Some("root"), None)
        .wl(held(
            "eng-alpha",
            "c0",
            "cq-c",
            0,
            "on-demand",
            &[("cpu", "10")],
        ))
        .wl(pend(
            "eng-alpha",
            "wl-a",
            "lq-cq-a",
            0,
            NOW,
            &[("cpu", "5")],
        ))
        .wl(pend(
            "eng-alpha",
            "wl-b",
            "lq-cq-b",
            0,
            NOW,
            &[("cpu", "5")],
        ));
    assert_eq!(cycle(b), (keys(&["eng-alpha/wl-a"]), victims(&[])));
}

#[test]
fn with_fair_sharing_hierarchical_nominal_first_with_deeper_nesting() {
    let b = suite(vec![
        cpu_q("cq-a", "SUB-A", &od("0")),
        cpu_q("cq-b", "Cohort-B", &od("5")),
        cpu_q("cq-c", "Cohort-B", &od("0")),
    ]);
    let b = cohort_obj(b, "root", None, None);
    let b = cohort_obj(b, "Cohort-A", Some("root"), None);
    let b = b.cohort(
        "SUB-A",
        Some("Cohort-A"),
        vec![rg(&["cpu"], vec![fq("on-demand", vec![rq("cpu", "10")])])],
    );
    let b = cohort_obj(b, "Cohort-B", Some("root"), None)
        .wl(held(
            "eng-alpha",
            "c0",
            "cq-c",
            0,
            "on-demand",
            &[("cpu", "10")],
        ))
        .wl(pend(
            "eng-alpha",
            "wl-a",
            "lq-cq-a",
            0,
            NOW,
            &[("cpu", "5")],
        ))
        .wl(pend(
            "eng-alpha",
            "wl-b",
            "lq-cq-b",
            0,
            NOW,
            &[("cpu", "5")],
        ));
    assert_eq!(cycle(b), (keys(&["eng-alpha/wl-a"]), victims(&[])));
}

#[test]
fn with_fair_sharing_hierarchical_nominal_first_with_mixed_cq_and_cohort_quotas() {
    let b = suite(vec![
        cpu_q("cq-a1", "Cohort-A", &od("5")),
        cpu_q("cq-a2", "Cohort-A", &od("3")),
        cpu_q("cq-b", "Cohort-B", &od("5")),
        cpu_q("cq-c", "Cohort-B", &od("3")),
    ]);
    let od10 = || vec![rg(&["cpu"], vec![fq("on-demand", vec![rq("cpu", "10")])])];
    let b = cohort_obj(b, "root", None, None)
        .cohort("Cohort-A", Some("root"), od10())
        .cohort("Cohort-B", Some("root"), od10())
        .wl(held(
            "eng-alpha",
            "a2-admitted",
            "cq-a2",
            0,
            "on-demand",
            &[("cpu", "6")],
        ))
        .wl(held(
            "eng-alpha",
            "c-admitted",
            "cq-c",
            0,
            "on-demand",
            &[("cpu", "20")],
        ))
        .wl(pend(
            "eng-alpha",
            "wl-a1",
            "lq-cq-a1",
            0,
            NOW,
            &[("cpu", "7")],
        ))
        .wl(pend(
            "eng-alpha",
            "wl-b",
            "lq-cq-b",
            0,
            NOW,
            &[("cpu", "4")],
        ));
    assert_eq!(cycle(b), (keys(&["eng-alpha/wl-a1"]), victims(&[])));
}

#[test]
fn with_fair_sharing_hierarchical_nominal_first_per_flavor_ignores_cross_flavor_borrowing() {
    fn both(n_od: &str) -> Vec<(&str, &str, Option<&str>)> {
        vec![("on-demand", n_od, None), ("spot", "0", None)]
    }
    let b = suite(vec![
        cpu_q("cq-a", "Cohort-A", &both("0")),
        cpu_q("cq-b", "Cohort-B", &both("5")),
    ]);
    let b = cohort_obj(b, "root", None, None)
        .cohort(
            "Cohort-A",
            Some("root"),
            vec![rg(&["cpu"], vec![fq("on-demand", vec![rq("cpu", "10")])])],
        )
        .cohort(
            "Cohort-B",
            Some("root"),
            vec![rg(&["cpu"], vec![fq("spot", vec![rq("cpu", "10")])])],
        )
        .wl(held(
            "eng-alpha",
            "spot-admitted",
            "cq-a",
            0,
            "spot",
            &[("cpu", "5")],
        ))
        .wl(held(
            "eng-alpha",
            "od-admitted",
            "cq-b",
            0,
            "on-demand",
            &[("cpu", "8")],
        ))
        .wl(pend(
            "eng-alpha",
            "wl-a",
            "lq-cq-a",
            0,
            NOW,
            &[("cpu", "4")],
        ))
        .wl(pend(
            "eng-alpha",
            "wl-b",
            "lq-cq-b",
            0,
            NOW,
            &[("cpu", "4")],
        ));
    assert_eq!(cycle(b), (keys(&["eng-alpha/wl-a"]), victims(&[])));
}

/// A (200) { B { d (10 used), e (20 used) }, C { f, g (100 used) } }.
#[test]
fn hierarchical_fair_sharing_schedule_workload_which_wins_tournament() {
    let b = suite(vec![
        cpu_q("d", "B", &od("0")),
        cpu_q("e", "B", &od("0")),
        cpu_q("f", "C", &od("0")),
        cpu_q("g", "C", &od("0")),
    ])
    .cohort(
        "A",
        None,
        vec![rg(&["cpu"], vec![fq("on-demand", vec![rq("cpu", "200")])])],
    );
    let b = cohort_obj(b, "B", Some("A"), None);
    let b = cohort_obj(b, "C", Some("A"), None)
        .wl(held(
            "eng-alpha",
            "d0",
            "d",
            0,
            "on-demand",
            &[("cpu", "10")],
        ))
        .wl(held(
            "eng-alpha",
            "e0",
            "e",
            0,
            "on-demand",
            &[("cpu", "20")],
        ))
        .wl(held(
            "eng-alpha",
            "g0",
            "g",
            0,
            "on-demand",
            &[("cpu", "100")],
        ))
        .wl(pend("eng-alpha", "d1", "lq-d", 0, NOW, &[("cpu", "70")]))
        .wl(pend("eng-alpha", "e1", "lq-e", 0, NOW, &[("cpu", "61")]))
        .wl(pend("eng-alpha", "f1", "lq-f", 0, NOW, &[("cpu", "1")]))
        .wl(pend("eng-alpha", "g1", "lq-g", 0, NOW, &[("cpu", "1")]));
    assert_eq!(cycle(b), (keys(&["eng-alpha/d1"]), victims(&[])));
}

fn two_in_a(quota: &str, weight: Option<&str>, preempt: bool) -> ClusterBuilder {
    let mk = |n: &str| {
        let mut q = cpu_q(n, "A", &od("0"));
        if let Some(w) = weight {
            q = q.fair_sharing_weight(w);
        }
        if preempt {
            q = q.preemption(W::Never, R::Any);
        }
        q
    };
    suite(vec![mk("b"), mk("c")]).cohort(
        "A",
        None,
        vec![rg(&["cpu"], vec![fq("on-demand", vec![rq("cpu", quota)])])],
    )
}

#[test]
fn fair_sharing_schedule_workload_with_lowest_drf_after_admission() {
    let b = two_in_a("100", None, false)
        .wl(held(
            "eng-alpha",
            "b0",
            "b",
            0,
            "on-demand",
            &[("cpu", "10")],
        ))
        .wl(pend("eng-alpha", "b1", "lq-b", 0, NOW, &[("cpu", "50")]))
        .wl(pend("eng-alpha", "c1", "lq-c", 0, NOW, &[("cpu", "75")]));
    assert_eq!(cycle(b), (keys(&["eng-alpha/b1"]), victims(&[])));
}

fn borrows_less(weight: &str) -> Cycle {
    let b = two_in_a("8", Some(weight), true)
        .wl(held(
            "eng-alpha",
            "b0",
            "b",
            0,
            "on-demand",
            &[("cpu", "4")],
        ))
        .wl(pend("eng-alpha", "b1", "lq-b", 9001, NOW, &[("cpu", "4")]))
        .wl(pend("eng-alpha", "c1", "lq-c", 0, NOW, &[("cpu", "4")]));
    cycle(b)
}

#[test]
fn fair_sharing_two_queues_with_weight_0_schedules_workload_which_borrows_less() {
    assert_eq!(borrows_less("0"), (keys(&["eng-alpha/c1"]), victims(&[])));
}

#[test]
fn fair_sharing_two_queues_with_high_weight_schedules_workload_which_borrows_less() {
    assert_eq!(
        borrows_less("123456789"),
        (keys(&["eng-alpha/c1"]), victims(&[]))
    );
}

#[test]
fn fair_sharing_schedule_singleton_cqs_and_cq_without_cohort() {
    let b = suite(vec![
        cpu_q("a", "A", &od("0")),
        cpu_q("b", "B", &od("10")),
        CqBuilder::new("c").quota("on-demand", "cpu", "10"),
    ])
    .cohort(
        "A",
        None,
        vec![rg(&["cpu"], vec![fq("on-demand", vec![rq("cpu", "10")])])],
    );
    let b = cohort_obj(b, "B", None, None)
        .wl(pend("eng-alpha", "a1", "lq-a", 0, NOW, &[("cpu", "10")]))
        .wl(pend("eng-alpha", "b1", "lq-b", 0, NOW, &[("cpu", "10")]))
        .wl(pend("eng-alpha", "c1", "lq-c", 0, NOW, &[("cpu", "10")]));
    assert_eq!(
        cycle(b),
        (
            keys(&["eng-alpha/a1", "eng-alpha/b1", "eng-alpha/c1"]),
            victims(&[])
        )
    );
}

#[test]
fn fair_sharing_schedule_highest_priority_first() {
    let b = two_in_a("10", None, false)
        .wl(pend("eng-alpha", "b1", "lq-b", 99, NOW, &[("cpu", "10")]))
        .wl(pend("eng-alpha", "c1", "lq-c", 101, NOW, &[("cpu", "10")]));
    assert_eq!(cycle(b), (keys(&["eng-alpha/c1"]), victims(&[])));
}

#[test]
fn fair_sharing_schedule_earliest_timestamp_first() {
    let b = two_in_a("10", None, false)
        .wl(pend(
            "eng-alpha",
            "b1",
            "lq-b",
            101,
            NOW + 1000,
            &[("cpu", "10")],
        ))
        .wl(pend("eng-alpha", "c1", "lq-c", 101, NOW, &[("cpu", "10")]));
    assert_eq!(cycle(b), (keys(&["eng-alpha/c1"]), victims(&[])));
}

#[test]
fn with_fair_sharing_preempt_workload_from_cq_with_the_highest_share() {
    let mut b = suite(vec![
        eng_alpha(),
        eng_beta(),
        cpu_q("eng-gamma", "eng", &[("on-demand", "50", Some("0"))]),
    ])
    .lq("eng-beta", "main", "eng-beta")
    .wl(held(
        "eng-alpha",
        "all_spot",
        "eng-alpha",
        0,
        "spot",
        &[("cpu", "100")],
    ));
    for i in 1..=4 {
        b = b.wl(held(
            "eng-alpha",
            &format!("alpha{i}"),
            "eng-alpha",
            0,
            "on-demand",
            &[("cpu", "20")],
        ));
    }
    for (i, q) in [(1, "10"), (2, "20"), (3, "20"), (4, "20")] {
        b = b.wl(held(
            "eng-gamma",
            &format!("gamma{i}"),
            "eng-gamma",
            0,
            "on-demand",
            &[("cpu", q)],
        ));
    }
    let b = b.wl(pend(
        "eng-beta",
        "preemptor",
        "main",
        0,
        NOW,
        &[("cpu", "30")],
    ));
    assert_eq!(
        cycle(b),
        (
            keys(&[]),
            victims(&[("eng-alpha/alpha1", RECLAIM), ("eng-gamma/gamma1", RECLAIM)])
        )
    );
}

/// Kueue's case builds its ClusterQueues with `Preemption{WithinClusterQueue:
/// LowerPriority}` and no reclaimWithinCohort: the empty string, which the API server
/// never stores (it defaults to Never). Kueue's `canPreemptWhileBorrowing` treats ""
/// as not Never, so its test finds the in-queue victims; with Never (a real cluster)
/// Kueue's flavor assigner returns NoFit for a 3-cpu request over a 2-cpu nominal and
/// preempts nothing, which is what gangplank does. Listed in docs/engine.md.
#[test]
fn multiple_preemptions_within_cq_when_fair_sharing() {
    let mut b = suite(vec![
        CqBuilder::new("other-alpha")
            .cohort("other")
            .quota("default", "cpu", "2")
            .preemption(W::LowerPriority, R::Never),
        CqBuilder::new("other-beta")
            .cohort("other")
            .quota("default", "cpu", "2")
            .preemption(W::LowerPriority, R::Never),
        CqBuilder::new("other-gamma")
            .cohort("other")
            .quota("default", "cpu", "2")
            .preemption(W::LowerPriority, R::Never),
        CqBuilder::new("resource-bank")
            .cohort("other")
            .quota("default", "cpu", "3"),
    ]);
    for (ns, w, q) in [
        ("eng-alpha", "a1", "other-alpha"),
        ("eng-beta", "b1", "other-beta"),
        ("eng-gamma", "c1", "other-gamma"),
    ] {
        b = b
            .lq(ns, "other", q)
            .wl(held(ns, w, q, 0, "default", &[("cpu", "3")]))
            .wl(pend(ns, "preemptor", "other", 100, NOW, &[("cpu", "3")])
                .uid(&format!("wl-preemptor-{ns}")));
    }
    // Kueue's unit test (reclaimWithinCohort ""): victims a1, b1, c1 (InClusterQueue).
    assert_eq!(cycle(b), (keys(&[]), victims(&[])));
}

#[test]
fn not_enough_resources_with_fair_sharing_enabled() {
    let b = suite(vec![CqBuilder::new("sales").quota("default", "cpu", "50")])
        .lq("sales", "main", "sales")
        .wl(pend("sales", "new", "main", 0, NOW, &[("cpu", "100")]));
    assert_eq!(cycle(b), (keys(&[]), victims(&[])));
}

#[test]
fn with_fair_sharing_prefer_reclamation_over_cq_priority_based_preemption_with_preemption_while_borrowing()
 {
    let gpu = |name: &str, n: &str| {
        CqBuilder::new(name).cohort("other").group(rg(
            &["gpu"],
            vec![
                fq("on-demand", vec![rq("gpu", n)]),
                fq("spot", vec![rq("gpu", n)]),
            ],
        ))
    };
    let b = suite(vec![
        gpu("other-alpha", "7").preemption(W::LowerPriority, R::LowerPriority),
        gpu("other-beta", "3"),
    ])
    .lq("eng-alpha", "other", "other-alpha")
    .wl(held(
        "eng-alpha",
        "a1",
        "other-alpha",
        50,
        "on-demand",
        &[("gpu", "5")],
    ))
    .wl(held(
        "eng-beta",
        "b1",
        "other-beta",
        50,
        "spot",
        &[("gpu", "5")],
    ))
    .wl(pend(
        "eng-alpha",
        "preemptor",
        "other",
        100,
        NOW,
        &[("gpu", "8")],
    ));
    assert_eq!(cycle(b), (keys(&[]), victims(&[("eng-beta/b1", FAIR)])));
}

fn local_capacity() -> ClusterBuilder {
    let gpu2 = |od: &str, spot: &str| {
        vec![rg(
            &["gpu"],
            vec![
                fq("on-demand", vec![rq("gpu", od)]),
                fq("spot", vec![rq("gpu", spot)]),
            ],
        )]
    };
    suite(vec![
        CqBuilder::new("queue1")
            .cohort("child-cohort")
            .group(gpu2("3", "3").remove(0))
            .preemption(W::LowerPriority, R::Any)
            .fungibility(
                FungibilityPolicy::TryNextFlavor,
                FungibilityPolicy::TryNextFlavor,
                None,
            ),
    ])
    .cohort("root-cohort", None, gpu2("2", "0"))
    .cohort("child-cohort", Some("root-cohort"), gpu2("5", "7"))
    .lq("default", "queue1", "queue1")
    .wl(held(
        "default",
        "a1",
        "queue1",
        0,
        "on-demand",
        &[("gpu", "8")],
    ))
    .wl(held("default", "a2", "queue1", 0, "spot", &[("gpu", "3")]))
    .wl(pend("default", "a3", "queue1", 0, NOW, &[("gpu", "1")]))
}

#[test]
fn prefer_flavor_with_most_local_capacity() {
    let s = local_capacity().fair_sharing(&[]).build();
    let out = schedule_cycle(
        &s,
        &SchedulerMemory::default(),
        &PlanOptions {
            now: NOW,
            ..Default::default()
        },
    );
    assert_eq!(out.admitted.len(), 1);
    assert_eq!(out.admitted[0].workload, "default/a3");
    assert_eq!(
        out.admitted[0].admission.pod_set_assignments[0].flavors["gpu"],
        "spot"
    );
}

#[test]
fn prefer_flavor_with_most_local_capacity_fs_false() {
    let s = local_capacity().build();
    let out = schedule_cycle(
        &s,
        &SchedulerMemory::default(),
        &PlanOptions {
            now: NOW,
            ..Default::default()
        },
    );
    assert_eq!(out.admitted.len(), 1);
    assert_eq!(out.admitted[0].workload, "default/a3");
    assert_eq!(
        out.admitted[0].admission.pod_set_assignments[0].flavors["gpu"],
        "spot"
    );
}

#[test]
fn fair_sharing_in_cq_preemption_for_cq_without_cohort_repro_for_nil_pointer_panic() {
    let b = suite(vec![
        CqBuilder::new("no-cohort-cq")
            .quota("default", "cpu", "4")
            .preemption(W::LowerPriority, R::Never),
    ])
    .lq("default", "no-cohort-queue", "no-cohort-cq")
    .wl(held(
        "default",
        "nc-low",
        "no-cohort-cq",
        -1,
        "default",
        &[("cpu", "4")],
    ))
    .wl(pend(
        "default",
        "nc-high",
        "no-cohort-queue",
        100,
        NOW,
        &[("cpu", "4")],
    ));
    assert_eq!(cycle(b), (keys(&[]), victims(&[("default/nc-low", IN_CQ)])));
}

#[test]
fn preemption_over_borrowing_with_fair_sharing_preempt_in_first_flavor_instead_of_borrowing_in_second()
 {
    let b = suite(vec![
        CqBuilder::new("fs-pob-cq")
            .cohort("fs-pob-cohort")
            .fair_sharing_weight("1")
            .group(rg(
                &["cpu"],
                vec![
                    fq("on-demand", vec![rq_limits("cpu", "5", Some("0"), None)]),
                    fq("spot", vec![rq_limits("cpu", "0", Some("5"), None)]),
                ],
            ))
            .preemption(W::LowerPriority, R::Never)
            .fungibility(
                FungibilityPolicy::TryNextFlavor,
                FungibilityPolicy::TryNextFlavor,
                Some(gangplank::model::FungibilityPreference::PreemptionOverBorrowing),
            ),
        CqBuilder::new("fs-pob-lender")
            .cohort("fs-pob-cohort")
            .fair_sharing_weight("1")
            .group(rg(
                &["cpu"],
                vec![
                    fq("on-demand", vec![rq("cpu", "0")]),
                    fq("spot", vec![rq("cpu", "5")]),
                ],
            )),
    ])
    .lq("default", "fs-pob-queue", "fs-pob-cq")
    .wl(held(
        "default",
        "fs-low-pob",
        "fs-pob-cq",
        -1,
        "on-demand",
        &[("cpu", "5")],
    ))
    .wl(pend(
        "default",
        "fs-high-pob",
        "fs-pob-queue",
        0,
        NOW,
        &[("cpu", "5")],
    ));
    assert_eq!(
        cycle(b),
        (keys(&[]), victims(&[("default/fs-low-pob", IN_CQ)]))
    );
}

// --- `gangplank plan` with Kueue's configuration (issue #11)

fn gangplank(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_gangplank"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("COLUMNS", "100")
        .output()
        .expect("run gangplank")
}

fn plan_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["plan", "-o", "json", "--now", "2026-11-29T08:10:00Z"];
    all.extend_from_slice(args);
    let out = gangplank(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn warnings(plan: &serde_json::Value) -> Vec<String> {
    plan["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect()
}

fn first_admitted(plan: &serde_json::Value) -> Vec<String> {
    plan["cycles"][0]["admitted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["workload"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn plan_with_the_configmap_uses_fair_sharing_and_says_why_in_words() {
    let plan = plan_json(&["-f", "tests/fixtures/fair-sharing"]);
    let w = warnings(&plan);
    assert!(
        !w.iter().any(|w| w.contains("not implement")
            || w.contains("unsupported")
            || w.contains("no Kueue configuration")),
        "{w:?}"
    );
    // nlp-team's share after admission (0.25) is below cv-team's (0.31)
    assert_eq!(first_admitted(&plan), ["nlp-team/nlp-new"]);
    // `plan -o json` lists pending rows in the last cycle (docs/engine.md): cv-new still
    // waits, and says so in fair-sharing terms.
    let last = plan["cycles"].as_array().unwrap().last().unwrap();
    let cv = last["pending"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["workload"] == "cv-team/cv-new")
        .expect("cv-new pending");
    let reason = cv["reason"].as_str().unwrap();
    assert!(
        reason.contains("fair sharing in cohort org")
            && reason.contains("cv-team's share would be 0.31"),
        "{reason}"
    );
    // In the first cycle it lost the tournament: the engine says why, in words.
    let state =
        gangplank::model::load_paths(&[std::path::PathBuf::from("tests/fixtures/fair-sharing")])
            .expect("fixture");
    let plan = gangplank::engine::plan(
        &state,
        &PlanOptions {
            pending_in_every_cycle: true,
            ..PlanOptions::default()
        },
    );
    let first = plan.cycles[0]
        .pending
        .iter()
        .find(|p| p.workload == "cv-team/cv-new")
        .expect("cv-new pending in cycle 1");
    assert!(
        first
            .reason
            .contains("cv-team share 0.31 > nlp-team 0.25: nlp-team is admitted first"),
        "{}",
        first.reason
    );
}

#[test]
fn plan_without_a_configuration_says_which_defaults_it_assumed() {
    let plan = plan_json(&["-f", "tests/fixtures/fair-sharing/cluster.yaml"]);
    let w = warnings(&plan);
    assert!(
        w[0].contains("assumed Kueue's defaults: fairSharing off (classical preemption)"),
        "{w:?}"
    );
    // classical order: both borrow; same priority, so the older cv-new goes first
    assert_eq!(first_admitted(&plan), ["cv-team/cv-new"]);
    let out = gangplank(&[
        "plan",
        "-f",
        "tests/fixtures/fair-sharing/cluster.yaml",
        "--now",
        "2026-11-29T08:10:00Z",
    ]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("assumed Kueue's defaults"), "{table}");
}

#[test]
fn kueue_config_flag_overrides_the_configmap_and_bad_files_name_the_field() {
    let plan = plan_json(&[
        "-f",
        "tests/fixtures/fair-sharing",
        "--kueue-config",
        "tests/fixtures/kueue-config/fair-off.yaml",
    ]);
    assert!(
        !warnings(&plan)
            .iter()
            .any(|w| w.contains("no Kueue configuration"))
    );
    assert_eq!(first_admitted(&plan), ["cv-team/cv-new"]);
    // the ConfigMap form is accepted as a file too
    let plan = plan_json(&[
        "-f",
        "tests/fixtures/fair-sharing/cluster.yaml",
        "--kueue-config",
        "tests/fixtures/fair-sharing/kueue-manager-config.yaml",
    ]);
    assert_eq!(first_admitted(&plan), ["nlp-team/nlp-new"]);
    let out = gangplank(&[
        "plan",
        "-f",
        "tests/fixtures/fair-sharing",
        "--kueue-config",
        "tests/fixtures/kueue-config/bad.yaml",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tests/fixtures/kueue-config/bad.yaml")
            && err.contains("fairSharing.preemptionStrategies[0]"),
        "{err}"
    );
}

// --- pod template validation (pkg/workload/resources.go ValidateResources, webhook)

/// A queue with 8 cpu and one pending Workload whose container has `resources`.
fn validation_state(resources: &str) -> ClusterState {
    let text = format!(
        r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: default}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - {{name: cpu, nominalQuota: 8}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq, namespace: ns}}
spec: {{clusterQueue: cq}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {{name: job, namespace: ns, uid: u1, creationTimestamp: "2026-11-29T08:00:00Z"}}
spec:
  queueName: lq
  podSets:
  - name: main
    count: 1
    template:
      spec:
        initContainers:
        - name: init
          resources: {{requests: {{cpu: "1"}}}}
        containers:
        - name: ok
          resources: {{requests: {{cpu: "1"}}}}
        - name: c
          resources: {resources}
"#
    );
    let mut s = ClusterState::default();
    gangplank::model::parse_str("validation.yaml", &text, &mut s).expect("parses");
    s
}

fn one(s: &ClusterState) -> gangplank::engine::CycleOutcome {
    schedule_cycle(
        s,
        &SchedulerMemory::default(),
        &PlanOptions {
            now: NOW,
            ..Default::default()
        },
    )
}

#[test]
fn requests_above_limits_make_the_workload_inadmissible_with_kueues_reason() {
    let out = one(&validation_state(
        r#"{requests: {cpu: "4"}, limits: {cpu: "2"}}"#,
    ));
    assert!(
        out.admitted.is_empty(),
        "Kueue rejects it: {:?}",
        out.admitted
    );
    let p = &out.pending[0];
    assert!(p.evaluated);
    assert_eq!(p.condition_reason, "Misconfigured");
    assert_eq!(
        p.message,
        r#"resources validation failed: spec.podSets[0].template.spec.containers[1]: Invalid value: ["cpu"]: requests must not exceed its limits"#
    );
    assert!(
        p.explanation.reason.contains("pod set main is invalid"),
        "{}",
        p.explanation.reason
    );
    // BestEffortFIFO: parked until something changes
    assert!(out.memory.inadmissible.contains("ns/job"));
}

#[test]
fn negative_quantities_are_rejected() {
    let out = one(&validation_state(r#"{requests: {cpu: "-1"}}"#));
    assert!(out.admitted.is_empty());
    let p = &out.pending[0];
    assert_eq!(p.condition_reason, "Misconfigured");
    assert!(
        p.message
            .contains("containers[1].resources.requests[cpu]: Invalid value: \"-1\": must be greater than or equal to 0"),
        "{}",
        p.message
    );
}

#[test]
fn limits_without_requests_default_the_requests() {
    // 1 (ok) + 3 (limit only) = 4 cpu; the init container's 1 is below that
    let out = one(&validation_state(r#"{limits: {cpu: "3"}}"#));
    assert_eq!(out.admitted.len(), 1, "{:?}", out.pending);
    let usage = &out.admitted[0].admission.pod_set_assignments[0].resource_usage;
    assert_eq!(
        usage["cpu"],
        gangplank::model::Quantity::parse("4").unwrap()
    );
    // requests equal to limits are fine too
    let out = one(&validation_state(
        r#"{requests: {cpu: "3"}, limits: {cpu: "3"}}"#,
    ));
    assert_eq!(out.admitted.len(), 1);
}

#[test]
fn config_cluster_prints_the_effective_kueue_configuration_of_a_dump() {
    let out = gangplank(&["config", "--cluster", "-f", "tests/fixtures/fair-sharing"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("source: ConfigMap kueue-system/kueue-manager-config"),
        "{text}"
    );
    assert!(
        text.contains("fairSharing: on, preemptionStrategies [LessThanOrEqualToFinalShare, LessThanInitialShare]"),
        "{text}"
    );
    assert!(
        text.contains("FairSharingPreemptWithinNominal=true (default)"),
        "{text}"
    );
    let out = gangplank(&[
        "config",
        "--cluster",
        "-f",
        "tests/fixtures/fair-sharing/cluster.yaml",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("assumed Kueue's defaults"), "{text}");
    assert!(
        text.contains("fairSharing: off (classical preemption)"),
        "{text}"
    );
}

/// Fair sharing on the engine's worst case (every head needs preemption): plans in
/// well under a second and preempts by priority within each ClusterQueue.
#[test]
fn fair_sharing_plans_the_preemption_heavy_cluster() {
    let mut s = preemption_heavy(2);
    s.kueue_config = Some(gangplank::model::kueue_config::KueueConfig {
        fair_sharing: Some(gangplank::model::kueue_config::FairSharingConfig {
            preemption_strategies: vec![S::LessThanOrEqualToFinalShare, S::LessThanInitialShare],
        }),
        ..Default::default()
    });
    let t = std::time::Instant::now();
    let p = gangplank::engine::plan(
        &s,
        &PlanOptions {
            now: NOW,
            max_cycles: 30,
            pending_in_every_cycle: false,
            ..Default::default()
        },
    );
    eprintln!("fair plan of preemption_heavy(2): {:?}", t.elapsed());
    let mut seen = BTreeSet::new();
    for c in &p.cycles {
        for v in &c.preempted {
            seen.insert(v.workload.clone());
        }
    }
    assert!(
        !seen.is_empty(),
        "within-queue preemption by priority happens"
    );
    assert!(!p.warnings.iter().any(|w| w.contains("not implement")));
}

// --- Kueue's configuration beyond fair sharing: request rewriting, feature gates

use gangplank::model::kueue_config::{KueueConfig, ResourceTransformation};

fn with_config(b: ClusterBuilder, cfg: KueueConfig) -> ClusterState {
    let mut s = b.build();
    s.kueue_config = Some(cfg);
    s
}

fn admitted_keys(s: &ClusterState) -> Vec<String> {
    one(s).admitted.iter().map(|a| a.workload.clone()).collect()
}

#[test]
fn exclude_resource_prefixes_drop_requests_the_queue_does_not_cover() {
    let b = ClusterBuilder::new()
        .flavor("default")
        .cq(CqBuilder::new("cq").quota("default", "cpu", "4"))
        .lq("ns", "lq", "cq")
        .wl(pend(
            "ns",
            "w",
            "lq",
            0,
            NOW,
            &[("cpu", "1"), ("example.com/license", "1")],
        ));
    // without the configuration the license is an uncovered resource: NoFit
    assert!(admitted_keys(&b.clone().build()).is_empty());
    let cfg = KueueConfig {
        exclude_resource_prefixes: vec!["example.com/".to_string()],
        ..Default::default()
    };
    assert_eq!(admitted_keys(&with_config(b, cfg)), ["ns/w"]);
}

#[test]
fn resource_transformations_replace_the_input_with_their_outputs() {
    let b = ClusterBuilder::new()
        .flavor("default")
        .cq(CqBuilder::new("cq").quota("default", "example.com/gpu-memory", "40Gi"))
        .lq("ns", "lq", "cq")
        .wl(pend(
            "ns",
            "w",
            "lq",
            0,
            NOW,
            &[("nvidia.com/mig-1g.5gb", "2")],
        ));
    assert!(admitted_keys(&b.clone().build()).is_empty());
    let cfg = KueueConfig {
        transformations: vec![ResourceTransformation {
            input: "nvidia.com/mig-1g.5gb".to_string(),
            replace: true,
            multiply_by: None,
            outputs: [("example.com/gpu-memory".to_string(), qty("5Gi"))].into(),
        }],
        ..Default::default()
    };
    let out = one(&with_config(b, cfg));
    assert_eq!(out.admitted.len(), 1, "{:?}", out.pending);
    let usage = &out.admitted[0].admission.pod_set_assignments[0].resource_usage;
    assert_eq!(usage["example.com/gpu-memory"], qty("10Gi"));
    assert!(!usage.contains_key("nvidia.com/mig-1g.5gb"));
}

#[test]
fn partial_admission_gate_off_admits_only_full_counts() {
    let b = ClusterBuilder::new()
        .flavor("default")
        .cq(CqBuilder::new("cq").quota("default", "cpu", "4"))
        .lq("ns", "lq", "cq")
        .wl(WlBuilder::new("ns", "elastic")
            .queue("lq")
            .pod_set("workers", 8, &[("cpu", "1")])
            .with_last_pod_set(|p| p.min_count = Some(2)));
    assert_eq!(admitted_keys(&b.clone().build()), ["ns/elastic"]);
    let cfg = KueueConfig {
        feature_gates: [("PartialAdmission".to_string(), false)].into(),
        ..Default::default()
    };
    assert!(admitted_keys(&with_config(b, cfg)).is_empty());
}

#[test]
fn priority_sorting_within_cohort_gate_off_orders_by_time_only() {
    // two ClusterQueues without quota under a cohort of 4 cpu: both heads borrow
    let b = ClusterBuilder::new()
        .flavor("default")
        .cq(CqBuilder::new("a")
            .cohort("co")
            .quota("default", "cpu", "0"))
        .cq(CqBuilder::new("b")
            .cohort("co")
            .quota("default", "cpu", "0"))
        .cohort(
            "co",
            None,
            vec![rg(&["cpu"], vec![fq("default", vec![rq("cpu", "4")])])],
        )
        .lq("ns", "la", "a")
        .lq("ns", "lb", "b")
        .wl(pend("ns", "old-low", "la", 0, NOW - 1000, &[("cpu", "3")]))
        .wl(pend("ns", "new-high", "lb", 100, NOW, &[("cpu", "3")]));
    assert_eq!(admitted_keys(&b.clone().build()), ["ns/new-high"]);
    let cfg = KueueConfig {
        feature_gates: [("PrioritySortingWithinCohort".to_string(), false)].into(),
        ..Default::default()
    };
    assert_eq!(admitted_keys(&with_config(b, cfg)), ["ns/old-low"]);
}

/// A whole cycle of "reclaim borrowable quota from user using the most": the preemptor
/// waits for b1 and its explanation says why b1 was chosen, in shares.
#[test]
fn a_fair_preemption_is_explained_in_shares() {
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
    )
    .lq("", "lq-a", "a")
    .wl(WlBuilder::new("", "a_incoming")
        .uid("a_incoming")
        .queue("lq-a")
        .created(NOW - 1000)
        .pod_set("main", 1, &[("cpu", "1")]))
    .fair_sharing(&[]);
    let out = one(&b.build());
    let victims: Vec<(&str, &str)> = out
        .preempted
        .iter()
        .map(|p| (p.workload.as_str(), p.reason.as_str()))
        .collect();
    assert_eq!(victims, [("/b1", FAIR)]);
    assert!(
        out.preempted[0]
            .message
            .contains("due to Fair Sharing within the cohort"),
        "{}",
        out.preempted[0].message
    );
    let p = out
        .pending
        .iter()
        .find(|p| p.workload == "/a_incoming")
        .unwrap();
    let reason = &p.explanation.reason;
    // a with the workload borrows 1 of 9 lendable (0.11); b after losing b1 borrows 1 (0.11)
    assert!(
        reason.contains(
            "would preempt /b1: its queue's share after the preemption (b 0.11) stays at or above ours (a 0.11)"
        ),
        "{reason}"
    );
}

#[test]
fn configured_behaviour_the_plan_does_not_model_is_a_warning() {
    use gangplank::model::ConditionStatus;
    use gangplank::model::kueue_config::WaitForPodsReadyConfig;
    let b = ClusterBuilder::new()
        .flavor("default")
        .cq(CqBuilder::new("cq").quota("default", "cpu", "4"))
        .lq("ns", "lq", "cq")
        .wl(held("ns", "starting", "cq", 0, "default", &[("cpu", "1")]))
        .wl(pend("ns", "next", "lq", 0, NOW, &[("cpu", "1")]));
    let cfg = KueueConfig {
        wait_for_pods_ready: Some(WaitForPodsReadyConfig {
            timeout: "5m".to_string(),
            block_admission: true,
        }),
        manage_jobs_without_queue_name: true,
        ..Default::default()
    };
    let warnings = one(&with_config(b.clone(), cfg.clone())).warnings;
    assert!(
        warnings.iter().any(|w| w.contains(
            "waitForPodsReady.blockAdmission is on and 1 admitted workload is not PodsReady (ns/starting)"
        )),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("manageJobsWithoutQueueName is on"))
    );
    // once its pods are ready, nothing blocks
    let b = b.wl(
        held("ns", "starting", "cq", 0, "default", &[("cpu", "1")]).condition(
            "PodsReady",
            ConditionStatus::True,
            "PodsReady",
            NOW,
        ),
    );
    let warnings = one(&with_config(b, cfg)).warnings;
    assert!(
        !warnings.iter().any(|w| w.contains("blockAdmission")),
        "{warnings:?}"
    );
    // without a configuration: none of these
    let plain = ClusterBuilder::new().flavor("default").build();
    assert!(one(&plain).warnings.is_empty());
}

// --- test/integration/singlecluster/scheduler/fairsharing/fair_sharing_test.go, played
// cycle by cycle: admissions written back, victims released and requeued, finished
// workloads removed (as Kueue's controllers would between cycles)

struct Story {
    state: ClusterState,
    memory: SchedulerMemory,
    time: i64,
}

impl Story {
    fn new(b: ClusterBuilder) -> Self {
        Story {
            state: b.fair_sharing(&[]).build(),
            memory: SchedulerMemory::default(),
            time: NOW,
        }
    }

    fn key(ns: &str, name: &str) -> (String, String) {
        (ns.to_string(), name.to_string())
    }

    fn add(&mut self, w: WlBuilder) {
        let w = w.0;
        self.state
            .workloads
            .insert(Self::key(&w.namespace, &w.name), std::sync::Arc::new(w));
    }

    /// Runs cycles until one changes nothing.
    fn settle(&mut self) {
        for _ in 0..100 {
            self.time += 1000;
            let out = schedule_cycle(
                &self.state,
                &self.memory,
                &PlanOptions {
                    now: self.time,
                    ..Default::default()
                },
            );
            self.memory = out.memory.clone();
            if out.admitted.is_empty() && out.preempted.is_empty() {
                return;
            }
            let mut touched = Vec::new();
            for a in &out.admitted {
                let (ns, name) = a.workload.split_once('/').unwrap();
                let mut w = (*self.state.workloads[&Self::key(ns, name)]).clone();
                w.admission = Some(a.admission.clone());
                w.conditions.retain(|c| c.type_ != "QuotaReserved");
                w.conditions.push(gangplank::model::Condition {
                    type_: "QuotaReserved".into(),
                    status: gangplank::model::ConditionStatus::True,
                    reason: "QuotaReserved".into(),
                    message: a.message.clone(),
                    last_transition_time: Some(self.time),
                });
                self.add(WlBuilder(w));
                touched.push(a.cluster_queue.clone());
            }
            for p in &out.preempted {
                // the job stops and Kueue clears the admission: requeued, same position
                let (ns, name) = p.workload.split_once('/').unwrap();
                let mut w = (*self.state.workloads[&Self::key(ns, name)]).clone();
                w.admission = None;
                w.conditions.retain(|c| c.type_ != "QuotaReserved");
                self.add(WlBuilder(w));
                touched.push(p.cluster_queue.clone());
            }
            for cq in touched {
                self.memory.notify_quota_change(&self.state, &cq);
            }
        }
        panic!("the story does not settle");
    }

    /// Finishes (removes) `n` admitted workloads of `cq`, oldest first.
    fn finish(&mut self, cq: &str, n: usize) {
        let mut running: Vec<(i64, (String, String))> = self
            .state
            .workloads
            .values()
            .filter(|w| w.admission.as_ref().is_some_and(|a| a.cluster_queue == cq))
            .map(|w| (w.creation_timestamp, Self::key(&w.namespace, &w.name)))
            .collect();
        running.sort();
        for (_, k) in running.into_iter().take(n) {
            self.state.workloads.remove(&k);
        }
        self.memory.notify_quota_change(&self.state, cq);
    }

    fn running(&self, cq: &str) -> usize {
        self.state
            .workloads
            .values()
            .filter(|w| w.admission.as_ref().is_some_and(|a| a.cluster_queue == cq))
            .count()
    }

    /// Kueue's `weightedShare` status (ceil of the precise share).
    fn weighted_share(&self, cq: &str) -> f64 {
        let (cqs, _) = gangplank::engine::fair::share_report(&self.state).unwrap();
        cqs[cq].drs.weighted()
    }
}

fn story_workloads(s: &mut Story, cq: &str, n: usize, from: i64) {
    for i in 0..n {
        s.add(pend(
            "ns",
            &format!("{cq}-{i:02}"),
            cq,
            0,
            from + i as i64,
            &[("cpu", "1")],
        ));
    }
}

#[test]
fn integration_preemption_is_disabled_admits_workloads_respecting_fair_share() {
    let mut b = ClusterBuilder::new().flavor("default");
    for (n, q) in [("a", "3"), ("b", "1"), ("shared", "4")] {
        b = b
            .cq(CqBuilder::new(n).cohort("all").quota("default", "cpu", q))
            .lq("ns", n, n);
    }
    let mut s = Story::new(b);
    story_workloads(&mut s, "a", 10, NOW - 100_000);
    s.settle();
    assert_eq!(s.running("a"), 8);
    assert_eq!(s.weighted_share("a"), 625.0);
    story_workloads(&mut s, "b", 5, NOW - 50_000);
    s.settle();
    let mut seen = Vec::new();
    for _ in 0..4 {
        s.finish("a", 1);
        s.settle();
        seen.push((s.running("a"), s.running("b")));
    }
    // b, b, b, then a (equal shares 375: a's workloads are older)
    assert_eq!(seen, [(7, 1), (6, 2), (5, 3), (5, 3)]);
    assert_eq!(
        (s.weighted_share("a"), s.weighted_share("b")),
        (250.0, 250.0)
    );
    s.finish("a", 2);
    s.settle();
    assert_eq!((s.running("a"), s.running("b")), (4, 4));
    assert_eq!(
        (s.weighted_share("a"), s.weighted_share("b")),
        (125.0, 375.0)
    );
}

#[test]
fn integration_preemption_is_enabled_admits_workloads_respecting_fair_share() {
    let mut b = ClusterBuilder::new().flavor("default");
    for n in ["a", "b", "c"] {
        b = b
            .cq(CqBuilder::new(n)
                .cohort("all")
                .quota("default", "cpu", "3")
                .preemption(W::LowerPriority, R::Any))
            .lq("ns", n, n);
    }
    let mut s = Story::new(b);
    story_workloads(&mut s, "a", 10, NOW - 100_000);
    s.settle();
    assert_eq!(s.running("a"), 9);
    assert_eq!(s.weighted_share("a"), 6.0 * 1000.0 / 9.0);
    story_workloads(&mut s, "b", 5, NOW - 50_000);
    s.settle();
    assert_eq!((s.running("a"), s.running("b")), (5, 4));
    assert_eq!(s.weighted_share("a"), 2.0 * 1000.0 / 9.0);
    assert_eq!(s.weighted_share("b"), 1.0 * 1000.0 / 9.0);
    s.add(pend("ns", "c0", "c", 0, NOW - 10_000, &[("cpu", "1")]));
    s.settle();
    assert_eq!((s.running("a"), s.running("b"), s.running("c")), (4, 4, 1));
    assert_eq!(s.weighted_share("a").ceil(), 112.0);
}

impl Story {
    /// One cycle: admissions written back; victims get `Evicted=True` and keep their
    /// quota until [`Story::release`] (their job is still stopping).
    fn cycle_keeping_victims(&mut self) -> gangplank::engine::CycleOutcome {
        self.time += 1000;
        let out = schedule_cycle(
            &self.state,
            &self.memory,
            &PlanOptions {
                now: self.time,
                ..Default::default()
            },
        );
        self.memory = out.memory.clone();
        for a in &out.admitted {
            let (ns, name) = a.workload.split_once('/').unwrap();
            let mut w = (*self.state.workloads[&Self::key(ns, name)]).clone();
            w.admission = Some(a.admission.clone());
            w.conditions
                .retain(|c| c.type_ != "QuotaReserved" && c.type_ != "Evicted");
            w.conditions.push(gangplank::model::Condition {
                type_: "QuotaReserved".into(),
                status: gangplank::model::ConditionStatus::True,
                reason: "QuotaReserved".into(),
                message: a.message.clone(),
                last_transition_time: Some(self.time),
            });
            self.add(WlBuilder(w));
        }
        for p in &out.preempted {
            let (ns, name) = p.workload.split_once('/').unwrap();
            let mut w = (*self.state.workloads[&Self::key(ns, name)]).clone();
            if !w.is_evicted() {
                w.conditions.push(gangplank::model::Condition {
                    type_: "Evicted".into(),
                    status: gangplank::model::ConditionStatus::True,
                    reason: "Preempted".into(),
                    message: p.message.clone(),
                    last_transition_time: Some(self.time),
                });
            }
            self.add(WlBuilder(w));
        }
        out
    }

    /// The victim's job stopped: Kueue clears its admission and requeues it.
    fn release(&mut self, ns: &str, name: &str) {
        let mut w = (*self.state.workloads[&Self::key(ns, name)]).clone();
        let cq = w.admission.take().map(|a| a.cluster_queue).unwrap();
        w.conditions.retain(|c| c.type_ != "QuotaReserved");
        self.add(WlBuilder(w));
        self.memory.notify_quota_change(&self.state, &cq);
    }
}

#[test]
fn integration_zero_weight_should_not_cause_an_infinite_preemption_cycle() {
    let mut b = ClusterBuilder::new().flavor("default").cohort(
        "top-cohort",
        None,
        vec![rg(&["cpu"], vec![fq("default", vec![rq("cpu", "8")])])],
    );
    for n in ["best-effort-cq-a", "best-effort-cq-b"] {
        b = b
            .cq(CqBuilder::new(n)
                .cohort("top-cohort")
                .fair_sharing_weight("0")
                .quota("default", "cpu", "0")
                .preemption(W::Never, R::Any))
            .lq("ns", n, n);
    }
    let mut s = Story::new(b);
    s.add(pend(
        "ns",
        "a1",
        "best-effort-cq-a",
        9001,
        NOW - 3000,
        &[("cpu", "4")],
    ));
    s.add(pend(
        "ns",
        "a2",
        "best-effort-cq-a",
        100,
        NOW - 2000,
        &[("cpu", "4")],
    ));
    s.settle();
    assert_eq!(s.running("best-effort-cq-a"), 2);
    s.add(pend(
        "ns",
        "b1",
        "best-effort-cq-b",
        100,
        NOW - 1000,
        &[("cpu", "4")],
    ));
    let out = s.cycle_keeping_victims();
    let victims: Vec<(&str, &str)> = out
        .preempted
        .iter()
        .map(|p| (p.workload.as_str(), p.reason.as_str()))
        .collect();
    assert_eq!(victims, [("ns/a2", FAIR)]);
    s.release("ns", "a2");
    s.settle();
    assert_eq!(
        (s.running("best-effort-cq-a"), s.running("best-effort-cq-b")),
        (1, 1)
    );
    // settled: a2 cannot take its quota back (no preemption cycle)
    let out = s.cycle_keeping_victims();
    assert!(out.preempted.is_empty() && out.admitted.is_empty());
}

#[test]
fn integration_should_prevent_other_workloads_from_stealing_quota_when_preemptor_is_waiting_for_multiple_evictions()
 {
    let queue = |n: &str, cpu: &str, mem: &str| {
        CqBuilder::new(n)
            .cohort("thrash-cohort")
            .group(rg(
                &["cpu", "memory"],
                vec![fq("default", vec![rq("cpu", cpu), rq("memory", mem)])],
            ))
            .preemption(W::Never, R::Any)
    };
    let b = ClusterBuilder::new()
        .flavor("default")
        .cq(queue("cq-1", "10", "0"))
        .cq(queue("cq-2", "0", "10"))
        .lq("ns", "cq-1", "cq-1")
        .lq("ns", "cq-2", "cq-2");
    let mut s = Story::new(b);
    let mut cfg = s.state.kueue_config.take().unwrap();
    cfg.feature_gates
        .insert("PrioritizePreemptorWorkloads".to_string(), true);
    s.state.kueue_config = Some(cfg);
    s.add(pend(
        "ns",
        "wl-a",
        "cq-2",
        100,
        NOW - 3000,
        &[("cpu", "1"), ("memory", "0")],
    ));
    s.add(pend(
        "ns",
        "wl-b",
        "cq-2",
        100,
        NOW - 2000,
        &[("cpu", "1"), ("memory", "0")],
    ));
    s.settle();
    assert_eq!(s.running("cq-2"), 2);
    s.add(pend(
        "ns",
        "preemptor",
        "cq-1",
        0,
        NOW - 1000,
        &[("cpu", "10"), ("memory", "10")],
    ));
    let out = s.cycle_keeping_victims();
    let mut victims: Vec<&str> = out.preempted.iter().map(|p| p.workload.as_str()).collect();
    victims.sort();
    assert_eq!(victims, ["ns/wl-a", "ns/wl-b"]);
    s.release("ns", "wl-a");
    for _ in 0..3 {
        let out = s.cycle_keeping_victims();
        assert!(
            !out.admitted.iter().any(|a| a.workload == "ns/wl-a"),
            "wl-a stole the preemptor's quota"
        );
    }
    s.release("ns", "wl-b");
    let out = s.cycle_keeping_victims();
    let admitted: Vec<&str> = out.admitted.iter().map(|a| a.workload.as_str()).collect();
    assert_eq!(admitted, ["ns/preemptor"]);
}

impl Story {
    fn cohort_share(&self, cohort: &str) -> f64 {
        let (_, cohorts) = gangplank::engine::fair::share_report(&self.state).unwrap();
        cohorts[cohort].drs.weighted()
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn integration_hierarchical_cohorts_admits_workloads_respecting_fair_share() {
    let mut b = ClusterBuilder::new().flavor("default");
    for (c, p) in [
        ("first-left", "root"),
        ("first-right", "root"),
        ("second-left", "first-left"),
        ("second-right", "first-left"),
    ] {
        b = cohort_obj(b, c, Some(p), None);
    }
    b = cohort_obj(b, "bank", Some("first-right"), Some("10"));
    for n in ["second-left", "second-right"] {
        b = b
            .cq(CqBuilder::new(n).cohort(n).quota("default", "cpu", "2"))
            .lq("ns", n, n);
    }
    let mut s = Story::new(b);
    for i in 0..5 {
        for n in ["second-left", "second-right"] {
            s.add(pend(
                "ns",
                &format!("{n}-{i}"),
                n,
                0,
                NOW - 10_000 + i,
                &[("cpu", "1")],
            ));
        }
    }
    s.settle();
    assert_eq!(
        (s.running("second-left"), s.running("second-right")),
        (5, 5)
    );
    assert!(close(s.cohort_share("first-left"), 6.0 * 1000.0 / 14.0));
    assert!(close(s.cohort_share("first-right"), 0.0));
    assert!(close(s.cohort_share("second-left"), 3.0 * 1000.0 / 14.0));
    assert!(close(s.cohort_share("second-right"), 3.0 * 1000.0 / 14.0));
    assert!(close(s.cohort_share("bank"), 0.0));
}

#[test]
fn integration_hierarchical_cohorts_preempts_workloads_to_enforce_fair_share() {
    let mut b = ClusterBuilder::new().flavor("default");
    b = cohort_obj(b, "root", None, Some("12"));
    b = cohort_obj(b, "research", Some("root"), None);
    b = cohort_obj(b, "chemistry", Some("research"), None);
    b = cohort_obj(b, "physics", Some("research"), None);
    b = cohort_obj(b, "llm", Some("research"), None).cohort_weight("llm", "2.0");
    b = cohort_obj(b, "best-effort", Some("root"), None).cohort_weight("best-effort", "0.5");
    let queues = [
        ("chemistry-queue", "chemistry", true),
        ("physics-queue", "physics", true),
        ("llm-queue", "llm", true),
        ("best-effort-queue", "best-effort", false),
    ];
    for (q, c, reclaim) in queues {
        let mut cq = CqBuilder::new(q).cohort(c).quota("default", "cpu", "0");
        if reclaim {
            cq = cq.preemption(W::Never, R::LowerPriority);
        }
        b = b.cq(cq).lq("ns", q, q);
    }
    let mut s = Story::new(b);
    let mut t = NOW - 100_000;
    for i in 0..6 {
        for q in ["best-effort-queue", "physics-queue"] {
            t += 1;
            s.add(pend(
                "ns",
                &format!("{q}-old-{i}"),
                q,
                -1,
                t,
                &[("cpu", "1")],
            ));
        }
    }
    s.settle();
    assert!(close(s.cohort_share("best-effort"), 1000.0));
    assert!(close(s.cohort_share("physics"), 500.0));
    assert_eq!(
        (s.running("best-effort-queue"), s.running("physics-queue")),
        (6, 6)
    );
    for i in 0..6 {
        for (q, _, _) in queues {
            t += 1;
            s.add(pend(
                "ns",
                &format!("{q}-new-{i}"),
                q,
                100,
                t,
                &[("cpu", "1")],
            ));
        }
    }
    s.settle();
    assert!(close(
        s.cohort_share("best-effort"),
        4.0 * 1000.0 / 12.0 / 0.5
    ));
    assert!(close(s.cohort_share("research"), 8.0 * 1000.0 / 12.0));
    assert!(close(s.cohort_share("chemistry"), 2.0 * 1000.0 / 12.0));
    assert!(close(s.cohort_share("physics"), 2.0 * 1000.0 / 12.0));
    assert!(close(s.cohort_share("llm"), 4.0 * 1000.0 / 12.0 / 2.0));
    assert_eq!(
        [
            s.running("best-effort-queue"),
            s.running("chemistry-queue"),
            s.running("physics-queue"),
            s.running("llm-queue")
        ],
        [4, 2, 2, 4]
    );
}

impl Story {
    /// One cycle, then every victim's job stops (released) and cycles run until quiet.
    fn step_and_settle(&mut self) {
        let out = self.cycle_keeping_victims();
        for p in &out.preempted {
            let (ns, name) = p.workload.split_once('/').unwrap();
            self.release(ns, name);
        }
        self.settle();
    }
}

/// "ClusterQueue head is ineligible for admission due to DominantResourceShare":
/// root-cohort › cohort-a (9 cpu) › cq-p1, cq-p2 (0 cpu, weight 1); cq-p1 runs 4 × 2.
fn ineligible_head(blocking: &[(&str, i32)], last: &str) -> Story {
    let flavor_q = |n: &str| {
        CqBuilder::new(n)
            .cohort("cohort-a")
            .fair_sharing_weight("1")
            .quota("flavor1", "cpu", "0")
            .fungibility(
                FungibilityPolicy::TryNextFlavor,
                FungibilityPolicy::TryNextFlavor,
                None,
            )
            .preemption(W::LowerPriority, R::Any)
    };
    let b = ClusterBuilder::new()
        .flavor("flavor1")
        .cohort(
            "cohort-a",
            Some("root-cohort"),
            vec![rg(&["cpu"], vec![fq("flavor1", vec![rq("cpu", "9")])])],
        )
        .cohort_weight("cohort-a", "1")
        .cq(flavor_q("cq-p1"))
        .cq(flavor_q("cq-p2"))
        .lq("ns", "cq-p1", "cq-p1")
        .lq("ns", "cq-p2", "cq-p2");
    let mut s = Story::new(b);
    for i in 0..4 {
        s.add(pend(
            "ns",
            &format!("p1-{i}"),
            "cq-p1",
            0,
            NOW - 100_000 + i,
            &[("cpu", "2")],
        ));
    }
    s.settle();
    assert_eq!(s.running("cq-p1"), 4);
    for (i, (q, prio)) in blocking.iter().enumerate() {
        s.add(pend(
            "ns",
            &format!("blocking-{i}"),
            "cq-p2",
            *prio,
            NOW - 50_000 + i as i64,
            &[("cpu", q)],
        ));
        s.step_and_settle();
        assert_eq!(s.running("cq-p2"), 0, "the {q}-cpu head cannot be admitted");
    }
    s.add(pend(
        "ns",
        "last",
        "cq-p2",
        0,
        NOW - 10_000,
        &[("cpu", last)],
    ));
    s.step_and_settle();
    s
}

#[test]
fn integration_workload_of_size_5_preempts_using_less_than_initial_share_policy_and_admits() {
    let s = ineligible_head(&[], "5");
    assert_eq!((s.running("cq-p1"), s.running("cq-p2")), (2, 1));
    assert!(close(s.weighted_share("cq-p1"), 4.0 * 1000.0 / 9.0));
    assert!(close(s.weighted_share("cq-p2"), 5.0 * 1000.0 / 9.0));
}

#[test]
fn integration_workload_of_size_5_admits_with_inadmissible_higher_priority_workload_at_cluster_queue_head()
 {
    let s = ineligible_head(&[("6", 999)], "5");
    assert_eq!((s.running("cq-p1"), s.running("cq-p2")), (2, 1));
    assert!(close(s.weighted_share("cq-p2"), 5.0 * 1000.0 / 9.0));
}

#[test]
fn integration_workload_of_size_4_admits_with_inadmissible_higher_priority_workload_at_cluster_queue_head()
 {
    let s = ineligible_head(&[("6", 999)], "4");
    assert_eq!((s.running("cq-p1"), s.running("cq-p2")), (2, 1));
    assert!(close(s.weighted_share("cq-p1"), 4.0 * 1000.0 / 9.0));
    assert!(close(s.weighted_share("cq-p2"), 4.0 * 1000.0 / 9.0));
}

#[test]
fn integration_workload_admits_when_several_higher_priority_blocking_workloads_in_front() {
    let s = ineligible_head(&[("7", 999), ("6", 999)], "5");
    assert_eq!((s.running("cq-p1"), s.running("cq-p2")), (2, 1));
    assert!(close(s.weighted_share("cq-p2"), 5.0 * 1000.0 / 9.0));
}

/// "ClusterQueue head has inadmissible workload": root › cohort-a (3 cpu) › cq1 (0);
/// cq2 (0) directly under root runs 2 × 1 cpu.
fn head_inadmissible() -> Story {
    let q = |n: &str, cohort: &str| {
        CqBuilder::new(n)
            .cohort(cohort)
            .fair_sharing_weight("1")
            .quota("flavor1", "cpu", "0")
            .fungibility(
                FungibilityPolicy::TryNextFlavor,
                FungibilityPolicy::TryNextFlavor,
                None,
            )
            .preemption(W::LowerPriority, R::Any)
    };
    let b = ClusterBuilder::new()
        .flavor("flavor1")
        .cohort(
            "cohort-a",
            Some("root"),
            vec![rg(&["cpu"], vec![fq("flavor1", vec![rq("cpu", "3")])])],
        )
        .cohort_weight("cohort-a", "1")
        .cq(q("cq1", "cohort-a"))
        .cq(q("cq2", "root"))
        .lq("ns", "cq1", "cq1")
        .lq("ns", "cq2", "cq2");
    let mut s = Story::new(b);
    for i in 0..2 {
        s.add(pend(
            "ns",
            &format!("cq2-{i}"),
            "cq2",
            0,
            NOW - 100_000 + i,
            &[("cpu", "1")],
        ));
    }
    s.settle();
    assert_eq!(s.running("cq2"), 2);
    s
}

#[test]
fn integration_workload_which_fits_behind_cluster_queue_head_is_able_to_admit() {
    let mut s = head_inadmissible();
    s.add(pend("ns", "big", "cq1", 999, NOW - 50_000, &[("cpu", "4")]));
    s.step_and_settle();
    assert_eq!(s.running("cq1"), 0);
    s.add(pend("ns", "fits", "cq1", 0, NOW - 40_000, &[("cpu", "3")]));
    s.step_and_settle();
    assert_eq!((s.running("cq1"), s.running("cq2")), (1, 0));
    assert!(close(s.weighted_share("cq1"), 1000.0));
    assert!(close(s.weighted_share("cq2"), 0.0));
}

#[test]
fn integration_sticky_workload_deleted_next_workload_can_admit() {
    let mut s = head_inadmissible();
    s.add(pend(
        "ns",
        "sticky",
        "cq1",
        99,
        NOW - 50_000,
        &[("cpu", "3")],
    ));
    let out = s.cycle_keeping_victims();
    assert_eq!(out.preempted.len(), 2, "the sticky preemptor evicts both");
    s.add(pend("ns", "next", "cq1", 0, NOW - 40_000, &[("cpu", "3")]));
    s.state.workloads.remove(&Story::key("ns", "sticky"));
    s.release("ns", "cq2-0");
    s.release("ns", "cq2-1");
    s.settle();
    let running: Vec<String> = s
        .state
        .workloads
        .values()
        .filter(|w| w.admission.is_some())
        .map(|w| w.name.clone())
        .collect();
    assert_eq!(running, ["next"]);
    assert!(close(s.weighted_share("cq1"), 1000.0));
}

#[test]
fn integration_prefers_flavor_with_remaining_guarantees_at_cohort_level() {
    let two = |f1: (&str, Option<&str>), f2: (&str, Option<&str>)| {
        rg(
            &["cpu"],
            vec![
                fq("flavor1", vec![rq_limits("cpu", f1.0, f1.1, None)]),
                fq("flavor2", vec![rq_limits("cpu", f2.0, f2.1, None)]),
            ],
        )
    };
    let ten = Some("10");
    let mut b = ClusterBuilder::new().flavor("flavor1").flavor("flavor2");
    b = cohort_obj(b, "root-cohort", None, None);
    for c in ["cohort-a", "cohort-b"] {
        b = b
            .cohort(c, Some("root-cohort"), vec![two(("0", ten), ("0", ten))])
            .cohort_weight(c, "1");
    }
    for (n, c, f1, f2) in [
        ("cq-p1", "cohort-a", "3", "3"),
        ("cq-p2", "cohort-a", "3", "3"),
        ("cq-p3", "cohort-a", "2", "4"),
        ("cq-p4", "cohort-b", "2", "0"),
    ] {
        b = b
            .cq(CqBuilder::new(n)
                .cohort(c)
                .fair_sharing_weight("1")
                .group(two((f1, ten), (f2, ten)))
                .fungibility(
                    FungibilityPolicy::TryNextFlavor,
                    FungibilityPolicy::TryNextFlavor,
                    None,
                )
                .preemption(W::LowerPriority, R::Any))
            .lq("ns", n, n);
    }
    let mut s = Story::new(b);
    for i in 0..18 {
        s.add(pend(
            "ns",
            &format!("w{i:02}"),
            "cq-p1",
            0,
            NOW - 100_000 + i,
            &[("cpu", "1")],
        ));
    }
    s.settle();
    assert_eq!(s.running("cq-p1"), 18);
    assert!(close(s.weighted_share("cq-p1"), 600.0));
    assert!(close(s.cohort_share("cohort-a"), 0.0));
}

#[test]
fn integration_queue_can_reclaim_its_nominal_quota_with_large_quotas_and_weights() {
    let mut b = ClusterBuilder::new().flavor("default");
    for n in ["a", "b"] {
        b = b
            .cq(CqBuilder::new(n)
                .cohort("all")
                .fair_sharing_weight("300")
                .quota("default", "cpu", "600")
                .preemption(W::LowerPriority, R::Any))
            .lq("ns", n, n);
    }
    let mut s = Story::new(b);
    for i in 0..10 {
        s.add(pend(
            "ns",
            &format!("a{i}"),
            "a",
            0,
            NOW - 100_000 + i,
            &[("cpu", "100")],
        ));
    }
    s.settle();
    assert_eq!(s.running("a"), 10);
    s.add(pend("ns", "b0", "b", 0, NOW - 10_000, &[("cpu", "500")]));
    s.step_and_settle();
    assert_eq!((s.running("a"), s.running("b")), (7, 1));
}

#[test]
fn integration_guaranteed_workloads_cause_preemption_of_a_single_best_effort_workload() {
    let b = ClusterBuilder::new()
        .flavor("default")
        .cq(CqBuilder::new("best-effort-a")
            .cohort("all")
            .quota("default", "cpu", "0"))
        .cq(CqBuilder::new("best-effort-b")
            .cohort("all")
            .quota("default", "cpu", "0"))
        .cq(CqBuilder::new("guaranteed")
            .cohort("all")
            .quota("default", "cpu", "8")
            .preemption(W::Never, R::Any))
        .lq("ns", "best-effort-a", "best-effort-a")
        .lq("ns", "best-effort-b", "best-effort-b")
        .lq("ns", "guaranteed", "guaranteed");
    let mut s = Story::new(b);
    s.add(pend(
        "ns",
        "be-a",
        "best-effort-a",
        2,
        NOW - 30_000,
        &[("cpu", "4")],
    ));
    s.settle();
    s.add(pend(
        "ns",
        "be-b",
        "best-effort-b",
        1,
        NOW - 20_000,
        &[("cpu", "4")],
    ));
    s.settle();
    assert_eq!(
        (s.running("best-effort-a"), s.running("best-effort-b")),
        (1, 1)
    );
    s.add(pend(
        "ns",
        "g",
        "guaranteed",
        0,
        NOW - 10_000,
        &[("cpu", "4")],
    ));
    let out = s.cycle_keeping_victims();
    let victims: Vec<&str> = out.preempted.iter().map(|p| p.workload.as_str()).collect();
    assert_eq!(victims, ["ns/be-b"]);
    s.release("ns", "be-b");
    s.settle();
    assert_eq!(
        (
            s.running("best-effort-a"),
            s.running("best-effort-b"),
            s.running("guaranteed")
        ),
        (1, 0, 1)
    );
}

#[test]
fn integration_shouldnt_reserve_quota_because_not_enough_resources() {
    let mut b = ClusterBuilder::new().flavor("default");
    for (n, q) in [("a", "3"), ("b", "1"), ("shared", "4")] {
        b = b
            .cq(CqBuilder::new(n).cohort("all").quota("default", "cpu", q))
            .lq("ns", n, n);
    }
    let s = b
        .wl(WlBuilder::new("ns", "big")
            .queue("a")
            .pod_set("main", 1, &[("cpu", "10")]))
        .fair_sharing(&[])
        .build();
    let out = one(&s);
    assert!(out.admitted.is_empty());
    let p = &out.pending[0];
    assert_eq!(p.condition_reason, "ExceedsMaxQuota");
    // Kueue at the reference revision words it "…, previously considered podsets
    // requests (0) + current podset request (10) > maximum capacity (8)"; gangplank
    // keeps the older wording (docs/engine.md), with the same figures.
    assert_eq!(
        p.message,
        "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default, request > maximum capacity (10 > 8)"
    );
}
