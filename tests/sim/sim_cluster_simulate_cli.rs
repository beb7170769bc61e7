//! `gangplank simulate` on the bundled seed, through the real binary.

use std::process::Command;

fn gangplank(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_gangplank"))
        .args(args)
        .output()
        .expect("run gangplank");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn simulate_seed_table() {
    let out = gangplank(&["simulate", "--until", "2h"]);
    let line = |needle: &[&str]| {
        out.lines()
            .find(|l| needle.iter().all(|n| l.contains(n)))
            .unwrap_or_else(|| panic!("no line with {needle:?} in\n{out}"))
            .to_string()
    };
    line(&["+00:00:00", "admitted", "bert-pretrain"]);
    line(&[
        "+00:10:00",
        "preempted",
        "gpt-eval",
        "by nlp-team/pytorchjob-boss-urgent-llama-finetune-",
        "InClusterQueue",
    ]);
    line(&["+00:10:00", "preempted", "yolo-train", "InClusterQueue"]);
    line(&["+00:10:00", "evicted", "yolo-train", "Preempted"]);
    line(&["+00:10:00", "requeued", "gpt-eval"]);
    line(&["+00:10:00", "admitted", "boss-urgent-llama-finetune"]);
    line(&["+01:10:00", "finished", "boss-urgent-llama-finetune"]);
    line(&["+01:10:00", "admitted", "gpt-eval"]);
    line(&["hyperpod-global-queue", "%"]);
    line(&["normal-batch"]);
    line(&["boss-urgent"]);
    assert!(!out.contains("+03:00:00"), "--until 2h stops the clock");
}

#[test]
fn simulate_seed_json() {
    let out = gangplank(&["simulate", "-o", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let tl = v["timeline"].as_array().unwrap();
    let pre: Vec<&serde_json::Value> = tl.iter().filter(|e| e["event"] == "preempted").collect();
    assert_eq!(pre.len(), 2);
    for e in &pre {
        assert_eq!(e["at"], "+00:10:00");
        assert_eq!(e["seconds"], 600);
        assert_eq!(e["reason"], "InClusterQueue");
        assert_eq!(e["clusterQueue"], "hyperpod-global-queue");
        assert!(
            e["by"]
                .as_str()
                .unwrap()
                .starts_with("nlp-team/pytorchjob-boss-urgent-llama-finetune-")
        );
    }
    for kind in ["created", "admitted", "evicted", "requeued", "finished"] {
        assert!(tl.iter().any(|e| e["event"] == kind), "{kind}");
    }
    let cq = &v["summary"]["clusterQueues"][0];
    assert_eq!(cq["name"], "hyperpod-global-queue");
    assert_eq!(cq["preemptions"], 2);
    // gpt-eval ran 8 minutes and yolo-train 7 on 8 GPUs each before being preempted.
    let lost = cq["gpuHoursLostToPreemption"].as_f64().unwrap();
    assert!((lost - 2.0).abs() < 1e-9, "{lost}");
    let util = cq["gpuUtilisation"].as_f64().unwrap();
    assert!(util > 0.5 && util < 0.7, "{util}");
    let classes: Vec<&str> = v["summary"]["priorityClasses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(classes, ["boss-urgent", "normal-batch"]);
}

#[test]
fn simulate_bad_scenario_names_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.yaml");
    std::fs::write(&path, "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  annotations: {sim.gangplank.io/duration: forever}\nspec: {template: {spec: {containers: []}}}\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_gangplank"))
        .args(["simulate", "--scenario", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.yaml: document 2 (Job/j)") && err.contains("sim.gangplank.io/duration"),
        "{err}"
    );
}
