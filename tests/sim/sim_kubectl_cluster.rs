//! kubectl against the live simulator (the seed's nodes and web Deployments): pod caps
//! answered with a Status instead of an abort, unknown fields refused, a Job without a
//! queue label run by the default scheduler path (taints respected, no Kueue quota),
//! `get --watch -o wide`, `delete --cascade=foreground` and event field selectors.

use crate::support_tools::require_kubectl;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use gangplank::sim::{LiveOptions, LiveSim, ResourceKey, Scenario, SimCluster, SimOptions};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const DEADLINE: Duration = Duration::from_secs(60);

struct Kubectl {
    kubeconfig: PathBuf,
    dir: tempfile::TempDir,
}

impl Kubectl {
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("kubectl");
        c.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(self.dir.path().join("cache"))
            .args(args)
            .env("HOME", self.dir.path())
            .kill_on_drop(true);
        c
    }

    async fn run(&self, args: &[&str]) -> (bool, String, String) {
        let out = tokio::time::timeout(DEADLINE, self.command(args).output())
            .await
            .expect("kubectl timed out")
            .expect("kubectl spawn");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    async fn ok(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.run(args).await;
        assert!(ok, "kubectl {args:?} failed:\n{out}\n{err}");
        out
    }

    fn write(&self, name: &str, text: &str) -> String {
        let p = self.dir.path().join(name);
        std::fs::write(&p, text).expect("write manifest");
        p.to_string_lossy().into_owned()
    }

    /// Runs `args` until stdout satisfies `pred` (or panics at the deadline).
    async fn until(&self, args: &[&str], pred: impl Fn(&str) -> bool) -> String {
        let end = Instant::now() + DEADLINE;
        loop {
            let out = self.ok(args).await;
            if pred(&out) {
                return out;
            }
            assert!(Instant::now() < end, "timed out: kubectl {args:?}\n{out}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

async fn start(speed: f64) -> (LiveSim, Kubectl) {
    let sim = LiveSim::start(
        SimCluster::from_scenario(&Scenario::seed(), SimOptions::live()),
        LiveOptions {
            speed,
            ..Default::default()
        },
    )
    .await
    .expect("start the simulator");
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    (sim, Kubectl { kubeconfig, dir })
}

const HUGE_DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: huge, namespace: web}\nspec:\n  replicas: 2147483647\n  selector: {matchLabels: {app: huge}}\n  template:\n    metadata: {labels: {app: huge}}\n    spec: {containers: [{name: c, image: nginx}]}\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_cap_objects_and_unknown_fields_are_refused_and_the_server_keeps_serving() {
    if !require_kubectl("the kubectl cluster tests") {
        return;
    }
    let (sim, k) = start(60.0).await;
    let f = k.write("huge.yaml", HUGE_DEPLOYMENT);
    let (ok, _, err) = k.run(&["apply", "-f", &f]).await;
    assert!(!ok);
    assert!(
        err.contains("The Deployment \"huge\" is invalid")
            && err.contains(
                "spec.replicas: Invalid value: 2147483647: must be less than or equal to 10000"
            ),
        "{err}"
    );
    // Still serving, and nothing was created.
    let version = k.ok(&["version", "-o", "json"]).await;
    assert!(version.contains("serverVersion"), "{version}");
    assert!(
        sim.store()
            .get(&ResourceKey::DEPLOYMENTS, Some("web"), "huge")
            .is_none()
    );
    // A patch that raises replicas past the cap is refused the same way.
    let (ok, _, err) = k
        .run(&[
            "patch",
            "deployment",
            "java-backend",
            "-n",
            "web",
            "-p",
            r#"{"spec":{"replicas":20000}}"#,
        ])
        .await;
    assert!(
        !ok && err.contains("spec.replicas: Invalid value: 20000"),
        "{err}"
    );

    // kubectl apply validates fields with the server (fieldValidation=Strict).
    let bad = k.write(
        "bad.yaml",
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: bad}\nspec:\n  namespaceSelector: {}\n  preemptionn: {withinClusterQueue: LowerPriority}\n",
    );
    let (ok, _, err) = k.run(&["apply", "--validate=strict", "-f", &bad]).await;
    assert!(!ok);
    assert!(
        err.contains("ClusterQueue in version \"v1beta1\" cannot be handled as a ClusterQueue: strict decoding error: unknown field \"spec.preemptionn\""),
        "{err}"
    );
    let out = k.ok(&["get", "crd"]).await;
    assert!(
        out.contains("workloads.kueue.x-k8s.io") && out.contains("CREATED AT"),
        "{out}"
    );
    sim.shutdown().await;
}

const PLAIN_JOB: &str = r#"apiVersion: batch/v1
kind: Job
metadata:
  name: nightly-report
  namespace: web
  annotations: {sim.gangplank.io/duration: "10m"}
spec:
  parallelism: 2
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: report
        image: registry.example.com/report:1
        resources: {requests: {cpu: "1"}}
---
apiVersion: v1
kind: Pod
metadata: {name: sneaky-gpu, namespace: web}
spec:
  containers:
  - name: c
    image: registry.example.com/java:1
    resources: {limits: {nvidia.com/gpu: "1"}}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_without_a_queue_label_runs_through_the_default_scheduler() {
    if !require_kubectl("the kubectl cluster tests") {
        return;
    }
    // 10 story minutes at 120x: 5 s.
    let (sim, k) = start(120.0).await;
    let mut watch = k
        .command(&["get", "pods", "-n", "web", "--watch", "-o", "wide"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn kubectl --watch");
    let mut lines = BufReader::new(watch.stdout.take().expect("stdout")).lines();
    let f = k.write("plain.yaml", PLAIN_JOB);
    k.ok(&["apply", "-f", &f]).await;
    // The watch shows the job's pods with their node (a wide column), on a CPU node:
    // the p4d nodes' taint keeps them off (the seed's Q3).
    let line = tokio::time::timeout(DEADLINE, async {
        while let Some(l) = lines.next_line().await.expect("read") {
            if l.starts_with("nightly-report-") && l.contains("Running") {
                return l;
            }
        }
        panic!("kubectl --watch ended");
    })
    .await
    .expect("a watch line for the job's pod");
    assert!(line.contains("m5-cpu-"), "{line}");
    let _ = watch.kill().await;
    let jobs = k.ok(&["get", "jobs", "-n", "web"]).await;
    assert!(
        jobs.lines()
            .any(|l| l.starts_with("nightly-report") && l.contains("Running") && l.contains("0/2")),
        "{jobs}"
    );
    // No Workload: Kueue (manageJobsWithoutQueueName: false) leaves it alone.
    assert!(
        k.ok(&["get", "wl", "-n", "web", "-o", "name"])
            .await
            .trim()
            .is_empty()
    );
    // The GPU pod without a toleration stays Pending, and the scheduler says why.
    let events = k
        .until(
            &[
                "get",
                "events",
                "-n",
                "web",
                "--field-selector",
                "involvedObject.kind=Pod,involvedObject.name=sneaky-gpu,reason=FailedScheduling",
            ],
            |o| o.contains("FailedScheduling"),
        )
        .await;
    assert!(
        events.contains("untolerated taint {nvidia.com/gpu: present}"),
        "{events}"
    );
    let pod = k.ok(&["get", "pod", "sneaky-gpu", "-n", "web"]).await;
    assert!(pod.contains("Pending"), "{pod}");
    // The job completes after its duration.
    k.until(&["get", "jobs", "-n", "web"], |o| {
        o.lines()
            .any(|l| l.starts_with("nightly-report") && l.contains("Complete") && l.contains("2/2"))
    })
    .await;
    // Kueue's quota never counts it: the ClusterQueue reserves GPUs of its jobs only.
    let cq = sim
        .store()
        .get(&ResourceKey::CLUSTER_QUEUES, None, "hyperpod-global-queue")
        .expect("cq");
    assert!(!cq["status"].to_string().contains("\"cpu\""), "{cq:#}");

    // Deleting a Deployment in the foreground takes its pods with it.
    let out = k
        .ok(&[
            "delete",
            "deployment",
            "java-backend",
            "-n",
            "web",
            "--cascade=foreground",
        ])
        .await;
    assert!(out.contains("deleted"), "{out}");
    k.until(&["get", "pods", "-n", "web", "-o", "name"], |o| {
        !o.contains("java-backend")
    })
    .await;
    sim.shutdown().await;
}

#[test]
fn an_admitted_job_with_two_billion_pods_does_not_abort_the_simulator() {
    let mut c = SimCluster::from_scenario(&Scenario::seed(), SimOptions::default());
    let job = json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "wide", "namespace": "nlp-team",
                     "labels": {"kueue.x-k8s.io/queue-name": "nlp-team-queue"}},
        "spec": {"parallelism": 2147483647, "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}},
    });
    c.store()
        .create(&ResourceKey::JOBS, job, Default::default())
        .expect("create (through the store, bypassing the API's 422)");
    c.advance_by(60_000);
    let wl = c
        .store()
        .list(&ResourceKey::WORKLOADS, Some("nlp-team"))
        .items
        .into_iter()
        .find(|w| w["metadata"]["ownerReferences"][0]["name"] == "wide")
        .expect("its Workload");
    let admitted = wl["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Admitted" && c["status"] == "True")
    });
    assert!(admitted, "{wl:#}");
    assert!(
        c.warnings()
            .iter()
            .any(|w| w.contains("Job nlp-team/wide") && w.contains("no pods created")),
        "{:?}",
        c.warnings()
    );
    let pods = c.store().count(&ResourceKey::PODS);
    assert!(pods < 100, "{pods} pods");
    let failed: Vec<Value> = c
        .store()
        .list(&ResourceKey::EVENTS, Some("nlp-team"))
        .items
        .into_iter()
        .filter(|e| e["reason"] == "FailedCreate" && e["involvedObject"]["name"] == "wide")
        .collect();
    assert_eq!(failed.len(), 1, "{failed:#?}");
}

#[test]
fn simulate_refuses_an_over_cap_scenario_naming_the_object_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.yaml");
    std::fs::write(
        &path,
        format!("apiVersion: v1\nkind: Namespace\nmetadata: {{name: web}}\n---\n{HUGE_DEPLOYMENT}"),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gangplank"))
        .args(["simulate", "--scenario", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "big.yaml: document 2 (Deployment/huge): spec.replicas: Invalid value: 2147483647"
        ),
        "{err}"
    );
}

/// Issue #14 finding 2 through the real `gangplank sim serve` process: a plain
/// `kubectl apply` of a 2^31-replica Deployment (which made the controllers allocate
/// 51 GB and SIGABRT) and of a 2^31-parallelism Job gets a 422 naming the field; the
/// process stays up and keeps answering; a lower `--max-pods-per-object` is honoured.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sim_serve_refuses_two_billion_replicas_and_keeps_serving() {
    if !require_kubectl("the sim serve caps test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("sim.kubeconfig");
    let mut server = Command::new(env!("CARGO_BIN_EXE_gangplank"))
        .args([
            "sim",
            "serve",
            "--max-pods-per-object",
            "500",
            "--kubeconfig-out",
        ])
        .arg(&kubeconfig)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start gangplank sim serve");
    let end = Instant::now() + DEADLINE;
    while !kubeconfig.exists() {
        assert!(Instant::now() < end, "no kubeconfig written");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let k = Kubectl {
        kubeconfig,
        dir: tempfile::tempdir().unwrap(),
    };
    let f = k.write("huge.yaml", HUGE_DEPLOYMENT);
    let (ok, _, err) = k.run(&["apply", "-f", &f]).await;
    assert!(!ok, "the 2^31-replica Deployment was accepted");
    assert!(
        err.contains("The Deployment \"huge\" is invalid")
            && err.contains("spec.replicas: Invalid value: 2147483647")
            && err.contains("must be less than or equal to 500"),
        "{err}"
    );
    let job = k.write(
        "wide.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: wide, namespace: nlp-team, labels: {kueue.x-k8s.io/queue-name: nlp-team-queue}}\nspec:\n  parallelism: 2147483647\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: x}]\n",
    );
    let (ok, _, err) = k.run(&["apply", "-f", &job]).await;
    assert!(
        !ok && err.contains("spec.parallelism: Invalid value: 2147483647"),
        "{err}"
    );
    // Still serving: the API answers and the process is alive.
    let version = k.ok(&["version", "-o", "json"]).await;
    assert!(version.contains("serverVersion"), "{version}");
    let nodes = k.ok(&["get", "nodes", "-o", "name"]).await;
    assert!(nodes.contains("node/"), "{nodes}");
    assert!(
        server.try_wait().unwrap().is_none(),
        "sim serve exited after the over-cap objects"
    );
    let _ = server.kill().await;
}
