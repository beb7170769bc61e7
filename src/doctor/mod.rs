//! `gangplank doctor`: pure configuration and health checks over a [`ClusterState`].
//!
//! No I/O, no clock: the current time arrives as [`DoctorOptions::now`], so the CLI
//! (`doctor -f` / `--live`) and the console's Health view call the same [`run`] and get
//! the same deterministic [`Report`]. Check ids are stable (see [`CHECK_IDS`] and
//! `docs/doctor.md`); the JSON shape is the issue-7 contract (see [`finding`]).
//!
//! One file per check family: [`nodes`], [`jobs`], [`queues`], [`requests`],
//! [`capacity`], [`priority`], [`gang`], [`api`]. Shared lookups live in [`context`],
//! quota-tree arithmetic (max admissible per flavor) in [`quota`].

pub mod api;
pub mod capacity;
pub mod context;
pub mod finding;
pub mod gang;
pub mod jobs;
pub mod kueue_config;
pub mod nodes;
pub mod priority;
pub mod queues;
pub mod quota;
mod render;
pub mod requests;

pub use context::Context;
pub use finding::{Finding, Report, Severity, SeverityParseError};

use crate::model::{ClusterState, KueueApiVersion, Timestamp};

pub use crate::model::well_known::{MANAGED_LABEL, PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL};

/// Accelerator resources looked for by default (`DoctorOptions::accelerator_resources`);
/// a trailing `*` matches any suffix (`nvidia.com/mig-*`).
pub use crate::model::well_known::ACCELERATOR_RESOURCES as DEFAULT_ACCELERATOR_RESOURCES;

/// Default for [`DoctorOptions::pending_pod_threshold_ms`]: 10 minutes.
pub const DEFAULT_PENDING_POD_THRESHOLD_MS: i64 = 10 * 60 * 1000;

/// Stable check ids, kebab-case. Every one is documented in `docs/doctor.md`.
pub mod ids {
    pub const GPU_NODE_UNTAINTED: &str = "gpu-node-untainted";
    pub const POD_BYPASSES_QUEUE_ON_GPU_NODE: &str = "pod-bypasses-queue-on-gpu-node";
    pub const GPU_POD_OUTSIDE_QUEUE: &str = "gpu-pod-outside-queue";
    pub const JOB_MISSING_QUEUE_LABEL: &str = "job-missing-queue-label";
    pub const JOB_UNKNOWN_LOCAL_QUEUE: &str = "job-unknown-local-queue";
    pub const LOCALQUEUE_MISSING_CLUSTERQUEUE: &str = "localqueue-missing-clusterqueue";
    pub const CLUSTERQUEUE_MISSING_FLAVOR: &str = "clusterqueue-missing-flavor";
    pub const NAMESPACE_EXCLUDED_BY_SELECTOR: &str = "namespace-excluded-by-selector";
    pub const NAMESPACE_SELECTOR_ABSENT: &str = "namespace-selector-absent";
    pub const WORKLOAD_UNCOVERED_RESOURCE: &str = "workload-uncovered-resource";
    pub const WORKLOAD_EXCEEDS_MAX_QUOTA: &str = "workload-exceeds-max-quota";
    pub const FLAVOR_QUOTA_EXCEEDS_CAPACITY: &str = "flavor-quota-exceeds-capacity";
    pub const FLAVOR_IDLE_CAPACITY: &str = "flavor-idle-capacity";
    pub const FLAVOR_MATCHES_NO_NODE: &str = "flavor-matches-no-node";
    pub const FLAVOR_TAINTS_NOT_TOLERATED: &str = "flavor-taints-not-tolerated";
    pub const MULTIPLE_GLOBAL_DEFAULT_PRIORITYCLASSES: &str =
        "multiple-global-default-priorityclasses";
    pub const UNKNOWN_PRIORITY_CLASS: &str = "unknown-priority-class";
    pub const PRIORITY_WITHOUT_PREEMPTION: &str = "priority-without-preemption";
    pub const ADMITTED_PODS_PENDING: &str = "admitted-pods-pending";
    pub const GPU_FRAGMENTATION: &str = "gpu-fragmentation";
    pub const POD_LARGER_THAN_ANY_NODE: &str = "pod-larger-than-any-node";
    pub const DEPRECATED_API_FIELD: &str = "deprecated-api-field";
    pub const DEPRECATED_FUNGIBILITY_VALUE: &str = "deprecated-fungibility-value";
    pub const API_VERSION_NOT_SERVED: &str = "api-version-not-served";
    pub const KUEUE_CONFIGURATION: &str = "kueue-configuration";
    pub const FAIR_SHARING_WEIGHT_UNUSED: &str = "fair-sharing-weight-unused";
}

/// Every check id `run` can emit, in documentation order.
pub const CHECK_IDS: &[&str] = &[
    ids::GPU_NODE_UNTAINTED,
    ids::POD_BYPASSES_QUEUE_ON_GPU_NODE,
    ids::GPU_POD_OUTSIDE_QUEUE,
    ids::JOB_MISSING_QUEUE_LABEL,
    ids::JOB_UNKNOWN_LOCAL_QUEUE,
    ids::LOCALQUEUE_MISSING_CLUSTERQUEUE,
    ids::CLUSTERQUEUE_MISSING_FLAVOR,
    ids::NAMESPACE_EXCLUDED_BY_SELECTOR,
    ids::NAMESPACE_SELECTOR_ABSENT,
    ids::WORKLOAD_UNCOVERED_RESOURCE,
    ids::WORKLOAD_EXCEEDS_MAX_QUOTA,
    ids::FLAVOR_QUOTA_EXCEEDS_CAPACITY,
    ids::FLAVOR_IDLE_CAPACITY,
    ids::FLAVOR_MATCHES_NO_NODE,
    ids::FLAVOR_TAINTS_NOT_TOLERATED,
    ids::MULTIPLE_GLOBAL_DEFAULT_PRIORITYCLASSES,
    ids::UNKNOWN_PRIORITY_CLASS,
    ids::PRIORITY_WITHOUT_PREEMPTION,
    ids::ADMITTED_PODS_PENDING,
    ids::GPU_FRAGMENTATION,
    ids::POD_LARGER_THAN_ANY_NODE,
    ids::DEPRECATED_API_FIELD,
    ids::DEPRECATED_FUNGIBILITY_VALUE,
    ids::API_VERSION_NOT_SERVED,
    ids::KUEUE_CONFIGURATION,
    ids::FAIR_SHARING_WEIGHT_UNUSED,
];

/// Inputs to the checks besides the cluster state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DoctorOptions {
    /// The current time (ms since the epoch); the only clock the checks see.
    pub now: Timestamp,
    /// Extended resources that mark a node as an accelerator (GPU) node.
    pub accelerator_resources: Vec<String>,
    /// How long pods of an admitted workload may stay Pending before
    /// `admitted-pods-pending` fires.
    pub pending_pod_threshold_ms: i64,
    /// The Kueue API version the cluster serves as storage version, when known.
    /// `Some(V1beta2)` enables `deprecated-api-field` for objects written in v1beta1;
    /// `Some(V1beta1)` flags objects written in v1beta2 (`api-version-not-served`).
    pub served_kueue_version: Option<KueueApiVersion>,
}

impl Default for DoctorOptions {
    fn default() -> Self {
        DoctorOptions {
            now: 0,
            accelerator_resources: DEFAULT_ACCELERATOR_RESOURCES
                .iter()
                .map(|s| s.to_string())
                .collect(),
            pending_pod_threshold_ms: DEFAULT_PENDING_POD_THRESHOLD_MS,
            served_kueue_version: None,
        }
    }
}

impl DoctorOptions {
    /// Defaults with the given current time.
    pub fn at(now: Timestamp) -> Self {
        DoctorOptions {
            now,
            ..DoctorOptions::default()
        }
    }
}

/// Runs every check over `state` and returns the sorted, de-duplicated report.
///
/// Pure and deterministic: the same state and options always give the same report,
/// whatever order the input objects were read in.
pub fn run(state: &ClusterState, opts: &DoctorOptions) -> Report {
    let ctx = Context::new(state, opts);
    let mut out = Vec::new();
    nodes::check(&ctx, &mut out);
    jobs::check(&ctx, &mut out);
    queues::check(&ctx, &mut out);
    requests::check(&ctx, &mut out);
    capacity::check(&ctx, &mut out);
    priority::check(&ctx, &mut out);
    gang::check(&ctx, &mut out);
    api::check(&ctx, &mut out);
    kueue_config::check(&ctx, &mut out);
    Report::new(out)
}
