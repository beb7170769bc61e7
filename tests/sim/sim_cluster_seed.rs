//! The seed story through SimCluster and the store: four normal jobs admitted in
//! order, the boss job preempts the two most recently admitted, their pods go, they
//! are requeued, the boss runs on two p4d nodes for an hour, then they come back.

use gangplank::sim::store::{EventType, ObjectStore};
use gangplank::sim::{ResourceKey, Scenario, SimCluster, SimOptions};
use serde_json::Value;

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

/// The Workload of a job, by the job's name.
fn wl(store: &ObjectStore, ns: &str, job: &str) -> Value {
    store
        .list(&ResourceKey::WORKLOADS, Some(ns))
        .items
        .into_iter()
        .find(|w| w["metadata"]["ownerReferences"][0]["name"] == job)
        .unwrap_or_else(|| panic!("no workload for {ns}/{job}"))
}

fn admitted(store: &ObjectStore, ns: &str, job: &str) -> bool {
    let w = wl(store, ns, job);
    cond(&w, "QuotaReserved") == Some(("True", "QuotaReserved"))
        && cond(&w, "Admitted") == Some(("True", "Admitted"))
        && w["status"]["admission"]["clusterQueue"] == "hyperpod-global-queue"
}

fn pods_of(store: &ObjectStore, ns: &str, job: &str) -> Vec<Value> {
    store
        .list(&ResourceKey::PODS, Some(ns))
        .items
        .into_iter()
        .filter(|p| p["metadata"]["labels"]["training.kubeflow.org/job-name"] == job)
        .collect()
}

fn cq_reserved(store: &ObjectStore) -> String {
    let cq = store
        .get(&ResourceKey::CLUSTER_QUEUES, None, "hyperpod-global-queue")
        .unwrap();
    cq["status"]["flavorsReservation"][0]["resources"][0]["total"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

fn assert_placement(store: &ObjectStore) {
    for p in store.list(&ResourceKey::PODS, None).items {
        let node = p["spec"]["nodeName"].as_str().unwrap_or("");
        let name = p["metadata"]["name"].as_str().unwrap();
        if p["metadata"]["namespace"] == "web" {
            assert!(node.starts_with("m5-"), "web pod {name} on {node:?}");
        } else {
            assert!(!node.starts_with("m5-"), "pod {name} on an m5 node");
        }
    }
}

#[test]
fn seed_story() {
    let start = SimOptions::default().start_ms;
    let mut c = SimCluster::from_scenario(&Scenario::seed(), SimOptions::default());
    let store = c.store().clone();
    // Keep every event from here on, to check the order of the writes.
    let mut sub = store.subscribe(None, None).unwrap();
    let mut events = Vec::new();

    // 0–3m: the four normal jobs are admitted in order.
    let order = [
        ("nlp-team", "bert-pretrain"),
        ("cv-team", "resnet-sweep"),
        ("nlp-team", "gpt-eval"),
        ("cv-team", "yolo-train"),
    ];
    for (i, (ns, job)) in order.iter().enumerate() {
        c.advance_to(start + i as i64 * MIN);
        events.extend(sub.try_next().unwrap());
        assert!(admitted(&store, ns, job), "{job} admitted at {i}m");
        for (ns2, later) in &order[i + 1..] {
            assert!(
                store
                    .list(&ResourceKey::PYTORCH_JOBS, Some(ns2))
                    .items
                    .iter()
                    .all(|j| j["metadata"]["name"] != *later)
            );
        }
        let pods = pods_of(&store, ns, job);
        assert_eq!(pods.len(), 1);
        assert_eq!(pods[0]["status"]["phase"], "Running");
        assert_eq!(pods[0]["spec"]["nodeName"], format!("p4d-gpu-{}", i + 1));
        let j = store
            .get(&ResourceKey::PYTORCH_JOBS, Some(ns), job)
            .unwrap();
        assert_eq!(j["spec"]["runPolicy"]["suspend"], false);
    }
    let w = wl(&store, "nlp-team", "bert-pretrain");
    assert!(
        w["metadata"]["name"]
            .as_str()
            .unwrap()
            .starts_with("pytorchjob-bert-pretrain-")
    );
    assert_eq!(
        w["metadata"]["name"].as_str().unwrap().len(),
        "pytorchjob-bert-pretrain-".len() + 5
    );
    assert_eq!(w["spec"]["priority"], 1000);
    assert_eq!(w["spec"]["priorityClassRef"]["name"], "normal-batch");
    assert_eq!(w["spec"]["podSets"][0]["name"], "master");
    assert_eq!(cq_reserved(&store), "32");
    assert_placement(&store);

    // 10m: the boss job arrives.
    c.advance_to(start + 10 * MIN);
    events.extend(sub.try_next().unwrap());
    for (ns, job) in [("nlp-team", "gpt-eval"), ("cv-team", "yolo-train")] {
        let w = wl(&store, ns, job);
        assert_eq!(cond(&w, "Evicted"), Some(("True", "Preempted")), "{job}");
        assert_eq!(
            cond(&w, "Preempted"),
            Some(("True", "InClusterQueue")),
            "{job}"
        );
        assert_eq!(cond(&w, "Requeued"), Some(("True", "Preempted")), "{job}");
        assert_eq!(cond(&w, "QuotaReserved").unwrap().0, "False", "{job}");
        assert_eq!(cond(&w, "Admitted").unwrap().0, "False", "{job}");
        assert!(w["status"]["admission"].is_null(), "{job}");
        assert!(pods_of(&store, ns, job).is_empty(), "{job} pods gone");
        let j = store
            .get(&ResourceKey::PYTORCH_JOBS, Some(ns), job)
            .unwrap();
        assert_eq!(j["spec"]["runPolicy"]["suspend"], true);
    }
    for (ns, job) in [("nlp-team", "bert-pretrain"), ("cv-team", "resnet-sweep")] {
        assert!(admitted(&store, ns, job), "{job} keeps running");
    }
    let boss = "boss-urgent-llama-finetune";
    assert!(admitted(&store, "nlp-team", boss));
    let bw = wl(&store, "nlp-team", boss);
    assert_eq!(bw["spec"]["priority"], 1_000_000);
    assert_eq!(
        bw["status"]["admission"]["podSetAssignments"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let mut boss_pods: Vec<String> = pods_of(&store, "nlp-team", boss)
        .iter()
        .map(|p| {
            format!(
                "{}@{}",
                p["metadata"]["name"].as_str().unwrap(),
                p["spec"]["nodeName"].as_str().unwrap()
            )
        })
        .collect();
    boss_pods.sort();
    assert_eq!(
        boss_pods,
        [
            "boss-urgent-llama-finetune-master-0@p4d-gpu-3",
            "boss-urgent-llama-finetune-worker-0@p4d-gpu-4",
        ]
    );
    for p in pods_of(&store, "nlp-team", boss) {
        let tol = p["spec"]["tolerations"].as_array().unwrap();
        assert!(
            tol.iter().any(|t| t["key"] == "nvidia.com/gpu"),
            "flavor toleration injected"
        );
        assert_eq!(
            p["spec"]["nodeSelector"]["node.kubernetes.io/instance-type"],
            "p4d.24xlarge"
        );
    }
    assert_eq!(cq_reserved(&store), "32");
    let cq = store
        .get(&ResourceKey::CLUSTER_QUEUES, None, "hyperpod-global-queue")
        .unwrap();
    assert_eq!(cq["status"]["pendingWorkloads"], 2);
    assert_eq!(cq["status"]["admittedWorkloads"], 3);
    assert_placement(&store);

    // The order of the writes: evicted → pods deleted → admission cleared → boss admitted.
    let rv_of = |pred: &dyn Fn(&gangplank::sim::StoreEvent) -> bool| {
        events
            .iter()
            .find(|e| pred(e))
            .map(|e| e.resource_version)
            .unwrap_or_else(|| panic!("event missing"))
    };
    let victim = wl(&store, "nlp-team", "gpt-eval")["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let evicted = rv_of(&|e| {
        e.resource == ResourceKey::WORKLOADS
            && e.object["metadata"]["name"] == victim.as_str()
            && cond(&e.object, "Evicted") == Some(("True", "Preempted"))
    });
    let pod_gone = rv_of(&|e| {
        e.resource == ResourceKey::PODS
            && e.event_type == EventType::Deleted
            && e.object["metadata"]["name"] == "gpt-eval-master-0"
    });
    let released = rv_of(&|e| {
        e.resource == ResourceKey::WORKLOADS
            && e.object["metadata"]["name"] == victim.as_str()
            && e.object["status"]["admission"].is_null()
            && cond(&e.object, "Requeued").is_some()
    });
    let boss_admitted = rv_of(&|e| {
        e.resource == ResourceKey::WORKLOADS
            && e.object["metadata"]["ownerReferences"][0]["name"] == boss
            && cond(&e.object, "Admitted") == Some(("True", "Admitted"))
    });
    assert!(
        evicted < pod_gone && pod_gone < released && released < boss_admitted,
        "{evicted} < {pod_gone} < {released} < {boss_admitted}"
    );

    // Nothing changes until the boss finishes at 1h10m.
    assert_eq!(c.next_event_time(), Some(start + 70 * MIN));
    c.advance_to(start + 69 * MIN);
    assert!(!admitted(&store, "nlp-team", "gpt-eval"));
    c.advance_to(start + 70 * MIN);
    let bw = wl(&store, "nlp-team", boss);
    assert_eq!(cond(&bw, "Finished"), Some(("True", "Succeeded")));
    let bj = store
        .get(&ResourceKey::PYTORCH_JOBS, Some("nlp-team"), boss)
        .unwrap();
    assert_eq!(cond(&bj, "Succeeded").unwrap().0, "True");
    assert!(
        pods_of(&store, "nlp-team", boss)
            .iter()
            .all(|p| p["status"]["phase"] == "Succeeded")
    );
    for (ns, job) in [("nlp-team", "gpt-eval"), ("cv-team", "yolo-train")] {
        assert!(admitted(&store, ns, job), "{job} admitted again");
        let w = wl(&store, ns, job);
        assert_eq!(cond(&w, "Evicted"), Some(("False", "QuotaReserved")));
        assert_eq!(pods_of(&store, ns, job).len(), 1);
    }
    assert_eq!(cq_reserved(&store), "32");
    assert_placement(&store);

    // 3h: bert finishes (3h after its admission at 0m), resnet at 3h01m → 16 reserved.
    c.advance_to(start + 181 * MIN);
    assert_eq!(cq_reserved(&store), "16");
    // The evicted jobs restarted from zero at 1h10m: they finish at 4h10m, not 3h02m.
    assert!(admitted(&store, "nlp-team", "gpt-eval"));
    c.advance_to(start + 250 * MIN);
    assert_eq!(cq_reserved(&store), "0");
    assert_eq!(c.next_event_time(), None);
    assert!(c.warnings().is_empty(), "{:?}", c.warnings());
}

#[test]
fn deterministic() {
    let run = || {
        let mut c = SimCluster::from_scenario(&Scenario::seed(), SimOptions::default());
        let start = SimOptions::default().start_ms;
        c.advance_to(start + 300 * MIN);
        (c.timeline().to_vec(), c.counters())
    };
    assert_eq!(run(), run());
}
