//! The CustomResourceDefinitions of the CRD kinds the simulator serves: Kueue's own
//! manifests (vendored, see `README.md` beside this file) and the Kubeflow training
//! operator's kinds. They are served read-only at
//! `apiextensions.k8s.io/v1/customresourcedefinitions` (`kubectl get crd`), and give
//! the tables their printer columns and OpenAPI its schemas.

use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::sim::resources::{self, KUEUE_GROUP};

pub mod defaulting;

const KUEUE_CRDS: &[&str] = &[
    include_str!("kueue.x-k8s.io_clusterqueues.json"),
    include_str!("kueue.x-k8s.io_cohorts.json"),
    include_str!("kueue.x-k8s.io_localqueues.json"),
    include_str!("kueue.x-k8s.io_resourceflavors.json"),
    include_str!("kueue.x-k8s.io_workloadpriorityclasses.json"),
    include_str!("kueue.x-k8s.io_workloads.json"),
];

/// The Kubeflow training operator's job kinds: (kind, plural, replica-spec field).
const KUBEFLOW: &[(&str, &str, &str)] = &[
    ("MPIJob", "mpijobs", "mpiReplicaSpecs"),
    ("PyTorchJob", "pytorchjobs", "pytorchReplicaSpecs"),
    ("TFJob", "tfjobs", "tfReplicaSpecs"),
];

/// Every served CRD, as `kubectl get crd -o json` shows it.
pub fn all() -> &'static [Value] {
    static CRDS: OnceLock<Vec<Value>> = OnceLock::new();
    CRDS.get_or_init(|| {
        let mut out: Vec<Value> = KUEUE_CRDS
            .iter()
            .filter_map(|text| serde_json::from_str::<Value>(text).ok())
            .collect();
        out.extend(KUBEFLOW.iter().map(|(k, p, f)| kubeflow_crd(k, p, f)));
        out.iter_mut().for_each(complete);
        out.sort_by(|a, b| name(a).cmp(name(b)));
        out
    })
}

fn name(crd: &Value) -> &str {
    crd.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The CRD named `plural.group`.
pub fn find(group: &str, plural: &str) -> Option<&'static Value> {
    let want = format!("{plural}.{group}");
    all().iter().find(|c| name(c) == want)
}

/// One version's entry of a CRD's `spec.versions`.
pub fn version<'a>(crd: &'a Value, version: &str) -> Option<&'a Value> {
    crd.pointer("/spec/versions")?
        .as_array()?
        .iter()
        .find(|v| v.get("name").and_then(Value::as_str) == Some(version))
}

/// `additionalPrinterColumns` of `group/plural` at `version` (empty when none).
pub fn printer_columns(group: &str, plural: &str, ver: &str) -> &'static [Value] {
    find(group, plural)
        .and_then(|c| version(c, ver))
        .and_then(|v| v.get("additionalPrinterColumns"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The OpenAPI v3 schema of `group/plural` at `version`.
pub fn schema(group: &str, plural: &str, ver: &str) -> Option<&'static Value> {
    version(find(group, plural)?, ver)?.pointer("/schema/openAPIV3Schema")
}

/// Server-owned fields of a served CRD object, as the API server shows them.
fn complete(crd: &mut Value) {
    let n = name(crd).to_string();
    let m = &mut crd["metadata"];
    m["uid"] = json!(format!(
        "00000000-0000-4000-8000-{:012x}",
        fnv(&n) & 0xffff_ffff_ffff
    ));
    m["resourceVersion"] = json!("1");
    m["generation"] = json!(1);
    m["creationTimestamp"] = json!(server_start());
    let names = crd.pointer("/spec/names").cloned().unwrap_or(Value::Null);
    crd["status"] = json!({
        "acceptedNames": names,
        "storedVersions": stored_versions(crd),
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
             "message": "no conflicts found", "lastTransitionTime": server_start()},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted", "lastTransitionTime": server_start()},
        ],
    });
    crd["apiVersion"] = json!("apiextensions.k8s.io/v1");
    crd["kind"] = json!("CustomResourceDefinition");
}

fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn stored_versions(crd: &Value) -> Vec<Value> {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| v.get("storage") == Some(&json!(true)))
        .filter_map(|v| v.get("name").cloned())
        .collect()
}

/// When this process first served a CRD (whole seconds): their creation time.
fn server_start() -> &'static str {
    static START: OnceLock<String> = OnceLock::new();
    START.get_or_init(|| {
        let now = jiff::Timestamp::now().as_millisecond();
        crate::sim::clock::rfc3339(now - now.rem_euclid(1000))
    })
}

/// A training-operator CRD: its printer columns as upstream (`State` is the type of
/// the last condition), and a schema whose `spec` and `status` stay open.
fn kubeflow_crd(kind: &str, plural: &str, replica_field: &str) -> Value {
    let singular = kind.to_lowercase();
    let replica_spec = json!({
        "type": "object",
        "description": "ReplicaSpec is a description of the replica",
        "properties": {
            "replicas": {"type": "integer", "format": "int32",
                "description": "Replicas is the desired number of replicas of the given template. If unspecified, defaults to 1."},
            "restartPolicy": {"type": "string",
                "description": "Restart policy for all replicas within the job. One of Always, OnFailure, Never and ExitCode. Default to Never."},
            "template": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "description": "Template is the object that describes the pod that will be created for this replica."},
        },
    });
    let schema = json!({
        "type": "object",
        "description": format!("{kind} Represents a {kind} resource."),
        "properties": {
            "apiVersion": {"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."},
            "kind": {"type": "string", "description": "Kind is a string value representing the REST resource this object represents."},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "description": format!("Specification of the desired state of the {kind}."),
                "x-kubernetes-preserve-unknown-fields": true,
                "properties": {
                    replica_field: {
                        "type": "object",
                        "description": format!("A map of {kind}ReplicaType (type) to ReplicaSpec (value). Specifies the {kind} cluster configuration."),
                        "additionalProperties": replica_spec,
                    },
                    "runPolicy": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                        "description": "RunPolicy encapsulates various runtime policies of the distributed training job, for example how to clean up resources and how long the job can stay active."},
                },
            },
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "description": format!("Most recently observed status of the {kind}.")},
        },
    });
    json!({
        "metadata": {"name": format!("{plural}.kubeflow.org")},
        "spec": {
            "group": "kubeflow.org",
            "names": {"kind": kind, "listKind": format!("{kind}List"), "plural": plural, "singular": singular},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "additionalPrinterColumns": [
                    {"jsonPath": ".status.conditions[-1:].type", "name": "State", "type": "string"},
                    {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"},
                ],
                "schema": {"openAPIV3Schema": schema},
                "subresources": {"status": {}},
            }],
        },
    })
}

/// Whether `group` is one whose kinds come from CRDs here.
pub fn is_crd_group(group: &str) -> bool {
    group == KUEUE_GROUP || group == "kubeflow.org"
}

/// The served resources of every CRD exist in the resource table (a guard for tests).
pub fn all_served() -> bool {
    all().iter().all(|c| {
        let group = c
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .unwrap_or("");
        let plural = c
            .pointer("/spec/names/plural")
            .and_then(Value::as_str)
            .unwrap_or("");
        resources::find(group, plural).is_some()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kueue_and_kubeflow_crds_are_served_with_their_columns() {
        assert!(all().len() >= 9, "{}", all().len());
        assert!(all_served());
        let cols = printer_columns(KUEUE_GROUP, "workloads", "v1beta2");
        let names: Vec<&str> = cols.iter().filter_map(|c| c["name"].as_str()).collect();
        assert_eq!(
            names,
            ["Queue", "Reserved in", "Admitted", "Finished", "Age"]
        );
        assert_eq!(
            printer_columns(KUEUE_GROUP, "clusterqueues", "v1beta1")[0]["jsonPath"],
            ".spec.cohort"
        );
        let s = schema(KUEUE_GROUP, "clusterqueues", "v1beta2").unwrap();
        assert!(
            s.pointer("/properties/spec/properties/preemption")
                .is_some()
        );
        assert_eq!(
            printer_columns("kubeflow.org", "pytorchjobs", "v1")[0]["name"],
            "State"
        );
        let crd = find(KUEUE_GROUP, "workloads").unwrap();
        assert_eq!(crd["status"]["conditions"][1]["type"], "Established");
    }
}
