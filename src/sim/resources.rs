//! The table of resources the simulated API server serves.
//!
//! Names, short names, scope and subresources follow what the real API server
//! (core kinds) and the upstream CRDs (Kueue, Kubeflow training operator) publish.

use std::borrow::Cow;
use std::fmt;

/// Identifies a stored resource independent of its API version: `(group, plural)`.
///
/// The core group is the empty string.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourceKey {
    /// API group, `""` for core.
    pub group: Cow<'static, str>,
    /// Lower-case plural resource name, e.g. `workloads`.
    pub plural: Cow<'static, str>,
}

impl ResourceKey {
    /// A key from static strings (usable in constants).
    pub const fn new_static(group: &'static str, plural: &'static str) -> Self {
        Self {
            group: Cow::Borrowed(group),
            plural: Cow::Borrowed(plural),
        }
    }

    /// A key from owned strings.
    pub fn new(group: impl Into<String>, plural: impl Into<String>) -> Self {
        Self {
            group: Cow::Owned(group.into()),
            plural: Cow::Owned(plural.into()),
        }
    }

    /// Core v1 namespaces.
    pub const NAMESPACES: Self = Self::new_static("", "namespaces");
    /// Core v1 nodes.
    pub const NODES: Self = Self::new_static("", "nodes");
    /// Core v1 pods.
    pub const PODS: Self = Self::new_static("", "pods");
    /// Core v1 events.
    pub const EVENTS: Self = Self::new_static("", "events");
    /// apps/v1 deployments.
    pub const DEPLOYMENTS: Self = Self::new_static("apps", "deployments");
    /// batch/v1 jobs.
    pub const JOBS: Self = Self::new_static("batch", "jobs");
    /// scheduling.k8s.io/v1 priorityclasses.
    pub const PRIORITY_CLASSES: Self = Self::new_static("scheduling.k8s.io", "priorityclasses");
    /// kubeflow.org/v1 pytorchjobs.
    pub const PYTORCH_JOBS: Self = Self::new_static("kubeflow.org", "pytorchjobs");
    /// Kueue resource flavors.
    pub const RESOURCE_FLAVORS: Self = Self::new_static(KUEUE_GROUP, "resourceflavors");
    /// Kueue cluster queues.
    pub const CLUSTER_QUEUES: Self = Self::new_static(KUEUE_GROUP, "clusterqueues");
    /// Kueue local queues.
    pub const LOCAL_QUEUES: Self = Self::new_static(KUEUE_GROUP, "localqueues");
    /// Kueue workloads.
    pub const WORKLOADS: Self = Self::new_static(KUEUE_GROUP, "workloads");
    /// Kueue cohorts.
    pub const COHORTS: Self = Self::new_static(KUEUE_GROUP, "cohorts");
    /// Kueue workload priority classes.
    pub const WORKLOAD_PRIORITY_CLASSES: Self =
        Self::new_static(KUEUE_GROUP, "workloadpriorityclasses");

    /// `plural.group` (or just `plural` for core), as used in API error messages.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

impl fmt::Display for ResourceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.qualified())
    }
}

pub use crate::model::well_known::KUEUE_GROUP;

/// One served resource.
#[derive(Debug)]
pub struct ResourceDef {
    /// API group (`""` for core).
    pub group: &'static str,
    /// Served versions; the first one is the preferred version.
    pub versions: &'static [&'static str],
    /// The version objects are stored in.
    pub storage_version: &'static str,
    /// Kind, e.g. `ClusterQueue`.
    pub kind: &'static str,
    /// Singular name, e.g. `clusterqueue`.
    pub singular: &'static str,
    /// Plural name, e.g. `clusterqueues`.
    pub plural: &'static str,
    /// Short names, e.g. `["cq"]`.
    pub short_names: &'static [&'static str],
    /// Categories (`kubectl get all` and friends).
    pub categories: &'static [&'static str],
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// Whether a `status` subresource exists (main writes then ignore status).
    pub has_status: bool,
}

impl ResourceDef {
    /// The `(group, plural)` key.
    pub fn key(&self) -> ResourceKey {
        ResourceKey::new_static(self.group, self.plural)
    }

    /// `group/version` or `v1` for core.
    pub fn api_version(&self, version: &str) -> String {
        if self.group.is_empty() {
            version.to_string()
        } else {
            format!("{}/{}", self.group, version)
        }
    }

    /// Whether this resource is served at `version`.
    pub fn serves(&self, version: &str) -> bool {
        self.versions.contains(&version)
    }

    /// The key objects of this resource are stored under: events.k8s.io/v1 Events are
    /// the core/v1 Events seen through another version.
    pub fn store_key(&self) -> ResourceKey {
        if self.group == "events.k8s.io" {
            ResourceKey::EVENTS
        } else {
            self.key()
        }
    }

    /// Served but not writable (CustomResourceDefinitions: the simulator's kinds are fixed).
    pub fn read_only(&self) -> bool {
        self.group == "apiextensions.k8s.io"
    }

    /// The verbs discovery advertises.
    pub fn verbs(&self) -> &'static [&'static str] {
        if self.read_only() {
            &["get", "list", "watch"]
        } else {
            VERBS
        }
    }

    /// Strategic merge patch is only accepted for built-in kinds, as on a real
    /// server (CRDs answer 415).
    pub fn supports_strategic_merge(&self) -> bool {
        matches!(self.group, "" | "apps" | "batch" | "scheduling.k8s.io")
    }
}

/// Verbs every served resource supports.
pub const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

const KUEUE_VERSIONS: &[&str] = &["v1beta2", "v1beta1"];

static RESOURCES: &[ResourceDef] = &[
    ResourceDef {
        group: "",
        versions: &["v1"],
        storage_version: "v1",
        kind: "Namespace",
        singular: "namespace",
        plural: "namespaces",
        short_names: &["ns"],
        categories: &[],
        namespaced: false,
        has_status: true,
    },
    ResourceDef {
        group: "",
        versions: &["v1"],
        storage_version: "v1",
        kind: "ConfigMap",
        singular: "configmap",
        plural: "configmaps",
        short_names: &["cm"],
        categories: &[],
        namespaced: true,
        has_status: false,
    },
    ResourceDef {
        group: "",
        versions: &["v1"],
        storage_version: "v1",
        kind: "Node",
        singular: "node",
        plural: "nodes",
        short_names: &["no"],
        categories: &[],
        namespaced: false,
        has_status: true,
    },
    ResourceDef {
        group: "",
        versions: &["v1"],
        storage_version: "v1",
        kind: "Pod",
        singular: "pod",
        plural: "pods",
        short_names: &["po"],
        categories: &["all"],
        namespaced: true,
        has_status: true,
    },
    ResourceDef {
        group: "",
        versions: &["v1"],
        storage_version: "v1",
        kind: "Event",
        singular: "event",
        plural: "events",
        short_names: &["ev"],
        categories: &[],
        namespaced: true,
        has_status: false,
    },
    ResourceDef {
        group: "events.k8s.io",
        versions: &["v1"],
        storage_version: "v1",
        kind: "Event",
        singular: "event",
        plural: "events",
        short_names: &["ev"],
        categories: &[],
        namespaced: true,
        has_status: false,
    },
    ResourceDef {
        group: "apiextensions.k8s.io",
        versions: &["v1"],
        storage_version: "v1",
        kind: "CustomResourceDefinition",
        singular: "customresourcedefinition",
        plural: "customresourcedefinitions",
        short_names: &["crd", "crds"],
        categories: &["api-extensions"],
        namespaced: false,
        has_status: true,
    },
    ResourceDef {
        group: "apps",
        versions: &["v1"],
        storage_version: "v1",
        kind: "Deployment",
        singular: "deployment",
        plural: "deployments",
        short_names: &["deploy"],
        categories: &["all"],
        namespaced: true,
        has_status: true,
    },
    ResourceDef {
        group: "batch",
        versions: &["v1"],
        storage_version: "v1",
        kind: "Job",
        singular: "job",
        plural: "jobs",
        short_names: &[],
        categories: &["all"],
        namespaced: true,
        has_status: true,
    },
    ResourceDef {
        group: "scheduling.k8s.io",
        versions: &["v1"],
        storage_version: "v1",
        kind: "PriorityClass",
        singular: "priorityclass",
        plural: "priorityclasses",
        short_names: &["pc"],
        categories: &[],
        namespaced: false,
        has_status: false,
    },
    ResourceDef {
        group: "kubeflow.org",
        versions: &["v1"],
        storage_version: "v1",
        kind: "PyTorchJob",
        singular: "pytorchjob",
        plural: "pytorchjobs",
        short_names: &[],
        categories: &[],
        namespaced: true,
        has_status: true,
    },
    ResourceDef {
        group: "kubeflow.org",
        versions: &["v1"],
        storage_version: "v1",
        kind: "TFJob",
        singular: "tfjob",
        plural: "tfjobs",
        short_names: &[],
        categories: &[],
        namespaced: true,
        has_status: true,
    },
    ResourceDef {
        group: "kubeflow.org",
        versions: &["v1"],
        storage_version: "v1",
        kind: "MPIJob",
        singular: "mpijob",
        plural: "mpijobs",
        short_names: &[],
        categories: &[],
        namespaced: true,
        has_status: true,
    },
    ResourceDef {
        group: KUEUE_GROUP,
        versions: KUEUE_VERSIONS,
        storage_version: "v1beta2",
        kind: "ResourceFlavor",
        singular: "resourceflavor",
        plural: "resourceflavors",
        short_names: &["flavor", "flavors", "rf"],
        categories: &[],
        namespaced: false,
        has_status: false,
    },
    ResourceDef {
        group: KUEUE_GROUP,
        versions: KUEUE_VERSIONS,
        storage_version: "v1beta2",
        kind: "ClusterQueue",
        singular: "clusterqueue",
        plural: "clusterqueues",
        short_names: &["cq"],
        categories: &[],
        namespaced: false,
        has_status: true,
    },
    ResourceDef {
        group: KUEUE_GROUP,
        versions: KUEUE_VERSIONS,
        storage_version: "v1beta2",
        kind: "LocalQueue",
        singular: "localqueue",
        plural: "localqueues",
        short_names: &["queue", "queues", "lq"],
        categories: &[],
        namespaced: true,
        has_status: true,
    },
    ResourceDef {
        group: KUEUE_GROUP,
        versions: KUEUE_VERSIONS,
        storage_version: "v1beta2",
        kind: "Workload",
        singular: "workload",
        plural: "workloads",
        short_names: &["wl"],
        categories: &[],
        namespaced: true,
        has_status: true,
    },
    ResourceDef {
        group: KUEUE_GROUP,
        versions: KUEUE_VERSIONS,
        storage_version: "v1beta2",
        kind: "Cohort",
        singular: "cohort",
        plural: "cohorts",
        short_names: &["co"],
        categories: &[],
        namespaced: false,
        has_status: true,
    },
    ResourceDef {
        group: KUEUE_GROUP,
        versions: KUEUE_VERSIONS,
        storage_version: "v1beta2",
        kind: "WorkloadPriorityClass",
        singular: "workloadpriorityclass",
        plural: "workloadpriorityclasses",
        short_names: &["wpc"],
        categories: &[],
        namespaced: false,
        has_status: false,
    },
];

/// All served resources.
pub fn all() -> &'static [ResourceDef] {
    RESOURCES
}

/// Looks a resource up by group and plural.
pub fn find(group: &str, plural: &str) -> Option<&'static ResourceDef> {
    RESOURCES
        .iter()
        .find(|d| d.group == group && d.plural == plural)
}

/// Looks a resource up by its key.
pub fn find_key(key: &ResourceKey) -> Option<&'static ResourceDef> {
    find(&key.group, &key.plural)
}

/// The served API groups (excluding core) in a stable order, each with its versions
/// (preferred first).
pub fn groups() -> Vec<(&'static str, &'static [&'static str])> {
    let mut out: Vec<(&'static str, &'static [&'static str])> = Vec::new();
    for d in RESOURCES.iter().filter(|d| !d.group.is_empty()) {
        if !out.iter().any(|(g, _)| *g == d.group) {
            out.push((d.group, d.versions));
        }
    }
    out
}

/// Resources served at `group/version`.
pub fn in_group_version(group: &str, version: &str) -> Vec<&'static ResourceDef> {
    RESOURCES
        .iter()
        .filter(|d| d.group == group && d.serves(version))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups() {
        let cq = find(KUEUE_GROUP, "clusterqueues").expect("cq");
        assert_eq!(cq.short_names, &["cq"]);
        assert!(cq.serves("v1beta1") && cq.serves("v1beta2"));
        assert_eq!(
            ResourceKey::WORKLOADS.qualified(),
            "workloads.kueue.x-k8s.io"
        );
        assert_eq!(ResourceKey::PODS.qualified(), "pods");
        assert!(groups().iter().any(|(g, _)| *g == "kubeflow.org"));
    }
}
