//! `gangplank doctor --live` through the real binary against the simulator's API server
//! (in-process, real HTTP on loopback).

use gangplank::sim::cluster::{SimCluster, SimOptions};
use gangplank::sim::live::{LiveOptions, LiveSim};
use gangplank::sim::scenario::load_scenario;
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_doctor_finds_an_untainted_gpu_node() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("scenario.yaml");
    let nodes = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/scenarios/nodes-only.yaml"
    ))
    .unwrap();
    std::fs::write(
        &scenario,
        format!(
            "{nodes}---\napiVersion: v1\nkind: Node\nmetadata:\n  name: stray-gpu\n  labels: {{node.kubernetes.io/instance-type: p4d.24xlarge}}\nstatus:\n  allocatable: {{cpu: \"95\", memory: 1100Gi, nvidia.com/gpu: \"8\", pods: \"110\"}}\n"
        ),
    )
    .unwrap();
    let scenario = load_scenario(&scenario).expect("scenario loads");
    let sim = LiveSim::start(
        SimCluster::from_scenario(&scenario, SimOptions::live()),
        LiveOptions::default(),
    )
    .await
    .unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig).unwrap();

    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_gangplank"))
        .args([
            "doctor",
            "--live",
            "-o",
            "json",
            "--fail-on",
            "warning",
            "--context",
            "gangplank-sim",
        ])
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .output()
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "a warning with --fail-on warning: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("doctor prints JSON");
    let finding = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "gpu-node-untainted")
        .expect("the untainted GPU node is reported");
    assert!(
        finding["objects"].to_string().contains("Node/stray-gpu"),
        "{finding}"
    );
    assert!(
        finding["fix"].as_str().unwrap().contains("kubectl taint"),
        "{finding}"
    );
    sim.shutdown().await;
}
