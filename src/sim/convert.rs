//! Conversion between served versions and the storage version.
//!
//! Kueue objects are stored as `v1beta2`. A `v1beta1` client's objects are
//! converted on write ([`to_storage`]) and on read ([`from_storage`]):
//!
//! | v1beta1 | v1beta2 |
//! |---|---|
//! | ClusterQueue `spec.cohort` | `spec.cohortName` |
//! | ClusterQueue `spec.admissionChecks: [name]` | `spec.admissionChecksStrategy.admissionChecks: [{name}]` |
//! | `flavorFungibility.whenCanBorrow: Borrow` | `MayStopSearch` |
//! | `flavorFungibility.whenCanPreempt: Preempt` | `MayStopSearch` |
//! | Workload `spec.priorityClassName` + `spec.priorityClassSource` | `spec.priorityClassRef{group,kind,name}` |
//!
//! Reading `MayStopSearch` through v1beta1 yields the old names `Borrow` /
//! `Preempt`, which every v1beta1 client understands.

use serde_json::{Map, Value, json};

use super::api::crds;
use super::resources::{KUEUE_GROUP, ResourceDef};

use crate::model::well_known::{
    PRIORITY_CLASS_SOURCE as PC_SOURCE, WORKLOAD_PRIORITY_CLASS_SOURCE as WPC_SOURCE,
};

/// Converts an object sent by a client at `version` into the storage version.
pub fn to_storage(def: &ResourceDef, version: &str, mut obj: Value) -> Value {
    if def.group == "events.k8s.io" {
        event_to_core(&mut obj);
        return obj;
    }
    if def.group == KUEUE_GROUP
        && version == "v1beta1"
        && let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut)
    {
        {
            match def.kind {
                "ClusterQueue" | "Cohort" => cq_up(spec),
                "Workload" => wl_up(spec),
                _ => {}
            }
        }
    }
    set_type_meta(def, def.storage_version, &mut obj);
    // As kube-apiserver does on every write of a custom resource.
    if let Some(schema) = crds::schema(def.group, def.plural, def.storage_version) {
        crds::defaulting::apply(schema, &mut obj);
    }
    obj
}

/// Converts a stored object for a client reading at `version`.
pub fn from_storage(def: &ResourceDef, version: &str, mut obj: Value) -> Value {
    if def.group == "events.k8s.io" {
        event_from_core(&mut obj);
    }
    if def.group == KUEUE_GROUP
        && version == "v1beta1"
        && let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut)
    {
        {
            match def.kind {
                "ClusterQueue" | "Cohort" => cq_down(spec),
                "Workload" => wl_down(spec),
                _ => {}
            }
        }
    }
    set_type_meta(def, version, &mut obj);
    obj
}

/// events.k8s.io/v1 field ↔ core/v1 field (the same object, two shapes).
const EVENT_FIELDS: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("related", "related"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

fn event_from_core(obj: &mut Value) {
    if let Some(m) = obj.as_object_mut() {
        for (new, old) in EVENT_FIELDS {
            if let Some(v) = m.remove(*old) {
                m.insert((*new).into(), v);
            }
        }
        m.insert("apiVersion".into(), json!("events.k8s.io/v1"));
    }
}

fn event_to_core(obj: &mut Value) {
    if let Some(m) = obj.as_object_mut() {
        for (new, old) in EVENT_FIELDS {
            if let Some(v) = m.remove(*new) {
                m.insert((*old).into(), v);
            }
        }
        m.insert("apiVersion".into(), json!("v1"));
        m.insert("kind".into(), json!("Event"));
    }
}

/// A field selector path of events.k8s.io/v1 in terms of the stored core/v1 Event
/// (`regarding.name` → `involvedObject.name`).
pub fn event_field_to_core(path: &str) -> String {
    let (head, rest) = path
        .split_once('.')
        .map_or((path, None), |(h, r)| (h, Some(r)));
    let head = EVENT_FIELDS
        .iter()
        .find(|(new, _)| *new == head)
        .map_or(head, |(_, old)| old);
    match rest {
        Some(r) => format!("{head}.{r}"),
        None => head.to_string(),
    }
}

/// Sets `apiVersion` and `kind` for `def` at `version`.
pub fn set_type_meta(def: &ResourceDef, version: &str, obj: &mut Value) {
    if let Some(m) = obj.as_object_mut() {
        m.insert("apiVersion".into(), Value::String(def.api_version(version)));
        m.insert("kind".into(), Value::String(def.kind.into()));
    }
}

fn rename(spec: &mut Map<String, Value>, from: &str, to: &str) {
    if let Some(v) = spec.remove(from) {
        spec.insert(to.into(), v);
    }
}

fn cq_up(spec: &mut Map<String, Value>) {
    rename(spec, "cohort", "cohortName");
    if let Some(ff) = spec
        .get_mut("flavorFungibility")
        .and_then(Value::as_object_mut)
    {
        for (field, old) in [("whenCanBorrow", "Borrow"), ("whenCanPreempt", "Preempt")] {
            if ff.get(field).and_then(Value::as_str) == Some(old) {
                ff.insert(field.into(), json!("MayStopSearch"));
            }
        }
    }
    if let Some(Value::Array(checks)) = spec.remove("admissionChecks") {
        let list: Vec<Value> = checks.into_iter().map(|n| json!({ "name": n })).collect();
        let strategy = spec
            .entry("admissionChecksStrategy")
            .or_insert_with(|| json!({}));
        if let Some(s) = strategy.as_object_mut() {
            s.entry("admissionChecks").or_insert(Value::Array(list));
        }
    }
}

fn cq_down(spec: &mut Map<String, Value>) {
    rename(spec, "cohortName", "cohort");
    if let Some(ff) = spec
        .get_mut("flavorFungibility")
        .and_then(Value::as_object_mut)
    {
        for (field, old) in [("whenCanBorrow", "Borrow"), ("whenCanPreempt", "Preempt")] {
            if ff.get(field).and_then(Value::as_str) == Some("MayStopSearch") {
                ff.insert(field.into(), json!(old));
            }
        }
    }
}

fn wl_up(spec: &mut Map<String, Value>) {
    let name = spec.remove("priorityClassName");
    let source = spec.remove("priorityClassSource");
    let Some(Value::String(name)) = name else {
        return;
    };
    let (group, kind) = match source.as_ref().and_then(Value::as_str) {
        Some(WPC_SOURCE) => (KUEUE_GROUP, "WorkloadPriorityClass"),
        _ => ("scheduling.k8s.io", "PriorityClass"),
    };
    spec.insert(
        "priorityClassRef".into(),
        json!({ "group": group, "kind": kind, "name": name }),
    );
}

fn wl_down(spec: &mut Map<String, Value>) {
    let Some(Value::Object(r)) = spec.remove("priorityClassRef") else {
        return;
    };
    let source = match r.get("group").and_then(Value::as_str) {
        Some(KUEUE_GROUP) => WPC_SOURCE,
        _ => PC_SOURCE,
    };
    if let Some(name) = r.get("name") {
        spec.insert("priorityClassName".into(), name.clone());
        spec.insert("priorityClassSource".into(), json!(source));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::resources::find;

    /// What a v1beta1 client reads back: what it wrote plus the schema's defaults.
    fn defaulted(mut v1: Value) -> Value {
        let plural = match v1["kind"].as_str() {
            Some("Workload") => "workloads",
            _ => "clusterqueues",
        };
        let schema = crds::schema(KUEUE_GROUP, plural, "v1beta1").unwrap();
        crds::defaulting::apply(schema, &mut v1);
        v1
    }

    #[test]
    fn cluster_queue_round_trip() {
        let def = find(KUEUE_GROUP, "clusterqueues").unwrap();
        let v1 = json!({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue","metadata":{"name":"q"},
            "spec":{"cohort":"c","flavorFungibility":{"whenCanBorrow":"Borrow","whenCanPreempt":"TryNextFlavor"}}});
        let stored = to_storage(def, "v1beta1", v1.clone());
        assert_eq!(stored["apiVersion"], json!("kueue.x-k8s.io/v1beta2"));
        assert_eq!(stored["spec"]["cohortName"], json!("c"));
        assert!(stored["spec"].get("cohort").is_none());
        assert_eq!(
            stored["spec"]["flavorFungibility"]["whenCanBorrow"],
            json!("MayStopSearch")
        );
        assert_eq!(from_storage(def, "v1beta1", stored.clone()), defaulted(v1));
        let v2 = from_storage(def, "v1beta2", stored.clone());
        assert_eq!(to_storage(def, "v1beta2", v2.clone()), stored);
    }

    #[test]
    fn workload_priority_round_trip() {
        let def = find(KUEUE_GROUP, "workloads").unwrap();
        for (source, group, kind) in [
            (WPC_SOURCE, KUEUE_GROUP, "WorkloadPriorityClass"),
            (PC_SOURCE, "scheduling.k8s.io", "PriorityClass"),
        ] {
            let v1 = json!({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"Workload","metadata":{"name":"w"},
                "spec":{"priorityClassName":"high","priorityClassSource":source,"priority":100}});
            let stored = to_storage(def, "v1beta1", v1.clone());
            assert_eq!(
                stored["spec"]["priorityClassRef"],
                json!({"group":group,"kind":kind,"name":"high"})
            );
            assert!(stored["spec"].get("priorityClassName").is_none());
            assert_eq!(from_storage(def, "v1beta1", stored), defaulted(v1));
        }
    }
}
