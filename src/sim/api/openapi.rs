//! OpenAPI v3 as kube-apiserver publishes it: `/openapi/v3` lists one document per
//! group-version, each with the kinds' schemas (`components.schemas`, tagged with
//! `x-kubernetes-group-version-kind`) and their paths. Kueue's and the training
//! operator's kinds carry their CRDs' schemas, so `kubectl explain
//! clusterqueue.spec.preemption.withinClusterQueue` prints Kueue's own description.
//! The built-in kinds have a schema that describes the kind and keeps its fields open
//! (no field-level `explain`, no unknown-field detection for them).
//!
//! Every kind's PATCH operation lists the `fieldValidation` query parameter, which
//! tells kubectl that the server validates fields itself ([`unknown_fields`]): `kubectl
//! apply` then sends `fieldValidation=Strict` instead of validating client-side.

use serde_json::{Map, Value, json};

use super::crds;
use crate::sim::resources::{self, ResourceDef};

/// A stable tag for the documents' URLs (`?hash=`), from this build's version.
fn hash() -> String {
    let v = env!("CARGO_PKG_VERSION");
    format!(
        "{:016X}",
        v.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    )
}

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `GET /openapi/v3`: the document of every served group-version.
pub fn root() -> Value {
    let mut paths = Map::new();
    for d in resources::all() {
        for v in d.versions {
            let p = gv_path(d.group, v);
            let url = format!("/openapi/v3/{p}?hash={}", hash());
            paths.insert(p, json!({"serverRelativeURL": url}));
        }
    }
    json!({"paths": paths})
}

/// `io.x-k8s.kueue.v1beta2.ClusterQueue`, `io.k8s.api.core.v1.Pod`: the schema names
/// kube-apiserver uses.
fn schema_name(d: &ResourceDef, version: &str) -> String {
    let group_part = if d.group.is_empty() {
        "io.k8s.api.core".to_string()
    } else if d.group.ends_with(".k8s.io") || !d.group.contains('.') {
        let g = d.group.trim_end_matches(".k8s.io");
        format!("io.k8s.api.{}", g.replace('.', "_"))
    } else {
        let mut parts: Vec<&str> = d.group.split('.').collect();
        parts.reverse();
        parts.join(".")
    };
    format!("{group_part}.{version}.{}", d.kind)
}

/// The schema of `d` at `version`, tagged with its group-version-kind.
pub fn kind_schema(d: &ResourceDef, version: &str) -> Value {
    let mut s = crds::schema(d.group, d.plural, version)
        .cloned()
        .unwrap_or_else(|| builtin_schema(d));
    s["x-kubernetes-group-version-kind"] =
        json!([{"group": d.group, "kind": d.kind, "version": version}]);
    s
}

/// A built-in kind: its description and the usual top-level fields, left open.
fn builtin_schema(d: &ResourceDef) -> Value {
    let open = |desc: &str| json!({"type": "object", "description": desc, "x-kubernetes-preserve-unknown-fields": true});
    json!({
        "type": "object",
        "description": format!("{} ({} {}), as served by the gangplank simulator. Its fields are not described here; see the Kubernetes API reference.",
            d.kind, if d.group.is_empty() { "core" } else { d.group }, d.storage_version),
        "x-kubernetes-preserve-unknown-fields": true,
        "properties": {
            "apiVersion": {"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."},
            "kind": {"type": "string", "description": "Kind is a string value representing the REST resource this object represents."},
            "metadata": open("Standard object's metadata."),
            "spec": open("Specification of the desired behavior."),
            "status": open("Most recently observed status."),
        },
    })
}

fn operation(d: &ResourceDef, version: &str, action: &str, name: &Ref) -> Value {
    let mut params = vec![
        json!({"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": true}}),
        json!({"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": true}}),
    ];
    if matches!(action, "post" | "put" | "patch") {
        params.push(json!({"name": "fieldValidation", "in": "query",
            "description": "fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields: Ignore, Warn or Strict.",
            "schema": {"type": "string", "uniqueItems": true}}));
    }
    json!({
        "operationId": format!("{action}{}", d.kind),
        "parameters": params,
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": name.0}}}}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": d.group, "version": version, "kind": d.kind},
    })
}

struct Ref(String);

/// `GET /openapi/v3/api/v1`, `/openapi/v3/apis/{group}/{version}`, if served.
pub fn group_version(path: &str) -> Option<Value> {
    let rest = path.strip_prefix("/openapi/v3/")?;
    let (group, version) = match rest.split('/').collect::<Vec<_>>().as_slice() {
        ["api", v] => ("", *v),
        ["apis", g, v] => (*g, *v),
        _ => return None,
    };
    let defs = resources::in_group_version(group, version);
    if defs.is_empty() {
        return None;
    }
    let mut schemas = Map::new();
    let mut paths = Map::new();
    let prefix = format!("/{}", gv_path(group, version));
    for d in defs {
        let name = schema_name(d, version);
        let r = Ref(format!("#/components/schemas/{name}"));
        schemas.insert(name, kind_schema(d, version));
        let base = if d.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}", d.plural)
        } else {
            format!("{prefix}/{}", d.plural)
        };
        let mut collection = json!({"get": operation(d, version, "list", &r)});
        let mut item = json!({"get": operation(d, version, "get", &r)});
        if !d.read_only() {
            collection["post"] = operation(d, version, "post", &r);
            item["put"] = operation(d, version, "put", &r);
            item["patch"] = operation(d, version, "patch", &r);
            item["delete"] = operation(d, version, "delete", &r);
        }
        paths.insert(base.clone(), collection);
        paths.insert(format!("{base}/{{name}}"), item);
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }))
}

/// Fields of `obj` its schema does not declare (`spec.foo`, `spec.resourceGroups[0].x`),
/// as `fieldValidation=Strict` rejects them. `metadata` is not checked; fields under
/// `x-kubernetes-preserve-unknown-fields` (and the built-in kinds' open schemas) are
/// always accepted.
pub fn unknown_fields(d: &ResourceDef, version: &str, obj: &Value) -> Vec<String> {
    let Some(schema) = crds::schema(d.group, d.plural, version) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    walk(schema, obj, "", &mut out);
    out
}

fn walk(schema: &Value, v: &Value, path: &str, out: &mut Vec<String>) {
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&json!(true)) {
        return;
    }
    match v {
        Value::Object(m) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let extra = schema.get("additionalProperties").filter(|a| a.is_object());
            if props.is_none() && extra.is_none() {
                return; // an object the schema leaves undescribed
            }
            for (k, child) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                if (path.is_empty() && k == "metadata") || k.starts_with('$') {
                    continue;
                }
                match props.and_then(|ps| ps.get(k)).or(extra) {
                    Some(s) => walk(s, child, &p, out),
                    None => out.push(p),
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = schema.get("items") {
                for (i, child) in items.iter().enumerate() {
                    walk(s, child, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::resources::{KUEUE_GROUP, find};

    #[test]
    fn documents_and_unknown_fields() {
        let r = root();
        assert!(r["paths"]["apis/kueue.x-k8s.io/v1beta2"]["serverRelativeURL"].is_string());
        let doc = group_version("/openapi/v3/apis/kueue.x-k8s.io/v1beta2").unwrap();
        let cq = &doc["components"]["schemas"]["io.x-k8s.kueue.v1beta2.ClusterQueue"];
        assert!(
            cq.pointer(
                "/properties/spec/properties/preemption/properties/withinClusterQueue/description"
            )
            .is_some()
        );
        assert!(group_version("/openapi/v3/api/v1").is_some());
        let d = find(KUEUE_GROUP, "clusterqueues").unwrap();
        let obj = json!({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
            "metadata": {"name": "x", "whatever": 1},
            "spec": {"namespaceSelector": {}, "foo": 1, "resourceGroups": [{"coveredResources": ["cpu"], "bar": 2, "flavors": []}]}});
        assert_eq!(
            unknown_fields(d, "v1beta1", &obj),
            ["spec.foo", "spec.resourceGroups[0].bar"]
        );
        let pod = find("", "pods").unwrap();
        assert!(unknown_fields(pod, "v1", &json!({"spec": {"x": 1}})).is_empty());
    }
}
