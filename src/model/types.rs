//! The compact, typed model of the objects gangplank reasons about.
//!
//! These are not full API objects: only the fields that Kueue's admission and
//! preemption decisions, the console and `doctor` need. Parsing (`model::parse`)
//! fills them from real manifests of either Kueue API version; the engine and the
//! console only ever see these types.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::quantity::Quantity;
pub use super::small_map::SmallMap;

/// Resource name → quantity (e.g. `nvidia.com/gpu` → 8). A sorted vector: a live
/// cluster holds hundreds of thousands of these, each of a few entries.
pub type ResourceList = SmallMap<String, Quantity>;

/// Label (or annotation, node selector) key → value, sorted by key.
pub type Labels = SmallMap<String, String>;

/// Milliseconds since the Unix epoch. Time enters the engine only as data.
pub type Timestamp = i64;

/// Which Kueue API version an object was written in (for `doctor` and round-trips).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KueueApiVersion {
    V1beta1,
    #[default]
    V1beta2,
}

/// Where an object came from, for error messages and findings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origin {
    /// File path, or a description such as "live cluster".
    pub source: String,
    /// Zero-based index of the YAML/JSON document within the source.
    pub document: usize,
}

// === scheduling primitives ===

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Taint {
    pub key: String,
    pub value: Option<String>,
    /// NoSchedule, PreferNoSchedule or NoExecute.
    pub effect: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Toleration {
    pub key: Option<String>,
    /// "Equal" (default) or "Exists".
    pub operator: Option<String>,
    pub value: Option<String>,
    /// Empty means every effect.
    pub effect: Option<String>,
}

impl Toleration {
    /// Kubernetes' `Toleration.ToleratesTaint`.
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if let Some(effect) = self.effect.as_deref()
            && !effect.is_empty()
            && effect != taint.effect
        {
            return false;
        }
        let key = self.key.as_deref().unwrap_or("");
        if !key.is_empty() && key != taint.key {
            return false;
        }
        match self.operator.as_deref().unwrap_or("Equal") {
            // An empty key with Exists tolerates everything.
            "Exists" => true,
            "Equal" | "" => {
                !key.is_empty()
                    && self.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or("")
            }
            _ => false,
        }
    }
}

/// One `matchExpressions` / node selector requirement.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SelectorRequirement {
    pub key: String,
    /// In, NotIn, Exists, DoesNotExist (and Gt, Lt for node selectors).
    pub operator: String,
    pub values: Vec<String>,
}

impl SelectorRequirement {
    pub fn matches(&self, labels: &Labels) -> bool {
        self.matches_value(labels.get(&self.key).map(String::as_str))
    }
}

/// A metav1 LabelSelector. `None` at the use site means "no selector" (Kueue: nothing
/// matches a ClusterQueue whose namespaceSelector is absent); an empty selector matches all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector {
    pub match_labels: Labels,
    pub match_expressions: Vec<SelectorRequirement>,
}

impl LabelSelector {
    pub fn matches(&self, labels: &Labels) -> bool {
        self.matches_with(|k| labels.get(k).map(String::as_str))
    }

    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.is_empty()
    }
}

/// Required node affinity: the terms are ORed, the requirements within a term ANDed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeAffinity {
    pub terms: Vec<Vec<SelectorRequirement>>,
}

// === Kueue objects ===

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceFlavor {
    pub name: String,
    pub node_labels: Labels,
    pub node_taints: Vec<Taint>,
    pub tolerations: Vec<Toleration>,
    pub topology_name: Option<String>,
    pub api_version: KueueApiVersion,
    pub origin: Origin,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceQuota {
    pub name: String,
    pub nominal: Quantity,
    pub borrowing_limit: Option<Quantity>,
    pub lending_limit: Option<Quantity>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlavorQuotas {
    pub name: String,
    pub resources: Vec<ResourceQuota>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceGroup {
    pub covered_resources: Vec<String>,
    pub flavors: Vec<FlavorQuotas>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum QueueingStrategy {
    #[default]
    BestEffortFifo,
    StrictFifo,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WithinClusterQueue {
    #[default]
    Never,
    LowerPriority,
    LowerOrNewerEqualPriority,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ReclaimWithinCohort {
    #[default]
    Never,
    LowerPriority,
    Any,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BorrowWithinCohortPolicy {
    #[default]
    Never,
    LowerPriority,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BorrowWithinCohort {
    pub policy: BorrowWithinCohortPolicy,
    pub max_priority_threshold: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreemptionPolicy {
    pub within_cluster_queue: WithinClusterQueue,
    pub reclaim_within_cohort: ReclaimWithinCohort,
    pub borrow_within_cohort: BorrowWithinCohort,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FungibilityPolicy {
    /// v1beta1 `Borrow` / `Preempt` are read as this.
    MayStopSearch,
    TryNextFlavor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FungibilityPreference {
    BorrowingOverPreemption,
    PreemptionOverBorrowing,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlavorFungibility {
    pub when_can_borrow: FungibilityPolicy,
    pub when_can_preempt: FungibilityPolicy,
    pub preference: Option<FungibilityPreference>,
    /// The manifest used a deprecated v1beta1 value (Borrow / Preempt).
    pub deprecated_values: Vec<String>,
}

impl Default for FlavorFungibility {
    /// Kueue's defaults: stop at the first flavor that fits even if it borrows; try
    /// the next flavor rather than preempt.
    fn default() -> Self {
        FlavorFungibility {
            when_can_borrow: FungibilityPolicy::MayStopSearch,
            when_can_preempt: FungibilityPolicy::TryNextFlavor,
            preference: None,
            deprecated_values: Vec::new(),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum StopPolicy {
    #[default]
    None,
    Hold,
    HoldAndDrain,
}

/// Per-flavor, per-resource figures as Kueue reports them in ClusterQueue status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlavorUsage {
    pub flavor: String,
    /// resource → (total, borrowed)
    pub resources: BTreeMap<String, (Quantity, Quantity)>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterQueueStatus {
    pub flavors_reservation: Vec<FlavorUsage>,
    pub flavors_usage: Vec<FlavorUsage>,
    pub pending_workloads: Option<i64>,
    pub reserving_workloads: Option<i64>,
    pub admitted_workloads: Option<i64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterQueue {
    pub name: String,
    /// `spec.cohortName` (v1beta2) or `spec.cohort` (v1beta1).
    pub cohort: Option<String>,
    /// `None`: the field is absent, and Kueue admits from no namespace.
    pub namespace_selector: Option<LabelSelector>,
    pub queueing_strategy: QueueingStrategy,
    pub resource_groups: Vec<ResourceGroup>,
    pub preemption: PreemptionPolicy,
    pub flavor_fungibility: FlavorFungibility,
    pub stop_policy: StopPolicy,
    /// `spec.fairSharing.weight` (default 1; 0: always last), used when Kueue's
    /// configuration enables fair sharing (`engine::fair`).
    pub fair_sharing_weight: Option<Quantity>,
    pub admission_checks: Vec<String>,
    pub status: Option<ClusterQueueStatus>,
    pub api_version: KueueApiVersion,
    pub origin: Origin,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cohort {
    pub name: String,
    pub parent: Option<String>,
    pub resource_groups: Vec<ResourceGroup>,
    pub fair_sharing_weight: Option<Quantity>,
    pub api_version: KueueApiVersion,
    pub origin: Origin,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LocalQueue {
    pub namespace: String,
    pub name: String,
    pub cluster_queue: String,
    pub stop_policy: StopPolicy,
    pub pending_workloads: Option<i64>,
    pub admitted_workloads: Option<i64>,
    pub api_version: KueueApiVersion,
    pub origin: Origin,
}

/// scheduling.k8s.io/v1 PriorityClass.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PriorityClass {
    pub name: String,
    pub value: i32,
    pub global_default: bool,
    pub description: Option<String>,
    pub origin: Origin,
}

/// kueue.x-k8s.io WorkloadPriorityClass.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkloadPriorityClass {
    pub name: String,
    pub value: i32,
    pub description: Option<String>,
    pub origin: Origin,
}

// === core objects ===

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Namespace {
    pub name: String,
    pub labels: Labels,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    pub labels: Labels,
    pub taints: Vec<Taint>,
    pub allocatable: ResourceList,
    pub capacity: ResourceList,
    pub unschedulable: bool,
    /// Ready condition; `true` when the manifest carries no conditions (a scenario node).
    pub ready: bool,
    pub origin: Origin,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnerReference {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
    pub controller: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pod {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub labels: Labels,
    pub annotations: Labels,
    pub owner_references: Vec<OwnerReference>,
    pub node_name: Option<String>,
    /// Pending, Running, Succeeded, Failed, Unknown.
    pub phase: String,
    /// Effective per-pod requests (Kubernetes PodRequests semantics, requests default to limits).
    pub requests: ResourceList,
    pub tolerations: Vec<Toleration>,
    pub node_selector: Labels,
    pub priority_class_name: Option<String>,
    pub creation_timestamp: Option<Timestamp>,
    pub origin: Origin,
}

// === workloads ===

/// One pod set: `count` identical pods with the same per-pod requests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodSet {
    /// Lower-case, as Kueue names them ("main", "master", "worker").
    pub name: String,
    pub count: i32,
    pub min_count: Option<i32>,
    /// Effective per-pod requests.
    pub requests: ResourceList,
    pub node_selector: Labels,
    pub required_affinity: Option<NodeAffinity>,
    pub tolerations: Vec<Toleration>,
    /// The pod template's priorityClassName, used when deriving priority from a job.
    pub priority_class_name: Option<String>,
    /// Why Kueue would refuse the template's resources (`workload.ValidateResources`,
    /// the Workload webhook's non-negative check): e.g. `template.spec.containers[0]:
    /// Invalid value: ["cpu"]: requests must not exceed its limits`. Such a Workload
    /// is inadmissible (QuotaReserved=False, reason Misconfigured).
    pub invalid: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConditionStatus {
    True,
    False,
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    /// QuotaReserved, Admitted, Evicted, Preempted, Requeued, PodsReady, Finished, ...
    pub type_: String,
    pub status: ConditionStatus,
    pub reason: String,
    pub message: String,
    pub last_transition_time: Option<Timestamp>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodSetAssignment {
    pub name: String,
    /// resource → flavor
    pub flavors: Labels,
    /// Total usage for `count` pods, frozen at admission.
    pub resource_usage: ResourceList,
    pub count: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Admission {
    pub cluster_queue: String,
    pub pod_set_assignments: Vec<PodSetAssignment>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PriorityClassKind {
    /// kueue.x-k8s.io WorkloadPriorityClass
    WorkloadPriorityClass,
    /// scheduling.k8s.io PriorityClass
    PriorityClass,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PriorityClassRef {
    pub kind: PriorityClassKind,
    pub name: String,
}

/// Whether a workload came from a Workload object or was derived from a job that
/// has no Workload yet (as Kueue's job integration would create it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum WorkloadSource {
    #[default]
    Workload,
    /// Derived from a job of this kind (e.g. "Job", "PyTorchJob").
    Job { kind: String },
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Workload {
    pub namespace: String,
    /// The Workload's name, or the job's name for a job without a Workload yet.
    pub name: String,
    pub uid: String,
    pub creation_timestamp: Timestamp,
    pub labels: Labels,
    pub annotations: Labels,
    /// LocalQueue name (`spec.queueName`, or the job's `kueue.x-k8s.io/queue-name` label).
    pub queue_name: Option<String>,
    /// Shared: Kueue's podSets are immutable once the Workload exists, so the live
    /// source gives every later version of a Workload the pod sets of the version it
    /// replaces (one copy instead of one per version while a plan holds the old one).
    pub pod_sets: Arc<[PodSet]>,
    /// Resolved priority (`spec.priority`, or derived as Kueue's job integration does).
    pub priority: i32,
    pub priority_class: Option<PriorityClassRef>,
    /// `spec.active` (default true); false = deactivated / held.
    pub active: bool,
    pub conditions: Vec<Condition>,
    pub admission: Option<Admission>,
    /// pod set name → count of pods that finished and no longer need quota.
    pub reclaimable_pods: BTreeMap<String, i32>,
    /// The owning job (controller owner reference).
    pub owner: Option<OwnerReference>,
    pub source: WorkloadSource,
    /// Set when priority derivation failed (e.g. a missing WorkloadPriorityClass): Kueue
    /// would not create the Workload; the engine keeps it pending with this reason.
    pub priority_error: Option<String>,
    pub api_version: KueueApiVersion,
    pub origin: Origin,
}

impl Workload {
    /// "namespace/name", the key used in plans and on screen.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }

    pub fn condition_true(&self, type_: &str) -> bool {
        self.condition(type_)
            .is_some_and(|c| c.status == ConditionStatus::True)
    }

    /// Holds quota: QuotaReserved=True with an admission (evicted-but-unreleased included).
    pub fn has_quota_reservation(&self) -> bool {
        self.admission.is_some() && self.condition_true("QuotaReserved")
    }

    pub fn is_finished(&self) -> bool {
        self.condition_true("Finished")
    }

    pub fn is_evicted(&self) -> bool {
        self.condition_true("Evicted")
    }

    /// Per-pod requests × count, summed over pod sets (the gang's total demand).
    pub fn total_requests(&self) -> ResourceList {
        let mut total = ResourceList::new();
        for ps in self.pod_sets.iter() {
            for (r, q) in &ps.requests {
                *total.entry(r.clone()).or_default() += *q * i64::from(ps.count);
            }
        }
        total
    }
}

/// Everything gangplank knows about a cluster at one instant: what a dump of manifests
/// or one published snapshot of the live store contains.
#[derive(Clone, Debug, Default)]
pub struct ClusterState {
    pub resource_flavors: BTreeMap<String, ResourceFlavor>,
    pub cluster_queues: BTreeMap<String, ClusterQueue>,
    pub cohorts: BTreeMap<String, Cohort>,
    /// Keyed by (namespace, name).
    pub local_queues: BTreeMap<(String, String), LocalQueue>,
    pub priority_classes: BTreeMap<String, PriorityClass>,
    pub workload_priority_classes: BTreeMap<String, WorkloadPriorityClass>,
    pub namespaces: BTreeMap<String, Namespace>,
    /// The three large maps hold shared objects: a live source's next snapshot copies
    /// pointers, not objects, so two snapshots cost one model plus the map nodes.
    /// Readers see them through `Deref`; a writer uses `Arc::make_mut`.
    pub nodes: BTreeMap<String, Arc<Node>>,
    /// Keyed by (namespace, name).
    pub pods: BTreeMap<(String, String), Arc<Pod>>,
    /// Workloads, including pending ones derived from jobs without a Workload.
    /// Keyed by (namespace, name).
    pub workloads: BTreeMap<(String, String), Arc<Workload>>,
    /// Jobs seen in the input (for `doctor`: label checks), whether or not they have a Workload.
    /// Shared like the large maps: a live source's snapshots copy pointers.
    pub jobs: Vec<Arc<JobInfo>>,
    /// Kueue's own configuration, when the input has it (the ConfigMap
    /// `kueue-system/kueue-manager-config`, or `plan --kueue-config`); `None`: unknown,
    /// the engine assumes Kueue's defaults and says so.
    pub kueue_config: Option<crate::model::kueue_config::KueueConfig>,
    /// Things that were skipped or approximated while reading, in words.
    pub warnings: Vec<String>,
}

/// A batch job (Job, PyTorchJob, ...) as `doctor` and the console need it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobInfo {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub labels: Labels,
    pub annotations: Labels,
    pub suspended: bool,
    pub pod_sets: Vec<PodSet>,
    /// `metadata.creationTimestamp`. Hand-written files without one get a deterministic
    /// timestamp in document order when parsed (see `model::parse`).
    pub creation_timestamp: Option<Timestamp>,
    pub origin: Origin,
    /// The job has finished (Job `Complete`/`Failed`, Kubeflow `Succeeded`/`Failed`,
    /// JobSet `Completed`/`Failed`); Kueue creates no Workload for it.
    pub finished: bool,
    /// An integration-level priority class name that takes precedence over the pod
    /// templates' (Kubeflow `spec.runPolicy.schedulingPolicy.priorityClass`).
    pub custom_priority_class: Option<String>,
}
