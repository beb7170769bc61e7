//! Legacy (non-aggregated) discovery documents and `/version`.
//!
//! kubectl first asks `/api` and `/apis` for the aggregated
//! `apidiscovery.k8s.io/v2` format; answering plain `application/json`
//! (`APIVersions` / `APIGroupList`) makes it fall back to the per-group-version
//! documents served here.

use serde_json::{Value, json};

use crate::sim::resources::{self, ResourceDef};

/// `GET /version`.
pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "32",
        "gitVersion": "v1.32.0-gangplank-sim",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.23.0",
        "compiler": "gc",
        "platform": "linux/amd64"
    })
}

/// `GET /api`.
pub fn core_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]
    })
}

fn group_doc(group: &str, versions: &[&str]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    let preferred = vs.first().cloned().unwrap_or(Value::Null);
    json!({"name": group, "versions": vs, "preferredVersion": preferred})
}

/// `GET /apis`.
pub fn group_list() -> Value {
    let groups: Vec<Value> = resources::groups()
        .into_iter()
        .map(|(g, vs)| group_doc(g, vs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `GET /apis/{group}`, if served.
pub fn group(group: &str) -> Option<Value> {
    resources::groups()
        .into_iter()
        .find(|(g, _)| *g == group)
        .map(|(g, vs)| {
            let mut d = group_doc(g, vs);
            d["kind"] = json!("APIGroup");
            d["apiVersion"] = json!("v1");
            d
        })
}

fn resource_entries(d: &ResourceDef) -> Vec<Value> {
    let mut main = json!({
        "name": d.plural,
        "singularName": d.singular,
        "namespaced": d.namespaced,
        "kind": d.kind,
        "verbs": d.verbs(),
    });
    if !d.short_names.is_empty() {
        main["shortNames"] = json!(d.short_names);
    }
    if !d.categories.is_empty() {
        main["categories"] = json!(d.categories);
    }
    let mut out = vec![main];
    if d.has_status {
        out.push(json!({
            "name": format!("{}/status", d.plural),
            "singularName": "",
            "namespaced": d.namespaced,
            "kind": d.kind,
            "verbs": ["get", "patch", "update"],
        }));
    }
    out
}

/// `GET /api/v1` or `GET /apis/{group}/{version}`, if served.
pub fn resource_list(group: &str, version: &str) -> Option<Value> {
    let defs = resources::in_group_version(group, version);
    if defs.is_empty() {
        return None;
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let list: Vec<Value> = defs.into_iter().flat_map(resource_entries).collect();
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": list}),
    )
}
