//! The headless live commands through the real binary against the simulator's API
//! server: `plan --live -o json`, `plan --live --watch -o jsonl`, `history`.

use crate::source_support;

use std::process::Stdio;

use gangplank::source::SourceOptions;
use serde_json::{Value, json};
use source_support::*;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gangplank"));
    c.kill_on_drop(true);
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_live_json_prints_the_contract() {
    let env = env().await;
    let history = env.dir.path().join("history.jsonl");
    let out = bin()
        .args(["plan", "--live", "-o", "json", "--sync-timeout", "40"])
        .arg("--kubeconfig")
        .arg(&env.kubeconfig)
        .arg("--history-file")
        .arg(&history)
        .output()
        .await
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    for key in ["cycles", "clusterQueues", "warnings", "converged", "drift"] {
        assert!(v.get(key).is_some(), "missing {key}: {v}");
    }
    // The pending 2-GPU workload fits next to the running 4-GPU one in 8 GPUs.
    let admitted: Vec<&str> = v["cycles"][0]["admitted"]
        .as_array()
        .expect("admitted")
        .iter()
        .filter_map(|a| a["workload"].as_str())
        .collect();
    assert!(admitted.contains(&"team/waiting"), "{v}");
    assert_eq!(v["clusterQueues"][0]["name"], "gpu-cq");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_live_with_namespace_filter_and_what_if() {
    let env = env().await;
    let extra = env.dir.path().join("extra.yaml");
    std::fs::write(
        &extra,
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: hypothetical, namespace: team}\n\
         spec:\n  queueName: team-lq\n  priority: 1\n  podSets:\n  - name: main\n    count: 1\n    template:\n      spec:\n        containers:\n        - name: c\n          image: x\n          resources: {requests: {nvidia.com/gpu: '1'}}\n",
    )
    .expect("write");
    let out = bin()
        .args(["plan", "--live", "-o", "json", "-n", "team", "--what-if"])
        .arg(&extra)
        .arg("--kubeconfig")
        .arg(&env.kubeconfig)
        .arg("--history-file")
        .arg(env.dir.path().join("h.jsonl"))
        .output()
        .await
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("team/hypothetical"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_live_without_kueue_says_so() {
    let env = env_with(gangplank::sim::ServerOptions::default(), false).await;
    let rules = [
        "resourceflavors",
        "clusterqueues",
        "localqueues",
        "cohorts",
        "workloadpriorityclasses",
        "workloads",
    ]
    .iter()
    .map(|p| gangplank::sim::FaultRule {
        resource: format!("{p}.kueue.x-k8s.io"),
        status: Some(404),
        ..Default::default()
    })
    .collect();
    env.server.faults().set(gangplank::sim::FaultConfig {
        rules,
        ..Default::default()
    });
    let out = bin()
        .args(["plan", "--live", "-o", "json"])
        .arg("--kubeconfig")
        .arg(&env.kubeconfig)
        .arg("--history-file")
        .arg(env.dir.path().join("h.jsonl"))
        .output()
        .await
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("Kueue is not installed").count(),
        1,
        "{stderr}"
    );
}

async fn next(lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>) -> String {
    tokio::time::timeout(DEADLINE, lines.next_line())
        .await
        .expect("a line within the deadline")
        .expect("read")
        .expect("not EOF")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_live_watch_prints_a_line_per_change() {
    let env = env().await;
    let mut child = bin()
        .args(["plan", "--live", "--watch", "-o", "jsonl"])
        .arg("--kubeconfig")
        .arg(&env.kubeconfig)
        .arg("--history-file")
        .arg(env.dir.path().join("h.jsonl"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let first: Value = serde_json::from_str(&next(&mut lines).await).expect("json line");
    assert!(first.get("drift").is_some());
    assert!(!first.to_string().contains("team/late"));
    create(
        &env.store,
        &kueue("workloads"),
        workload("team", "late", 1, 1),
    );
    // Lines keep coming until one shows the new workload.
    loop {
        let v: Value = serde_json::from_str(&next(&mut lines).await).expect("json line");
        if v.to_string().contains("team/late") {
            break;
        }
    }
    child.kill().await.expect("kill");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_records_an_eviction() {
    let env = env().await;
    let path = env.dir.path().join("state/history.jsonl");
    let h = env
        .source(SourceOptions {
            history_file: Some(path.clone()),
            ..SourceOptions::default()
        })
        .await;
    let snap = h
        .wait_synced(DEADLINE)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let preemptor_uid = snap.state.workloads[&("team".to_string(), "waiting".to_string())]
        .uid
        .clone();
    let now = jiff::Timestamp::now().to_string();
    let msg = format!(
        "Preempted to accommodate a workload (UID: {preemptor_uid}, JobUID: job-1) due to prioritization in the ClusterQueue"
    );
    // What Kueue writes when it evicts: Evicted and Preempted conditions.
    env.store
        .modify(
            &kueue("workloads"),
            Some("team"),
            "running",
            gangplank::sim::UpdateScope::All,
            gangplank::sim::WriteOptions::default(),
            |obj: &mut Value| {
                obj["metadata"]["annotations"] = json!({"gangplank.io/approved-by": "alice"});
                let conds = obj["status"]["conditions"].as_array_mut().expect("conditions");
                conds.push(json!({"type": "Evicted", "status": "True", "reason": "Preempted", "message": msg, "lastTransitionTime": now}));
                conds.push(json!({"type": "Preempted", "status": "True", "reason": "InClusterQueue", "message": msg, "lastTransitionTime": now}));
                Ok(())
            },
        )
        .expect("modify");
    wait(&h, "the eviction record", |s| !s.evictions.is_empty()).await;
    // The same eviction seen again (a relist after an in-stream 410) is not recorded twice.
    create(
        &env.store,
        &key("apps", "deployments"),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "bump", "namespace": "team"}, "spec": {}}),
    );
    env.store.compact_history();
    env.server.close_watches();
    wait(&h, "a relist of workloads", |s| {
        s.sync
            .iter()
            .any(|r| r.resource == "workloads.kueue.x-k8s.io" && r.relists >= 1 && r.settled())
    })
    .await;
    let out = bin()
        .args(["history", "--since", "1h", "-o", "json", "--history-file"])
        .arg(&path)
        .output()
        .await
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let ev = v["evictions"].as_array().expect("evictions");
    assert_eq!(ev.len(), 1, "{v}");
    assert_eq!(ev[0]["victim"], "team/running");
    assert_eq!(ev[0]["preemptor"], "team/waiting");
    assert_eq!(ev[0]["preemptorJobUid"], "job-1");
    assert_eq!(ev[0]["reason"], "Preempted");
    assert_eq!(ev[0]["preemptionReason"], "InClusterQueue");
    assert_eq!(ev[0]["victimClusterQueue"], "gpu-cq");
    assert_eq!(ev[0]["approvedBy"], "alice");
    let table = bin()
        .args(["history", "--history-file"])
        .arg(&path)
        .output()
        .await
        .expect("run");
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("team/running") && text.contains("alice"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_live_table_shows_sync_status() {
    let env = env().await;
    let out = bin()
        .args(["plan", "--live"])
        .arg("--kubeconfig")
        .arg(&env.kubeconfig)
        .arg("--history-file")
        .arg(env.dir.path().join("h.jsonl"))
        .output()
        .await
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("live cluster: synced"), "{text}");
    assert!(text.contains("team/waiting"), "{text}");
}

/// `config --cluster` reads Kueue's ConfigMap from the live cluster; without one it
/// says so and shows Kueue's defaults (exit 0, never a failure).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_cluster_shows_kueues_effective_configuration() {
    let env = env().await;
    let out = bin()
        .args(["config", "--cluster"])
        .arg("--kubeconfig")
        .arg(&env.kubeconfig)
        .output()
        .await
        .expect("run");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    );
    assert!(out.status.success(), "stderr: {stderr}");
    assert!(
        stderr.contains("kueue-system/kueue-manager-config"),
        "{stderr}"
    );
    assert!(
        stdout.contains("fairSharing: off (classical preemption)"),
        "{stdout}"
    );
    assert!(stdout.contains("assumed Kueue's defaults"), "{stdout}");

    // With the ConfigMap: `the_live_source_reads_kueues_configmap` below.
}

/// Issue #12 (Events view): a hold and a priority change seen on the watch become
/// timeline lines in the history file, and a reopened log (a restarted console) has them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeline_records_holds_and_priority_changes_and_survives_a_restart() {
    let env = env().await;
    let path = env.dir.path().join("state/history.jsonl");
    let h = env
        .source(SourceOptions {
            history_file: Some(path.clone()),
            ..SourceOptions::default()
        })
        .await;
    h.wait_synced(DEADLINE)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    env.store
        .modify(
            &kueue("workloads"),
            Some("team"),
            "running",
            gangplank::sim::UpdateScope::All,
            gangplank::sim::WriteOptions::default(),
            |obj: &mut Value| {
                obj["spec"]["active"] = json!(false);
                obj["spec"]["priority"] = json!(4242);
                Ok(())
            },
        )
        .expect("modify");
    let kinds = |s: &gangplank::source::Snapshot| -> Vec<String> {
        s.events
            .iter()
            .filter(|e| e.workload == "team/running")
            .map(|e| e.event.clone())
            .collect()
    };
    wait(&h, "the hold and the priority change", |s| {
        let k = kinds(s);
        k.contains(&"Held".to_string()) && k.contains(&"PriorityChanged".to_string())
    })
    .await;
    let reopened = gangplank::source::HistoryLog::open(Some(path.clone()));
    let events = reopened.recent_events();
    let prio = events
        .iter()
        .find(|e| e.event == "PriorityChanged" && e.workload == "team/running")
        .unwrap_or_else(|| panic!("{events:?}"));
    assert!(prio.reason.ends_with("(4242)"), "{prio:?}");
    assert!(events.iter().any(|e| e.event == "Held"), "{events:?}");
    // `gangplank history` (evictions only) is not confused by the timeline lines.
    let out = bin()
        .args(["history", "--since", "1h", "-o", "json", "--history-file"])
        .arg(&path)
        .output()
        .await
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["evictions"].as_array().map(Vec::len), Some(0), "{v}");
}

/// `plan --live` reads Kueue's ConfigMap once: missing → a warning and the defaults
/// (named in the plan's warnings); `--kueue-config` overrides it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_live_uses_kueues_configuration_or_says_which_defaults() {
    let env = env().await;
    let history = env.dir.path().join("history.jsonl");
    let plan = |extra: Vec<String>| {
        let mut c = bin();
        c.args(["plan", "--live", "-o", "json", "--sync-timeout", "40"])
            .arg("--kubeconfig")
            .arg(&env.kubeconfig)
            .arg("--history-file")
            .arg(&history)
            .args(extra);
        c.output()
    };
    let out = plan(vec![]).await.expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "stderr: {stderr}");
    assert!(
        stderr.contains("ConfigMap kueue-system/kueue-manager-config not found"),
        "{stderr}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(
        v["warnings"][0]
            .as_str()
            .unwrap_or_default()
            .contains("assumed Kueue's defaults"),
        "{v}"
    );

    let cfg = env.dir.path().join("kueue.yaml");
    std::fs::write(
        &cfg,
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing:\n  preemptionStrategies: [LessThanOrEqualToFinalShare]\n",
    )
    .expect("write");
    let out = plan(vec!["--kueue-config".into(), cfg.display().to_string()])
        .await
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let warnings = v["warnings"].to_string();
    assert!(!warnings.contains("assumed Kueue's defaults"), "{warnings}");
}

/// Issue #11: the live source reads Kueue's ConfigMap when it starts, so the console's
/// plan (and `doctor --live`, `config --cluster`) use the cluster's fair sharing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_source_reads_kueues_configmap() {
    let env = env().await;
    let text = std::fs::read_to_string("tests/fixtures/fair-sharing/kueue-manager-config.yaml")
        .expect("fixture");
    let cm: Value = serde_yaml_ng::from_str(&text).expect("yaml");
    create(&env.store, &key("", "configmaps"), cm);
    let h = env.source(SourceOptions::default()).await;
    let snap = h
        .wait_synced(DEADLINE)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let cfg = snap
        .state
        .kueue_config
        .as_ref()
        .expect("the ConfigMap was read");
    assert!(cfg.fair_sharing_enabled(), "{cfg:?}");
    h.shutdown().await;

    let out = bin()
        .args(["config", "--cluster", "--kubeconfig"])
        .arg(&env.kubeconfig)
        .output()
        .await
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stdout.contains("assumed Kueue's defaults"), "{stdout}");
    assert!(stdout.contains("fairSharing: on"), "{stdout}");
}
