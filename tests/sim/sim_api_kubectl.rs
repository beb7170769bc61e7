//! Real `kubectl` (v1.32) against the simulator's API server.

use crate::support_tools::require_kubectl;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use gangplank::sim::{ObjectStore, ResourceKey, ServerHandle, ServerOptions, WriteOptions, serve};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const DEADLINE: Duration = Duration::from_secs(60);

struct Kubectl {
    kubeconfig: PathBuf,
    cache: PathBuf,
    dir: tempfile::TempDir,
}

impl Kubectl {
    fn new(server: &ServerHandle) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
        let cache = dir.path().join("cache");
        Self {
            kubeconfig,
            cache,
            dir,
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("kubectl");
        c.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(&self.cache)
            .args(args)
            .env("HOME", self.dir.path())
            .kill_on_drop(true);
        c
    }

    /// Runs kubectl and returns stdout; panics with stderr on failure.
    async fn ok(&self, args: &[&str]) -> String {
        let (code, out, err) = self.run(args).await;
        assert!(
            code == Some(0),
            "kubectl {args:?} failed ({code:?}):\nstdout:\n{out}\nstderr:\n{err}"
        );
        out
    }

    async fn run(&self, args: &[&str]) -> (Option<i32>, String, String) {
        let out = tokio::time::timeout(DEADLINE, self.command(args).output())
            .await
            .expect("kubectl timed out")
            .expect("kubectl spawn");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn write(&self, name: &str, content: &str) -> String {
        let p = self.dir.path().join(name);
        std::fs::write(&p, content).expect("write manifest");
        p.to_string_lossy().into_owned()
    }
}

async fn start() -> (ServerHandle, Kubectl) {
    let server = serve(ObjectStore::new(), ServerOptions::default())
        .await
        .expect("serve");
    let k = Kubectl::new(&server);
    (server, k)
}

const MANIFEST: &str = r#"
apiVersion: v1
kind: Namespace
metadata:
  name: team-a
  labels:
    team: a
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high
value: 1000
description: high priority
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: cq-a
spec:
  cohort: research
  namespaceSelector: {}
  flavorFungibility:
    whenCanBorrow: Borrow
  resourceGroups:
  - coveredResources: ["cpu", "nvidia.com/gpu"]
    flavors:
    - name: a100
      resources:
      - name: cpu
        nominalQuota: 64
      - name: nvidia.com/gpu
        nominalQuota: 8
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: lq-a
  namespace: team-a
spec:
  clusterQueue: cq-a
---
apiVersion: v1
kind: Node
metadata:
  name: gpu-node-1
  labels:
    gpu: a100
spec:
  taints:
  - key: nvidia.com/gpu
    effect: NoSchedule
status:
  capacity:
    cpu: "64"
    nvidia.com/gpu: "8"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_apply_get_patch_delete() {
    if !require_kubectl("the kubectl API tests") {
        return;
    }
    let (server, k) = start().await;
    let f = k.write("m.yaml", MANIFEST);
    let out = k.ok(&["apply", "-f", &f]).await;
    assert!(
        out.contains("clusterqueue.kueue.x-k8s.io/cq-a created"),
        "{out}"
    );
    assert!(out.contains("namespace/team-a created"), "{out}");
    let store = server.store();
    let cq = store
        .get(&ResourceKey::CLUSTER_QUEUES, None, "cq-a")
        .expect("cq stored");
    assert_eq!(cq["spec"]["cohortName"], json!("research"));
    assert_eq!(
        cq["spec"]["flavorFungibility"]["whenCanBorrow"],
        json!("MayStopSearch")
    );
    assert!(store.get(&ResourceKey::NODES, None, "gpu-node-1").is_some());
    assert!(
        store
            .get(&ResourceKey::LOCAL_QUEUES, Some("team-a"), "lq-a")
            .is_some()
    );

    // Apply again after editing: the update path.
    let edited = MANIFEST
        .replace("cohort: research", "cohort: prod")
        .replace("value: 1000", "value: 2000");
    let f2 = k.write("m2.yaml", &edited);
    let out = k.ok(&["apply", "-f", &f2]).await;
    assert!(
        out.contains("clusterqueue.kueue.x-k8s.io/cq-a configured"),
        "{out}"
    );
    assert!(out.contains("namespace/team-a unchanged"), "{out}");
    let cq = store
        .get(&ResourceKey::CLUSTER_QUEUES, None, "cq-a")
        .expect("cq");
    assert_eq!(cq["spec"]["cohortName"], json!("prod"));
    let pc = store
        .get(&ResourceKey::PRIORITY_CLASSES, None, "high")
        .expect("pc");
    assert_eq!(pc["value"], json!(2000));

    // Reads.
    let yaml = k.ok(&["get", "clusterqueues", "-o", "yaml"]).await;
    assert!(yaml.contains("cohortName: prod"), "{yaml}");
    let out = k.ok(&["get", "cq"]).await;
    assert!(out.contains("cq-a"), "{out}");
    let out = k.ok(&["get", "lq", "-n", "team-a"]).await;
    assert!(out.contains("lq-a"), "{out}");
    let wl = json!({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload",
        "metadata":{"name":"job-1","namespace":"team-a"},"spec":{"queueName":"lq-a","podSets":[]}});
    store
        .create(&ResourceKey::WORKLOADS, wl, WriteOptions::default())
        .expect("wl");
    let out = k.ok(&["get", "wl", "-A"]).await;
    assert!(out.contains("job-1") && out.contains("team-a"), "{out}");
    let out = k.ok(&["get", "workloads", "-A"]).await;
    assert!(out.contains("job-1"), "{out}");

    // v1beta1 view of a stored v1beta2 object and vice versa.
    let v1: Value = serde_json::from_str(
        &k.ok(&[
            "get",
            "clusterqueues.v1beta1.kueue.x-k8s.io",
            "cq-a",
            "-o",
            "json",
        ])
        .await,
    )
    .expect("json");
    assert_eq!(v1["apiVersion"], json!("kueue.x-k8s.io/v1beta1"));
    assert_eq!(v1["spec"]["cohort"], json!("prod"));
    assert_eq!(
        v1["spec"]["flavorFungibility"]["whenCanBorrow"],
        json!("Borrow")
    );
    let v2: Value = serde_json::from_str(
        &k.ok(&[
            "get",
            "clusterqueues.v1beta2.kueue.x-k8s.io",
            "cq-a",
            "-o",
            "json",
        ])
        .await,
    )
    .expect("json");
    assert_eq!(v2["spec"]["cohortName"], json!("prod"));
    let lq1: Value = serde_json::from_str(
        &k.ok(&[
            "get",
            "localqueues.v1beta1.kueue.x-k8s.io",
            "lq-a",
            "-n",
            "team-a",
            "-o",
            "json",
        ])
        .await,
    )
    .expect("json");
    assert_eq!(lq1["apiVersion"], json!("kueue.x-k8s.io/v1beta1"));

    // Patches.
    k.ok(&[
        "patch",
        "cq",
        "cq-a",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"queueingStrategy":"StrictFIFO"}}"#,
    ])
    .await;
    k.ok(&[
        "patch",
        "cq",
        "cq-a",
        "--type",
        "json",
        "-p",
        r#"[{"op":"replace","path":"/spec/cohortName","value":"x"}]"#,
    ])
    .await;
    k.ok(&[
        "patch",
        "node",
        "gpu-node-1",
        "-p",
        r#"{"metadata":{"labels":{"zone":"z1"}}}"#,
    ])
    .await;
    let cq = store
        .get(&ResourceKey::CLUSTER_QUEUES, None, "cq-a")
        .expect("cq");
    assert_eq!(cq["spec"]["queueingStrategy"], json!("StrictFIFO"));
    assert_eq!(cq["spec"]["cohortName"], json!("x"));
    let node = store
        .get(&ResourceKey::NODES, None, "gpu-node-1")
        .expect("node");
    assert_eq!(
        node["metadata"]["labels"],
        json!({"gpu":"a100","zone":"z1"})
    );
    // Strategic merge on a CRD is refused, as on a real server.
    let (code, _, err) = k
        .run(&[
            "patch",
            "cq",
            "cq-a",
            "--type",
            "strategic",
            "-p",
            r#"{"spec":{}}"#,
        ])
        .await;
    assert_ne!(code, Some(0));
    assert!(err.contains("not supported"), "{err}");

    // Discovery as kubectl shows it.
    let out = k.ok(&["api-resources", "--api-group=kueue.x-k8s.io"]).await;
    let cq_line = out
        .lines()
        .find(|l| l.starts_with("clusterqueues"))
        .unwrap_or_default();
    assert!(
        cq_line.contains("cq") && cq_line.contains("false") && cq_line.contains("ClusterQueue"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("localqueues") && l.contains("queue,queues,lq")),
        "{out}"
    );
    let out = k.ok(&["label", "node", "gpu-node-1", "pool=train"]).await;
    assert!(out.contains("labeled"), "{out}");
    let out = k
        .ok(&["get", "nodes", "-l", "pool=train", "-o", "name"])
        .await;
    assert_eq!(out.trim(), "node/gpu-node-1");

    // Describe.
    let out = k.ok(&["describe", "cq", "cq-a"]).await;
    assert!(out.contains("cq-a") && out.contains("StrictFIFO"), "{out}");

    // Errors surface as kubectl messages.
    let (code, _, err) = k.run(&["get", "cq", "nope"]).await;
    assert_eq!(code, Some(1));
    assert!(
        err.contains("NotFound") && err.contains("\"nope\" not found"),
        "{err}"
    );

    // Delete.
    let out = k.ok(&["delete", "cq", "cq-a"]).await;
    assert!(out.contains("deleted"), "{out}");
    assert!(
        store
            .get(&ResourceKey::CLUSTER_QUEUES, None, "cq-a")
            .is_none()
    );
    let out = k.ok(&["delete", "--ignore-not-found", "-f", &f2]).await;
    assert!(out.contains("namespace \"team-a\" deleted"), "{out}");
    // Deleting the namespace took its LocalQueue and Workload with it.
    assert!(
        store
            .get(&ResourceKey::LOCAL_QUEUES, Some("team-a"), "lq-a")
            .is_none()
    );
    assert_eq!(store.count(&ResourceKey::WORKLOADS), 0);
    server.shutdown().await.expect("shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_apply_without_validation_and_server_side() {
    if !require_kubectl("the kubectl API tests") {
        return;
    }
    let (server, k) = start().await;
    let f = k.write("m.yaml", MANIFEST);
    let out = k.ok(&["apply", "--validate=false", "-f", &f]).await;
    assert!(
        out.contains("clusterqueue.kueue.x-k8s.io/cq-a created"),
        "{out}"
    );
    let edited = MANIFEST.replace("nominalQuota: 8", "nominalQuota: 16");
    let f2 = k.write("m2.yaml", &edited);
    let out = k
        .ok(&["apply", "--server-side", "--force-conflicts", "-f", &f2])
        .await;
    assert!(out.contains("serverside-applied"), "{out}");
    let cq = server
        .store()
        .get(&ResourceKey::CLUSTER_QUEUES, None, "cq-a")
        .expect("cq");
    assert_eq!(
        cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][1]["nominalQuota"],
        json!(16)
    );
    // Server-side apply creates what is missing.
    let wpc = k.write(
        "wpc.yaml",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata:\n  name: urgent\nvalue: 10000\n",
    );
    k.ok(&["apply", "--server-side", "-f", &wpc]).await;
    assert!(
        server
            .store()
            .get(&ResourceKey::WORKLOAD_PRIORITY_CLASSES, None, "urgent")
            .is_some()
    );
    // Dry run through kubectl stores nothing.
    let rv = server.store().resource_version();
    let dry = k.write(
        "pc.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: dry\nvalue: 1\n",
    );
    let out = k.ok(&["apply", "--dry-run=server", "-f", &dry]).await;
    assert!(out.contains("server dry run"), "{out}");
    assert_eq!(server.store().resource_version(), rv);
    assert!(
        server
            .store()
            .get(&ResourceKey::PRIORITY_CLASSES, None, "dry")
            .is_none()
    );
    server.shutdown().await.expect("shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_watch_sees_new_pytorchjob() {
    if !require_kubectl("the kubectl API tests") {
        return;
    }
    let (server, k) = start().await;
    let store = server.store().clone();
    let job = |name: &str| {
        json!({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob",
            "metadata":{"name":name,"namespace":"default"},"spec":{"pytorchReplicaSpecs":{}}})
    };
    store
        .create(
            &ResourceKey::PYTORCH_JOBS,
            job("existing"),
            WriteOptions::default(),
        )
        .expect("create");
    let mut child = k
        .command(&["get", "pytorchjobs", "-w"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kubectl");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    wait_for_line(&mut lines, "existing").await;
    store
        .create(
            &ResourceKey::PYTORCH_JOBS,
            job("fresh-job"),
            WriteOptions::default(),
        )
        .expect("create");
    let line = wait_for_line(&mut lines, "fresh-job").await;
    assert!(line.starts_with("fresh-job"), "{line}");
    child.kill().await.expect("kill kubectl");
    assert!(server.stats().count("watch", "pytorchjobs.kubeflow.org") >= 1);
    server.shutdown().await.expect("shutdown");
}

/// Reads lines until one contains `needle`, failing after [`DEADLINE`].
async fn wait_for_line(
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    needle: &str,
) -> String {
    tokio::time::timeout(DEADLINE, async {
        while let Some(l) = lines.next_line().await.expect("read") {
            if l.contains(needle) {
                return l;
            }
        }
        panic!("kubectl -w ended before {needle:?} appeared");
    })
    .await
    .unwrap_or_else(|_| panic!("no {needle:?} line before the deadline"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_auth_can_i_and_whoami_follow_the_fault_rules() {
    if !require_kubectl("the kubectl API tests") {
        return;
    }
    let (server, k) = start().await;
    let can_i = |args: &'static [&'static str]| {
        let k = &k;
        async move {
            let mut full = vec!["auth", "can-i"];
            full.extend_from_slice(args);
            k.run(&full).await
        }
    };
    let (code, out, _) = can_i(&["patch", "workloads.kueue.x-k8s.io", "-n", "team-a"]).await;
    assert_eq!((code, out.trim()), (Some(0), "yes"));

    server.faults().add_rule(gangplank::sim::FaultRule {
        resource: "workloads".into(),
        verbs: vec!["patch".into()],
        status: Some(403),
        ..Default::default()
    });
    let (code, out, _) = can_i(&["patch", "workloads.kueue.x-k8s.io", "-n", "team-a"]).await;
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.starts_with("no") && out.contains("forbids patch on workloads.kueue.x-k8s.io"),
        "{out}"
    );
    // Other verbs and resources are unaffected.
    let (code, out, _) = can_i(&["get", "workloads.kueue.x-k8s.io", "-n", "team-a"]).await;
    assert_eq!((code, out.trim()), (Some(0), "yes"));
    let (code, out, _) = can_i(&["patch", "jobs.batch", "-n", "team-a"]).await;
    assert_eq!((code, out.trim()), (Some(0), "yes"));
    // The rule was looked at, not consumed, and reviews are not writes.
    assert_eq!(server.faults().get().rules.len(), 1);
    assert_eq!(server.stats().write_count(), 0);

    let out = k.ok(&["auth", "whoami", "-o", "json"]).await;
    let me: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        me["status"]["userInfo"]["username"],
        json!("gangplank-sim-admin")
    );
    let out = k
        .ok(&[
            "auth",
            "whoami",
            "-o",
            "json",
            "--as",
            "alice",
            "--as-group",
            "ops",
        ])
        .await;
    let me: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(me["status"]["userInfo"]["username"], json!("alice"));
    let groups = me["status"]["userInfo"]["groups"].to_string();
    assert!(groups.contains("ops"), "{groups}");
}
