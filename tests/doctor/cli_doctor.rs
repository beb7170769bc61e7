//! `gangplank doctor -f` through the real binary: the seed's own ClusterQueue taken
//! literally with a job that asks for CPU, exit codes for CI, and the JSON contract.

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

/// The tutorial's manifests plus a training job that requests CPU next to its GPUs.
fn seed_with_cpu_job() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in [
        "priorities.yaml",
        "cluster-queue.yaml",
        "nlp-local-queue.yaml",
        "resource-flavor.yaml",
        "namespaces.yaml",
    ] {
        std::fs::copy(format!("docs/tutorial/{f}"), dir.path().join(f)).unwrap();
    }
    std::fs::write(
        dir.path().join("job.yaml"),
        r#"apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: llama-sft
  namespace: nlp-team
  labels:
    kueue.x-k8s.io/queue-name: nlp-team-queue
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            resources:
              requests: {cpu: "16", nvidia.com/gpu: "8"}
              limits: {nvidia.com/gpu: "8"}
"#,
    )
    .unwrap();
    dir
}

#[test]
fn uncovered_cpu_request_is_an_error_with_a_yaml_fix() {
    let dir = seed_with_cpu_job();
    let out = gangplank(&["doctor", "-f", dir.path().to_str().unwrap(), "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "no --fail-on: exit 0");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = report["findings"].as_array().unwrap();
    let f = findings
        .iter()
        .find(|f| f["check"] == "workload-uncovered-resource")
        .expect("uncovered-resource finding");
    assert_eq!(f["severity"], "error");
    let objects: Vec<&str> = f["objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        objects.contains(&"PyTorchJob/nlp-team/llama-sft"),
        "{objects:?}"
    );
    assert!(
        objects.contains(&"ClusterQueue/hyperpod-global-queue"),
        "{objects:?}"
    );
    let message = f["message"].as_str().unwrap();
    assert!(message.contains("cpu"), "{message}");
    let fix = f["fix"].as_str().unwrap();
    assert!(fix.contains("coveredResources"), "{fix}");
    assert!(fix.contains("cpu"), "{fix}");
    for key in ["severity", "check", "objects", "message", "fix"] {
        assert!(f.get(key).is_some(), "finding lacks {key}");
    }
}

#[test]
fn fail_on_sets_the_exit_code() {
    let dir = seed_with_cpu_job();
    let path = dir.path().to_str().unwrap();
    assert_eq!(
        gangplank(&["doctor", "-f", path, "--fail-on", "error"])
            .status
            .code(),
        Some(1)
    );
    assert_eq!(
        gangplank(&["doctor", "-f", path, "--fail-on", "warning"])
            .status
            .code(),
        Some(1)
    );
    // The bundled seed scenario is configured correctly: nothing to fail on.
    let clean = gangplank(&[
        "doctor",
        "-f",
        "docs/scenarios/seed.yaml",
        "--fail-on",
        "warning",
    ]);
    assert_eq!(
        clean.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&clean.stdout)
    );
}

#[test]
fn table_reads_without_colour_and_fits_80_columns() {
    let dir = seed_with_cpu_job();
    let out = gangplank(&["doctor", "-f", dir.path().to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("ERROR"), "{text}");
    assert!(text.contains("workload-uncovered-resource"));
    assert!(!text.contains('\u{1b}'), "no escape codes in the table");
}

#[test]
fn unreadable_input_exits_2() {
    let out = gangplank(&["doctor", "-f", "tests/fixtures/manifests/bad"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nominalQuota"));
}
