//! Fault injection and wire details of the simulator's API server, over raw HTTP
//! through a kube client (so the bytes are exactly what kube-rs sees).

use std::time::{Duration, Instant};

use futures::TryStreamExt;
use gangplank::sim::api::MalformedInjection;
use gangplank::sim::{
    FaultConfig, FaultRule, ObjectStore, ResourceKey, ServerHandle, ServerOptions, WriteOptions,
    serve,
};
use k8s_openapi::api::core::v1::Node;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, WatchEvent, WatchParams,
};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use serde_json::{Value, json};

const DEADLINE: Duration = Duration::from_secs(30);

async fn start() -> (ServerHandle, Client, tempfile::TempDir) {
    let server = serve(ObjectStore::new(), ServerOptions::default())
        .await
        .expect("serve");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("kubeconfig");
    server.write_kubeconfig(&path).expect("kubeconfig");
    let kc = Kubeconfig::read_from(&path).expect("read kubeconfig");
    let cfg = Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("config");
    (server, Client::try_from(cfg).expect("client"), dir)
}

fn workloads(client: &Client) -> Api<DynamicObject> {
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("kueue.x-k8s.io", "v1beta2", "Workload"),
        "workloads",
    );
    Api::all_with(client.clone(), &ar)
}

#[tokio::test]
async fn watch_closed_after_configured_seconds() {
    let (server, client, _d) = start().await;
    server.faults().set(FaultConfig {
        watch_close_after_seconds: Some(1),
        ..Default::default()
    });
    let nodes: Api<Node> = Api::all(client);
    let started = Instant::now();
    let mut s = Box::pin(
        nodes
            .watch(&WatchParams::default().timeout(60), "0")
            .await
            .expect("watch"),
    );
    // The stream must end by itself (well before the 60 s timeout).
    let ended = tokio::time::timeout(DEADLINE, async {
        while s.try_next().await.expect("stream").is_some() {}
    })
    .await;
    assert!(ended.is_ok(), "watch was not closed");
    assert!(started.elapsed() >= Duration::from_millis(900));
    server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn error_and_delay_rules_by_verb_and_count() {
    let (server, client, _d) = start().await;
    server.faults().add_rule(FaultRule {
        resource: "nodes".into(),
        verbs: vec!["get".into()],
        status: Some(500),
        times: Some(2),
        ..Default::default()
    });
    server.faults().add_rule(FaultRule {
        resource: "*".into(),
        verbs: vec!["list".into()],
        delay_ms: Some(300),
        ..Default::default()
    });
    server
        .store()
        .create(
            &ResourceKey::NODES,
            json!({"metadata":{"name":"n"}}),
            WriteOptions::default(),
        )
        .expect("create");
    let nodes: Api<Node> = Api::all(client.clone());
    for _ in 0..2 {
        let err = nodes.get("n").await.unwrap_err();
        assert!(
            matches!(&err, kube::Error::Api(s) if s.code == 500 && s.reason == "InternalError"),
            "{err:?}"
        );
    }
    nodes.get("n").await.expect("third get succeeds");
    let t = Instant::now();
    nodes.list(&ListParams::default()).await.expect("slow list");
    assert!(t.elapsed() >= Duration::from_millis(300));
    // HTTP 410 on the watch request itself (proxy-style), not in-stream.
    server.faults().set(FaultConfig {
        rules: vec![FaultRule {
            resource: "nodes".into(),
            verbs: vec!["watch".into()],
            status: Some(410),
            ..Default::default()
        }],
        ..Default::default()
    });
    let err = nodes
        .watch(&WatchParams::default(), "0")
        .await
        .err()
        .expect("watch refused");
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 410),
        "{err:?}"
    );
    server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn malformed_object_in_watch_stream() {
    let (server, client, _d) = start().await;
    server.faults().set(FaultConfig {
        malformed: vec![MalformedInjection {
            resource: "workloads.kueue.x-k8s.io".into(),
            object: None,
        }],
        ..Default::default()
    });
    // Raw lines, as a typed decoder would fail on them.
    let req = axum::http::Request::get(format!(
        "{}/apis/kueue.x-k8s.io/v1beta2/workloads?watch=1&timeoutSeconds=1",
        server.url()
    ))
    .body(Vec::new())
    .expect("req");
    let text = tokio::time::timeout(DEADLINE, client.request_text(req))
        .await
        .expect("deadline")
        .expect("watch");
    let first: Value =
        serde_json::from_str(text.lines().next().expect("a line")).expect("json line");
    assert_eq!(first["type"], json!("ADDED"));
    assert_eq!(first["object"]["kind"], json!("Workload"));
    assert_eq!(first["object"]["spec"]["podSets"], json!("not-a-list"));
    // A dynamic list still decodes (DynamicObject accepts any spec).
    let l = workloads(&client)
        .list(&ListParams::default())
        .await
        .expect("list");
    assert_eq!(l.items.len(), 1);
    server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn yaml_bodies_tables_and_protobuf_accept_falling_back_to_json() {
    let (server, client, _d) = start().await;
    let yaml = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: from-yaml\n";
    let req = axum::http::Request::post(format!("{}/api/v1/namespaces", server.url()))
        .header("content-type", "application/yaml")
        .body(yaml.as_bytes().to_vec())
        .expect("req");
    let created: Value = client.request(req).await.expect("yaml create");
    assert_eq!(created["metadata"]["name"], json!("from-yaml"));
    let req = axum::http::Request::get(format!("{}/api/v1/namespaces", server.url()))
        .header(
            "accept",
            "application/vnd.kubernetes.protobuf,application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
        )
        .body(Vec::new())
        .expect("req");
    // Tables are printed server-side (protobuf is not spoken: the next type wins).
    let table: Value = client.request(req).await.expect("list");
    assert_eq!(table["kind"], json!("Table"));
    assert_eq!(table["columnDefinitions"][1]["name"], json!("Status"));
    assert_eq!(table["rows"][0]["cells"][0], json!("from-yaml"));
    assert_eq!(
        table["rows"][0]["object"]["kind"],
        json!("PartialObjectMetadata")
    );
    let req = axum::http::Request::get(format!("{}/api/v1/namespaces", server.url()))
        .header(
            "accept",
            "application/vnd.kubernetes.protobuf,application/json",
        )
        .body(Vec::new())
        .expect("req");
    let list: Value = client.request(req).await.expect("list");
    assert_eq!(list["kind"], json!("NamespaceList"));
    assert_eq!(list["items"][0]["metadata"]["name"], json!("from-yaml"));
    // Namespaced writes in the wrong namespace are refused.
    let req = axum::http::Request::post(format!("{}/api/v1/namespaces/a/pods", server.url()))
        .header("content-type", "application/json")
        .body(
            br#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"b"}}"#.to_vec(),
        )
        .expect("req");
    let err = client.request_text(req).await.unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 400),
        "{err:?}"
    );
    // Unknown paths are 404 Status bodies.
    let req = axum::http::Request::get(format!("{}/apis/nope.example.com/v1/things", server.url()))
        .body(Vec::new())
        .expect("req");
    let err = client.request_text(req).await.unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.is_not_found()),
        "{err:?}"
    );
    server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn bookmark_carries_type_meta_and_request_counts() {
    let opts = ServerOptions {
        bookmark_interval: Duration::from_millis(50),
        ..Default::default()
    };
    let server = serve(ObjectStore::new(), opts).await.expect("serve");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("kc");
    server.write_kubeconfig(&path).expect("kubeconfig");
    let cfg = Config::from_custom_kubeconfig(
        Kubeconfig::read_from(&path).expect("kc"),
        &KubeConfigOptions::default(),
    )
    .await
    .expect("config");
    let client = Client::try_from(cfg).expect("client");
    let req = axum::http::Request::get(format!(
        "{}/apis/kueue.x-k8s.io/v1beta1/clusterqueues?&watch=true&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1",
        server.url()
    ))
    .body(Vec::new())
    .expect("req");
    let text = client.request_text(req).await.expect("watch");
    let first: Value = serde_json::from_str(text.lines().next().expect("line")).expect("json");
    assert_eq!(first["type"], json!("BOOKMARK"));
    assert_eq!(first["object"]["kind"], json!("ClusterQueue"));
    assert_eq!(
        first["object"]["apiVersion"],
        json!("kueue.x-k8s.io/v1beta1")
    );
    assert_eq!(
        first["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        json!("true")
    );
    assert!(text.lines().skip(1).all(|l| l.contains("\"BOOKMARK\"")));
    let stats = server.stats();
    assert_eq!(stats.count("watch", "clusterqueues.kueue.x-k8s.io"), 1);
    assert_eq!(
        stats.write_count(),
        0,
        "no write request reached the server"
    );
    // Typed decoding of the same kind of stream.
    let nodes: Api<Node> = Api::all(client);
    let mut s = Box::pin(
        nodes
            .watch(&WatchParams::default().timeout(5), "0")
            .await
            .expect("watch"),
    );
    let ev = tokio::time::timeout(DEADLINE, s.try_next())
        .await
        .expect("deadline")
        .expect("ok");
    assert!(matches!(ev, Some(WatchEvent::Bookmark(_))), "{ev:?}");
    server.shutdown().await.expect("shutdown");
}
