//! Store unit tests.
use super::*;
use serde_json::json;

fn cq(name: &str) -> Value {
    json!({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue","metadata":{"name":name},"spec":{"cohortName":"a"}})
}

fn rv_of(v: &Value) -> u64 {
    meta_str(v, "resourceVersion")
        .and_then(parse_rv)
        .unwrap_or(0)
}

#[test]
fn resource_version_is_monotonic_and_metadata_assigned() {
    let s = ObjectStore::new();
    let r = ResourceKey::CLUSTER_QUEUES;
    let a = s.create(&r, cq("a"), WriteOptions::default()).unwrap();
    let b = s.create(&r, cq("b"), WriteOptions::default()).unwrap();
    assert!(rv_of(&b) > rv_of(&a));
    assert!(meta_str(&a, "uid").is_some());
    assert!(meta_str(&a, "creationTimestamp").is_some());
    assert_ne!(meta_str(&a, "uid"), meta_str(&b, "uid"));
    let mut a2 = a.clone();
    a2["spec"]["cohortName"] = json!("z");
    let a3 = s.update(&r, a2, WriteOptions::default()).unwrap();
    assert!(rv_of(&a3) > rv_of(&b));
    assert_eq!(a3["metadata"]["generation"], json!(2));
    // A stale resourceVersion conflicts.
    let err = s
        .update(&r, a.clone(), WriteOptions::default())
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err:?}");
    let err = s.create(&r, cq("a"), WriteOptions::default()).unwrap_err();
    assert!(matches!(err, StoreError::AlreadyExists { .. }));
    // No-op update emits nothing and keeps the rv.
    let before = s.resource_version();
    let same = s.update(&r, a3.clone(), WriteOptions::default()).unwrap();
    assert_eq!(rv_of(&same), rv_of(&a3));
    assert_eq!(s.resource_version(), before);
}

#[test]
fn status_separation() {
    let s = ObjectStore::new();
    let r = ResourceKey::CLUSTER_QUEUES;
    let a = s.create(&r, cq("a"), WriteOptions::default()).unwrap();
    let mut with_status = a.clone();
    with_status["status"] = json!({"pendingWorkloads": 3});
    with_status["spec"]["cohortName"] = json!("ignored");
    let st = s
        .update_status(&r, with_status.clone(), WriteOptions::default())
        .unwrap();
    assert_eq!(st["status"]["pendingWorkloads"], json!(3));
    assert_eq!(st["spec"]["cohortName"], json!("a"));
    let mut main = st.clone();
    main["status"] = json!({"pendingWorkloads": 9});
    main["spec"]["cohortName"] = json!("b");
    let m = s.update(&r, main, WriteOptions::default()).unwrap();
    assert_eq!(m["status"]["pendingWorkloads"], json!(3));
    assert_eq!(m["spec"]["cohortName"], json!("b"));
}

#[test]
fn watch_replay_from_rv_and_delete() {
    let s = ObjectStore::new();
    let r = ResourceKey::CLUSTER_QUEUES;
    let a = s.create(&r, cq("a"), WriteOptions::default()).unwrap();
    let from = rv_of(&a);
    s.create(&r, cq("b"), WriteOptions::default()).unwrap();
    s.create(
        &ResourceKey::NODES,
        json!({"metadata":{"name":"n"}}),
        WriteOptions::default(),
    )
    .unwrap();
    s.delete(&r, None, "a", &DeleteOptions::default()).unwrap();
    let mut sub = s.subscribe(Some(r.clone()), Some(from)).unwrap();
    let evs = sub.try_next().unwrap();
    let kinds: Vec<_> = evs
        .iter()
        .map(|e| (e.event_type, object_name(&e.object).unwrap().to_string()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (EventType::Added, "b".to_string()),
            (EventType::Deleted, "a".to_string())
        ]
    );
    assert_eq!(sub.cursor(), s.resource_version());
    assert!(sub.try_next().unwrap().is_empty());
    assert!(s.get(&r, None, "a").is_none());
}

#[test]
fn too_old_resource_version() {
    let s = ObjectStore::with_options(StoreOptions {
        history_capacity: 3,
    });
    let r = ResourceKey::CLUSTER_QUEUES;
    for i in 0..10 {
        s.create(&r, cq(&format!("q{i}")), WriteOptions::default())
            .unwrap();
    }
    assert!(matches!(
        s.subscribe(Some(r.clone()), Some(2)),
        Err(StoreError::Expired { .. })
    ));
    let mut sub = s.subscribe(Some(r.clone()), Some(7)).unwrap();
    assert_eq!(sub.try_next().unwrap().len(), 3);
    // A subscriber that falls behind the ring expires too.
    let mut slow = s.subscribe(Some(r.clone()), None).unwrap();
    for i in 10..20 {
        s.create(&r, cq(&format!("q{i}")), WriteOptions::default())
            .unwrap();
    }
    assert!(matches!(slow.try_next(), Err(StoreError::Expired { .. })));
}

#[test]
fn dry_run_stores_nothing() {
    let s = ObjectStore::new();
    let r = ResourceKey::CLUSTER_QUEUES;
    let out = s.create(&r, cq("a"), WriteOptions::dry_run()).unwrap();
    assert_eq!(out["metadata"]["name"], json!("a"));
    assert_eq!(s.resource_version(), 0);
    assert_eq!(s.count(&r), 0);
    s.create(&r, cq("a"), WriteOptions::default()).unwrap();
    let rv = s.resource_version();
    let mut sub = s.subscribe(None, None).unwrap();
    s.patch(
        &r,
        None,
        "a",
        PatchKind::Merge,
        &json!({"spec":{"cohortName":"x"}}),
        WriteOptions::dry_run(),
    )
    .unwrap();
    s.delete(
        &r,
        None,
        "a",
        &DeleteOptions {
            dry_run: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(s.resource_version(), rv);
    assert_eq!(
        s.get(&r, None, "a").unwrap()["spec"]["cohortName"],
        json!("a")
    );
    assert!(sub.try_next().unwrap().is_empty());
}

#[tokio::test]
async fn async_subscription_wakes() {
    let s = ObjectStore::new();
    let r = ResourceKey::CLUSTER_QUEUES;
    let mut sub = s.subscribe(Some(r.clone()), None).unwrap();
    let s2 = s.clone();
    let task = tokio::spawn(async move { sub.next().await });
    s2.create(&r, cq("a"), WriteOptions::default()).unwrap();
    let evs = task.await.unwrap().unwrap();
    assert_eq!(evs.len(), 1);
}

#[test]
fn namespacing_type_meta_and_generate_name() {
    let s = ObjectStore::new();
    let err = s
        .create(
            &ResourceKey::PODS,
            json!({"metadata":{"name":"p"}}),
            WriteOptions::default(),
        )
        .unwrap_err();
    assert!(matches!(err, StoreError::Invalid(_)), "{err:?}");
    let n = s
        .create(
            &ResourceKey::NODES,
            json!({"metadata":{"name":"n","namespace":"ignored"}}),
            WriteOptions::default(),
        )
        .unwrap();
    assert!(n["metadata"].get("namespace").is_none());
    assert_eq!(n["apiVersion"], json!("v1"));
    assert_eq!(n["kind"], json!("Node"));
    let w = s
        .create(
            &ResourceKey::WORKLOADS,
            json!({"metadata":{"generateName":"job-","namespace":"ns"}}),
            WriteOptions::default(),
        )
        .unwrap();
    let name = object_name(&w).unwrap();
    assert!(name.starts_with("job-") && name.len() == 9, "{name}");
    assert_eq!(w["apiVersion"], json!("kueue.x-k8s.io/v1beta2"));
    assert!(s.get(&ResourceKey::WORKLOADS, Some("ns"), name).is_some());
}

#[test]
fn modify_is_atomic_read_modify_write() {
    let s = ObjectStore::new();
    let r = ResourceKey::CLUSTER_QUEUES;
    s.create(&r, cq("a"), WriteOptions::default()).unwrap();
    let err = s
        .modify(
            &r,
            None,
            "a",
            UpdateScope::Main,
            WriteOptions::default(),
            |_| Err(StoreError::Invalid("no".into())),
        )
        .unwrap_err();
    assert_eq!(err, StoreError::Invalid("no".into()));
    let out = s
        .modify(
            &r,
            None,
            "a",
            UpdateScope::All,
            WriteOptions::default(),
            |o| {
                o["status"] = json!({"admittedWorkloads": 1});
                Ok(())
            },
        )
        .unwrap();
    assert_eq!(out["status"]["admittedWorkloads"], json!(1));
    assert_eq!(
        out["metadata"]["generation"],
        json!(1),
        "status-only change keeps generation"
    );
    let err = s
        .modify(
            &r,
            None,
            "missing",
            UpdateScope::Main,
            WriteOptions::default(),
            |_| Ok(()),
        )
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }));
}
