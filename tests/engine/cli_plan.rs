//! `gangplank plan -f` through the real binary: the seed story from manifests, the JSON
//! contract, the table for people, and bad input.

use std::process::Command;

use serde_json::Value;

fn gangplank(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gangplank"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("COLUMNS", "80")
        .output()
        .expect("run gangplank")
}

const NOW: &str = "2026-11-29T08:10:00Z";

fn seed_plan_json() -> Value {
    let out = gangplank(&[
        "plan",
        "-f",
        "tests/fixtures/seed-story",
        "-o",
        "json",
        "--now",
        NOW,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("plan prints JSON")
}

#[test]
fn seed_story_preempts_the_two_newest_then_admits_the_boss() {
    let plan = seed_plan_json();
    let cycles = plan["cycles"].as_array().expect("cycles");
    let first = &cycles[0];
    let mut victims: Vec<&str> = first["preempted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            assert_eq!(p["by"], "nlp-team/boss-urgent-llama-finetune");
            assert_eq!(p["reason"], "InClusterQueue");
            p["workload"].as_str().unwrap()
        })
        .collect();
    victims.sort();
    // gpt-eval (admitted 08:02) and yolo-train (08:03) are the most recently admitted.
    assert_eq!(
        victims,
        [
            "cv-team/pytorchjob-yolo-train-3c4d5",
            "nlp-team/pytorchjob-gpt-eval-0a1b2"
        ]
    );
    assert!(
        first["admitted"].as_array().unwrap().is_empty(),
        "a preemptor waits for its victims"
    );

    let boss_cycle = cycles
        .iter()
        .position(|c| {
            c["admitted"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a["workload"] == "nlp-team/boss-urgent-llama-finetune")
        })
        .expect("the boss job is admitted in a later cycle");
    assert!(boss_cycle >= 1);
    let admitted = &cycles[boss_cycle]["admitted"][0];
    assert_eq!(admitted["clusterQueue"], "hyperpod-global-queue");
    assert_eq!(
        admitted["flavors"]["master"]["nvidia.com/gpu"],
        "p4d-flavor"
    );
    assert_eq!(
        admitted["flavors"]["worker"]["nvidia.com/gpu"],
        "p4d-flavor"
    );
    assert_eq!(admitted["borrowing"], false);

    // The victims wait behind it, in their original order.
    let last = cycles.last().unwrap();
    let pending: Vec<&str> = last["pending"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["workload"].as_str().unwrap())
        .collect();
    assert_eq!(
        pending,
        [
            "nlp-team/pytorchjob-gpt-eval-0a1b2",
            "cv-team/pytorchjob-yolo-train-3c4d5"
        ]
    );
    assert_eq!(last["pending"][0]["position"], 1);

    let cq = &plan["clusterQueues"][0];
    assert_eq!(cq["name"], "hyperpod-global-queue");
    assert_eq!(cq["usage"]["p4d-flavor"]["nvidia.com/gpu"]["nominal"], "32");
    assert_eq!(cq["usage"]["p4d-flavor"]["nvidia.com/gpu"]["used"], "32");
    assert_eq!(cq["usage"]["p4d-flavor"]["nvidia.com/gpu"]["borrowed"], "0");
    assert!(plan["warnings"].is_array());
}

#[test]
fn table_names_the_preemptions_and_fits_80_columns() {
    let out = gangplank(&["plan", "-f", "tests/fixtures/seed-story", "--now", NOW]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("PREEMPT  nlp-team/pytorchjob-gpt-eval-0a1b2  (InClusterQueue)"),
        "{text}"
    );
    assert!(text.contains("by nlp-team/boss-urgent-llama-finetune"));
    assert!(
        text.contains("ADMIT    nlp-team/boss-urgent-llama-finetune  in hyperpod-global-queue")
    );
    assert!(
        text.contains("p4d-flavor  nvidia.com/gpu  32       32    0"),
        "{text}"
    );
    for line in text.lines() {
        assert!(
            line.chars().count() <= 80,
            "wider than 80 columns: {line:?}"
        );
    }
}

#[test]
fn missing_local_queue_is_a_pending_reason_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("job.yaml"),
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: lost\n  namespace: ml\n  labels:\n    kueue.x-k8s.io/queue-name: nowhere\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        resources:\n          limits: {nvidia.com/gpu: 1}\n",
    )
    .unwrap();
    let out = gangplank(&[
        "plan",
        "-f",
        dir.path().to_str().unwrap(),
        "-o",
        "json",
        "--now",
        NOW,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = plan.to_string();
    assert!(text.contains("ml/lost"), "{text}");
    assert!(
        text.contains("nowhere"),
        "the reason names the missing LocalQueue: {text}"
    );
}

#[test]
fn bad_quantity_exits_1_naming_file_document_object_and_field() {
    let out = gangplank(&["plan", "-f", "tests/fixtures/manifests/bad"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cluster-queue.yaml"), "{err}");
    assert!(err.contains("document 2"), "{err}");
    assert!(err.contains("ClusterQueue/hyperpod-global-queue"), "{err}");
    assert!(err.contains("nominalQuota"), "{err}");
    assert!(err.contains("32x"), "{err}");
    assert!(!err.contains("panicked"));
}

#[test]
fn missing_file_is_a_clear_error() {
    let out = gangplank(&["plan", "-f", "no/such/dir"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no/such/dir"), "{err}");
}
