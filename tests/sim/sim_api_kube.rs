//! kube-rs as a client of the simulator's API server.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use gangplank::sim::{
    FaultConfig, FaultRule, ObjectStore, ResourceKey, ServerHandle, ServerOptions, WriteOptions,
    serve,
};
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::watcher;
use kube::{Client, Config};
use serde_json::{Value, json};

const DEADLINE: Duration = Duration::from_secs(30);

async fn start_with(opts: ServerOptions) -> (ServerHandle, Client, tempfile::TempDir) {
    let server = serve(ObjectStore::new(), opts).await.expect("serve");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("kubeconfig");
    server.write_kubeconfig(&path).expect("kubeconfig");
    let kc = Kubeconfig::read_from(&path).expect("read kubeconfig");
    let cfg = Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("config");
    let client = Client::try_from(cfg).expect("client");
    (server, client, dir)
}

async fn start() -> (ServerHandle, Client, tempfile::TempDir) {
    start_with(ServerOptions::default()).await
}

fn ar(version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("kueue.x-k8s.io", version, kind),
        plural,
    )
}

fn cq(name: &str) -> Value {
    json!({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue","metadata":{"name":name,"labels":{"tier":"gpu"}},
        "spec":{"cohortName":"c","namespaceSelector":{}}})
}

fn node(name: &str, labels: Value) -> Node {
    serde_json::from_value(json!({"metadata":{"name":name,"labels":labels},"spec":{}}))
        .expect("node")
}

#[tokio::test]
async fn discovery_and_version() {
    let (server, client, _d) = start().await;
    let v = client.apiserver_version().await.expect("version");
    assert_eq!(v.major, "1");
    let discovery = kube::discovery::Discovery::new(client.clone())
        .run()
        .await
        .expect("discovery");
    let (res, caps) = discovery
        .groups()
        .find(|g| g.name() == "kueue.x-k8s.io")
        .and_then(|g| {
            g.recommended_resources()
                .into_iter()
                .find(|(r, _)| r.plural == "clusterqueues")
        })
        .expect("clusterqueues discovered");
    assert_eq!(res.version, "v1beta2");
    assert!(caps.supports_operation(kube::discovery::verbs::WATCH));
    assert!(caps.subresources.iter().any(|(r, _)| r.plural == "status"));
    let gvk = GroupVersionKind::gvk("kueue.x-k8s.io", "v1beta1", "Workload");
    let (wl, caps) = kube::discovery::pinned_kind(&client, &gvk)
        .await
        .expect("pinned");
    assert_eq!(wl.plural, "workloads");
    assert_eq!(caps.scope, kube::discovery::Scope::Namespaced);
    server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn crud_errors_and_conflicts() {
    let (server, client, _d) = start().await;
    let nodes: Api<Node> = Api::all(client.clone());
    let created = nodes
        .create(&PostParams::default(), &node("n1", json!({"gpu":"a100"})))
        .await
        .expect("create");
    let rv1 = created.metadata.resource_version.clone().expect("rv");
    assert!(created.metadata.uid.is_some() && created.metadata.creation_timestamp.is_some());
    // 409 AlreadyExists.
    let err = nodes
        .create(&PostParams::default(), &node("n1", json!({})))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 409 && s.reason == "AlreadyExists"),
        "{err:?}"
    );
    // Replace with the current rv succeeds, a stale rv conflicts.
    let mut n = created.clone();
    n.metadata
        .labels
        .get_or_insert_default()
        .insert("zone".into(), "z1".into());
    let updated = nodes
        .replace("n1", &PostParams::default(), &n)
        .await
        .expect("replace");
    assert_ne!(
        updated.metadata.resource_version.as_deref(),
        Some(rv1.as_str())
    );
    let err = nodes
        .replace("n1", &PostParams::default(), &n)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.is_conflict()),
        "{err:?}"
    );
    // 404.
    let err = nodes.get("missing").await.unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.is_not_found() && s.message.contains("\"missing\" not found")),
        "{err:?}"
    );
    // 422 on a missing name.
    let err = nodes
        .create(&PostParams::default(), &node("", json!({})))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.is_invalid()),
        "{err:?}"
    );
    // 422 on a Workload that does not fit the schema.
    let wls = Api::<DynamicObject>::namespaced_with(
        client.clone(),
        "default",
        &ar("v1beta2", "Workload", "workloads"),
    );
    let bad: DynamicObject = serde_json::from_value(
        json!({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload",
        "metadata":{"name":"w"},"spec":{"podSets":"nope"}}),
    )
    .expect("obj");
    let err = wls.create(&PostParams::default(), &bad).await.unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.is_invalid()),
        "{err:?}"
    );
    // Wrong kind for the URL.
    let wrong: DynamicObject = serde_json::from_value(
        json!({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue",
        "metadata":{"name":"w"}}),
    )
    .expect("obj");
    let err = wls
        .create(&PostParams::default(), &wrong)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 422),
        "{err:?}"
    );
    // Malformed JSON → 400, unsupported verb → 405.
    let req = axum::http::Request::post(format!("{}/api/v1/nodes", server.url()))
        .header("content-type", "application/json")
        .body(b"{not json".to_vec())
        .expect("req");
    let err = client.request_text(req).await.unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 400 && s.reason == "BadRequest"),
        "{err:?}"
    );
    let req = axum::http::Request::post(format!("{}/api/v1/nodes/n1", server.url()))
        .body(b"{}".to_vec())
        .expect("req");
    let err = client.request_text(req).await.unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 405),
        "{err:?}"
    );
    // Delete returns the object; a second delete is 404.
    let gone = nodes
        .delete("n1", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(gone.is_left());
    let err = nodes
        .delete("n1", &DeleteParams::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.is_not_found()),
        "{err:?}"
    );
    let stats = server.stats();
    assert_eq!(stats.count("create", "nodes"), 4);
    assert_eq!(stats.count("delete", "nodes"), 2);
    // deletecollection with a label selector.
    for (n, l) in [("d1", "x"), ("d2", "x"), ("d3", "y")] {
        nodes
            .create(&PostParams::default(), &node(n, json!({"grp": l})))
            .await
            .expect("create");
    }
    nodes
        .delete_collection(
            &DeleteParams::default(),
            &ListParams::default().labels("grp=x"),
        )
        .await
        .expect("deletecollection");
    let left: Vec<_> = nodes
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect();
    assert_eq!(left, ["d3"]);
    server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn dry_run_writes_nothing() {
    let (server, client, _d) = start().await;
    let api = Api::<DynamicObject>::all_with(
        client.clone(),
        &ar("v1beta2", "ClusterQueue", "clusterqueues"),
    );
    let obj: DynamicObject = serde_json::from_value(cq("a")).expect("obj");
    api.create(&PostParams::default(), &obj)
        .await
        .expect("create");
    let store = server.store().clone();
    let rv = store.resource_version();
    let mut sub = store.subscribe(None, None).expect("subscribe");
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let out = api
        .create(&dry, &serde_json::from_value(cq("b")).expect("obj"))
        .await
        .expect("dry create");
    assert_eq!(out.metadata.name.as_deref(), Some("b"));
    let pp = PatchParams {
        dry_run: true,
        ..Default::default()
    };
    let patched = api
        .patch(
            "a",
            &pp,
            &Patch::Merge(json!({"spec":{"cohortName":"zzz"}})),
        )
        .await
        .expect("dry patch");
    assert_eq!(patched.data["spec"]["cohortName"], json!("zzz"));
    let dp = DeleteParams {
        dry_run: true,
        ..Default::default()
    };
    api.delete("a", &dp).await.expect("dry delete");
    assert_eq!(store.resource_version(), rv);
    assert_eq!(store.count(&ResourceKey::CLUSTER_QUEUES), 1);
    assert_eq!(
        store
            .get(&ResourceKey::CLUSTER_QUEUES, None, "a")
            .expect("a")["spec"]["cohortName"],
        json!("c")
    );
    assert!(sub.try_next().expect("events").is_empty());
    // The dry-run requests did reach the server and are counted as writes.
    assert_eq!(server.stats().write_count(), 4);
    server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn status_subresource_is_separate() {
    let (server, client, _d) = start().await;
    let api = Api::<DynamicObject>::all_with(
        client.clone(),
        &ar("v1beta2", "ClusterQueue", "clusterqueues"),
    );
    api.create(
        &PostParams::default(),
        &serde_json::from_value(cq("a")).expect("obj"),
    )
    .await
    .expect("create");
    // Main-resource patch: status ignored, spec applied.
    let out = api
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec":{"cohortName":"x"},"status":{"pendingWorkloads":5}})),
        )
        .await
        .expect("patch");
    assert_eq!(out.data["spec"]["cohortName"], json!("x"));
    assert!(out.data.get("status").is_none());
    assert_eq!(out.metadata.generation, Some(2));
    // Status patch: spec ignored, status applied, generation unchanged.
    let out = api
        .patch_status(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec":{"cohortName":"y"},"status":{"pendingWorkloads":5}})),
        )
        .await
        .expect("patch status");
    assert_eq!(out.data["spec"]["cohortName"], json!("x"));
    assert_eq!(out.data["status"]["pendingWorkloads"], json!(5));
    assert_eq!(out.metadata.generation, Some(2));
    // PUT on status.
    let mut cur = api.get_status("a").await.expect("get status");
    cur.data["status"] = json!({"pendingWorkloads": 7});
    let out = api
        .replace_status("a", &PostParams::default(), &cur)
        .await
        .expect("replace status");
    assert_eq!(out.data["status"]["pendingWorkloads"], json!(7));
    // v1beta1 view of the same object.
    let v1 = Api::<DynamicObject>::all_with(
        client.clone(),
        &ar("v1beta1", "ClusterQueue", "clusterqueues"),
    );
    let old = v1.get("a").await.expect("v1beta1 get");
    assert_eq!(old.data["spec"]["cohort"], json!("x"));
    assert_eq!(
        old.types.as_ref().map(|t| t.api_version.as_str()),
        Some("kueue.x-k8s.io/v1beta1")
    );
    // A v1beta1 merge patch is converted, too.
    v1.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec":{"cohort":"from-v1"}})),
    )
    .await
    .expect("v1 patch");
    assert_eq!(
        api.get("a").await.expect("get").data["spec"]["cohortName"],
        json!("from-v1")
    );
    // Server-side apply and JSON patch.
    let applied: DynamicObject = serde_json::from_value(
        json!({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue",
        "metadata":{"name":"a"},"spec":{"queueingStrategy":"StrictFIFO"}}),
    )
    .expect("obj");
    let out = api
        .patch(
            "a",
            &PatchParams::apply("gangplank-test").force(),
            &Patch::Apply(&applied),
        )
        .await
        .expect("apply");
    assert_eq!(out.data["spec"]["queueingStrategy"], json!("StrictFIFO"));
    assert_eq!(out.data["spec"]["cohortName"], json!("from-v1"));
    // JSON patch (raw: kube's json-patch version differs from ours).
    let req = axum::http::Request::patch(format!(
        "{}/apis/kueue.x-k8s.io/v1beta2/clusterqueues/a",
        server.url()
    ))
    .header("content-type", "application/json-patch+json")
    .body(br#"[{"op":"remove","path":"/spec/queueingStrategy"}]"#.to_vec())
    .expect("req");
    let out: Value = client.request(req).await.expect("json patch");
    // As kube-apiserver does, the CRD's default fills the removed field again.
    assert_eq!(out["spec"]["queueingStrategy"], json!("BestEffortFIFO"));
    assert_eq!(out["kind"], json!("ClusterQueue"));
    server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn list_selectors_and_paging() {
    let (server, client, _d) = start().await;
    let nodes: Api<Node> = Api::all(client.clone());
    for (i, zone) in ["a", "b", "a", "c", "a"].iter().enumerate() {
        nodes
            .create(
                &PostParams::default(),
                &node(&format!("n{i}"), json!({"zone": zone})),
            )
            .await
            .expect("create");
    }
    let names = |l: kube::core::ObjectList<Node>| {
        l.items
            .into_iter()
            .filter_map(|n| n.metadata.name)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(
            nodes
                .list(&ListParams::default().labels("zone=a"))
                .await
                .expect("list")
        ),
        ["n0", "n2", "n4"]
    );
    assert_eq!(
        names(
            nodes
                .list(&ListParams::default().labels("zone in (b,c)"))
                .await
                .expect("list")
        ),
        ["n1", "n3"]
    );
    assert_eq!(
        names(
            nodes
                .list(&ListParams::default().labels("zone notin (a),zone"))
                .await
                .expect("list")
        ),
        ["n1", "n3"]
    );
    assert_eq!(
        names(
            nodes
                .list(&ListParams::default().labels("!zone"))
                .await
                .expect("list")
        )
        .len(),
        0
    );
    assert_eq!(
        names(
            nodes
                .list(&ListParams::default().fields("metadata.name=n3"))
                .await
                .expect("list")
        ),
        ["n3"]
    );
    assert_eq!(
        names(
            nodes
                .list(&ListParams::default().fields("metadata.name!=n3"))
                .await
                .expect("list")
        )
        .len(),
        4
    );
    // Paging.
    let mut seen = Vec::new();
    let mut lp = ListParams::default().limit(2);
    loop {
        let page = nodes.list(&lp).await.expect("page");
        let cont = page.metadata.continue_.clone().filter(|c| !c.is_empty());
        assert!(page.metadata.resource_version.is_some());
        seen.extend(names(page));
        match cont {
            Some(c) => lp = lp.continue_token(&c),
            None => break,
        }
    }
    assert_eq!(seen, ["n0", "n1", "n2", "n3", "n4"]);
    // Namespaced list with field selector on spec.nodeName and status.phase.
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    for (name, node_name) in [("p1", "n0"), ("p2", "n1")] {
        let p: Pod = serde_json::from_value(json!({"metadata":{"name":name},"spec":{"nodeName":node_name,"containers":[{"name":"c","image":"i"}]},
            "status":{"phase":"Running"}})).expect("pod");
        pods.create(&PostParams::default(), &p)
            .await
            .expect("create pod");
    }
    let all_pods: Api<Pod> = Api::all(client.clone());
    let l = all_pods
        .list(&ListParams::default().fields("spec.nodeName=n1,status.phase=Running"))
        .await
        .expect("list");
    assert_eq!(l.items.len(), 1);
    assert_eq!(l.items[0].metadata.name.as_deref(), Some("p2"));
    server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn raw_watch_replays_bookmarks_and_expires() {
    let opts = ServerOptions {
        bookmark_interval: Duration::from_millis(100),
        ..Default::default()
    };
    let (server, client, _d) = start_with(opts).await;
    let nodes: Api<Node> = Api::all(client.clone());
    let n0 = nodes
        .create(&PostParams::default(), &node("n0", json!({})))
        .await
        .expect("create");
    let rv0 = n0.metadata.resource_version.clone().expect("rv");
    nodes
        .create(&PostParams::default(), &node("n1", json!({"x":"1"})))
        .await
        .expect("create");
    // Replay from rv0: only n1 is new; then a bookmark arrives.
    let mut s = nodes
        .watch(&WatchParams::default().timeout(20), &rv0)
        .await
        .expect("watch")
        .boxed();
    let first = tokio::time::timeout(DEADLINE, s.try_next())
        .await
        .expect("deadline")
        .expect("ok")
        .expect("event");
    assert!(
        matches!(&first, WatchEvent::Added(n) if n.metadata.name.as_deref() == Some("n1")),
        "{first:?}"
    );
    let mut got_bookmark = false;
    while !got_bookmark {
        match tokio::time::timeout(DEADLINE, s.try_next())
            .await
            .expect("deadline")
            .expect("ok")
        {
            Some(WatchEvent::Bookmark(b)) => {
                assert_eq!(
                    b.metadata.resource_version,
                    server.store().resource_version().to_string()
                );
                got_bookmark = true;
            }
            Some(other) => panic!("unexpected {other:?}"),
            None => panic!("stream ended"),
        }
    }
    // Label selector transitions: n0 gains the label → ADDED for a selector watch.
    let mut sel = nodes
        .watch(
            &WatchParams::default().labels("x=1").timeout(20),
            &server.store().resource_version().to_string(),
        )
        .await
        .expect("watch")
        .boxed();
    nodes
        .patch(
            "n0",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata":{"labels":{"x":"1"}}})),
        )
        .await
        .expect("patch");
    loop {
        match tokio::time::timeout(DEADLINE, sel.try_next())
            .await
            .expect("deadline")
            .expect("ok")
        {
            Some(WatchEvent::Added(n)) => {
                assert_eq!(n.metadata.name.as_deref(), Some("n0"));
                break;
            }
            Some(WatchEvent::Bookmark(_)) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    // Too old: the history is compacted, a watch from rv0 gets an in-stream 410.
    server.store().compact_history();
    let mut old = nodes
        .watch(&WatchParams::default(), &rv0)
        .await
        .expect("watch")
        .boxed();
    match tokio::time::timeout(DEADLINE, old.try_next())
        .await
        .expect("deadline")
        .expect("ok")
    {
        Some(WatchEvent::Error(st)) => {
            assert_eq!(st.code, 410);
            assert_eq!(st.reason, "Expired");
        }
        other => panic!("expected 410, got {other:?}"),
    }
    server.shutdown().await.expect("shutdown");
}

/// Waits for the next watcher event matching `pred`, skipping errors.
async fn next_matching<K: std::fmt::Debug>(
    s: &mut (impl futures::Stream<Item = watcher::Result<watcher::Event<K>>> + Unpin),
    mut pred: impl FnMut(&watcher::Event<K>) -> bool,
) -> watcher::Event<K> {
    tokio::time::timeout(DEADLINE, async {
        loop {
            match s.next().await {
                Some(Ok(ev)) if pred(&ev) => return ev,
                Some(_) => {}
                None => panic!("watcher ended"),
            }
        }
    })
    .await
    .expect("watcher event before the deadline")
}

#[tokio::test]
async fn watcher_relists_after_in_stream_410() {
    let opts = ServerOptions {
        bookmark_interval: Duration::from_millis(200),
        ..Default::default()
    };
    let (server, client, _d) = start_with(opts).await;
    let api = Api::<DynamicObject>::all_with(
        client.clone(),
        &ar("v1beta2", "ClusterQueue", "clusterqueues"),
    );
    let store = server.store().clone();
    store
        .create(
            &ResourceKey::CLUSTER_QUEUES,
            cq("a"),
            WriteOptions::default(),
        )
        .expect("create");
    let mut s = watcher(api, watcher::Config::default()).boxed();
    next_matching(&mut s, |e| matches!(e, watcher::Event::Init)).await;
    next_matching(&mut s, |e| matches!(e, watcher::Event::InitDone)).await;
    store
        .create(
            &ResourceKey::CLUSTER_QUEUES,
            cq("b"),
            WriteOptions::default(),
        )
        .expect("create");
    let ev = next_matching(&mut s, |e| matches!(e, watcher::Event::Apply(_))).await;
    assert!(matches!(&ev, watcher::Event::Apply(o) if o.metadata.name.as_deref() == Some("b")));
    // The next watch request gets an in-stream 410; the watcher must relist.
    server.faults().add_rule(FaultRule {
        resource: "clusterqueues".into(),
        verbs: vec!["watch".into()],
        status: Some(410),
        in_stream: true,
        times: Some(1),
        ..Default::default()
    });
    let lists_before = server.stats().count("list", "clusterqueues.kueue.x-k8s.io");
    server.close_watches();
    next_matching(&mut s, |e| matches!(e, watcher::Event::Init)).await;
    let mut relisted = Vec::new();
    loop {
        match next_matching(&mut s, |_| true).await {
            watcher::Event::InitApply(o) => relisted.extend(o.metadata.name),
            watcher::Event::InitDone => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    relisted.sort();
    assert_eq!(relisted, ["a", "b"]);
    assert!(server.stats().count("list", "clusterqueues.kueue.x-k8s.io") > lists_before);
    // And the watch resumes afterwards.
    store
        .delete(&ResourceKey::CLUSTER_QUEUES, None, "a", &Default::default())
        .expect("delete");
    let ev = next_matching(&mut s, |e| matches!(e, watcher::Event::Delete(_))).await;
    assert!(matches!(&ev, watcher::Event::Delete(o) if o.metadata.name.as_deref() == Some("a")));
    server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn watcher_streaming_list_uses_initial_events_end_bookmark() {
    let opts = ServerOptions {
        bookmark_interval: Duration::from_millis(200),
        ..Default::default()
    };
    let (server, client, _d) = start_with(opts).await;
    let store = server.store().clone();
    for n in ["x", "y"] {
        store
            .create(
                &ResourceKey::NODES,
                json!({"metadata":{"name":n}}),
                WriteOptions::default(),
            )
            .expect("create");
    }
    let nodes: Api<Node> = Api::all(client.clone());
    let mut s = watcher(nodes, watcher::Config::default().streaming_lists()).boxed();
    next_matching(&mut s, |e| matches!(e, watcher::Event::Init)).await;
    let mut got = Vec::new();
    loop {
        match next_matching(&mut s, |_| true).await {
            watcher::Event::InitApply(o) => got.extend(o.metadata.name),
            watcher::Event::InitDone => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(got, ["x", "y"]);
    assert_eq!(
        server.stats().count("list", "nodes"),
        0,
        "streaming list needs no LIST"
    );
    server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn faults_forbidden_malformed_and_admin_endpoint() {
    let (server, client, _d) = start().await;
    // Set faults over HTTP.
    let cfg = json!({"rules":[{"resource":"nodes","verbs":["list"],"status":403}],
        "malformed":[{"resource":"workloads"}]});
    let req = axum::http::Request::put(format!("{}/_sim/faults", server.url()))
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&cfg).expect("json"))
        .expect("req");
    client.request_text(req).await.expect("set faults");
    let shown: FaultConfig = client
        .request(
            axum::http::Request::get(format!("{}/_sim/faults", server.url()))
                .body(Vec::new())
                .expect("req"),
        )
        .await
        .expect("get faults");
    assert_eq!(shown.rules.len(), 1);
    let nodes: Api<Node> = Api::all(client.clone());
    let err = nodes.list(&ListParams::default()).await.unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.is_forbidden()),
        "{err:?}"
    );
    // Pods are unaffected.
    let pods: Api<Pod> = Api::all(client.clone());
    pods.list(&ListParams::default()).await.expect("pods list");
    // The malformed Workload shows up in raw lists.
    let wls =
        Api::<DynamicObject>::all_with(client.clone(), &ar("v1beta2", "Workload", "workloads"));
    let l = wls.list(&ListParams::default()).await.expect("list");
    assert_eq!(l.items.len(), 1);
    assert_eq!(l.items[0].data["spec"]["podSets"], json!("not-a-list"));
    // In-process reset.
    server.faults().clear();
    nodes
        .list(&ListParams::default())
        .await
        .expect("nodes list after clear");
    server.shutdown().await.expect("shutdown");
}
