//! Reading real manifests: the seed tutorial's YAML, v1beta2 objects, a `kubectl get -o
//! json` List dump, job/Workload dedupe, and exact error texts for bad inputs.

use std::path::PathBuf;

use gangplank::model::parse::{Loader, load_paths, parse_str};
use gangplank::model::*;

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/manifests")
        .join(rel)
}

fn key(ns: &str, name: &str) -> (String, String) {
    (ns.to_string(), name.to_string())
}

fn gpus(n: i64) -> Quantity {
    Quantity::from_units(n)
}

#[test]
fn seed_tutorial_yaml_verbatim() {
    let state = load_paths(&[fixture("seed")]).expect("seed manifests parse");
    let boss = &state.priority_classes["boss-urgent"];
    assert_eq!((boss.value, boss.global_default), (1_000_000, false));
    assert_eq!(
        boss.description.as_deref(),
        Some("核心任务，允许插队杀掉其他任务")
    );
    assert!(state.priority_classes["normal-batch"].global_default);

    let cq = &state.cluster_queues["hyperpod-global-queue"];
    assert_eq!(cq.api_version, KueueApiVersion::V1beta1);
    assert_eq!(cq.namespace_selector, Some(LabelSelector::default()));
    assert_eq!(
        cq.preemption.within_cluster_queue,
        WithinClusterQueue::LowerPriority
    );
    assert_eq!(
        cq.preemption.reclaim_within_cohort,
        ReclaimWithinCohort::Any
    );
    assert_eq!(cq.cohort, None);
    let rq = &cq.resource_groups[0].flavors[0].resources[0];
    assert_eq!((rq.name.as_str(), rq.nominal), ("nvidia.com/gpu", gpus(32)));
    assert_eq!(
        cq.origin.source,
        fixture("seed/cluster-queue.yaml").display().to_string()
    );

    let lq = &state.local_queues[&key("nlp-team", "nlp-team-queue")];
    assert_eq!(lq.cluster_queue, "hyperpod-global-queue");

    // The PyTorchJob omits resources: one pod set "master", no requests, boss priority.
    let wl = &state.workloads[&key("nlp-team", "boss-urgent-llama-finetune")];
    assert_eq!(
        wl.source,
        WorkloadSource::Job {
            kind: "PyTorchJob".into()
        }
    );
    assert_eq!(wl.queue_name.as_deref(), Some("nlp-team-queue"));
    assert_eq!(wl.pod_sets.len(), 1);
    assert_eq!(
        (wl.pod_sets[0].name.as_str(), wl.pod_sets[0].count),
        ("master", 1)
    );
    assert!(wl.pod_sets[0].requests.is_empty());
    assert_eq!(wl.priority, 1_000_000);
    assert_eq!(
        wl.priority_class,
        Some(PriorityClassRef {
            kind: PriorityClassKind::PriorityClass,
            name: "boss-urgent".into()
        })
    );
    assert_eq!(wl.priority_error, None);
    assert_eq!(state.jobs.len(), 1);
}

#[test]
fn seed_with_gpu_requests_jobs_before_priorities() {
    // Jobs first, priority classes last: priorities are resolved at finish.
    let state = load_paths(&[
        fixture("seed-gpu"),
        fixture("seed/cluster-queue.yaml"),
        fixture("seed/nlp-local-queue.yaml"),
        fixture("seed/priorities.yaml"),
    ])
    .unwrap();
    let wl = |n: &str| &state.workloads[&key("nlp-team", n)];

    let boss = wl("boss-urgent-llama-finetune");
    let names: Vec<&str> = boss.pod_sets.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["master", "worker"], "Master first, then Worker");
    assert_eq!(boss.total_requests()["nvidia.com/gpu"], gpus(16));
    assert_eq!(boss.priority, 1_000_000);

    for n in [
        "normal-train-1",
        "normal-train-2",
        "normal-train-3",
        "normal-train-4",
    ] {
        let w = wl(n);
        assert_eq!(w.total_requests()["nvidia.com/gpu"], gpus(8), "{n}");
        assert_eq!(w.priority, 1000, "{n}: globalDefault normal-batch");
        assert_eq!(
            w.priority_class.as_ref().map(|c| c.name.as_str()),
            Some("normal-batch")
        );
        assert_eq!(w.queue_name.as_deref(), Some("nlp-team-queue"), "{n}");
    }
    assert_eq!(
        wl("normal-train-2").pod_sets[0].requests["cpu"],
        Quantity::from_milli(7500)
    );
    assert_eq!(wl("normal-train-3").pod_sets[0].count, 2);

    // Deterministic, increasing timestamps in document order.
    let ts: Vec<Timestamp> = [
        "normal-train-1",
        "normal-train-2",
        "normal-train-3",
        "normal-train-4",
        "boss-urgent-llama-finetune",
    ]
    .iter()
    .map(|n| wl(n).creation_timestamp)
    .collect();
    assert!(ts.windows(2).all(|w| w[0] < w[1]), "{ts:?}");

    // A missing WorkloadPriorityClass: kept pending with a reason, priority 0.
    let typo = wl("typo-priority");
    assert_eq!(typo.priority, 0);
    assert!(
        typo.priority_error
            .as_deref()
            .unwrap()
            .contains("WorkloadPriorityClass \"urgnet\"")
    );

    // No queue label: recorded as a job only.
    assert!(
        !state
            .workloads
            .contains_key(&key("nlp-team", "forgot-the-label"))
    );
    assert!(state.jobs.iter().any(|j| j.name == "forgot-the-label"));
    assert_eq!(state.jobs.len(), 7);

    assert!(
        state
            .warnings
            .iter()
            .any(|w| w.contains("Deployment (apps/v1) ×1")),
        "{:?}",
        state.warnings
    );
}

#[test]
fn v1beta2_cluster_queue_cohort_and_fungibility() {
    let state = load_paths(&[fixture("v1beta2")]).unwrap();
    let cq = &state.cluster_queues["team-a"];
    assert_eq!(cq.api_version, KueueApiVersion::V1beta2);
    assert_eq!(cq.cohort.as_deref(), Some("research"));
    let sel = cq.namespace_selector.as_ref().unwrap();
    assert_eq!(sel.match_labels["team"], "a");
    assert_eq!(sel.match_expressions[0].operator, "NotIn");
    assert_eq!(cq.queueing_strategy, QueueingStrategy::StrictFifo);
    assert_eq!(cq.stop_policy, StopPolicy::Hold);
    assert_eq!(cq.fair_sharing_weight, Some(Quantity::from_units(2)));
    assert_eq!(cq.admission_checks, ["prov"]);
    assert_eq!(
        cq.preemption.within_cluster_queue,
        WithinClusterQueue::LowerOrNewerEqualPriority
    );
    assert_eq!(
        cq.preemption.borrow_within_cohort.policy,
        BorrowWithinCohortPolicy::LowerPriority
    );
    assert_eq!(
        cq.preemption.borrow_within_cohort.max_priority_threshold,
        Some(100)
    );
    let ff = &cq.flavor_fungibility;
    assert_eq!(ff.when_can_borrow, FungibilityPolicy::TryNextFlavor);
    assert_eq!(ff.when_can_preempt, FungibilityPolicy::TryNextFlavor);
    assert_eq!(
        ff.preference,
        Some(FungibilityPreference::PreemptionOverBorrowing)
    );
    assert!(ff.deprecated_values.is_empty());
    let a100 = &cq.resource_groups[0].flavors[0].resources[0];
    assert_eq!(a100.borrowing_limit, Some(gpus(8)));
    assert_eq!(a100.lending_limit, Some(gpus(4)));
    assert_eq!(
        cq.resource_groups[1].flavors[0].resources[0].nominal,
        Quantity::parse("1.5Ti").unwrap()
    );

    let cohort = &state.cohorts["research"];
    assert_eq!(cohort.parent.as_deref(), Some("org"));
    assert_eq!(
        cohort.resource_groups[0].flavors[0].resources[0].nominal,
        gpus(8)
    );

    let rf = &state.resource_flavors["a100"];
    assert_eq!(rf.node_taints[0].key, "nvidia.com/gpu");
    assert!(rf.tolerations[0].tolerates(&rf.node_taints[0]));

    // Hand-written Workload without spec.priority: resolved from its class.
    let wl = &state.workloads[&key("team-a", "handmade")];
    assert_eq!(wl.priority, 10000);
    assert_eq!(wl.pod_sets[0].min_count, Some(1));
    assert_eq!(wl.total_requests()["nvidia.com/gpu"], gpus(8));
    assert_eq!(
        wl.creation_timestamp,
        gangplank::model::parse::FALLBACK_EPOCH_MS
    );

    let warnings = state.warnings.join("\n");
    assert!(warnings.contains("fair sharing"), "{warnings}");
    assert!(warnings.contains("admission checks"), "{warnings}");
}

#[test]
fn kubectl_list_json_dump_with_status_and_dedupe() {
    let state = load_paths(&[fixture("dump/list.json")]).unwrap();
    assert_eq!(state.namespaces["nlp-team"].labels["team"], "nlp");
    let node = &state.nodes["gpu-node-1"];
    assert!(node.ready);
    assert_eq!(node.allocatable["nvidia.com/gpu"], gpus(8));
    assert_eq!(node.allocatable["cpu"], Quantity::from_milli(95690));

    let cq = &state.cluster_queues["hyperpod-global-queue"];
    let status = cq.status.as_ref().unwrap();
    assert_eq!(
        status.flavors_reservation[0].resources["nvidia.com/gpu"],
        (gpus(16), gpus(0))
    );
    assert_eq!(status.admitted_workloads, Some(1));

    // Job + Workload pairs count once: the Workload (with status) is kept.
    assert_eq!(state.jobs.len(), 3);
    let names: Vec<&str> = state.workloads.keys().map(|(_, n)| n.as_str()).collect();
    assert_eq!(
        names,
        ["job-train-b-9a8b7", "pytorchjob-train-a-5f1c2", "train-c"]
    );

    let a = &state.workloads[&key("nlp-team", "pytorchjob-train-a-5f1c2")];
    assert!(a.has_quota_reservation() && a.condition_true("Admitted"));
    let adm = a.admission.as_ref().unwrap();
    assert_eq!(adm.cluster_queue, "hyperpod-global-queue");
    assert_eq!(
        adm.pod_set_assignments[1].flavors["nvidia.com/gpu"],
        "p4d-flavor"
    );
    assert_eq!(
        adm.pod_set_assignments[1].resource_usage["nvidia.com/gpu"],
        gpus(8)
    );
    assert_eq!(a.owner.as_ref().unwrap().uid, "uid-pt-a");
    assert_eq!(a.creation_timestamp, 1_740_906_000_000); // 2025-03-02T09:00:00Z
    assert_eq!(
        a.conditions[0].last_transition_time,
        Some(1_740_906_001_000)
    );

    let b = &state.workloads[&key("nlp-team", "job-train-b-9a8b7")];
    assert_eq!(b.api_version, KueueApiVersion::V1beta1);
    assert!(!b.has_quota_reservation());
    assert_eq!(
        b.priority_class.as_ref().unwrap().kind,
        PriorityClassKind::PriorityClass
    );
    assert_eq!(b.total_requests()["nvidia.com/gpu"], gpus(16));

    // A job without its Workload yet: derived; its PriorityClass is missing from the dump.
    let c = &state.workloads[&key("nlp-team", "train-c")];
    assert_eq!(c.source, WorkloadSource::Job { kind: "Job".into() });
    assert!(
        c.priority_error
            .as_deref()
            .unwrap()
            .contains("PriorityClass \"boss-urgent\"")
    );

    let pod = &state.pods[&key("nlp-team", "train-a-master-0")];
    assert_eq!(pod.node_name.as_deref(), Some("gpu-node-1"));
    assert_eq!(pod.phase, "Running");
    assert_eq!(pod.requests["nvidia.com/gpu"], gpus(8));
    assert!(
        state
            .warnings
            .iter()
            .any(|w| w.contains("ConfigMap (v1) ×1"))
    );
}

#[test]
fn dedupe_by_owner_name_when_uids_are_absent() {
    let text = r#"
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns, labels: {kueue.x-k8s.io/queue-name: q}}
spec: {template: {spec: {containers: [{name: c}]}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: job-j-12345
  namespace: ns
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: j, controller: true}]
spec: {queueName: q, podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c}]}}}]}
"#;
    let mut state = ClusterState::default();
    parse_str("pair.yaml", text, &mut state).unwrap();
    assert_eq!(state.workloads.len(), 1);
    assert!(state.workloads.contains_key(&key("ns", "job-j-12345")));
    assert_eq!(state.jobs.len(), 1);
}

#[test]
fn typed_list_items_inherit_kind_and_empty_documents_are_skipped() {
    let text = "---\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClassList\nitems:\n- metadata: {name: a}\n  value: 5\n---\n";
    let mut loader = Loader::new();
    loader.add_str("pcs.yaml", text).unwrap();
    let state = loader.finish();
    assert_eq!(state.priority_classes["a"].value, 5);
    assert_eq!(state.priority_classes["a"].origin.document, 1);
}

fn parse_err(source: &str, text: &str) -> String {
    let mut state = ClusterState::default();
    parse_str(source, text, &mut state).unwrap_err().to_string()
}

#[test]
fn bad_quantity_names_file_document_object_and_field() {
    let path = fixture("bad/cluster-queue.yaml");
    let err = load_paths(std::slice::from_ref(&path)).unwrap_err();
    assert_eq!(err.document, Some(1));
    assert_eq!(
        err.to_string(),
        format!(
            "{}: document 2 (ClusterQueue/hyperpod-global-queue): \
             spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: \
             invalid quantity \"32x\": unknown suffix",
            path.display()
        )
    );
}

#[test]
fn wrong_types_and_missing_names_are_errors() {
    let e = parse_err(
        "cq.yaml",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\nspec:\n  resourceGroups:\n  - coveredResources: nvidia.com/gpu\n",
    );
    assert_eq!(
        e,
        "cq.yaml: document 1 (ClusterQueue/q): spec.resourceGroups[0].coveredResources: expected a list, found a string"
    );
    let e = parse_err(
        "pc.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {}\nvalue: 1\n",
    );
    assert_eq!(
        e,
        "pc.yaml: document 1 (PriorityClass): metadata.name: missing required field"
    );
    let e = parse_err("x.yaml", "- a\n- b\n");
    assert_eq!(
        e,
        "x.yaml: document 1: expected an object (a Kubernetes manifest), found a list"
    );
    let e = parse_err("x.yaml", "metadata: {name: a}\n");
    assert_eq!(e, "x.yaml: document 1: kind: missing required field");
    let e = parse_err(
        "l.json",
        r#"{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n", "creationTimestamp": "yesterday"}}]}"#,
    );
    assert!(
        e.starts_with("l.json: document 1 (Node/n): items[0].metadata.creationTimestamp: invalid RFC 3339 timestamp \"yesterday\""),
        "{e}"
    );
    let e = parse_err(
        "j.yaml",
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: p}\nspec:\n  pytorchReplicaSpecs:\n    Master:\n      replicas: two\n      template: {spec: {}}\n",
    );
    assert_eq!(
        e,
        "j.yaml: document 1 (PyTorchJob/p): spec.pytorchReplicaSpecs.Master.replicas: expected an integer, found a string"
    );
    let e = parse_err(
        "w.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  parallelism: -2\n  template: {spec: {}}\n",
    );
    assert_eq!(
        e,
        "w.yaml: document 1 (Job/j): spec.parallelism: must not be negative, found -2"
    );
    let e = parse_err("y.yaml", "kind: A\n---\nkind: [\n");
    assert!(e.starts_with("y.yaml: document 2: invalid YAML"), "{e}");
}

#[test]
fn missing_references_are_not_errors() {
    let text = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: lq, namespace: ns}\nspec: {clusterQueue: nowhere}\n";
    let mut state = ClusterState::default();
    parse_str("lq.yaml", text, &mut state).unwrap();
    assert_eq!(
        state.local_queues[&key("ns", "lq")].cluster_queue,
        "nowhere"
    );
}

#[test]
fn directory_loading_is_sorted_and_recursive() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(
        dir.path().join("sub/b.yml"),
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: second, labels: {kueue.x-k8s.io/queue-name: q}}\nspec: {template: {spec: {containers: []}}}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("a.yaml"),
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: first, labels: {kueue.x-k8s.io/queue-name: q}}\nspec: {template: {spec: {containers: []}}}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a manifest: [").unwrap();
    let state = load_paths(&[dir.path().to_path_buf()]).unwrap();
    let first = &state.workloads[&key("default", "first")];
    let second = &state.workloads[&key("default", "second")];
    assert!(first.creation_timestamp < second.creation_timestamp);
}

/// A List large enough to be read in two halves on two threads (`model/parse/stream.rs`)
/// gives the state that decoding it whole and reading its items in order gives.
#[test]
fn a_large_list_read_in_two_halves_is_the_list_read_whole() {
    use gangplank::sim::generate::{Shape, ShapeKind, generate, to_json_list};
    for kind in [ShapeKind::Hyperpod, ShapeKind::Hierarchical] {
        let text = String::from_utf8(to_json_list(&generate(&Shape::named(kind, 8)))).unwrap();
        let mut halves = Loader::new();
        halves.add_str("dump.json", &text).unwrap();
        let mut whole = Loader::new();
        let origin = Origin {
            source: "dump.json".into(),
            document: 0,
        };
        whole
            .add_value(origin, &serde_json::from_str(&text).unwrap())
            .unwrap();
        let (halves, whole) = (halves.finish(), whole.finish());
        assert!(halves.workloads.len() > 4096 / 2, "{}", kind.name());
        assert_eq!(
            format!("{halves:?}"),
            format!("{whole:?}"),
            "{}",
            kind.name()
        );
    }
}
