//! What the source watches, and the lenient object type it watches them as.
//!
//! Every resource is watched as [`RawObject`]: a JSON value whose decoding can never
//! fail for a single item. kube's typed list decoding turns one malformed item into a
//! failed page and an endless relist loop (reliability.md §1 "Decode failures"); with
//! `RawObject` the page always decodes and each item is parsed on its own by the model
//! parser, so one bad object is skipped with a warning naming it.

use std::borrow::Cow;
use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use kube::api::{ApiResource, GroupVersionKind};
use kube::core::DynamicResourceScope;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

pub use crate::model::well_known::KUEUE_GROUP;

/// One watched resource type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ResourceKind {
    ResourceFlavor,
    ClusterQueue,
    LocalQueue,
    Cohort,
    WorkloadPriorityClass,
    Workload,
    PriorityClass,
    Namespace,
    Node,
    Pod,
    Job,
    PyTorchJob,
}

impl ResourceKind {
    /// Every watched kind, in display order.
    pub const ALL: [ResourceKind; 12] = [
        ResourceKind::ClusterQueue,
        ResourceKind::LocalQueue,
        ResourceKind::ResourceFlavor,
        ResourceKind::Cohort,
        ResourceKind::WorkloadPriorityClass,
        ResourceKind::Workload,
        ResourceKind::PriorityClass,
        ResourceKind::Namespace,
        ResourceKind::Node,
        ResourceKind::Pod,
        ResourceKind::Job,
        ResourceKind::PyTorchJob,
    ];

    /// (group, kind, plural, namespaced)
    fn def(self) -> (&'static str, &'static str, &'static str, bool) {
        match self {
            Self::ResourceFlavor => (KUEUE_GROUP, "ResourceFlavor", "resourceflavors", false),
            Self::ClusterQueue => (KUEUE_GROUP, "ClusterQueue", "clusterqueues", false),
            Self::LocalQueue => (KUEUE_GROUP, "LocalQueue", "localqueues", true),
            Self::Cohort => (KUEUE_GROUP, "Cohort", "cohorts", false),
            Self::WorkloadPriorityClass => (
                KUEUE_GROUP,
                "WorkloadPriorityClass",
                "workloadpriorityclasses",
                false,
            ),
            Self::Workload => (KUEUE_GROUP, "Workload", "workloads", true),
            Self::PriorityClass => (
                "scheduling.k8s.io",
                "PriorityClass",
                "priorityclasses",
                false,
            ),
            Self::Namespace => ("", "Namespace", "namespaces", false),
            Self::Node => ("", "Node", "nodes", false),
            Self::Pod => ("", "Pod", "pods", true),
            Self::Job => ("batch", "Job", "jobs", true),
            Self::PyTorchJob => ("kubeflow.org", "PyTorchJob", "pytorchjobs", true),
        }
    }

    /// The API group ("" for core).
    pub fn group(self) -> &'static str {
        self.def().0
    }

    /// The object kind, e.g. `Workload`.
    pub fn kind(self) -> &'static str {
        self.def().1
    }

    /// The plural resource name, e.g. `workloads`.
    pub fn plural(self) -> &'static str {
        self.def().2
    }

    /// Whether objects live in namespaces.
    pub fn namespaced(self) -> bool {
        self.def().3
    }

    /// A Kueue kind (served only when Kueue is installed).
    pub fn is_kueue(self) -> bool {
        self.group() == KUEUE_GROUP
    }

    /// Kinds whose absence is normal (Kubeflow not installed, Cohort objects only in
    /// newer Kueue releases): a 404 marks them "not served" without any alarm.
    pub fn optional(self) -> bool {
        matches!(self, Self::PyTorchJob | Self::Cohort)
    }

    /// `plural.group` (`pods` for core), as kubectl and RBAC messages name it.
    pub fn qualified(self) -> String {
        match self.group() {
            "" => self.plural().to_string(),
            g => format!("{}.{g}", self.plural()),
        }
    }

    /// The served version: Kueue's detected version, `v1` otherwise.
    pub fn version(self, kueue_version: &str) -> &str {
        match self.group() {
            KUEUE_GROUP => kueue_version,
            _ => "v1",
        }
    }

    /// The kube `ApiResource` for this kind at `version`.
    pub fn api_resource(self, kueue_version: &str) -> ApiResource {
        let gvk = GroupVersionKind::gvk(self.group(), self.version(kueue_version), self.kind());
        ApiResource::from_gvk_with_plural(&gvk, self.plural())
    }
}

impl fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.qualified())
    }
}

/// An API object as raw JSON, with just enough typed metadata for kube's watcher
/// (which reads `metadata.resourceVersion`).
///
/// Decoding never fails for a JSON object: unreadable metadata is replaced by what can
/// be salvaged (name, namespace, resourceVersion) and the model parser reports the
/// problem later, naming the object.
#[derive(Clone, Debug, Default)]
pub struct RawObject {
    /// Name, namespace, uid and resourceVersion only (see [`key_meta`]).
    pub metadata: ObjectMeta,
    /// The whole object, minus `metadata.managedFields` (dropped at decode time: it is
    /// often the largest part of an object and nothing here reads it).
    pub body: Value,
}

impl<'de> Deserialize<'de> for RawObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut body = Value::deserialize(d)?;
        if let Some(meta) = body.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
        // Only what kube's watcher (resourceVersion) and the store (the key) read:
        // decoding the whole ObjectMeta copied every label and owner per event.
        let metadata = key_meta(&body);
        Ok(RawObject { metadata, body })
    }
}

/// Name, namespace, uid and resourceVersion of an object (also when its `metadata`
/// is malformed).
fn key_meta(body: &Value) -> ObjectMeta {
    let get = |field: &str| {
        body.get("metadata")
            .and_then(|m| m.get(field))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    ObjectMeta {
        name: get("name"),
        namespace: get("namespace"),
        resource_version: get("resourceVersion"),
        uid: get("uid"),
        ..ObjectMeta::default()
    }
}

impl Resource for RawObject {
    type DynamicType = ApiResource;
    type Scope = DynamicResourceScope;

    fn kind(dt: &ApiResource) -> Cow<'_, str> {
        dt.kind.as_str().into()
    }
    fn group(dt: &ApiResource) -> Cow<'_, str> {
        dt.group.as_str().into()
    }
    fn version(dt: &ApiResource) -> Cow<'_, str> {
        dt.version.as_str().into()
    }
    fn api_version(dt: &ApiResource) -> Cow<'_, str> {
        dt.api_version.as_str().into()
    }
    fn plural(dt: &ApiResource) -> Cow<'_, str> {
        dt.plural.as_str().into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl RawObject {
    /// `namespace/name` or `name`, for messages.
    pub fn display_name(&self) -> String {
        let name = self.metadata.name.as_deref().unwrap_or("<unnamed>");
        match self.metadata.namespace.as_deref() {
            Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
            _ => name.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn raw_object_never_fails_and_strips_managed_fields() {
        let v = json!({"metadata": {"name": "a", "namespace": "n", "resourceVersion": "7",
            "managedFields": [{"manager": "x"}]}, "spec": {"podSets": "oops"}});
        let o: RawObject = serde_json::from_value(v).expect("decodes");
        assert_eq!(o.display_name(), "n/a");
        assert!(o.body["metadata"].get("managedFields").is_none());
        // metadata of the wrong shape is salvaged
        let bad: RawObject = serde_json::from_value(
            json!({"metadata": {"name": "b", "labels": "x", "resourceVersion": "9"}}),
        )
        .expect("decodes");
        assert_eq!(bad.metadata.resource_version.as_deref(), Some("9"));
        assert_eq!(bad.metadata.name.as_deref(), Some("b"));
    }

    #[test]
    fn qualified_names() {
        assert_eq!(
            ResourceKind::Workload.qualified(),
            "workloads.kueue.x-k8s.io"
        );
        assert_eq!(ResourceKind::Node.qualified(), "nodes");
        assert_eq!(
            ResourceKind::Workload.api_resource("v1beta1").api_version,
            "kueue.x-k8s.io/v1beta1"
        );
    }
}
