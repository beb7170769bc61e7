//! Jobs in the simulator: the integrated kinds (batch/v1 Job, Kubeflow PyTorchJob,
//! TFJob, MPIJob) and their helpers here; Kueue's job integration (the Workload a
//! queued job gets, suspension while it is not admitted, priority propagation, the
//! reactions to its Workload) in [`kueue_integration`]; the job's simulated run (start
//! on admission, stop on eviction, completion after its `sim.gangplank.io/duration`)
//! in [`runtime`].

mod kueue_integration;
mod runtime;

use serde_json::{Value, json};

use crate::model::PriorityClassKind;
use crate::model::parse::{job_pod_templates, kubeflow_replicas};
use crate::sim::resources::{KUEUE_GROUP, ResourceKey};

use super::ObjRef;
use super::events::Reporter;
use super::json::{self, condition_true};

/// A job kind Kueue integrates with.
#[derive(Debug)]
pub(crate) struct JobKind {
    pub res: ResourceKey,
    pub kind: &'static str,
    pub api_version: &'static str,
    /// Kueue's integration name (`batch/job`, `kubeflow.org/pytorchjob`).
    pub integration: &'static str,
    /// The job's own controller, as it signs its events.
    pub operator: &'static str,
}

impl JobKind {
    /// Whether the job has Kubeflow replica specs (`runPolicy`, replica-type labels,
    /// `Created`/`Running`/`Succeeded` conditions) rather than a batch Job's spec.
    pub fn is_kubeflow(&self) -> bool {
        kubeflow_replicas(self.kind).is_some()
    }
}

/// Kueue's job reconciler for `kind`, as it signs its events.
pub(crate) fn kueue_reporter(kind: &JobKind) -> Reporter<'static> {
    Reporter::KueueJob(kind.integration)
}

/// The integrated job kinds.
pub(crate) const JOB_RESOURCES: &[JobKind] = &[
    JobKind {
        res: ResourceKey::JOBS,
        kind: "Job",
        api_version: "batch/v1",
        integration: "batch/job",
        operator: "job-controller",
    },
    JobKind {
        res: ResourceKey::PYTORCH_JOBS,
        kind: "PyTorchJob",
        api_version: "kubeflow.org/v1",
        integration: "kubeflow.org/pytorchjob",
        operator: "pytorchjob-controller",
    },
    JobKind {
        res: ResourceKey::new_static("kubeflow.org", "tfjobs"),
        kind: "TFJob",
        api_version: "kubeflow.org/v1",
        integration: "kubeflow.org/tfjob",
        operator: "tfjob-controller",
    },
    JobKind {
        res: ResourceKey::new_static("kubeflow.org", "mpijobs"),
        kind: "MPIJob",
        api_version: "kubeflow.org/v1",
        integration: "kubeflow.org/mpijob",
        operator: "mpijob-controller",
    },
];

/// The integration for a resource, if it is a job kind.
pub(crate) fn job_kind(res: &ResourceKey) -> Option<&'static JobKind> {
    JOB_RESOURCES.iter().find(|k| k.res == *res)
}

/// The integration for a `kind` (owner references name kinds).
pub(crate) fn job_kind_by_name(kind: &str) -> Option<&'static JobKind> {
    JOB_RESOURCES.iter().find(|k| k.kind == kind)
}

fn suspend_path(kind: &JobKind) -> &'static [&'static str] {
    if kind.is_kubeflow() {
        &["spec", "runPolicy"]
    } else {
        &["spec"]
    }
}

pub(crate) fn is_suspended(kind: &JobKind, job: &Value) -> bool {
    let ptr = if kind.is_kubeflow() {
        "/spec/runPolicy/suspend"
    } else {
        "/spec/suspend"
    };
    job.pointer(ptr).and_then(Value::as_bool).unwrap_or(false)
}

fn is_finished(job: &Value) -> bool {
    ["Complete", "Failed", "Succeeded"]
        .iter()
        .any(|t| condition_true(job, t))
}

/// Kueue's pod sets for a job as a Workload's `spec.podSets` holds them (lower-case
/// names, counts and templates), read by the model's parser as the engine reads jobs.
pub(crate) fn raw_pod_sets(kind: &JobKind, job: &Value) -> Result<Vec<Value>, String> {
    Ok(job_pod_templates(kind.kind, job)?
        .into_iter()
        .map(|(name, count, template)| json!({"name": name, "count": count, "template": template}))
        .collect())
}

/// The controlling job of a Workload, from its owner references.
pub(crate) fn owner_job(wl: &Value) -> Option<ObjRef> {
    let ns = json::namespace(wl).to_string();
    wl.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)?
        .iter()
        .find(|o| o.get("controller").and_then(Value::as_bool) == Some(true))
        .and_then(|o| {
            let kind = job_kind_by_name(o.get("kind")?.as_str()?)?;
            Some(ObjRef {
                res: kind.res.clone(),
                ns: ns.clone(),
                name: o.get("name")?.as_str()?.to_string(),
            })
        })
}

fn priority_ref_json(kind: PriorityClassKind, name: &str) -> Value {
    match kind {
        PriorityClassKind::WorkloadPriorityClass => {
            json!({"group": KUEUE_GROUP, "kind": "WorkloadPriorityClass", "name": name})
        }
        PriorityClassKind::PriorityClass => {
            json!({"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": name})
        }
    }
}
