//! Fault tests of the live source (reliability.md §7) against the simulator's API
//! server: relist after 410, server restart, 403, malformed objects, Kueue missing.
//! Every wait is a condition with a deadline; nothing sleeps to synchronise.

use crate::source_support;

use std::time::Duration;

use gangplank::sim::api::MalformedInjection;
use gangplank::sim::{FaultConfig, FaultRule, ServerOptions, serve};
use gangplank::source::{KueueStatus, SourceOptions, SyncState};
use serde_json::json;
use source_support::*;

fn synced(s: &gangplank::source::Snapshot, resource: &str) -> bool {
    s.sync
        .iter()
        .any(|r| r.resource == resource && r.state == SyncState::Synced)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_stream_410_relists_without_blanking() {
    let opts = ServerOptions {
        // No bookmark may move the watchers' resourceVersion past the compaction.
        bookmark_interval: Duration::from_secs(3600),
        ..ServerOptions::default()
    };
    let env = env_with(opts, true).await;
    let h = env.source(SourceOptions::default()).await;
    h.wait_synced(DEADLINE)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut rx = h.snapshots();
    // Bump the resourceVersion with an object nobody watches, then forget history:
    // every re-watch from an older resourceVersion now gets an in-stream 410.
    create(
        &env.store,
        &key("apps", "deployments"),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "bump", "namespace": "team"}, "spec": {}}),
    );
    env.store.compact_history();
    env.server.close_watches();
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let s = rx.borrow_and_update().clone();
        // Never blanked: the old objects stay until the new list completes.
        assert!(
            has_workload(&s, "team", "running"),
            "blanked at generation {}",
            s.generation
        );
        assert!(s.state.cluster_queues.contains_key("gpu-cq"));
        let wl = s
            .sync
            .iter()
            .find(|r| r.resource == "workloads.kueue.x-k8s.io")
            .expect("wl");
        if wl.relists >= 1 && wl.state == SyncState::Synced {
            break;
        }
        tokio::time::timeout_at(deadline, rx.changed())
            .await
            .expect("relist within the deadline")
            .expect("source alive");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_restart_reconnects_and_resyncs() {
    let env = env().await;
    let addr = env.server.addr();
    let store = env.store.clone();
    let h = env.source(SourceOptions::default()).await;
    h.wait_synced(DEADLINE)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let source_support::Env {
        server, dir: _dir, ..
    } = env;
    server.shutdown().await.expect("shutdown");
    // The watches break: resources leave "synced" and the view is kept.
    let s = wait(&h, "an error or resync after shutdown", |s| {
        s.sync.iter().any(|r| {
            matches!(
                r.state,
                SyncState::Error { .. } | SyncState::Resyncing { .. }
            )
        })
    })
    .await;
    assert!(has_workload(&s, "team", "running"));
    // A change while the server is down must show up after the reconnect.
    create(
        &store,
        &kueue("workloads"),
        workload("team", "while-down", 1, 1),
    );
    let opts = ServerOptions {
        addr,
        ..ServerOptions::default()
    };
    let _server = serve(store.clone(), opts)
        .await
        .expect("serve on the same port");
    let s = wait(&h, "resync after restart", |s| {
        s.all_settled() && has_workload(s, "team", "while-down")
    })
    .await;
    let wl = s
        .sync
        .iter()
        .find(|r| r.resource == "workloads.kueue.x-k8s.io")
        .expect("wl");
    assert!(wl.relists >= 1, "{wl:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_nodes_leave_everything_else_working() {
    let opts = ServerOptions {
        faults: FaultConfig {
            rules: vec![FaultRule {
                resource: "nodes".into(),
                status: Some(403),
                ..FaultRule::default()
            }],
            ..FaultConfig::default()
        },
        ..ServerOptions::default()
    };
    let env = env_with(opts, true).await;
    let h = env.source(SourceOptions::default()).await;
    let s = h
        .wait_synced(DEADLINE)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let nodes = s
        .sync
        .iter()
        .find(|r| r.resource == "nodes")
        .expect("nodes");
    match &nodes.state {
        SyncState::Forbidden { message } => assert!(message.contains("nodes"), "{message}"),
        other => panic!("nodes: {other:?}"),
    }
    assert!(synced(&s, "workloads.kueue.x-k8s.io"));
    assert!(synced(&s, "pods"));
    assert!(has_workload(&s, "team", "running"));
    assert!(s.state.nodes.is_empty());
    assert!(
        s.status_line().contains("nodes forbidden"),
        "{}",
        s.status_line()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_workload_in_list_is_skipped_and_named() {
    let opts = ServerOptions {
        faults: FaultConfig {
            malformed: vec![MalformedInjection {
                resource: "workloads".into(),
                object: None,
            }],
            ..FaultConfig::default()
        },
        ..ServerOptions::default()
    };
    let env = env_with(opts, true).await;
    let h = env.source(SourceOptions::default()).await;
    let s = h
        .wait_synced(DEADLINE)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(synced(&s, "workloads.kueue.x-k8s.io"));
    assert!(has_workload(&s, "team", "running") && has_workload(&s, "team", "waiting"));
    assert!(!has_workload(&s, "default", "malformed-injected"));
    let skipped = s
        .skipped
        .iter()
        .find(|k| k.object == "Workload default/malformed-injected");
    assert!(skipped.is_some(), "{:?}", s.skipped);
    assert!(
        s.state
            .warnings
            .iter()
            .any(|w| w.contains("malformed-injected")),
        "{:?}",
        s.state.warnings
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_workload_in_watch_does_not_stop_the_stream() {
    let env = env().await;
    let h = env.source(SourceOptions::default()).await;
    h.wait_synced(DEADLINE)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    env.server.faults().set(FaultConfig {
        malformed: vec![MalformedInjection {
            resource: "workloads".into(),
            object: None,
        }],
        ..FaultConfig::default()
    });
    // Re-watches now start with the malformed object in the stream.
    env.server.close_watches();
    wait(&h, "the malformed object to be reported", |s| {
        s.skipped
            .iter()
            .any(|k| k.object == "Workload default/malformed-injected")
    })
    .await;
    // The stream goes on: a later event still applies.
    create(
        &env.store,
        &kueue("workloads"),
        workload("team", "after-bad", 3, 1),
    );
    let s = wait(&h, "a workload after the bad one", |s| {
        has_workload(s, "team", "after-bad")
    })
    .await;
    assert!(has_workload(&s, "team", "running"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_kueue_gives_one_clear_message() {
    let rules = [
        "resourceflavors",
        "clusterqueues",
        "localqueues",
        "cohorts",
        "workloadpriorityclasses",
        "workloads",
    ]
    .iter()
    .map(|p| FaultRule {
        resource: format!("{p}.kueue.x-k8s.io"),
        status: Some(404),
        ..FaultRule::default()
    })
    .collect();
    let opts = ServerOptions {
        faults: FaultConfig {
            rules,
            ..FaultConfig::default()
        },
        ..ServerOptions::default()
    };
    let env = env_with(opts, true).await;
    let h = env.source(SourceOptions::default()).await;
    let s = h
        .wait_synced(DEADLINE)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    match &s.kueue {
        KueueStatus::NotInstalled { message } => {
            assert!(message.contains("Kueue is not installed"), "{message}")
        }
        other => panic!("kueue: {other:?}"),
    }
    assert!(synced(&s, "nodes"));
    assert_eq!(s.state.nodes.len(), 2);
    assert!(s.status_line().contains("Kueue not installed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_410_on_watch_start_restarts_and_relists() {
    let env = env().await;
    let h = env.source(SourceOptions::default()).await;
    h.wait_synced(DEADLINE)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // A proxy-style 410 answering the watch request itself: kube alone would retry
    // the same resourceVersion forever.
    env.server.faults().add_rule(FaultRule {
        resource: "workloads.kueue.x-k8s.io".into(),
        verbs: vec!["watch".into()],
        status: Some(410),
        times: Some(1),
        ..FaultRule::default()
    });
    env.server.close_watches();
    let s = wait(&h, "a relist after the HTTP 410", |s| {
        s.sync.iter().any(|r| {
            r.resource == "workloads.kueue.x-k8s.io"
                && r.relists >= 1
                && r.state == SyncState::Synced
        })
    })
    .await;
    assert!(has_workload(&s, "team", "running"));
}

/// A watch the server accepts and then never answers (no event, no bookmark, no close
/// at `timeoutSeconds`) is detected by the client's read timeout, reported in the
/// status, and recovered by a relist. With a 1 s watch timeout the hang is noticed
/// within ~4 s; every wait is a condition with a deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_watch_is_detected_reported_and_recovered() {
    let env = env().await;
    let opts = SourceOptions {
        watch_timeout_secs: 1,
        ..SourceOptions::default()
    };
    let h = env.source(opts).await;
    h.wait_synced(DEADLINE)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    const WL: &str = "workloads.kueue.x-k8s.io";
    let sync_of = |s: &gangplank::source::Snapshot| {
        s.sync
            .iter()
            .find(|r| r.resource == WL)
            .cloned()
            .expect("workloads sync")
    };
    assert_eq!(sync_of(&h.latest()).relists, 0);
    // The next Workload watch (healthy ones end every second) hangs.
    env.server.faults().add_rule(FaultRule {
        resource: "workloads".into(),
        verbs: vec!["watch".into()],
        hang: true,
        times: Some(1),
        ..FaultRule::default()
    });
    env.server.close_watches();
    let s = wait(&h, "the silent watch to be reported and relisted", |s| {
        let r = sync_of(s);
        r.relists >= 1
            && r.last_error
                .as_deref()
                .is_some_and(|m| m.contains("went silent"))
    })
    .await;
    assert!(
        has_workload(&s, "team", "running"),
        "the view was kept meanwhile"
    );
    // Recovered: synced again, and changes flow.
    create(
        &env.store,
        &kueue("workloads"),
        workload("team", "after-silence", 1, 1),
    );
    wait(&h, "a change after recovery", |s| {
        sync_of(s).state == SyncState::Synced && has_workload(s, "team", "after-silence")
    })
    .await;
    assert!(
        env.server.faults().get().rules.is_empty(),
        "the hang rule fired"
    );
}

/// A paged list whose continue token expires between pages (410 on the next page) is
/// restarted from scratch instead of retrying the dead token forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_continue_token_restarts_the_list() {
    let env = env().await;
    let faults = env.server.faults();
    // Page 1 of the Workload list goes through; page 2 waits long enough for the test
    // to expire every continue token meanwhile.
    faults.add_rule(FaultRule {
        resource: "workloads".into(),
        verbs: vec!["list".into()],
        times: Some(1),
        ..FaultRule::default()
    });
    faults.add_rule(FaultRule {
        resource: "workloads".into(),
        verbs: vec!["list".into()],
        delay_ms: Some(5_000),
        times: Some(1),
        ..FaultRule::default()
    });
    let opts = SourceOptions {
        page_size: 1,
        ..SourceOptions::default()
    };
    let h = env.source(opts).await;
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while env.server.stats().count("list", "workloads.kueue.x-k8s.io") < 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "page 2 never requested"
        );
        tokio::task::yield_now().await;
    }
    env.server.expire_list_tokens();
    let s = wait(&h, "the list restarted and synced", |s| {
        s.sync.iter().any(|r| {
            r.resource == "workloads.kueue.x-k8s.io"
                && r.state == SyncState::Synced
                && r.last_error
                    .as_deref()
                    .is_some_and(|m| m.contains("list expired"))
        })
    })
    .await;
    assert!(has_workload(&s, "team", "running") && has_workload(&s, "team", "waiting"));
}
