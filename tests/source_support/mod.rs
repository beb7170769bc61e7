//! Shared helpers for the live-source tests: a simulator API server on loopback with a
//! small GPU scenario, a kubeconfig in a tempdir, and condition waits with deadlines.
#![allow(dead_code)] // each test file uses a different subset

use std::sync::Arc;
use std::time::Duration;

use gangplank::sim::{ObjectStore, ResourceKey, ServerHandle, ServerOptions, WriteOptions, serve};
use gangplank::source::{self, ClusterArgs, Snapshot, SourceHandle, SourceOptions};
use serde_json::{Value, json};

/// Upper bound of every wait: generous for a loaded 2-core machine.
pub const DEADLINE: Duration = Duration::from_secs(40);

pub struct Env {
    pub server: ServerHandle,
    pub store: ObjectStore,
    pub dir: tempfile::TempDir,
    pub kubeconfig: std::path::PathBuf,
}

pub fn key(group: &str, plural: &str) -> ResourceKey {
    ResourceKey::new(group, plural)
}

pub fn kueue(plural: &str) -> ResourceKey {
    key("kueue.x-k8s.io", plural)
}

pub fn create(store: &ObjectStore, res: &ResourceKey, obj: Value) -> Value {
    store
        .create(res, obj, WriteOptions::default())
        .unwrap_or_else(|e| panic!("create: {e:?}"))
}

pub fn workload(ns: &str, name: &str, priority: i64, gpus: i64) -> Value {
    json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"queueName": "team-lq", "priority": priority, "podSets": [{"name": "main", "count": 1,
            "template": {"spec": {"containers": [{"name": "c", "image": "x",
                "resources": {"requests": {"nvidia.com/gpu": gpus.to_string()}}}]}}}]}})
}

/// A small GPU cluster: one ClusterQueue of 8 GPUs, one LocalQueue, two nodes, a
/// running admitted workload with its pod, a pending workload and a job.
pub fn seed(store: &ObjectStore) {
    for ns in ["team", "other"] {
        create(
            store,
            &key("", "namespaces"),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        );
    }
    for i in 0..2 {
        create(
            store,
            &key("", "nodes"),
            json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": format!("gpu-{i}"), "labels": {"gpu.class": "a100"}},
            "status": {"allocatable": {"nvidia.com/gpu": "4", "cpu": "64"}, "capacity": {"nvidia.com/gpu": "4", "cpu": "64"},
                "conditions": [{"type": "Ready", "status": "True"}]}}),
        );
    }
    create(
        store,
        &kueue("resourceflavors"),
        json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
        "metadata": {"name": "a100"}, "spec": {"nodeLabels": {"gpu.class": "a100"}}}),
    );
    create(
        store,
        &kueue("clusterqueues"),
        json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
        "metadata": {"name": "gpu-cq"}, "spec": {"namespaceSelector": {},
            "preemption": {"withinClusterQueue": "LowerPriority"},
            "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [{"name": "a100",
                "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "8"}]}]}]}}),
    );
    create(
        store,
        &kueue("localqueues"),
        json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
        "metadata": {"name": "team-lq", "namespace": "team"}, "spec": {"clusterQueue": "gpu-cq"}}),
    );
    create(
        store,
        &key("scheduling.k8s.io", "priorityclasses"),
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": "high"}, "value": 1000}),
    );
    create(
        store,
        &kueue("workloadpriorityclasses"),
        json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
        "metadata": {"name": "urgent"}, "value": 5000}),
    );
    let mut running = workload("team", "running", 10, 4);
    running["status"] = json!({"admission": {"clusterQueue": "gpu-cq", "podSetAssignments": [{"name": "main",
            "flavors": {"nvidia.com/gpu": "a100"}, "resourceUsage": {"nvidia.com/gpu": "4"}, "count": 1}]},
        "conditions": [
            {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"},
            {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
    create(store, &kueue("workloads"), running);
    create(
        store,
        &kueue("workloads"),
        workload("team", "waiting", 5, 2),
    );
    create(
        store,
        &key("", "pods"),
        json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "running-0", "namespace": "team", "labels": {"kueue.x-k8s.io/queue-name": "team-lq"},
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "running", "uid": "j1", "controller": true}]},
        "spec": {"nodeName": "gpu-0", "containers": [{"name": "c", "image": "x", "resources": {"requests": {"nvidia.com/gpu": "4"}}}]},
        "status": {"phase": "Running"}}),
    );
    create(
        store,
        &key("batch", "jobs"),
        json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "train", "namespace": "team", "labels": {"kueue.x-k8s.io/queue-name": "team-lq"}},
        "spec": {"suspend": true, "parallelism": 1, "completions": 1, "template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"nvidia.com/gpu": "1"}}}]}}}}),
    );
}

/// Starts a seeded server and writes its kubeconfig.
pub async fn env_with(opts: ServerOptions, seed_it: bool) -> Env {
    let store = ObjectStore::new();
    if seed_it {
        seed(&store);
    }
    let server = serve(store.clone(), opts).await.expect("serve");
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    Env {
        server,
        store,
        dir,
        kubeconfig,
    }
}

pub async fn env() -> Env {
    env_with(ServerOptions::default(), true).await
}

impl Env {
    pub fn cluster_args(&self) -> ClusterArgs {
        ClusterArgs {
            kubeconfig: Some(self.kubeconfig.clone()),
            ..ClusterArgs::default()
        }
    }

    /// Starts the live source against this server.
    pub async fn source(&self, opts: SourceOptions) -> SourceHandle {
        let client = source::connect(&self.cluster_args(), opts.read_timeout())
            .await
            .expect("client");
        source::start(client, opts).await
    }
}

/// Waits for a snapshot satisfying `pred`, or panics naming `what` and the last status.
pub async fn wait(
    h: &SourceHandle,
    what: &str,
    pred: impl FnMut(&Snapshot) -> bool,
) -> Arc<Snapshot> {
    match h.wait_for(DEADLINE, pred).await {
        Some(s) => s,
        None => {
            let s = h.latest();
            panic!(
                "timed out waiting for {what}; status: {}; sync: {:#?}",
                s.status_line(),
                s.sync
            )
        }
    }
}

pub fn has_workload(s: &Snapshot, ns: &str, name: &str) -> bool {
    s.state
        .workloads
        .contains_key(&(ns.to_string(), name.to_string()))
}
