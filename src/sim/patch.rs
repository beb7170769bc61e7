//! Patch application on JSON objects: JSON merge patch (RFC 7386), JSON patch
//! (RFC 6902), a simplified strategic merge patch, and a simplified server-side
//! apply.
//!
//! Strategic merge simplifications: merge keys come from a fixed table keyed by
//! field name (not by the Go type schema): `containers`, `initContainers`,
//! `ephemeralContainers`, `volumes`, `env`, `imagePullSecrets`, `podSets` → `name`;
//! `ports` → `containerPort`; `volumeMounts` → `mountPath`; `conditions`,
//! `addresses` → `type`; `ownerReferences` → `uid`; `finalizers` is a merged set of
//! strings. Every other list (e.g. `tolerations`, `taints`, as upstream) is replaced.
//! Directives `$patch: replace|delete`, `$retainKeys`,
//! `$deleteFromPrimitiveList/…` are honoured; `$setElementOrder/…` is ignored.
//!
//! Server-side apply is "applied object strategically merged over the live one";
//! managedFields are not tracked, so fields an applier stops sending are not removed.

use serde_json::{Map, Value};

/// The patch flavours of the Kubernetes API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchKind {
    /// `application/merge-patch+json`.
    Merge,
    /// `application/json-patch+json`.
    Json,
    /// `application/strategic-merge-patch+json`.
    Strategic,
    /// `application/apply-patch+yaml` (server-side apply).
    Apply,
}

impl PatchKind {
    /// From a request `Content-Type` (parameters ignored).
    pub fn from_content_type(ct: &str) -> Option<Self> {
        let base = ct.split(';').next().unwrap_or("").trim();
        match base {
            "application/merge-patch+json" => Some(Self::Merge),
            "application/json-patch+json" => Some(Self::Json),
            "application/strategic-merge-patch+json" => Some(Self::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+json" => Some(Self::Apply),
            _ => None,
        }
    }
}

/// Applies `patch` of `kind` to `target` in place. Errors are human-readable.
pub fn apply(kind: PatchKind, target: &mut Value, patch: &Value) -> Result<(), String> {
    match kind {
        PatchKind::Merge => {
            if !patch.is_object() {
                return Err("merge patch must be a JSON object".into());
            }
            json_patch::merge(target, patch);
            Ok(())
        }
        PatchKind::Json => {
            let p: json_patch::Patch = serde_json::from_value(patch.clone())
                .map_err(|e| format!("invalid JSON patch: {e}"))?;
            json_patch::patch(target, &p).map_err(|e| format!("JSON patch failed: {e}"))
        }
        PatchKind::Strategic | PatchKind::Apply => {
            if !patch.is_object() {
                return Err("strategic merge patch must be a JSON object".into());
            }
            strategic_merge(target, patch);
            Ok(())
        }
    }
}

enum ListMerge {
    Key(&'static str),
    Set,
    Replace,
}

fn list_strategy(field: &str) -> ListMerge {
    match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "env"
        | "imagePullSecrets"
        | "podSets" => ListMerge::Key("name"),
        "ports" => ListMerge::Key("containerPort"),
        "volumeMounts" => ListMerge::Key("mountPath"),
        "conditions" | "addresses" => ListMerge::Key("type"),
        "ownerReferences" => ListMerge::Key("uid"),
        "finalizers" => ListMerge::Set,
        _ => ListMerge::Replace,
    }
}

/// A patch value with all directives removed (for values inserted as new).
fn clean(v: &Value) -> Value {
    match v {
        Value::Object(_) => {
            let mut out = Value::Object(Map::new());
            strategic_merge(&mut out, v);
            out
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .filter(|i| i.get("$patch").is_none())
                .map(clean)
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Strategic merge of `patch` into `target` (see module docs for the rules).
pub fn strategic_merge(target: &mut Value, patch: &Value) {
    let Some(p) = patch.as_object() else {
        *target = clean(patch);
        return;
    };
    if p.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut stripped = p.clone();
        stripped.remove("$patch");
        *target = clean(&Value::Object(stripped));
        return;
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Some(t) = target.as_object_mut() else {
        return;
    };
    for (k, v) in p {
        if k == "$patch" || k == "$retainKeys" || k.starts_with("$setElementOrder/") {
            continue;
        }
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(cur)), Some(del)) = (t.get_mut(field), v.as_array()) {
                cur.retain(|x| !del.contains(x));
            }
            continue;
        }
        if v.is_null() {
            t.remove(k);
            continue;
        }
        match (t.get_mut(k), v) {
            (Some(cur @ Value::Array(_)), Value::Array(items)) => match list_strategy(k) {
                ListMerge::Key(key) => merge_keyed(cur, items, key),
                ListMerge::Set => {
                    if let Value::Array(c) = cur {
                        for i in items {
                            if !c.contains(i) {
                                c.push(i.clone());
                            }
                        }
                    }
                }
                ListMerge::Replace => *cur = clean(v),
            },
            (Some(cur @ Value::Object(_)), Value::Object(_)) => strategic_merge(cur, v),
            _ => {
                t.insert(k.clone(), clean(v));
            }
        }
    }
    if let Some(Value::Array(retain)) = p.get("$retainKeys") {
        t.retain(|k, _| retain.iter().any(|r| r.as_str() == Some(k)));
    }
}

fn merge_keyed(cur: &mut Value, items: &[Value], key: &str) {
    let Value::Array(list) = cur else { return };
    if items
        .iter()
        .any(|i| i.get("$patch").and_then(Value::as_str) == Some("replace"))
    {
        *list = items
            .iter()
            .filter(|i| i.get("$patch").is_none())
            .map(clean)
            .collect();
        return;
    }
    for item in items {
        let id = item.get(key);
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match id {
            Some(id) if delete => list.retain(|e| e.get(key) != Some(id)),
            Some(id) => match list.iter_mut().find(|e| e.get(key) == Some(id)) {
                Some(existing) => strategic_merge(existing, item),
                None => list.push(clean(item)),
            },
            None if delete => {}
            None => list.push(clean(item)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strategic_merges_containers_by_name() {
        let mut pod = json!({"spec":{"containers":[{"name":"a","image":"x"},{"name":"b","image":"y"}],
            "tolerations":[{"key":"k1"}]},"metadata":{"labels":{"a":"1"}}});
        let p = json!({"metadata":{"labels":{"b":"2"}},"spec":{"containers":[{"name":"b","image":"z"},{"name":"c","image":"w"}],
            "tolerations":[{"key":"k2"}],"$setElementOrder/containers":[{"name":"a"}]}});
        apply(PatchKind::Strategic, &mut pod, &p).unwrap();
        assert_eq!(pod["metadata"]["labels"], json!({"a":"1","b":"2"}));
        assert_eq!(pod["spec"]["containers"][1]["image"], json!("z"));
        assert_eq!(pod["spec"]["containers"].as_array().unwrap().len(), 3);
        assert_eq!(pod["spec"]["tolerations"], json!([{"key":"k2"}]));
        apply(
            PatchKind::Strategic,
            &mut pod,
            &json!({"spec":{"containers":[{"name":"a","$patch":"delete"}]}}),
        )
        .unwrap();
        assert_eq!(pod["spec"]["containers"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn json_and_merge_patch() {
        let mut o = json!({"spec":{"a":1,"b":2}});
        apply(PatchKind::Merge, &mut o, &json!({"spec":{"a":null,"c":3}})).unwrap();
        assert_eq!(o, json!({"spec":{"b":2,"c":3}}));
        apply(
            PatchKind::Json,
            &mut o,
            &json!([{"op":"replace","path":"/spec/b","value":5}]),
        )
        .unwrap();
        assert_eq!(o["spec"]["b"], json!(5));
        assert!(
            apply(
                PatchKind::Json,
                &mut o,
                &json!([{"op":"remove","path":"/nope"}])
            )
            .is_err()
        );
        assert!(apply(PatchKind::Json, &mut o, &json!({"op":"x"})).is_err());
    }
}
