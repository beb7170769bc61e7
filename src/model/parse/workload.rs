//! Workload objects (v1beta1 and v1beta2).

use std::collections::BTreeMap;

use super::error::FieldResult;
use super::meta::Meta;
use super::notes::Notes;
use super::podspec::pod_set_from_template;
use super::value::At;
use crate::model::types::*;

/// Note for topology requests (TAS), which the engine does not model.
pub(crate) const TOPOLOGY_REQUEST: &str =
    "topology-aware scheduling requests ignored (TAS is not modeled)";
/// Note for node affinity `matchFields`, which are not modeled.
pub(crate) const MATCH_FIELDS: &str = "node affinity matchFields ignored";
/// Note for RuntimeClass overhead gangplank cannot fill in.
pub(crate) const RUNTIME_CLASS: &str =
    "runtimeClassName without overhead: RuntimeClass overhead not added to requests";

/// A Workload read from a manifest, plus whether `spec.priority` was given.
#[derive(Debug)]
pub(crate) struct ParsedWorkload {
    pub workload: Workload,
    /// `spec.priority` was absent; finalization may resolve it from the class.
    pub priority_missing: bool,
}

fn priority_class_ref(spec: &At) -> FieldResult<Option<PriorityClassRef>> {
    // v1beta2: priorityClassRef{group, kind, name}
    if let Some(r) = spec.opt("priorityClassRef")? {
        let name = r.req_str("name")?.to_string();
        let kind_at = r.opt("kind")?;
        let kind = match (r.opt_str("kind")?, r.opt_str("group")?) {
            (Some("WorkloadPriorityClass"), _) | (None, Some("kueue.x-k8s.io")) => {
                PriorityClassKind::WorkloadPriorityClass
            }
            (Some("PriorityClass"), _) | (None, Some("scheduling.k8s.io")) => {
                PriorityClassKind::PriorityClass
            }
            (Some(other), _) => {
                let at = kind_at.unwrap_or(r);
                return Err(at.err(format!(
                    "unknown value {other:?} (expected one of: WorkloadPriorityClass, PriorityClass)"
                )));
            }
            (None, _) => return Err(r.err("priorityClassRef needs a kind or group")),
        };
        return Ok(Some(PriorityClassRef { kind, name }));
    }
    // v1beta1: priorityClassName + priorityClassSource
    let Some(name) = spec.opt_str("priorityClassName")?.filter(|n| !n.is_empty()) else {
        return Ok(None);
    };
    let kind = spec
        .opt_enum(
            "priorityClassSource",
            &[
                (
                    crate::model::well_known::WORKLOAD_PRIORITY_CLASS_SOURCE,
                    PriorityClassKind::WorkloadPriorityClass,
                ),
                (
                    "scheduling.k8s.io/priorityclass",
                    PriorityClassKind::PriorityClass,
                ),
                ("", PriorityClassKind::PriorityClass),
            ],
        )?
        .unwrap_or(PriorityClassKind::PriorityClass);
    Ok(Some(PriorityClassRef {
        kind,
        name: name.to_string(),
    }))
}

fn condition(c: &At) -> FieldResult<Condition> {
    let status = c
        .opt_enum(
            "status",
            &[
                ("True", ConditionStatus::True),
                ("False", ConditionStatus::False),
                ("Unknown", ConditionStatus::Unknown),
            ],
        )?
        .unwrap_or(ConditionStatus::Unknown);
    Ok(Condition {
        type_: c.req_str("type")?.to_string(),
        status,
        reason: c.str_or_empty("reason")?,
        message: c.str_or_empty("message")?,
        last_transition_time: c.opt_timestamp("lastTransitionTime")?,
    })
}

/// `status.conditions` of a Workload (also used for jobs' finished checks).
pub(crate) fn conditions(status: &At) -> FieldResult<Vec<Condition>> {
    status
        .opt_list("conditions")?
        .iter()
        .map(condition)
        .collect()
}

fn admission(a: &At) -> FieldResult<Admission> {
    let pod_set_assignments = a
        .opt_list("podSetAssignments")?
        .iter()
        .map(|p| {
            Ok(PodSetAssignment {
                name: p.req_str("name")?.to_string(),
                flavors: p.string_map("flavors")?,
                resource_usage: p.resource_list("resourceUsage")?,
                count: p.opt_count("count")?,
            })
        })
        .collect::<FieldResult<Vec<_>>>()?;
    Ok(Admission {
        cluster_queue: a.req_str("clusterQueue")?.to_string(),
        pod_set_assignments,
    })
}

/// A Workload; `creation_timestamp` is the fallback when metadata has none.
pub(crate) fn workload(
    root: &At,
    meta: &Meta,
    api_version: KueueApiVersion,
    origin: Origin,
    fallback_timestamp: Timestamp,
    notes: &mut Notes,
) -> FieldResult<ParsedWorkload> {
    let namespace = meta.namespace_or_default();
    let subject = format!("Workload/{namespace}/{}", meta.name);
    let spec = root.req("spec")?;
    let mut pod_sets = Vec::new();
    for p in spec.opt_list("podSets")? {
        let name = p.opt_str("name")?.unwrap_or("main");
        let count = p.opt_count("count")?.unwrap_or(1);
        let (mut ps, tnotes) = pod_set_from_template(name, count, &p.req("template")?)?;
        ps.min_count = p.opt_count("minCount")?;
        if tnotes.topology_request || p.opt("topologyRequest")?.is_some() {
            notes.note(TOPOLOGY_REQUEST, subject.clone());
        }
        if tnotes.match_fields {
            notes.note(MATCH_FIELDS, subject.clone());
        }
        if tnotes.runtime_class_without_overhead {
            notes.note(RUNTIME_CLASS, subject.clone());
        }
        pod_sets.push(ps);
    }
    let priority = spec.opt_i32("priority")?;
    let mut wl = Workload {
        namespace,
        name: meta.name.clone(),
        uid: meta.uid.clone(),
        creation_timestamp: meta.creation_timestamp.unwrap_or(fallback_timestamp),
        labels: meta.labels.clone(),
        annotations: meta.annotations.clone(),
        queue_name: spec.opt_string("queueName")?.filter(|q| !q.is_empty()),
        pod_sets: pod_sets.into(),
        priority: priority.unwrap_or(0),
        priority_class: priority_class_ref(&spec)?,
        active: spec.opt_bool("active")?.unwrap_or(true),
        conditions: Vec::new(),
        admission: None,
        reclaimable_pods: BTreeMap::new(),
        owner: meta.owner(),
        source: WorkloadSource::Workload,
        priority_error: None,
        api_version,
        origin,
    };
    if let Some(status) = root.opt("status")? {
        wl.conditions = conditions(&status)?;
        wl.admission = status
            .opt("admission")?
            .map(|a| admission(&a))
            .transpose()?;
        for r in status.opt_list("reclaimablePods")? {
            wl.reclaimable_pods
                .insert(r.req_str("name")?.to_string(), r.req_i32("count")?);
        }
    }
    Ok(ParsedWorkload {
        workload: wl,
        priority_missing: priority.is_none(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Quantity;
    use crate::model::parse::meta::read_meta;
    use serde_json::json;

    fn parse(v: serde_json::Value) -> FieldResult<ParsedWorkload> {
        let root = At::root(&v, "");
        let meta = read_meta(&root)?;
        workload(
            &root,
            &meta,
            KueueApiVersion::V1beta2,
            Origin::default(),
            42,
            &mut Notes::default(),
        )
    }

    #[test]
    fn v1beta2_workload_with_status() {
        let p = parse(json!({"metadata": {"name": "w", "namespace": "ns"},
            "spec": {"queueName": "lq", "priority": 100,
                "priorityClassRef": {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "hi"},
                "podSets": [{"name": "worker", "count": 4, "template": {"spec": {"containers": [
                    {"resources": {"limits": {"nvidia.com/gpu": 8}}}]}}}]},
            "status": {"conditions": [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
                "message": "", "lastTransitionTime": "2024-01-01T00:00:01Z"}],
                "admission": {"clusterQueue": "cq", "podSetAssignments": [{"name": "worker",
                    "flavors": {"nvidia.com/gpu": "a100"}, "resourceUsage": {"nvidia.com/gpu": "32"}, "count": 4}]},
                "reclaimablePods": [{"name": "worker", "count": 1}]}}))
        .unwrap();
        let w = p.workload;
        assert!(!p.priority_missing);
        assert_eq!(w.creation_timestamp, 42);
        assert_eq!(w.priority, 100);
        assert_eq!(
            w.priority_class.as_ref().unwrap().kind,
            PriorityClassKind::WorkloadPriorityClass
        );
        assert!(w.has_quota_reservation());
        assert_eq!(
            w.conditions[0].last_transition_time,
            Some(1_704_067_201_000)
        );
        assert_eq!(
            w.total_requests()["nvidia.com/gpu"],
            Quantity::from_units(32)
        );
        assert_eq!(w.reclaimable_pods["worker"], 1);
        assert!(w.active);
    }

    #[test]
    fn v1beta1_priority_source_and_inactive() {
        let p = parse(json!({"metadata": {"name": "w"}, "spec": {"active": false,
            "priorityClassName": "boss", "priorityClassSource": "scheduling.k8s.io/priorityclass",
            "podSets": []}}))
        .unwrap();
        assert!(p.priority_missing);
        assert!(!p.workload.active);
        let r = p.workload.priority_class.unwrap();
        assert_eq!(
            (r.kind, r.name.as_str()),
            (PriorityClassKind::PriorityClass, "boss")
        );
    }

    #[test]
    fn bad_condition_status_names_path() {
        let e = parse(json!({"metadata": {"name": "w"}, "spec": {},
            "status": {"conditions": [{"type": "Admitted", "status": "Yes"}]}}))
        .unwrap_err();
        assert_eq!(e.path, "status.conditions[0].status");
    }
}
