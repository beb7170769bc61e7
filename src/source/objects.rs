//! One API object → one compact model object, through the model's own parser.
//!
//! Each object is fed alone to a fresh [`Loader`]; the one model object it yields is
//! kept and the JSON is dropped. What the loader would do across objects (resolving a
//! Workload's priority from its class, deriving pending workloads of jobs) is redone
//! when a snapshot is assembled (see `store.rs`).

use std::sync::Arc;

use serde_json::Value;

use super::resources::{RawObject, ResourceKind};
use crate::model::parse::{Loader, QUEUE_NAME_LABEL};
use crate::model::well_known;
use crate::model::*;

/// Where live objects say they came from.
pub const LIVE_ORIGIN: &str = "live cluster";

/// `(namespace, name)`; namespace is empty for cluster-scoped objects.
pub type ObjKey = (String, String);

/// A parsed model object.
#[derive(Clone, Debug)]
pub enum Item {
    ResourceFlavor(Box<ResourceFlavor>),
    ClusterQueue(Box<ClusterQueue>),
    LocalQueue(Box<LocalQueue>),
    Cohort(Box<Cohort>),
    WorkloadPriorityClass(WorkloadPriorityClass),
    /// `priority_missing`: the Workload had no `spec.priority`; it takes its class's
    /// value when the snapshot is assembled (the class may arrive later).
    /// Nodes, pods and Workloads are made shared here, once: the state's maps hold
    /// them as they are, and snapshots share them.
    Workload {
        workload: Arc<Workload>,
        priority_missing: bool,
    },
    PriorityClass(PriorityClass),
    Namespace(Namespace),
    Node(Arc<Node>),
    Pod(Arc<Pod>),
    Job(Arc<JobInfo>),
}

/// The outcome of reading one object.
#[derive(Clone, Debug)]
pub struct Parsed {
    pub key: ObjKey,
    /// `None` when the object is not one the console needs (an unrelated pod).
    pub item: Option<Item>,
    /// Parser warnings about this object (approximations, deprecated values).
    pub warnings: Vec<String>,
    /// The object's `metadata.resourceVersion`, as served.
    pub resource_version: Option<String>,
}

/// Why an object was skipped: names it and says what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub object: String,
    pub error: String,
}

/// Warnings the single-object loader emits only because it cannot see the classes.
const PRIORITY_NOTE_PREFIX: &str = "Workloads without spec.priority";

/// The key of an object from its metadata.
pub fn key_of(obj: &RawObject) -> ObjKey {
    (
        obj.metadata.namespace.clone().unwrap_or_default(),
        obj.metadata.name.clone().unwrap_or_default(),
    )
}

/// How messages name an object: `Workload team/train`, `Node gpu-1`.
pub fn label(kind: ResourceKind, key: &ObjKey) -> String {
    let name = if key.1.is_empty() {
        "<unnamed>"
    } else {
        &key.1
    };
    if key.0.is_empty() {
        format!("{} {name}", kind.kind())
    } else {
        format!("{} {}/{name}", kind.kind(), key.0)
    }
}

/// Parses one object of `kind` served as `api_version`.
pub fn parse(kind: ResourceKind, api_version: &str, obj: RawObject) -> Result<Parsed, Skipped> {
    let key = key_of(&obj);
    let resource_version = obj.metadata.resource_version.clone();
    let label = || label(kind, &key);
    let mut body = obj.body;
    trim(kind, &mut body);
    let Value::Object(map) = &mut body else {
        return Err(Skipped {
            object: label(),
            error: "not a JSON object".into(),
        });
    };
    // Items of a typed list or watch may omit their type meta.
    map.entry("kind")
        .or_insert_with(|| Value::String(kind.kind().into()));
    map.entry("apiVersion")
        .or_insert_with(|| Value::String(api_version.into()));
    let priority_missing = kind == ResourceKind::Workload
        && body
            .get("spec")
            .and_then(|s| s.get("priority"))
            .is_none_or(Value::is_null);
    let mut loader = Loader::new();
    let origin = Origin {
        source: LIVE_ORIGIN.into(),
        document: 0,
    };
    if let Err(e) = loader.add_value(origin, &body) {
        let error = match (&e.path, e.message.as_str()) {
            (Some(p), m) => format!("{p}: {m}"),
            (None, m) => m.to_string(),
        };
        return Err(Skipped {
            object: label(),
            error,
        });
    }
    let mut st = loader.finish();
    let warnings: Vec<String> = std::mem::take(&mut st.warnings)
        .into_iter()
        .filter(|w| !w.starts_with(PRIORITY_NOTE_PREFIX))
        .collect();
    let item = take_item(kind, st, priority_missing);
    let item = match item {
        Some(Item::Pod(p)) if !pod_is_relevant(&p) => None,
        other => other,
    };
    Ok(Parsed {
        key,
        item,
        warnings,
        resource_version,
    })
}

/// Drops what the model never reads before parsing (reliability.md §1 "Memory").
fn trim(kind: ResourceKind, body: &mut Value) {
    if let Some(ann) = body
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .and_then(Value::as_object_mut)
    {
        ann.remove("kubectl.kubernetes.io/last-applied-configuration");
    }
    if kind == ResourceKind::Pod {
        if let Some(status) = body.get_mut("status").and_then(Value::as_object_mut) {
            // Container statuses and conditions dwarf the phase, the only field read.
            status.retain(|k, _| k == "phase");
        }
        // Nothing reads pod annotations, and of the labels only Kueue's (queue name,
        // managed, pod group) and the job-name ones that tie a pod to its job (doctor);
        // there are 100,000s of pods.
        if let Some(meta) = body.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("annotations");
            meta.remove("managedFields");
            if let Some(labels) = meta.get_mut("labels").and_then(Value::as_object_mut) {
                labels.retain(|k, _| {
                    k.starts_with(well_known::KUEUE_PREFIX)
                        || well_known::JOB_NAME_LABELS.contains(&k.as_str())
                });
            }
        }
    }
}

/// The one object a single-object loader produced.
fn take_item(kind: ResourceKind, mut st: ClusterState, priority_missing: bool) -> Option<Item> {
    fn first<K: Ord, V>(m: &mut std::collections::BTreeMap<K, V>) -> Option<V> {
        m.pop_first().map(|(_, v)| v)
    }
    Some(match kind {
        ResourceKind::ResourceFlavor => {
            Item::ResourceFlavor(Box::new(first(&mut st.resource_flavors)?))
        }
        ResourceKind::ClusterQueue => Item::ClusterQueue(Box::new(first(&mut st.cluster_queues)?)),
        ResourceKind::LocalQueue => Item::LocalQueue(Box::new(first(&mut st.local_queues)?)),
        ResourceKind::Cohort => Item::Cohort(Box::new(first(&mut st.cohorts)?)),
        ResourceKind::WorkloadPriorityClass => {
            Item::WorkloadPriorityClass(first(&mut st.workload_priority_classes)?)
        }
        ResourceKind::Workload => Item::Workload {
            workload: compact_arc(first(&mut st.workloads)?, compact_workload),
            priority_missing,
        },
        ResourceKind::PriorityClass => Item::PriorityClass(first(&mut st.priority_classes)?),
        ResourceKind::Namespace => Item::Namespace(first(&mut st.namespaces)?),
        ResourceKind::Node => Item::Node(compact_arc(first(&mut st.nodes)?, compact_node)),
        ResourceKind::Pod => Item::Pod(compact_arc(first(&mut st.pods)?, compact_pod)),
        ResourceKind::Job | ResourceKind::PyTorchJob => Item::Job(st.jobs.pop()?),
    })
}

/// Trims spare capacity off a freshly parsed object (the loader's vectors grow by
/// doubling: a pod set list of one holds four slots). A live cluster keeps hundreds
/// of thousands of these objects for as long as it runs.
fn compact_arc<T>(mut obj: Arc<T>, compact: fn(&mut T)) -> Arc<T> {
    if let Some(o) = Arc::get_mut(&mut obj) {
        compact(o);
    }
    obj
}

fn compact_tolerations(t: &mut Vec<Toleration>) {
    t.shrink_to_fit();
}

fn compact_pod_set(ps: &mut PodSet) {
    ps.requests.shrink_to_fit();
    ps.node_selector.shrink_to_fit();
    compact_tolerations(&mut ps.tolerations);
}

fn compact_workload(w: &mut Workload) {
    w.labels.shrink_to_fit();
    w.annotations.shrink_to_fit();
    // fresh from the parser, so not shared yet (the slice itself has no spare room)
    if let Some(pod_sets) = Arc::get_mut(&mut w.pod_sets) {
        pod_sets.iter_mut().for_each(compact_pod_set);
    }
    w.conditions.shrink_to_fit();
    if let Some(a) = &mut w.admission {
        a.pod_set_assignments.shrink_to_fit();
        for psa in &mut a.pod_set_assignments {
            psa.flavors.shrink_to_fit();
            psa.resource_usage.shrink_to_fit();
        }
    }
}

fn compact_pod(p: &mut Pod) {
    p.labels.shrink_to_fit();
    p.annotations.shrink_to_fit();
    p.owner_references.shrink_to_fit();
    p.requests.shrink_to_fit();
    compact_tolerations(&mut p.tolerations);
    p.node_selector.shrink_to_fit();
}

fn compact_node(n: &mut Node) {
    n.labels.shrink_to_fit();
    n.taints.shrink_to_fit();
    n.allocatable.shrink_to_fit();
    n.capacity.shrink_to_fit();
}

/// Whether a resource name is an accelerator (`nvidia.com/gpu`, `amd.com/gpu`,
/// `aws.amazon.com/neuron`, …: [`well_known::is_accelerator`]).
pub fn is_gpu_resource(name: &str) -> bool {
    well_known::is_accelerator(name)
}

/// Pods the console needs: Kueue's (a queue-name or any `kueue.x-k8s.io/` label),
/// those requesting GPUs, and bound pods (kept until the snapshot can tell whether
/// their node has GPUs). Pending pods of other controllers are dropped here.
fn pod_is_relevant(p: &Pod) -> bool {
    p.labels.contains_key(QUEUE_NAME_LABEL)
        || p.labels
            .keys()
            .any(|k| k.starts_with(well_known::KUEUE_PREFIX))
        || p.requests.keys().any(|r| is_gpu_resource(r))
        || p.node_name.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn raw(v: Value) -> RawObject {
        serde_json::from_value(v).expect("raw")
    }

    #[test]
    fn parses_a_workload_without_type_meta() {
        let o = raw(
            json!({"metadata": {"name": "w", "namespace": "n", "uid": "u1"},
            "spec": {"queueName": "lq", "podSets": [{"name": "main", "count": 2,
              "template": {"spec": {"containers": [{"name": "c",
                "resources": {"requests": {"nvidia.com/gpu": "1"}}}]}}}]}}),
        );
        let p = parse(ResourceKind::Workload, "kueue.x-k8s.io/v1beta2", o).expect("parsed");
        assert_eq!(p.key, ("n".to_string(), "w".to_string()));
        match p.item {
            Some(Item::Workload {
                workload,
                priority_missing,
            }) => {
                assert!(priority_missing);
                assert_eq!(workload.pod_sets[0].count, 2);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn malformed_workload_is_named() {
        let o = raw(json!({"metadata": {"name": "bad", "namespace": "n"},
            "spec": {"podSets": "not-a-list", "priority": "high"}}));
        let e = parse(ResourceKind::Workload, "kueue.x-k8s.io/v1beta2", o).expect_err("bad");
        assert_eq!(e.object, "Workload n/bad");
        assert!(e.error.contains("spec."), "{}", e.error);
    }

    #[test]
    fn unrelated_pending_pod_is_dropped() {
        let o = raw(json!({"metadata": {"name": "p", "namespace": "n"},
            "spec": {"containers": [{"name": "c"}]}, "status": {"phase": "Pending",
            "conditions": [{"type": "x"}]}}));
        let p = parse(ResourceKind::Pod, "v1", o).expect("parsed");
        assert!(p.item.is_none());
    }

    #[test]
    fn a_kept_pod_keeps_only_the_labels_something_reads() {
        let o = raw(json!({"metadata": {"name": "p", "namespace": "n",
            "labels": {"app": "x", "pod-template-hash": "abc",
                "kueue.x-k8s.io/queue-name": "lq", "batch.kubernetes.io/job-name": "j"},
            "annotations": {"a": "b"}},
            "spec": {"nodeName": "gpu-1", "containers": [{"name": "c"}]},
            "status": {"phase": "Running"}}));
        let p = parse(ResourceKind::Pod, "v1", o).expect("parsed");
        let Some(Item::Pod(pod)) = p.item else {
            panic!("kept")
        };
        let keys: Vec<&str> = pod.labels.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["batch.kubernetes.io/job-name", "kueue.x-k8s.io/queue-name"]
        );
        assert!(pod.annotations.is_empty());
        assert_eq!(pod.phase, "Running");
    }
}
