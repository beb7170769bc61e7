//! SimCluster controllers beyond the seed story: cohort reclamation, spec.active,
//! job priority propagation, deletion, batch Job completion, Deployments, taints.

use gangplank::sim::store::{DeleteOptions, ObjectStore, WriteOptions};
use gangplank::sim::{PatchKind, ResourceKey, Scenario, SimCluster, SimOptions};
use serde_json::{Value, json};

const MIN: i64 = 60_000;

fn cond<'a>(o: &'a Value, t: &str) -> Option<(&'a str, &'a str)> {
    o["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == t)
        .map(|c| {
            (
                c["status"].as_str().unwrap_or(""),
                c["reason"].as_str().unwrap_or(""),
            )
        })
}

fn wl(store: &ObjectStore, ns: &str, job: &str) -> Option<Value> {
    store
        .list(&ResourceKey::WORKLOADS, Some(ns))
        .items
        .into_iter()
        .find(|w| w["metadata"]["ownerReferences"][0]["name"] == job)
}

fn admitted(store: &ObjectStore, ns: &str, job: &str) -> bool {
    wl(store, ns, job).is_some_and(|w| {
        cond(&w, "Admitted") == Some(("True", "Admitted"))
            && cond(&w, "Evicted").is_none_or(|c| c.0 != "True")
    })
}

fn start() -> i64 {
    SimOptions::default().start_ms
}

#[test]
fn cohort_borrowing_is_reclaimed() {
    let mut c = SimCluster::from_scenario(
        &Scenario::bundled("cohort-borrowing").unwrap(),
        SimOptions::default(),
    );
    let store = c.store().clone();
    c.advance_to(start() + 3 * MIN);
    for j in ["a-train-1", "a-train-2", "a-train-3", "a-train-4"] {
        assert!(admitted(&store, "team-a", j), "{j}");
    }
    let cq = store
        .get(&ResourceKey::CLUSTER_QUEUES, None, "team-a-cq")
        .unwrap();
    let r = &cq["status"]["flavorsReservation"][0]["resources"][0];
    assert_eq!(
        (r["total"].as_str(), r["borrowed"].as_str()),
        (Some("32"), Some("16"))
    );

    c.advance_to(start() + 20 * MIN);
    let victim = wl(&store, "team-a", "a-train-4").unwrap();
    assert_eq!(
        cond(&victim, "Preempted"),
        Some(("True", "InCohortReclamation"))
    );
    assert_eq!(cond(&victim, "Requeued"), Some(("True", "Preempted")));
    assert!(admitted(&store, "team-b", "b-train-1"));
    assert!(admitted(&store, "team-a", "a-train-3"));
    // The job is suspended and its pod is gone.
    let job = store
        .get(&ResourceKey::JOBS, Some("team-a"), "a-train-4")
        .unwrap();
    assert_eq!(job["spec"]["suspend"], true);
    assert!(
        store
            .get(&ResourceKey::PODS, Some("team-a"), "a-train-4-main-0")
            .is_none()
    );

    c.advance_to(start() + 21 * MIN);
    assert_eq!(
        cond(&wl(&store, "team-a", "a-train-3").unwrap(), "Preempted"),
        Some(("True", "InCohortReclamation"))
    );
    assert!(admitted(&store, "team-b", "b-train-2"));
    let b = store
        .get(&ResourceKey::CLUSTER_QUEUES, None, "team-b-cq")
        .unwrap();
    assert_eq!(
        b["status"]["flavorsReservation"][0]["resources"][0]["total"],
        "16"
    );
    let reasons: Vec<&str> = c
        .timeline()
        .iter()
        .filter(|e| e.event == "preempted")
        .filter_map(|e| e.reason.as_deref())
        .collect();
    assert_eq!(reasons, ["InCohortReclamation", "InCohortReclamation"]);
}

fn set_active(store: &ObjectStore, ns: &str, name: &str, active: bool) {
    store
        .patch(
            &ResourceKey::WORKLOADS,
            Some(ns),
            name,
            PatchKind::Merge,
            &json!({"spec": {"active": active}}),
            WriteOptions::default(),
        )
        .unwrap();
}

#[test]
fn deactivation_evicts_and_reactivation_requeues() {
    let mut c = SimCluster::from_scenario(&Scenario::seed(), SimOptions::default());
    let store = c.store().clone();
    c.advance_to(start() + 3 * MIN);
    let name = wl(&store, "nlp-team", "bert-pretrain").unwrap()["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    set_active(&store, "nlp-team", &name, false);
    c.settle();
    let w = store
        .get(&ResourceKey::WORKLOADS, Some("nlp-team"), &name)
        .unwrap();
    assert_eq!(cond(&w, "Evicted"), Some(("True", "Deactivated")));
    assert_eq!(cond(&w, "Requeued"), Some(("False", "Deactivated")));
    assert_eq!(cond(&w, "QuotaReserved").unwrap().0, "False");
    assert!(w["status"]["admission"].is_null());
    assert!(
        store
            .get(
                &ResourceKey::PODS,
                Some("nlp-team"),
                "bert-pretrain-master-0"
            )
            .is_none()
    );
    let cq = store
        .get(&ResourceKey::CLUSTER_QUEUES, None, "hyperpod-global-queue")
        .unwrap();
    assert_eq!(
        cq["status"]["flavorsReservation"][0]["resources"][0]["total"],
        "24"
    );
    // It stays out while inactive, even with free quota.
    c.advance_by(5 * MIN);
    assert!(!admitted(&store, "nlp-team", "bert-pretrain"));

    set_active(&store, "nlp-team", &name, true);
    c.settle();
    let w = store
        .get(&ResourceKey::WORKLOADS, Some("nlp-team"), &name)
        .unwrap();
    assert_eq!(cond(&w, "Requeued"), Some(("True", "Reactivated")));
    assert!(
        admitted(&store, "nlp-team", "bert-pretrain"),
        "free quota: admitted again"
    );
    assert_eq!(
        store
            .get(
                &ResourceKey::PODS,
                Some("nlp-team"),
                "bert-pretrain-master-0"
            )
            .unwrap()["status"]["phase"],
        "Running"
    );
    let events: Vec<(&str, Option<&str>)> = c
        .timeline()
        .iter()
        .filter(|e| e.workload.ends_with(&name))
        .map(|e| (e.event.as_str(), e.reason.as_deref()))
        .collect();
    assert!(
        events.contains(&("evicted", Some("Deactivated"))),
        "{events:?}"
    );
    assert!(
        events.contains(&("requeued", Some("Reactivated"))),
        "{events:?}"
    );
}

const WPC: &str = r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: low}
value: 10
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 500
---
apiVersion: batch/v1
kind: Job
metadata:
  name: sweep
  namespace: nlp-team
  labels: {kueue.x-k8s.io/queue-name: nlp-team-queue, kueue.x-k8s.io/priority-class: low}
  annotations: {sim.gangplank.io/duration: 30m}
spec:
  parallelism: 2
  template:
    spec:
      containers:
      - name: c
        image: x
        resources: {limits: {nvidia.com/gpu: 4}}
---
apiVersion: v1
kind: Pod
metadata: {name: stray, namespace: web}
spec:
  containers:
  - name: c
    image: x
    resources: {requests: {cpu: "1"}}
---
apiVersion: v1
kind: Pod
metadata: {name: needs-gpu-no-toleration, namespace: web}
spec:
  containers:
  - name: c
    image: x
    resources: {requests: {nvidia.com/gpu: "1"}}
"#;

#[test]
fn batch_jobs_priority_deletion_and_plain_pods() {
    let mut scenario = Scenario::seed();
    // Keep the seed's infrastructure, drop its jobs.
    scenario
        .objects
        .retain(|o| o.resource != ResourceKey::PYTORCH_JOBS);
    scenario.add_str("extra.yaml", WPC).unwrap();
    let mut c = SimCluster::from_scenario(&scenario, SimOptions::default());
    let store = c.store().clone();

    let w = wl(&store, "nlp-team", "sweep").unwrap();
    let name = w["metadata"]["name"].as_str().unwrap().to_string();
    assert!(name.starts_with("job-sweep-"));
    assert_eq!(w["spec"]["priority"], 10);
    assert_eq!(
        w["spec"]["priorityClassRef"],
        json!({"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "low"})
    );
    assert_eq!(w["spec"]["podSets"][0]["count"], 2);
    assert_eq!(
        w["metadata"]["labels"]["kueue.x-k8s.io/job-uid"],
        store
            .get(&ResourceKey::JOBS, Some("nlp-team"), "sweep")
            .unwrap()["metadata"]["uid"]
    );
    assert!(admitted(&store, "nlp-team", "sweep"));
    for i in 0..2 {
        let p = store
            .get(
                &ResourceKey::PODS,
                Some("nlp-team"),
                &format!("sweep-main-{i}"),
            )
            .unwrap();
        assert_eq!(
            p["metadata"]["labels"]["batch.kubernetes.io/job-name"],
            "sweep"
        );
        assert_eq!(
            p["spec"]["nodeName"], "p4d-gpu-1",
            "first fit: both 4-GPU pods on the first node"
        );
    }

    // A label change on the job propagates to the Workload's priority.
    store
        .patch(
            &ResourceKey::JOBS,
            Some("nlp-team"),
            "sweep",
            PatchKind::Merge,
            &json!({"metadata": {"labels": {"kueue.x-k8s.io/priority-class": "high"}}}),
            WriteOptions::default(),
        )
        .unwrap();
    c.settle();
    let w = store
        .get(&ResourceKey::WORKLOADS, Some("nlp-team"), &name)
        .unwrap();
    assert_eq!(w["spec"]["priority"], 500);
    assert_eq!(w["spec"]["priorityClassRef"]["name"], "high");

    // Plain pods: scheduled directly; one that tolerates nothing never lands on a tainted GPU node.
    let stray = store.get(&ResourceKey::PODS, Some("web"), "stray").unwrap();
    assert!(
        stray["spec"]["nodeName"]
            .as_str()
            .unwrap()
            .starts_with("m5-")
    );
    let gpu = store
        .get(&ResourceKey::PODS, Some("web"), "needs-gpu-no-toleration")
        .unwrap();
    assert_eq!(gpu["status"]["phase"], "Pending");
    assert_eq!(cond(&gpu, "PodScheduled"), Some(("False", "Unschedulable")));
    // Deployments: replicas pods, on untainted nodes, status kept.
    let dep = store
        .get(&ResourceKey::DEPLOYMENTS, Some("web"), "java-backend")
        .unwrap();
    assert_eq!(dep["status"]["readyReplicas"], 2);

    // The batch Job completes after its duration.
    c.advance_by(30 * MIN);
    let job = store
        .get(&ResourceKey::JOBS, Some("nlp-team"), "sweep")
        .unwrap();
    assert_eq!(cond(&job, "Complete").unwrap().0, "True");
    assert_eq!(job["status"]["succeeded"], 2);
    let w = store
        .get(&ResourceKey::WORKLOADS, Some("nlp-team"), &name)
        .unwrap();
    assert_eq!(cond(&w, "Finished"), Some(("True", "Succeeded")));
    assert_eq!(
        store
            .get(&ResourceKey::PODS, Some("nlp-team"), "sweep-main-0")
            .unwrap()["status"]["phase"],
        "Succeeded"
    );

    // Deleting a job deletes its Workload and pods.
    store
        .delete(
            &ResourceKey::JOBS,
            Some("nlp-team"),
            "sweep",
            &DeleteOptions::default(),
        )
        .unwrap();
    c.settle();
    assert!(wl(&store, "nlp-team", "sweep").is_none());
    assert!(
        store
            .get(&ResourceKey::PODS, Some("nlp-team"), "sweep-main-0")
            .is_none()
    );
    assert!(c.warnings().is_empty(), "{:?}", c.warnings());
}

#[test]
fn mixed_large_runs_to_the_end_without_looping_forever() {
    let mut c = SimCluster::from_scenario(
        &Scenario::bundled("mixed-large").unwrap(),
        SimOptions::default(),
    );
    c.advance_to(start() + 8 * 60 * MIN);
    let preemptions = c
        .timeline()
        .iter()
        .filter(|e| e.event == "preempted")
        .count();
    assert!(preemptions < 200, "{preemptions} preemptions");
    assert!(c.timeline().iter().any(|e| e.event == "finished"));
    // Every queue's status is current: reserving + pending add up to the live workloads.
    let store = c.store();
    let cqs = store.list(&ResourceKey::CLUSTER_QUEUES, None).items;
    assert_eq!(cqs.len(), 4);
    for cq in cqs {
        assert!(cq["status"]["reservingWorkloads"].is_i64(), "{cq}");
        assert_eq!(cond(&cq, "Active"), Some(("True", "Ready")));
    }
}
