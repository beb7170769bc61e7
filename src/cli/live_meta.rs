//! What the headless live commands add to their JSON so that partial or stale data
//! never looks complete (issue #14, finding 4): `sync` (per resource: state, error,
//! lastEvent), `generatedAt`, `resourceVersion`, and the objects the parser skipped,
//! in `warnings` and in `skipped`. A forbidden or failing resource makes `plan --live`
//! and `doctor --live` exit [`PARTIAL_EXIT`] unless `--allow-partial`.

use serde_json::{Map, Value, json};

use crate::source::{ResourceSync, Snapshot, SyncState};

/// Exit code of `plan --live` / `doctor --live` when a resource is forbidden or failing
/// (the output is printed all the same, its `sync` saying what is missing).
pub const PARTIAL_EXIT: i32 = 3;

fn state_name(s: &SyncState) -> &'static str {
    match s {
        SyncState::Waiting => "waiting",
        SyncState::Syncing { .. } => "syncing",
        SyncState::Synced => "synced",
        SyncState::Resyncing { .. } => "resyncing",
        SyncState::Forbidden { .. } => "forbidden",
        SyncState::NotServed { .. } => "notServed",
        SyncState::Error { .. } => "error",
    }
}

fn state_error(s: &SyncState) -> Option<&str> {
    match s {
        SyncState::Forbidden { message }
        | SyncState::NotServed { message }
        | SyncState::Error { message, .. } => Some(message),
        _ => None,
    }
}

/// Every resource listed and watching (or not served): nothing is missing.
pub fn complete(snap: &Snapshot) -> bool {
    !snap.sync.is_empty()
        && snap
            .sync
            .iter()
            .all(|s| matches!(s.state, SyncState::Synced | SyncState::NotServed { .. }))
}

/// Resources whose data is missing or failing (forbidden, error).
pub fn degraded(snap: &Snapshot) -> Vec<&ResourceSync> {
    snap.sync.iter().filter(|s| !s.healthy()).collect()
}

/// `{complete, resources: {kind: {state, error, lastEvent, objects, resourceVersion}}}`.
pub fn sync_json(snap: &Snapshot) -> Value {
    let resources: Map<String, Value> = snap
        .sync
        .iter()
        .map(|s| {
            (
                s.resource.clone(),
                json!({
                    "state": state_name(&s.state),
                    "error": state_error(&s.state),
                    "lastEvent": s.last_event.map(|t| t.to_string()),
                    "objects": s.objects,
                    "resourceVersion": s.resource_version,
                }),
            )
        })
        .collect();
    json!({"complete": complete(snap), "resources": resources})
}

/// A resource is relisting, failing or not yet listed: the view may mix old and new
/// objects (or miss some) until it settles. Forbidden and not-served are settled.
pub fn transient(snap: &Snapshot) -> bool {
    snap.sync.iter().any(|s| {
        matches!(
            s.state,
            SyncState::Waiting
                | SyncState::Syncing { .. }
                | SyncState::Resyncing { .. }
                | SyncState::Error { .. }
        )
    })
}

/// How often each resource has relisted, in order.
pub fn relists(snap: &Snapshot) -> Vec<u64> {
    snap.sync.iter().map(|s| s.relists).collect()
}

/// What changes a `--watch` line: each resource's state and error (not its clock).
pub fn sync_key(snap: &Snapshot) -> Vec<(String, &'static str, Option<String>)> {
    snap.sync
        .iter()
        .map(|s| {
            (
                s.resource.clone(),
                state_name(&s.state),
                state_error(&s.state).map(str::to_string),
            )
        })
        .collect()
}

/// The newest resourceVersion seen on any resource (numeric ones compared as numbers).
pub fn resource_version(snap: &Snapshot) -> Option<String> {
    let rvs = snap.sync.iter().filter_map(|s| s.resource_version.clone());
    rvs.max_by_key(|rv| (rv.parse::<u128>().ok(), rv.clone()))
}

/// A skipped object as `{kind, namespace, name, field, error}` (from the store's
/// "Kind ns/name" label and "field.path: message" error).
fn skipped_json(object: &str, error: &str) -> Value {
    let (kind, rest) = object.split_once(' ').unwrap_or((object, ""));
    let (namespace, name) = match rest.split_once('/') {
        Some((ns, n)) => (Some(ns), n),
        None => (None, rest),
    };
    let field = error
        .split_once(": ")
        .map(|(f, _)| f)
        .filter(|f| !f.is_empty() && !f.contains(' '));
    json!({"kind": kind, "namespace": namespace, "name": name, "field": field, "error": error})
}

/// Adds `sync`, `generatedAt`, `resourceVersion` and `skipped` to `json` and lists the
/// skipped objects in its `warnings` (created if absent).
pub fn annotate(json: &mut Value, snap: &Snapshot) {
    let Value::Object(m) = json else {
        return;
    };
    m.insert("sync".into(), sync_json(snap));
    m.insert(
        "generatedAt".into(),
        Value::String(jiff::Timestamp::now().to_string()),
    );
    m.insert(
        "resourceVersion".into(),
        resource_version(snap).map_or(Value::Null, Value::String),
    );
    let skipped: Vec<Value> = snap
        .skipped
        .iter()
        .map(|s| skipped_json(&s.object, &s.error))
        .collect();
    let warnings = m
        .entry("warnings")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(w) = warnings {
        for s in &snap.skipped {
            w.push(Value::String(format!(
                "skipped {}: {} (not in this output)",
                s.object, s.error
            )));
        }
        for d in degraded(snap) {
            w.push(Value::String(format!("incomplete: {d}")));
        }
    }
    m.insert("skipped".into(), Value::Array(skipped));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skipped_labels_split_into_kind_namespace_name_and_field() {
        let v = skipped_json("Workload team/bad", "spec.podSets: expected a sequence");
        assert_eq!(v["kind"], "Workload");
        assert_eq!(v["namespace"], "team");
        assert_eq!(v["name"], "bad");
        assert_eq!(v["field"], "spec.podSets");
        let v = skipped_json("Node n1", "not a JSON object");
        assert_eq!(v["namespace"], Value::Null);
        assert_eq!(v["name"], "n1");
        assert_eq!(v["field"], Value::Null);
    }
}
