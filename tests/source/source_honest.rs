//! Issue #14 finding 4: headless live output presented partial or stale data as
//! complete. With Workloads `list` forbidden, `plan --live -o json` exited 0 with
//! nothing pending and `doctor --live -o json` printed `{"findings": []}` with nothing
//! on stderr; skipped objects were invisible (`"warnings": []`); `--watch -o jsonl`
//! wrote no line when a watch failed. The real binary against the simulator's API
//! server, with its fault injection.

use crate::source_support;

use std::process::Stdio;

use gangplank::sim::api::MalformedInjection;
use gangplank::sim::{FaultConfig, FaultRule};
use serde_json::Value;
use source_support::*;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const WORKLOADS: &str = "workloads.kueue.x-k8s.io";

fn bin(env: &Env, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gangplank"));
    c.args(args)
        .arg("--kubeconfig")
        .arg(&env.kubeconfig)
        .kill_on_drop(true);
    c
}

fn forbid_workloads(env: &Env) {
    env.server.faults().set(FaultConfig {
        rules: vec![FaultRule {
            resource: WORKLOADS.into(),
            verbs: vec!["list".into(), "watch".into()],
            status: Some(403),
            ..Default::default()
        }],
        ..Default::default()
    });
}

async fn run(mut c: Command) -> (Option<i32>, Value, String) {
    let out = tokio::time::timeout(DEADLINE, c.output())
        .await
        .expect("gangplank ended within the deadline")
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("JSON on stdout ({e}); stderr: {stderr}"));
    (out.status.code(), v, stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_live_under_a_workloads_403_exits_3_with_the_reason_in_json() {
    let env = env().await;
    forbid_workloads(&env);
    let history = env.dir.path().join("h.jsonl");
    let args = ["plan", "--live", "-o", "json", "--sync-timeout", "40"];
    let mut c = bin(&env, &args);
    c.arg("--history-file").arg(&history);
    let (code, v, stderr) = run(c).await;
    assert_eq!(code, Some(3), "stderr: {stderr}");
    assert!(stderr.contains("--allow-partial"), "{stderr}");
    assert_eq!(v["sync"]["complete"], false, "{v:#}");
    let wl = &v["sync"]["resources"][WORKLOADS];
    assert_eq!(wl["state"], "forbidden", "{v:#}");
    assert!(wl["error"].as_str().is_some_and(|e| !e.is_empty()), "{wl}");
    assert_eq!(v["sync"]["resources"]["nodes"]["state"], "synced");
    assert!(v["generatedAt"].as_str().is_some(), "{v:#}");
    assert!(v["resourceVersion"].as_str().is_some(), "{v:#}");
    assert!(
        v["warnings"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("incomplete: workloads.kueue.x-k8s.io")),
        "{v:#}"
    );
    // --allow-partial accepts it: exit 0, the same `sync`.
    let mut c = bin(&env, &args);
    c.arg("--history-file").arg(&history).arg("--allow-partial");
    let (code, v, stderr) = run(c).await;
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert_eq!(v["sync"]["resources"][WORKLOADS]["state"], "forbidden");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_live_under_a_workloads_403_exits_3_and_says_why() {
    let env = env().await;
    forbid_workloads(&env);
    let (code, v, stderr) = run(bin(&env, &["doctor", "--live", "-o", "json"])).await;
    assert_eq!(code, Some(3), "stderr: {stderr}");
    assert!(
        stderr.contains("incomplete: workloads.kueue.x-k8s.io: forbidden"),
        "{stderr}"
    );
    assert!(v.get("findings").is_some(), "{v:#}");
    assert_eq!(v["sync"]["complete"], false);
    assert_eq!(v["sync"]["resources"][WORKLOADS]["state"], "forbidden");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skipped_objects_are_named_in_warnings_with_their_field() {
    let env = env().await;
    env.server.faults().set(FaultConfig {
        malformed: vec![MalformedInjection {
            resource: "workloads".into(),
            ..Default::default()
        }],
        ..Default::default()
    });
    let mut c = bin(&env, &["plan", "--live", "-o", "json"]);
    c.arg("--history-file").arg(env.dir.path().join("h.jsonl"));
    let (code, v, stderr) = run(c).await;
    assert_eq!(
        code,
        Some(0),
        "a skipped object is a warning, not a failure: {stderr}"
    );
    let skipped = v["skipped"].as_array().expect("skipped");
    assert_eq!(skipped.len(), 1, "{v:#}");
    assert_eq!(skipped[0]["kind"], "Workload", "{v:#}");
    assert!(skipped[0]["name"].as_str().is_some_and(|n| !n.is_empty()));
    assert!(
        skipped[0]["field"]
            .as_str()
            .is_some_and(|f| f.starts_with("spec.")),
        "{v:#}"
    );
    let warnings: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("skipped Workload ") && w.contains("spec.")),
        "{warnings:?}"
    );
    assert!(stderr.contains("warning: skipped Workload"), "{stderr}");
}

/// `--watch -o jsonl` writes a line when a watch degrades and when it recovers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_jsonl_reports_a_failing_watch_and_its_recovery() {
    let env = env().await;
    let mut child = bin(&env, &["plan", "--live", "--watch", "-o", "jsonl"])
        .arg("--history-file")
        .arg(env.dir.path().join("h.jsonl"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut next = async || -> Value {
        let line = tokio::time::timeout(DEADLINE, lines.next_line())
            .await
            .expect("a line within the deadline")
            .expect("read")
            .expect("not EOF");
        serde_json::from_str(&line).expect("json line")
    };
    let first = next().await;
    assert_eq!(first["sync"]["complete"], true, "{first:#}");
    assert!(first["generatedAt"].as_str().is_some());
    // Workloads answer 500 from now on, and every open watch is closed.
    env.server.faults().set(FaultConfig {
        rules: vec![FaultRule {
            resource: WORKLOADS.into(),
            status: Some(500),
            ..Default::default()
        }],
        ..Default::default()
    });
    env.server.close_watches();
    loop {
        let v = next().await;
        if v["sync"]["resources"][WORKLOADS]["state"] == "error" {
            assert_eq!(v["sync"]["complete"], false);
            assert!(
                v["sync"]["resources"][WORKLOADS]["error"]
                    .as_str()
                    .is_some()
            );
            break;
        }
    }
    env.server.faults().clear();
    loop {
        let v = next().await;
        if v["sync"]["complete"] == true {
            assert_eq!(v["sync"]["resources"][WORKLOADS]["state"], "synced");
            break;
        }
    }
    child.kill().await.expect("kill");
}

/// A hung watch (accepted, then silent) is reported by a `--watch` line within its
/// timeout: `--watch-timeout 2` means hung after 2 + 3 s of silence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_jsonl_reports_a_hung_watch_within_its_timeout() {
    let env = env().await;
    let mut child = bin(
        &env,
        &[
            "plan",
            "--live",
            "--watch",
            "-o",
            "jsonl",
            "--watch-timeout",
            "2",
        ],
    )
    .arg("--history-file")
    .arg(env.dir.path().join("h.jsonl"))
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .expect("spawn");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let first = tokio::time::timeout(DEADLINE, lines.next_line())
        .await
        .expect("first line")
        .expect("read")
        .expect("not EOF");
    let first: Value = serde_json::from_str(&first).expect("json");
    assert_eq!(first["sync"]["complete"], true, "{first:#}");
    // The next Workloads watch is accepted and then never written to.
    env.server.faults().set(FaultConfig {
        rules: vec![FaultRule {
            resource: WORKLOADS.into(),
            verbs: vec!["watch".into()],
            hang: true,
            times: Some(1),
            ..Default::default()
        }],
        ..Default::default()
    });
    let hung_at = tokio::time::Instant::now();
    env.server.close_watches();
    // Reported within 2 s (renewal) + 2 + 3 s (silence) plus slack for a debug build.
    let within = std::time::Duration::from_secs(20);
    loop {
        let line = tokio::time::timeout_at(hung_at + within, lines.next_line())
            .await
            .expect("no line reported the hung watch within 20 s")
            .expect("read")
            .expect("not EOF");
        let v: Value = serde_json::from_str(&line).expect("json");
        let wl = &v["sync"]["resources"][WORKLOADS];
        if wl["state"] == "error" {
            assert_eq!(v["sync"]["complete"], false);
            assert!(
                wl["error"].as_str().is_some_and(|e| e.contains("silent")),
                "{wl}"
            );
            break;
        }
    }
    child.kill().await.expect("kill");
}
