//! The store fed event by event, as the watch tasks feed it, and assembled at once (no
//! runtime, no server): add/modify/delete, a relist that replaces, resourceVersions
//! that compare lower than earlier ones, and a Workload arriving before and after its
//! job.

use serde_json::{Value, json};

use super::*;
use crate::source::objects::parse;
use crate::source::resources::RawObject;

const NOW_S: i64 = 1_800_000_000;

fn now() -> Timestamp {
    Timestamp::from_second(NOW_S).unwrap()
}

fn store() -> Store {
    Store::new(
        &ResourceKind::ALL,
        KueueStatus::Installed {
            version: "v1beta2".into(),
        },
        None,
        HistoryLog::open(None),
    )
}

fn raw(v: Value) -> RawObject {
    serde_json::from_value(v).expect("an object decodes")
}

fn send(s: &mut Store, kind: ResourceKind, msg: WatchMsg) {
    s.apply(SourceEvent { kind, msg }, now());
}

fn parsed(kind: ResourceKind, v: Value) -> super::super::objects::Parsed {
    let api_version = v["apiVersion"].as_str().unwrap_or("v1").to_string();
    parse(kind, &api_version, raw(v)).expect("the object parses")
}

fn apply(s: &mut Store, kind: ResourceKind, v: Value) {
    let p = parsed(kind, v);
    send(s, kind, WatchMsg::Apply(p));
}

/// Assembles what is pending and publishes it, as the store task does.
fn snapshot(s: &mut Store) -> Snapshot {
    let (changes, frozen) = s.freeze();
    let mut assembler = s.assembler.take().expect("no assembly in flight");
    let done = assembler.assemble(changes, frozen.warnings.clone());
    s.assembler = Some(assembler);
    s.publish(frozen, done, now())
}

fn node(name: &str, gpus: &str, rv: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "resourceVersion": rv},
        "status": {"allocatable": {"nvidia.com/gpu": gpus, "cpu": "64"}}})
}

fn gpus_of(snap: &Snapshot, node: &str) -> Option<String> {
    snap.state
        .nodes
        .get(node)
        .map(|n| n.allocatable["nvidia.com/gpu"].to_string())
}

fn job(name: &str, uid: &str) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": "team", "uid": uid, "resourceVersion": "10",
            "labels": {"kueue.x-k8s.io/queue-name": "lq"},
            "creationTimestamp": "2027-01-15T08:00:00Z"},
        "spec": {"suspend": true, "template": {"spec": {"containers": [{"name": "c",
            "resources": {"requests": {"nvidia.com/gpu": "2"}}}]}}}})
}

fn workload_of_job(job_name: &str, job_uid: &str) -> Value {
    json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
        "metadata": {"name": format!("job-{job_name}-abcde"), "namespace": "team",
            "uid": "wl-uid", "resourceVersion": "11",
            "creationTimestamp": "2027-01-15T08:00:01Z",
            "labels": {"kueue.x-k8s.io/job-uid": job_uid},
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": job_name,
                "uid": job_uid, "controller": true}]},
        "spec": {"queueName": "lq", "priority": 5, "podSets": [{"name": "main", "count": 1,
            "template": {"spec": {"containers": [{"name": "c",
                "resources": {"requests": {"nvidia.com/gpu": "2"}}}]}}}]}})
}

/// The workloads of a snapshot as (key, where it came from).
fn workloads(snap: &Snapshot) -> Vec<(String, bool)> {
    snap.state
        .workloads
        .values()
        .map(|w| {
            let from_object = matches!(w.source, crate::model::WorkloadSource::Workload);
            (w.key(), from_object)
        })
        .collect()
}

#[test]
fn add_modify_delete() {
    let mut s = store();
    apply(&mut s, ResourceKind::Node, node("a", "8", "1"));
    apply(&mut s, ResourceKind::Node, node("b", "4", "2"));
    let first = snapshot(&mut s);
    assert_eq!(gpus_of(&first, "a").as_deref(), Some("8"));
    assert_eq!(gpus_of(&first, "b").as_deref(), Some("4"));
    assert_eq!(first.generation, 1);

    apply(&mut s, ResourceKind::Node, node("a", "6", "3"));
    send(
        &mut s,
        ResourceKind::Node,
        WatchMsg::Delete((String::new(), "b".into())),
    );
    let snap = snapshot(&mut s);
    assert_eq!(gpus_of(&snap, "a").as_deref(), Some("6"));
    assert_eq!(gpus_of(&snap, "b"), None);
    assert_eq!(snap.state.nodes.len(), 1);
    assert_eq!(snap.generation, 2);
    // An earlier snapshot is immutable: readers holding it keep what they saw.
    assert_eq!(gpus_of(&first, "a").as_deref(), Some("8"));
    assert_eq!(gpus_of(&first, "b").as_deref(), Some("4"));
}

#[test]
fn a_relist_replaces_the_objects_at_its_end() {
    let mut s = store();
    apply(&mut s, ResourceKind::Node, node("a", "8", "1"));
    apply(&mut s, ResourceKind::Node, node("gone", "8", "2"));
    snapshot(&mut s);

    // A reconnect relists: until the list is done the old view stays (no blanking)…
    send(&mut s, ResourceKind::Node, WatchMsg::ListStarted);
    let p = parsed(ResourceKind::Node, node("a", "2", "5"));
    send(&mut s, ResourceKind::Node, WatchMsg::InitApply(p));
    let p = parsed(ResourceKind::Node, node("new", "1", "6"));
    send(&mut s, ResourceKind::Node, WatchMsg::InitApply(p));
    let mid = snapshot(&mut s);
    assert_eq!(gpus_of(&mid, "a").as_deref(), Some("8"));
    assert!(mid.state.nodes.contains_key("gone"));
    assert!(!mid.state.nodes.contains_key("new"));

    // …then the listed objects replace the old ones: "gone" was deleted while
    // disconnected and disappears; "a" changed; "new" appears.
    send(&mut s, ResourceKind::Node, WatchMsg::ListDone);
    let snap = snapshot(&mut s);
    let names: Vec<&str> = snap.state.nodes.keys().map(String::as_str).collect();
    assert_eq!(names, ["a", "new"]);
    assert_eq!(gpus_of(&snap, "a").as_deref(), Some("2"));
}

#[test]
fn events_apply_in_arrival_order_whatever_their_resource_versions() {
    // resourceVersions are opaque strings (Kubernetes API conventions): a client may
    // not order by them, and after an etcd restore they can compare lower than before.
    // The watch delivers events in order; the store applies them in that order.
    let mut s = store();
    apply(&mut s, ResourceKind::Node, node("a", "8", "900"));
    apply(&mut s, ResourceKind::Node, node("a", "4", "12"));
    let snap = snapshot(&mut s);
    assert_eq!(gpus_of(&snap, "a").as_deref(), Some("4"));
    // Within one batch too, and a delete followed by a re-add with a lower version.
    send(
        &mut s,
        ResourceKind::Node,
        WatchMsg::Delete((String::new(), "a".into())),
    );
    apply(&mut s, ResourceKind::Node, node("a", "2", "3"));
    let snap = snapshot(&mut s);
    assert_eq!(gpus_of(&snap, "a").as_deref(), Some("2"));
}

#[test]
fn a_workload_before_its_job_counts_once() {
    let mut s = store();
    apply(
        &mut s,
        ResourceKind::Workload,
        workload_of_job("train", "job-uid"),
    );
    let snap = snapshot(&mut s);
    assert_eq!(
        workloads(&snap),
        [("team/job-train-abcde".to_string(), true)]
    );
    apply(&mut s, ResourceKind::Job, job("train", "job-uid"));
    let snap = snapshot(&mut s);
    // The job has its Workload: no second, derived pending workload.
    assert_eq!(
        workloads(&snap),
        [("team/job-train-abcde".to_string(), true)]
    );
    assert_eq!(snap.state.jobs.len(), 1);
}

#[test]
fn a_workload_after_its_job_replaces_the_derived_one() {
    let mut s = store();
    apply(&mut s, ResourceKind::Job, job("train", "job-uid"));
    let snap = snapshot(&mut s);
    // Before Kueue created the Workload, the job stands for it (as Kueue would queue it).
    assert_eq!(workloads(&snap), [("team/train".to_string(), false)]);
    // A change elsewhere: the next snapshot shares the job and its derived workload
    // with this one (pointers copied, not objects).
    apply(&mut s, ResourceKind::Node, node("n", "8", "1"));
    let next = snapshot(&mut s);
    assert!(Arc::ptr_eq(&snap.state.jobs[0], &next.state.jobs[0]));
    let key = ("team".to_string(), "train".to_string());
    assert!(Arc::ptr_eq(
        &snap.state.workloads[&key],
        &next.state.workloads[&key]
    ));
    apply(
        &mut s,
        ResourceKind::Workload,
        workload_of_job("train", "job-uid"),
    );
    let snap = snapshot(&mut s);
    assert_eq!(
        workloads(&snap),
        [("team/job-train-abcde".to_string(), true)]
    );
    // The Workload deleted (e.g. by an eviction's recreate): the job stands again.
    send(
        &mut s,
        ResourceKind::Workload,
        WatchMsg::Delete(("team".into(), "job-train-abcde".into())),
    );
    let snap = snapshot(&mut s);
    assert_eq!(workloads(&snap), [("team/train".to_string(), false)]);
}

#[test]
fn a_new_version_of_a_workload_shares_the_pod_sets_of_the_one_it_replaces() {
    let mut s = store();
    let v1 = workload_of_job("train", "job-uid");
    apply(&mut s, ResourceKind::Workload, v1.clone());
    let first = snapshot(&mut s);
    let key = ("team".to_string(), "job-train-abcde".to_string());
    // A priority change (a new version, same pod sets): one copy of the pod sets.
    let mut v2 = v1.clone();
    v2["spec"]["priority"] = json!(424_242);
    apply(&mut s, ResourceKind::Workload, v2.clone());
    let second = snapshot(&mut s);
    let (old, new) = (&first.state.workloads[&key], &second.state.workloads[&key]);
    assert_eq!(new.priority, 424_242);
    assert!(!Arc::ptr_eq(old, new), "a new version");
    assert!(Arc::ptr_eq(&old.pod_sets, &new.pod_sets));
    // Different pod sets (not something Kueue allows, but a watch may deliver it) are kept.
    let mut v3 = v2;
    v3["spec"]["podSets"][0]["count"] = json!(3);
    apply(&mut s, ResourceKind::Workload, v3);
    let third = snapshot(&mut s);
    let w = &third.state.workloads[&key];
    assert_eq!(w.pod_sets[0].count, 3);
    assert!(!Arc::ptr_eq(&new.pod_sets, &w.pod_sets));
}
