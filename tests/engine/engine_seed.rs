//! The seed story (issue brief 000): a boss-urgent PyTorchJob preempts the two most
//! recently admitted normal-batch jobs in `hyperpod-global-queue`, then is admitted;
//! the victims wait behind it.

use gangplank::engine::testing::*;
use gangplank::engine::{PlanOptions, PreemptionReason, SchedulerMemory, plan, schedule_cycle};
use gangplank::model::{ClusterState, ReclaimWithinCohort, WithinClusterQueue};

const GPU: &str = "nvidia.com/gpu";

fn seed(boss_pod_sets: &[(&str, i32, &str)]) -> ClusterState {
    let mut b = ClusterBuilder::new()
        .flavor("p4d-flavor")
        .cq(CqBuilder::new("hyperpod-global-queue")
            .quota("p4d-flavor", GPU, "32")
            .preemption(WithinClusterQueue::LowerPriority, ReclaimWithinCohort::Any))
        .lq("nlp-team", "nlp-team-queue", "hyperpod-global-queue");
    for (i, name) in ["train-a", "train-b", "train-c", "train-d"]
        .iter()
        .enumerate()
    {
        let t = (i as i64 + 1) * 60_000;
        b = b.wl(WlBuilder::new("nlp-team", name)
            .queue("nlp-team-queue")
            .priority(1000)
            .created(t - 30_000)
            .pod_set("main", 1, &[(GPU, "8")])
            .admitted("hyperpod-global-queue", "p4d-flavor", t));
    }
    let mut boss = WlBuilder::new("nlp-team", "boss-urgent-llama-finetune")
        .queue("nlp-team-queue")
        .priority(1_000_000)
        .created(600_000);
    for (ps, count, gpus) in boss_pod_sets {
        boss = boss.pod_set(ps, *count, &[(GPU, gpus)]);
    }
    b.wl(boss).build()
}

/// These tests read each cycle's pending rows, so they ask for them in every cycle
/// (the default lists them only in the last one).
fn opts() -> PlanOptions {
    PlanOptions {
        now: 1_000_000,
        pending_in_every_cycle: true,
        ..Default::default()
    }
}

#[test]
fn boss_preempts_two_most_recent_then_is_admitted() {
    let state = seed(&[("master", 1, "16")]);
    let p = plan(&state, &opts());
    assert!(p.converged);
    let c1 = &p.cycles[0];
    assert!(
        c1.admitted.is_empty(),
        "the preemptor is not admitted in the cycle it preempts"
    );
    let mut victims: Vec<&str> = c1.preempted.iter().map(|v| v.workload.as_str()).collect();
    victims.sort();
    assert_eq!(victims, ["nlp-team/train-c", "nlp-team/train-d"]);
    for v in &c1.preempted {
        assert_eq!(v.reason, PreemptionReason::InClusterQueue);
        assert_eq!(v.by, "nlp-team/boss-urgent-llama-finetune");
    }
    let boss = c1
        .pending
        .iter()
        .find(|p| p.workload.ends_with("boss-urgent-llama-finetune"))
        .unwrap();
    assert_eq!(boss.position, Some(1));
    assert!(
        boss.reason.contains("waiting for 2 preempted workloads"),
        "{}",
        boss.reason
    );

    let c2 = &p.cycles[1];
    assert_eq!(c2.admitted.len(), 1);
    assert_eq!(
        c2.admitted[0].workload,
        "nlp-team/boss-urgent-llama-finetune"
    );
    assert_eq!(c2.admitted[0].flavors["master"][GPU], "p4d-flavor");
    assert!(!c2.admitted[0].borrowing);
    assert!(p.cycles.iter().skip(1).all(|c| c.preempted.is_empty()));

    let last = p.cycles.last().unwrap();
    let pending: Vec<(&str, Option<usize>)> = last
        .pending
        .iter()
        .map(|p| (p.workload.as_str(), p.position))
        .collect();
    assert_eq!(
        pending,
        [("nlp-team/train-c", Some(1)), ("nlp-team/train-d", Some(2))]
    );
    for p in &last.pending {
        assert!(
            p.reason
                .contains("needs 8 nvidia.com/gpu in flavor p4d-flavor"),
            "{}",
            p.reason
        );
    }
    // Current-state usage: full.
    let u = &p.cluster_queues[0].usage["p4d-flavor"][GPU];
    assert_eq!(
        (
            u.nominal.to_string(),
            u.used.to_string(),
            u.borrowed.to_string()
        ),
        ("32".into(), "32".into(), "0".into())
    );
}

#[test]
fn boss_with_master_and_workers_is_a_gang() {
    // master 1 × 8 + worker 1 × 8 = 16 GPUs: the same two victims.
    let state = seed(&[("master", 1, "8"), ("worker", 1, "8")]);
    let p = plan(&state, &opts());
    let mut victims: Vec<&str> = p.cycles[0]
        .preempted
        .iter()
        .map(|v| v.workload.as_str())
        .collect();
    victims.sort();
    assert_eq!(victims, ["nlp-team/train-c", "nlp-team/train-d"]);
    assert_eq!(p.cycles[1].admitted[0].flavors.len(), 2);
}

#[test]
fn stepping_api_writes_kueue_messages() {
    let state = seed(&[("master", 1, "16")]);
    let out = schedule_cycle(&state, &SchedulerMemory::default(), &opts());
    assert!(out.admitted.is_empty());
    assert_eq!(out.preempted.len(), 2);
    assert_eq!(
        out.preempted[0].message,
        "Preempted to accommodate a workload (UID: uid-nlp-team-boss-urgent-llama-finetune, JobUID: UNKNOWN) due to prioritization in the ClusterQueue; preemptor path: /hyperpod-global-queue; preemptee path: /hyperpod-global-queue"
    );
    let boss = out
        .pending
        .iter()
        .find(|p| p.workload.ends_with("finetune"))
        .unwrap();
    assert!(boss.evaluated);
    assert_eq!(boss.condition_reason, "WaitingForPreemptedWorkloads");
    assert_eq!(
        out.memory.sticky["hyperpod-global-queue"],
        "nlp-team/boss-urgent-llama-finetune"
    );
}

#[test]
fn plan_json_contract() {
    let state = seed(&[("master", 1, "16")]);
    let p = plan(&state, &opts());
    let v = serde_json::to_value(&p).unwrap();
    let c1 = &v["cycles"][0];
    assert_eq!(c1["preempted"][0]["reason"], "InClusterQueue");
    assert!(c1["preempted"][0]["by"].is_string());
    assert!(c1["pending"][0]["clusterQueue"].is_string());
    assert!(c1["pending"][0]["position"].is_u64());
    let a = &v["cycles"][1]["admitted"][0];
    assert_eq!(a["clusterQueue"], "hyperpod-global-queue");
    assert_eq!(a["flavors"]["master"]["nvidia.com/gpu"], "p4d-flavor");
    assert_eq!(a["borrowing"], false);
    let cq = &v["clusterQueues"][0];
    assert_eq!(cq["name"], "hyperpod-global-queue");
    assert!(cq["cohort"].is_null());
    assert_eq!(cq["usage"]["p4d-flavor"]["nvidia.com/gpu"]["used"], "32");
    assert!(v["warnings"].is_array());
    assert!(
        v.get("detectedCycle").is_none(),
        "no loop here: the key is absent"
    );
}

/// By default (what `plan -f` prints) every cycle keeps its `pending` key, but only the
/// last cycle lists the pending rows: the output stays linear in cycles + objects.
#[test]
fn plan_json_lists_pending_only_in_the_last_cycle_by_default() {
    let state = seed(&[("master", 1, "16")]);
    let p = plan(
        &state,
        &PlanOptions {
            now: 1_000_000,
            ..Default::default()
        },
    );
    let v = serde_json::to_value(&p).unwrap();
    let cycles = v["cycles"].as_array().unwrap();
    assert!(cycles.len() >= 2, "the boss preempts, then is admitted");
    for c in &cycles[..cycles.len() - 1] {
        assert_eq!(c["pending"], serde_json::json!([]), "{c}");
        assert!(c["admitted"].is_array() && c["preempted"].is_array());
    }
    let last = cycles.last().unwrap();
    let every = serde_json::to_value(plan(&state, &opts())).unwrap();
    assert_eq!(
        last["pending"],
        every["cycles"].as_array().unwrap().last().unwrap()["pending"],
        "the last cycle's rows are the same either way"
    );
}
