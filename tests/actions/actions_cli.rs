//! The headless action commands as an operator runs them: the real binary against the
//! in-process simulator.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gangplank::actions::read_audit;
use gangplank::sim::{
    LiveOptions, LiveSim, ObjectStore, ResourceKey, Scenario, SimCluster, SimOptions,
};
use serde_json::Value;

fn bert(store: &ObjectStore) -> Option<Value> {
    store
        .list(&ResourceKey::WORKLOADS, Some("nlp-team"))
        .items
        .into_iter()
        .find(|w| w["metadata"]["ownerReferences"][0]["name"] == "bert-pretrain")
}

fn admitted(w: &Value) -> bool {
    !w["status"]["admission"].is_null()
}

async fn wait_until(what: &str, f: impl Fn() -> bool) {
    let end = Instant::now() + Duration::from_secs(60);
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hold_refuses_without_a_terminal_and_acts_with_yes() {
    let sim = LiveSim::start(
        SimCluster::from_scenario(&Scenario::seed(), SimOptions::live()),
        LiveOptions {
            speed: 30.0,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc).unwrap();
    let audit = dir.path().join("audit.jsonl");
    let store = sim.store().clone();
    wait_until("bert admitted", || {
        bert(&store).is_some_and(|w| admitted(&w))
    })
    .await;
    let run = |extra: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_gangplank"));
        cmd.args(["hold", "nlp-team/bert-pretrain", "--kubeconfig"])
            .arg(&kc)
            .args(["--context", "gangplank-sim", "--audit-log"])
            .arg(&audit)
            .args(extra)
            .stdin(Stdio::null());
        cmd
    };
    // stdin is not a terminal and there is no --yes: refused, nothing written.
    let out = tokio::task::spawn_blocking({
        let mut c = run(&[]);
        move || c.output().unwrap()
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--yes"), "{err}");
    assert_eq!(bert(&store).unwrap()["spec"]["active"], true);
    // --dry-run: the apiserver accepts it, nothing changes.
    let out = tokio::task::spawn_blocking({
        let mut c = run(&["--dry-run"]);
        move || c.output().unwrap()
    })
    .await
    .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(bert(&store).unwrap()["spec"]["active"], true);
    // --yes: held.
    let out = tokio::task::spawn_blocking({
        let mut c = run(&["--yes"]);
        move || c.output().unwrap()
    })
    .await
    .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("held"));
    assert_eq!(bert(&store).unwrap()["spec"]["active"], false);
    let outcomes: Vec<String> = read_audit(&audit)
        .unwrap()
        .into_iter()
        .map(|r| r.outcome)
        .collect();
    assert_eq!(outcomes, ["cancelled", "dry-run", "done"]);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_command_shows_the_victims_and_acts_with_yes() {
    let text = include_str!("../../docs/scenarios/seed.yaml").replace(
        "withinClusterQueue: LowerPriority",
        "withinClusterQueue: Never",
    );
    let sim = LiveSim::start(
        SimCluster::from_scenario(
            &Scenario::from_str("seed-never", &text).unwrap(),
            SimOptions::live(),
        ),
        LiveOptions {
            speed: 600.0,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc).unwrap();
    let audit = dir.path().join("audit.jsonl");
    let store = sim.store().clone();
    wait_until("the boss queued behind four admitted jobs", || {
        let wls = store.list(&ResourceKey::WORKLOADS, None).items;
        wls.iter().filter(|w| admitted(w)).count() == 4
            && wls.iter().any(|w| {
                w["metadata"]["ownerReferences"][0]["name"] == "boss-urgent-llama-finetune"
            })
    })
    .await;
    let out = tokio::task::spawn_blocking({
        let mut c = Command::new(env!("CARGO_BIN_EXE_gangplank"));
        c.args([
            "approve",
            "nlp-team/boss-urgent-llama-finetune",
            "--yes",
            "--kubeconfig",
        ])
        .arg(&kc)
        .args(["--context", "gangplank-sim", "--audit-log"])
        .arg(&audit)
        .stdin(Stdio::null());
        move || c.output().unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("gpt-eval") && stdout.contains("yolo-train"),
        "{stdout}"
    );
    assert!(stdout.contains("run time lost"), "{stdout}");
    assert!(stdout.contains("approved"), "{stdout}");
    let recs = read_audit(&audit).unwrap();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].outcome, "done");
    sim.shutdown().await;
}
