//! Property tests: Kueue v1beta1 ↔ v1beta2 conversion round-trips.

use gangplank::sim::convert::{from_storage, to_storage};
use gangplank::sim::resources::{KUEUE_GROUP, find};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn opt_field(m: &mut Map<String, Value>, k: &str, v: Option<Value>) {
    if let Some(v) = v {
        m.insert(k.into(), v);
    }
}

prop_compose! {
    fn v1beta1_cq()(
        cohort in proptest::option::of("[a-z]{1,8}"),
        borrow in proptest::option::of(prop_oneof![Just("Borrow"), Just("TryNextFlavor")]),
        preempt in proptest::option::of(prop_oneof![Just("Preempt"), Just("TryNextFlavor")]),
        strategy in proptest::option::of(prop_oneof![Just("BestEffortFIFO"), Just("StrictFIFO")]),
    ) -> Value {
        let mut spec = Map::new();
        opt_field(&mut spec, "cohort", cohort.map(Value::from));
        opt_field(&mut spec, "queueingStrategy", strategy.map(Value::from));
        if borrow.is_some() || preempt.is_some() {
            let mut ff = Map::new();
            opt_field(&mut ff, "whenCanBorrow", borrow.map(Value::from));
            opt_field(&mut ff, "whenCanPreempt", preempt.map(Value::from));
            spec.insert("flavorFungibility".into(), Value::Object(ff));
        }
        json!({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
               "metadata": {"name": "q"}, "spec": spec})
    }
}

prop_compose! {
    fn v1beta1_wl()(
        pc in proptest::option::of(("[a-z]{1,8}", prop_oneof![
            Just("kueue.x-k8s.io/workloadpriorityclass"),
            Just("scheduling.k8s.io/priorityclass"),
        ])),
        priority in proptest::option::of(any::<i32>()),
        queue in "[a-z]{1,8}",
    ) -> Value {
        let mut spec = Map::new();
        spec.insert("queueName".into(), json!(queue));
        opt_field(&mut spec, "priority", priority.map(Value::from));
        if let Some((name, source)) = pc {
            spec.insert("priorityClassName".into(), json!(name));
            spec.insert("priorityClassSource".into(), json!(source));
        }
        json!({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
               "metadata": {"name": "w", "namespace": "ns"}, "spec": spec})
    }
}

/// Every field the client wrote reads back unchanged; the API server may add the CRD's
/// defaults beside them (it defaults every write).
fn keeps_what_was_written(read: &Value, written: &Value) -> bool {
    match (read, written) {
        (Value::Object(r), Value::Object(w)) => w
            .iter()
            .all(|(k, wv)| r.get(k).is_some_and(|rv| keeps_what_was_written(rv, wv))),
        _ => read == written,
    }
}

proptest! {
    #[test]
    fn cluster_queue_v1beta1_round_trips(obj in v1beta1_cq()) {
        let def = find(KUEUE_GROUP, "clusterqueues").expect("def");
        let stored = to_storage(def, "v1beta1", obj.clone());
        prop_assert!(stored["spec"].get("cohort").is_none());
        prop_assert_eq!(&stored["apiVersion"], &json!("kueue.x-k8s.io/v1beta2"));
        let read = from_storage(def, "v1beta1", stored.clone());
        prop_assert!(keeps_what_was_written(&read, &obj), "{read} lost part of {obj}");
        // Reading back and writing again changes nothing.
        prop_assert_eq!(to_storage(def, "v1beta1", read), stored.clone());
        // v1beta2 reads are the identity on stored objects.
        let v2 = from_storage(def, "v1beta2", stored.clone());
        prop_assert_eq!(to_storage(def, "v1beta2", v2), stored);
    }

    #[test]
    fn workload_v1beta1_round_trips(obj in v1beta1_wl()) {
        let def = find(KUEUE_GROUP, "workloads").expect("def");
        let stored = to_storage(def, "v1beta1", obj.clone());
        prop_assert!(stored["spec"].get("priorityClassName").is_none());
        let read = from_storage(def, "v1beta1", stored.clone());
        prop_assert!(keeps_what_was_written(&read, &obj), "{read} lost part of {obj}");
        prop_assert_eq!(to_storage(def, "v1beta1", read), stored);
    }
}
