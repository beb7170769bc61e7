//! The simulator running live in-process (how the demo starts it): time passes at
//! `speed`, and writes through the store (as through the API) are reacted to at once.

use std::time::{Duration, Instant};

use gangplank::sim::{
    LiveOptions, LiveSim, ObjectStore, PatchKind, ResourceKey, Scenario, SimCluster, SimOptions,
    WriteOptions,
};
use serde_json::{Value, json};

const DEADLINE: Duration = Duration::from_secs(30);

fn boss(store: &ObjectStore) -> Option<Value> {
    store
        .list(&ResourceKey::WORKLOADS, Some("nlp-team"))
        .items
        .into_iter()
        .find(|w| w["metadata"]["ownerReferences"][0]["name"] == "boss-urgent-llama-finetune")
}

fn admitted(w: &Value) -> bool {
    w["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Admitted" && c["status"] == "True")
    })
}

async fn wait_until(what: &str, f: impl Fn() -> bool) {
    let end = Instant::now() + DEADLINE;
    while !f() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_seed_runs_and_reacts_to_writes() {
    let cluster = SimCluster::from_scenario(&Scenario::seed(), SimOptions::live());
    let sim = LiveSim::start(
        cluster,
        LiveOptions {
            speed: 600.0,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kc).unwrap();
    assert!(std::fs::read_to_string(&kc).unwrap().contains(&sim.url()));
    let store = sim.store().clone();
    // 10 simulated minutes ≈ 1 s: the boss arrives and is admitted; it then runs for
    // 6 s of wall time, long enough that the write below lands while it is admitted.
    wait_until("boss admitted", || {
        boss(&store).is_some_and(|w| admitted(&w))
    })
    .await;

    // A write through the store is reacted to without waiting for the clock.
    let name = boss(&store).unwrap()["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    store
        .patch(
            &ResourceKey::WORKLOADS,
            Some("nlp-team"),
            &name,
            PatchKind::Merge,
            &json!({"spec": {"active": false}}),
            WriteOptions::default(),
        )
        .unwrap();
    wait_until("boss deactivated", || {
        boss(&store).is_some_and(|w| w["status"]["admission"].is_null() && !admitted(&w))
    })
    .await;
    let cluster = sim.shutdown().await.expect("driver returns the cluster");
    assert!(cluster.counters().cycles > 0);
}
