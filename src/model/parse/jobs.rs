//! Batch jobs (batch/v1 Job, Kubeflow PyTorchJob/TFJob/MPIJob/..., JobSet) read into
//! [`JobInfo`] with the pod sets Kueue's job integrations would build.

use super::error::FieldResult;
use super::meta::Meta;
use super::notes::Notes;
use super::podspec::{TemplateNotes, pod_set_from_template};
use super::value::At;
use super::workload::{MATCH_FIELDS, RUNTIME_CLASS, TOPOLOGY_REQUEST, conditions};
use serde_json::Value;

use crate::model::types::*;

use crate::model::well_known::JOB_MIN_PARALLELISM_ANNOTATION as MIN_PARALLELISM;

/// Note for replica types Kueue does not turn into pod sets.
pub(crate) const IGNORED_REPLICA: &str =
    "replica types Kueue does not know are ignored (no pod set built)";

/// The replica-spec field and Kueue's ordered replica types of a Kubeflow job kind
/// (`OrderedReplicaTypes` in Kueue's kubeflow integrations). `None` for other kinds.
pub fn kubeflow_replicas(kind: &str) -> Option<(&'static str, &'static [&'static str])> {
    Some(match kind {
        "PyTorchJob" => ("pytorchReplicaSpecs", &["Master", "Worker"]),
        "TFJob" => (
            "tfReplicaSpecs",
            &["Chief", "Master", "PS", "Worker", "Evaluator"],
        ),
        "XGBoostJob" => ("xgbReplicaSpecs", &["Master", "Worker"]),
        "PaddleJob" => ("paddleReplicaSpecs", &["Master", "Worker"]),
        "JAXJob" => ("jaxReplicaSpecs", &["Worker"]),
        "MPIJob" => ("mpiReplicaSpecs", &["Launcher", "Worker"]),
        _ => return None,
    })
}

fn record_template_notes(notes: &mut Notes, t: TemplateNotes, subject: &str) {
    if t.topology_request {
        notes.note(TOPOLOGY_REQUEST, subject);
    }
    if t.match_fields {
        notes.note(MATCH_FIELDS, subject);
    }
    if t.runtime_class_without_overhead {
        notes.note(RUNTIME_CLASS, subject);
    }
}

fn any_condition_true(status: Option<At>, types: &[&str]) -> FieldResult<bool> {
    let Some(status) = status else {
        return Ok(false);
    };
    Ok(conditions(&status)?
        .iter()
        .any(|c| types.contains(&c.type_.as_str()) && c.status == ConditionStatus::True))
}

/// Pod count of a batch Job spec: parallelism (default 1), clamped to completions.
fn job_pod_count(spec: &At) -> FieldResult<i32> {
    let parallelism = spec.opt_count("parallelism")?.unwrap_or(1);
    Ok(match spec.opt_count("completions")? {
        Some(c) if c < parallelism => c,
        _ => parallelism,
    })
}

fn empty_info(
    api_version: &str,
    kind: &str,
    meta: &Meta,
    origin: Origin,
    ts: Timestamp,
) -> JobInfo {
    JobInfo {
        api_version: api_version.to_string(),
        kind: kind.to_string(),
        namespace: meta.namespace_or_default(),
        name: meta.name.clone(),
        uid: meta.uid.clone(),
        labels: meta.labels.clone(),
        annotations: meta.annotations.clone(),
        suspended: false,
        pod_sets: Vec::new(),
        creation_timestamp: Some(meta.creation_timestamp.unwrap_or(ts)),
        origin,
        finished: false,
        custom_priority_class: None,
    }
}

/// One pod set of a job before it is read: Kueue's name for it, its pod count and its
/// pod template.
struct PodSetSource<'v> {
    name: String,
    count: i32,
    template: At<'v>,
}

/// Kueue's pod sets of a job, in Kueue's order (`JobSet`: one per replicated job;
/// Kubeflow: the known replica types in `OrderedReplicaTypes`; other kinds: none).
fn pod_set_sources<'v>(kind: &str, spec: &At<'v>) -> FieldResult<Vec<PodSetSource<'v>>> {
    let mut out = Vec::new();
    match kind {
        "Job" => out.push(PodSetSource {
            name: "main".into(),
            count: job_pod_count(spec)?,
            template: spec.req("template")?,
        }),
        "JobSet" => {
            for rj in spec.opt_list("replicatedJobs")? {
                let replicas = rj.opt_count("replicas")?.unwrap_or(1);
                let job_spec = rj.req("template")?.req("spec")?;
                out.push(PodSetSource {
                    name: rj.req_str("name")?.to_string(),
                    count: replicas.saturating_mul(job_pod_count(&job_spec)?),
                    template: job_spec.req("template")?,
                });
            }
        }
        _ => {
            let Some((field, ordered)) = kubeflow_replicas(kind) else {
                return Ok(out);
            };
            let replica_specs = spec.req(field)?;
            for replica_type in ordered {
                let Some(rs) = replica_specs.opt(replica_type)? else {
                    continue;
                };
                out.push(PodSetSource {
                    name: replica_type.to_lowercase(),
                    count: rs.opt_count("replicas")?.unwrap_or(1),
                    template: rs.req("template")?,
                });
            }
        }
    }
    Ok(out)
}

/// Kueue's pod sets of a job object of `kind` as (name, count, pod template), in
/// Kueue's order: what a Workload's `spec.podSets` holds. The simulator builds its
/// Workloads and pods from these, so it reads a job as the engine does. Errors name
/// the field.
pub fn job_pod_templates(kind: &str, job: &Value) -> Result<Vec<(String, i32, Value)>, String> {
    let root = At::root(job, "");
    root.req("spec")
        .and_then(|spec| pod_set_sources(kind, &spec))
        .map(|sources| {
            sources
                .into_iter()
                .map(|s| (s.name, s.count, s.template.v.clone()))
                .collect()
        })
        .map_err(|e| format!("{}: {}", e.path, e.message))
}

/// Reads a job of a supported kind. `fallback_timestamp` is used when the manifest has
/// no `metadata.creationTimestamp`.
pub(crate) fn job(
    root: &At,
    meta: &Meta,
    api_version: &str,
    kind: &str,
    origin: Origin,
    fallback_timestamp: Timestamp,
    notes: &mut Notes,
) -> FieldResult<JobInfo> {
    let mut info = empty_info(api_version, kind, meta, origin, fallback_timestamp);
    let subject = format!("{kind}/{}/{}", info.namespace, meta.name);
    let spec = root.req("spec")?;
    let status = root.opt("status")?;
    for source in pod_set_sources(kind, &spec)? {
        let (ps, t) = pod_set_from_template(&source.name, source.count, &source.template)?;
        record_template_notes(notes, t, &subject);
        info.pod_sets.push(ps);
    }
    match kind {
        "Job" => {
            if let Some(text) = meta.annotations.get(MIN_PARALLELISM) {
                let md = root
                    .req("metadata")?
                    .req("annotations")?
                    .req(MIN_PARALLELISM)?;
                info.pod_sets[0].min_count = Some(
                    text.parse::<i32>()
                        .map_err(|_| md.err(format!("expected an integer, found {text:?}")))?,
                );
            }
            info.suspended = spec.opt_bool("suspend")?.unwrap_or(false);
            info.finished = any_condition_true(status, &["Complete", "Failed"])?;
        }
        "JobSet" => {
            info.suspended = spec.opt_bool("suspend")?.unwrap_or(false);
            info.finished = any_condition_true(status, &["Completed", "Failed"])?;
        }
        _ => {
            let Some((field, ordered)) = kubeflow_replicas(kind) else {
                return Ok(info);
            };
            for (replica_type, _) in spec.req(field)?.entries()? {
                if !ordered.contains(&replica_type) {
                    notes.note(IGNORED_REPLICA, format!("{subject} {replica_type}"));
                }
            }
            if let Some(run_policy) = spec.opt("runPolicy")? {
                info.suspended = run_policy.opt_bool("suspend")?.unwrap_or(false);
                if let Some(sp) = run_policy.opt("schedulingPolicy")? {
                    info.custom_priority_class =
                        sp.opt_string("priorityClass")?.filter(|p| !p.is_empty());
                }
            }
            info.finished = any_condition_true(status, &["Succeeded", "Failed"])?;
        }
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Quantity;
    use crate::model::parse::meta::read_meta;
    use serde_json::json;

    fn parse(kind: &str, v: serde_json::Value) -> FieldResult<JobInfo> {
        let root = At::root(&v, "");
        let meta = read_meta(&root)?;
        job(
            &root,
            &meta,
            "x/v1",
            kind,
            Origin::default(),
            7,
            &mut Notes::default(),
        )
    }

    fn tmpl(gpus: i64) -> serde_json::Value {
        json!({"spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": gpus}}}]}})
    }

    #[test]
    fn batch_job_count_clamped_and_min_parallelism() {
        let j = parse(
            "Job",
            json!({"metadata": {"name": "j", "annotations": {MIN_PARALLELISM: "2"}},
            "spec": {"parallelism": 5, "completions": 3, "suspend": true, "template": tmpl(1)}}),
        )
        .unwrap();
        assert_eq!(j.pod_sets[0].name, "main");
        assert_eq!(j.pod_sets[0].count, 3);
        assert_eq!(j.pod_sets[0].min_count, Some(2));
        assert!(j.suspended);
        assert_eq!(j.creation_timestamp, Some(7));
    }

    #[test]
    fn pytorch_master_first_then_worker() {
        let j = parse(
            "PyTorchJob",
            json!({"metadata": {"name": "p"}, "spec": {"pytorchReplicaSpecs": {
            "Worker": {"replicas": 3, "template": tmpl(8)}, "Master": {"template": tmpl(8)}},
            "runPolicy": {"schedulingPolicy": {"priorityClass": "hi"}}}}),
        )
        .unwrap();
        let names: Vec<_> = j
            .pod_sets
            .iter()
            .map(|p| (p.name.as_str(), p.count))
            .collect();
        assert_eq!(names, vec![("master", 1), ("worker", 3)]);
        assert_eq!(
            j.pod_sets[1].requests["nvidia.com/gpu"],
            Quantity::from_units(8)
        );
        assert_eq!(j.custom_priority_class.as_deref(), Some("hi"));
    }

    #[test]
    fn tfjob_order_and_finished() {
        let j = parse(
            "TFJob",
            json!({"metadata": {"name": "t"}, "spec": {"tfReplicaSpecs": {
            "Worker": {"template": tmpl(1)}, "PS": {"replicas": 2, "template": tmpl(0)},
            "Chief": {"template": tmpl(1)}}},
            "status": {"conditions": [{"type": "Succeeded", "status": "True"}]}}),
        )
        .unwrap();
        let names: Vec<_> = j.pod_sets.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, vec!["chief", "ps", "worker"]);
        assert!(j.finished);
    }

    #[test]
    fn jobset_pod_sets() {
        let j = parse("JobSet", json!({"metadata": {"name": "s"}, "spec": {"replicatedJobs": [
            {"name": "workers", "replicas": 2, "template": {"spec": {"parallelism": 4, "template": tmpl(8)}}}]}}))
        .unwrap();
        assert_eq!(
            (j.pod_sets[0].name.as_str(), j.pod_sets[0].count),
            ("workers", 8)
        );
    }

    #[test]
    fn replica_specs_must_be_an_object() {
        let e = parse(
            "PyTorchJob",
            json!({"metadata": {"name": "p"}, "spec": {"pytorchReplicaSpecs": "Master"}}),
        )
        .unwrap_err();
        assert_eq!(e.path, "spec.pytorchReplicaSpecs");
        assert_eq!(e.message, "expected an object, found a string");
    }
}
