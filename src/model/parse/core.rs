//! Core Kubernetes objects: PriorityClass, Namespace, Node, Pod.

use super::error::FieldResult;
use super::meta::Meta;
use super::podspec::{pod_requests, taints, tolerations};
use super::value::At;
use crate::model::types::*;

/// scheduling.k8s.io PriorityClass: top-level `value` (required), `globalDefault`.
pub(crate) fn priority_class(root: &At, meta: &Meta, origin: Origin) -> FieldResult<PriorityClass> {
    Ok(PriorityClass {
        name: meta.name.clone(),
        value: root.req_i32("value")?,
        global_default: root.opt_bool("globalDefault")?.unwrap_or(false),
        description: root.opt_string("description")?,
        origin,
    })
}

/// A Namespace: its labels (ClusterQueue namespaceSelectors match them).
pub(crate) fn namespace(meta: &Meta) -> Namespace {
    Namespace {
        name: meta.name.clone(),
        labels: meta.labels.clone(),
    }
}

/// A Node. Allocatable defaults to capacity when only capacity is given (hand-written
/// scenario nodes); Ready is true when there is no Ready condition.
pub(crate) fn node(root: &At, meta: &Meta, origin: Origin) -> FieldResult<Node> {
    let (taint_list, unschedulable) = match root.opt("spec")? {
        Some(spec) => (
            taints(&spec, "taints")?,
            spec.opt_bool("unschedulable")?.unwrap_or(false),
        ),
        None => (Vec::new(), false),
    };
    let (mut allocatable, capacity, ready) = match root.opt("status")? {
        Some(status) => {
            let mut ready = true;
            for c in status.opt_list("conditions")? {
                if c.opt_str("type")? == Some("Ready") {
                    ready = c.opt_str("status")? == Some("True");
                }
            }
            (
                status.resource_list("allocatable")?,
                status.resource_list("capacity")?,
                ready,
            )
        }
        None => (ResourceList::new(), ResourceList::new(), true),
    };
    if allocatable.is_empty() {
        allocatable = capacity.clone();
    }
    Ok(Node {
        name: meta.name.clone(),
        labels: meta.labels.clone(),
        taints: taint_list,
        allocatable,
        capacity,
        unschedulable,
        ready,
        origin,
    })
}

/// A Pod with its effective requests.
pub(crate) fn pod(root: &At, meta: &Meta, origin: Origin) -> FieldResult<Pod> {
    let spec = root.req("spec")?;
    let phase = match root.opt("status")? {
        Some(s) => s.opt_string("phase")?,
        None => None,
    }
    .filter(|p| !p.is_empty())
    .unwrap_or_else(|| "Pending".to_string());
    Ok(Pod {
        namespace: meta.namespace_or_default(),
        name: meta.name.clone(),
        uid: meta.uid.clone(),
        labels: meta.labels.clone(),
        annotations: meta.annotations.clone(),
        owner_references: meta.owner_references.clone(),
        node_name: spec.opt_string("nodeName")?.filter(|n| !n.is_empty()),
        phase,
        requests: pod_requests(&spec)?,
        tolerations: tolerations(&spec, "tolerations")?,
        node_selector: spec.string_map("nodeSelector")?,
        priority_class_name: spec
            .opt_string("priorityClassName")?
            .filter(|n| !n.is_empty()),
        creation_timestamp: meta.creation_timestamp,
        origin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Quantity;
    use crate::model::parse::meta::read_meta;
    use serde_json::json;

    #[test]
    fn node_ready_taints_and_capacity_fallback() {
        let v = json!({"metadata": {"name": "n1", "labels": {"pool": "p4d"}},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
            "status": {"capacity": {"nvidia.com/gpu": "8"},
                "conditions": [{"type": "Ready", "status": "False"}]}});
        let root = At::root(&v, "");
        let n = node(&root, &read_meta(&root).unwrap(), Origin::default()).unwrap();
        assert!(!n.ready);
        assert_eq!(n.allocatable["nvidia.com/gpu"], Quantity::from_units(8));
        assert_eq!(n.taints[0].value.as_deref(), Some("present"));
        let v = json!({"metadata": {"name": "n2"}});
        let root = At::root(&v, "");
        assert!(
            node(&root, &read_meta(&root).unwrap(), Origin::default())
                .unwrap()
                .ready
        );
    }

    #[test]
    fn priority_class_requires_value() {
        let v = json!({"metadata": {"name": "p"}, "globalDefault": true});
        let root = At::root(&v, "");
        let e = priority_class(&root, &read_meta(&root).unwrap(), Origin::default()).unwrap_err();
        assert_eq!(
            (e.path.as_str(), e.message.as_str()),
            ("value", "missing required field")
        );
    }
}
