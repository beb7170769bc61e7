//! The simulator sizes a pod as the engine does (both through the model's parser):
//! restartable sidecars add to the containers, an init container's peak counts, and
//! `spec.overhead` is added. Before, the simulator ignored sidecars and overhead, so a
//! node the engine considered full still took a pod in the demo.

use gangplank::model::Loader;
use gangplank::sim::{ResourceKey, Scenario, SimCluster, SimOptions};
use serde_json::Value;

const SCENARIO: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "6", memory: 64Gi, pods: "110"}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default, resources: [{name: cpu, nominalQuota: "100"}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: team}
spec: {clusterQueue: cq}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: sized
  namespace: team
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      overhead: {cpu: 500m}
      initContainers:
      - {name: setup, image: busybox, resources: {requests: {cpu: "3"}}}
      - {name: proxy, image: envoy, restartPolicy: Always, resources: {requests: {cpu: "1"}}}
      containers:
      - {name: main, image: train, resources: {requests: {cpu: "1"}}}
"#;

#[test]
fn sidecars_init_peaks_and_overhead_size_pods_as_the_engine_does() {
    // The engine's view: main 1 + sidecar 1 = 2, the init peak 3 wins, + overhead 0.5.
    let mut loader = Loader::new();
    loader.add_str("sizing.yaml", SCENARIO).unwrap();
    let state = loader.finish();
    let wl = state.workloads.values().next().expect("the job's workload");
    let cpu = |q: Option<&gangplank::model::Quantity>| q.map(|q| q.to_string());
    assert_eq!(
        cpu(wl.pod_sets[0].requests.get("cpu")),
        Some("3500m".into())
    );

    // The simulator: Kueue admits both pods (7 cpu of quota), but a 6-cpu node holds
    // only one 3.5-cpu pod; the other stays Pending for lack of cpu.
    let mut c = SimCluster::from_scenario(
        &Scenario::from_str("sizing.yaml", SCENARIO).unwrap(),
        SimOptions::default(),
    );
    let store = c.store().clone();
    c.advance_to(SimOptions::default().start_ms + 60_000);
    let workload = store
        .list(&ResourceKey::WORKLOADS, Some("team"))
        .items
        .into_iter()
        .next()
        .expect("a Workload");
    assert_eq!(
        workload["status"]["admission"]["podSetAssignments"][0]["resourceUsage"]["cpu"], "7",
        "{workload:#}"
    );
    let pods = store.list(&ResourceKey::PODS, Some("team")).items;
    let phase = |p: &Value| p["status"]["phase"].as_str().unwrap_or("").to_string();
    let mut phases: Vec<String> = pods.iter().map(phase).collect();
    phases.sort();
    assert_eq!(phases, ["Pending", "Running"], "{pods:#?}");
    let pending = pods.iter().find(|p| phase(p) == "Pending").unwrap();
    let scheduled = pending["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "PodScheduled"))
        .expect("PodScheduled condition");
    assert_eq!(
        scheduled["message"], "0/1 nodes are available: 1 Insufficient cpu.",
        "{scheduled}"
    );
}
