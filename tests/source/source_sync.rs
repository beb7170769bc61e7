//! The live source against the simulator's API server: initial sync and live updates.

use crate::source_support;

use gangplank::sim::WriteOptions;
use gangplank::source::{KueueStatus, SourceOptions, SyncState};
use serde_json::json;
use source_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initial_sync_holds_the_scenario() {
    let env = env().await;
    let h = env.source(SourceOptions::default()).await;
    let snap = h
        .wait_synced(DEADLINE)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    for s in &snap.sync {
        let optional_absent = matches!(s.state, SyncState::NotServed { .. })
            && (s.resource.starts_with("pytorchjobs") || s.resource.starts_with("cohorts"));
        assert!(s.state == SyncState::Synced || optional_absent, "{s}");
    }
    assert_eq!(h.kueue_version, "v1beta2");
    assert!(matches!(snap.kueue, KueueStatus::Installed { .. }));
    let st = &snap.state;
    assert!(st.cluster_queues.contains_key("gpu-cq"));
    assert!(st.resource_flavors.contains_key("a100"));
    assert_eq!(st.nodes.len(), 2);
    assert!(has_workload(&snap, "team", "running"));
    assert!(has_workload(&snap, "team", "waiting"));
    // The suspended Job without a Workload becomes a derived pending workload.
    assert!(has_workload(&snap, "team", "train"));
    assert_eq!(st.pods.len(), 1);
    assert!(st.priority_classes.contains_key("high"));
    assert!(st.workload_priority_classes.contains_key("urgent"));
    assert!(st.namespaces.contains_key("team"));
    assert!(
        snap.status_line().starts_with("synced"),
        "{}",
        snap.status_line()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_updates_reach_the_snapshot() {
    let env = env().await;
    let h = env.source(SourceOptions::default()).await;
    h.wait_synced(DEADLINE)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // create through the store
    create(
        &env.store,
        &kueue("workloads"),
        workload("team", "fresh", 7, 1),
    );
    wait(&h, "the new workload", |s| has_workload(s, "team", "fresh")).await;
    // patch through HTTP (kube client): change the priority
    let client =
        gangplank::source::connect(&env.cluster_args(), std::time::Duration::from_secs(30))
            .await
            .expect("client");
    let ar = gangplank::source::ResourceKind::Workload.api_resource("v1beta2");
    let api: kube::Api<kube::api::DynamicObject> = kube::Api::namespaced_with(client, "team", &ar);
    api.patch(
        "fresh",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(json!({"spec": {"priority": 99}})),
    )
    .await
    .expect("patch");
    wait(&h, "the patched priority", |s| {
        s.state
            .workloads
            .get(&("team".to_string(), "fresh".to_string()))
            .is_some_and(|w| w.priority == 99)
    })
    .await;
    // delete
    env.store
        .delete(
            &kueue("workloads"),
            Some("team"),
            "fresh",
            &Default::default(),
        )
        .expect("delete");
    wait(&h, "the deletion", |s| !has_workload(s, "team", "fresh")).await;
    let _ = WriteOptions::default();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_agent_names_gangplank() {
    assert!(gangplank::source::USER_AGENT_VALUE.starts_with("gangplank/"));
    assert!(gangplank::source::USER_AGENT_VALUE.ends_with(env!("CARGO_PKG_VERSION")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_args_set_impersonation_and_user_agent() {
    let env = env().await;
    let args = gangplank::source::ClusterArgs {
        as_user: Some("alice".into()),
        as_group: vec!["ops".into()],
        ..env.cluster_args()
    };
    let cfg = gangplank::source::client_config(&args, std::time::Duration::from_secs(95))
        .await
        .expect("config");
    assert_eq!(cfg.auth_info.impersonate.as_deref(), Some("alice"));
    assert_eq!(
        cfg.auth_info.impersonate_groups,
        Some(vec!["ops".to_string()])
    );
    assert!(
        cfg.headers.iter().any(|(k, v)| k == "user-agent"
            && v.to_str().ok() == Some(gangplank::source::USER_AGENT_VALUE))
    );
    assert_eq!(cfg.read_timeout, Some(std::time::Duration::from_secs(95)));
    assert_eq!(
        cfg.cluster_url.to_string(),
        format!("{}/", env.server.url())
    );
}
