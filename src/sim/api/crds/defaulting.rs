//! Structural defaulting, as kube-apiserver applies a CRD's OpenAPI `default`s to every
//! object written (apiextensions-apiserver `pkg/apiserver/schema/defaulting/algorithm.go`):
//! a property that is absent, or null without `nullable`, gets a deep copy of its default,
//! then defaulting descends into every property present (the defaulted ones included),
//! `additionalProperties` and array items. This is why `kubectl get cq -o wide` shows
//! `STRATEGY BestEffortFIFO` for a ClusterQueue whose manifest never set it.

use serde_json::Value;

/// Fills `obj` with the defaults its `schema` (an `openAPIV3Schema`) declares.
pub fn apply(schema: &Value, obj: &mut Value) {
    match obj {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            for (key, prop) in props.into_iter().flatten() {
                let Some(default) = prop.get("default") else {
                    continue;
                };
                let nullable = prop.get("nullable") == Some(&Value::Bool(true));
                match map.get(key) {
                    None => {
                        map.insert(key.clone(), default.clone());
                    }
                    Some(Value::Null) if !nullable => {
                        map.insert(key.clone(), default.clone());
                    }
                    Some(_) => {}
                }
            }
            let extra = schema.get("additionalProperties").filter(|a| a.is_object());
            for (key, child) in map.iter_mut() {
                if let Some(prop) = props.and_then(|ps| ps.get(key)).or(extra) {
                    apply(prop, child);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                items.iter_mut().for_each(|item| apply(item_schema, item));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::apply;
    use crate::sim::api::crds;

    fn cq_schema() -> &'static serde_json::Value {
        crds::schema("kueue.x-k8s.io", "clusterqueues", "v1beta2").expect("served")
    }

    #[test]
    fn a_bare_cluster_queue_gets_kueues_defaults() {
        let mut cq = json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": "q"}, "spec": {"resourceGroups": []}});
        apply(cq_schema(), &mut cq);
        let spec = &cq["spec"];
        assert_eq!(spec["queueingStrategy"], "BestEffortFIFO");
        assert_eq!(spec["stopPolicy"], "None");
        assert_eq!(spec["preemption"]["withinClusterQueue"], "Never");
        assert_eq!(spec["preemption"]["reclaimWithinCohort"], "Never");
        assert_eq!(spec["preemption"]["borrowWithinCohort"]["policy"], "Never");
        assert_eq!(spec["flavorFungibility"]["whenCanBorrow"], "MayStopSearch");
        assert_eq!(spec["flavorFungibility"]["whenCanPreempt"], "TryNextFlavor");
        // Nothing is invented where the schema has no default.
        assert!(spec.get("cohortName").is_none());
        assert!(cq["metadata"].get("labels").is_none());
    }

    #[test]
    fn set_values_are_kept_and_null_is_defaulted() {
        let mut cq = json!({"spec": {"queueingStrategy": "StrictFIFO",
            "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": null}}});
        apply(cq_schema(), &mut cq);
        assert_eq!(cq["spec"]["queueingStrategy"], "StrictFIFO");
        assert_eq!(
            cq["spec"]["preemption"]["withinClusterQueue"],
            "LowerPriority"
        );
        assert_eq!(cq["spec"]["preemption"]["reclaimWithinCohort"], "Never");
    }

    #[test]
    fn array_items_are_defaulted() {
        let schema = json!({"properties": {"xs": {"type": "array",
            "items": {"properties": {"n": {"default": 1}}}}}});
        let mut obj = json!({"xs": [{}, {"n": 3}]});
        apply(&schema, &mut obj);
        assert_eq!(obj, json!({"xs": [{"n": 1}, {"n": 3}]}));
    }
}
