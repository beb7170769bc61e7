//! Pod specs and templates: effective requests (Kubernetes `PodRequests`),
//! tolerations, node selectors and required node affinity.

use super::error::FieldResult;
use super::value::At;
use crate::model::quantity::Quantity;
use crate::model::types::{
    NodeAffinity, PodSet, ResourceList, SelectorRequirement, Taint, Toleration,
};
use crate::model::well_known::TOPOLOGY_ANNOTATIONS as TAS_ANNOTATIONS;

/// Pod-level `spec.resources` may only set these (Kubernetes `IsSupportedPodLevelResource`).
fn pod_level_supported(resource: &str) -> bool {
    resource == "cpu" || resource == "memory" || resource.starts_with("hugepages-")
}

/// A container's requests, with missing requests defaulted from limits.
fn container_requests(resources: Option<&At>) -> FieldResult<ResourceList> {
    let Some(res) = resources else {
        return Ok(ResourceList::new());
    };
    let mut requests = res.resource_list("requests")?;
    for (name, limit) in res.resource_list("limits")? {
        requests.entry(name).or_insert(limit);
    }
    Ok(requests)
}

fn add_into(into: &mut ResourceList, add: &ResourceList) {
    for (name, q) in add {
        *into.entry(name.clone()).or_default() += *q;
    }
}

fn max_into(into: &mut ResourceList, other: &ResourceList) {
    for (name, q) in other {
        let slot = into.entry(name.clone()).or_default();
        *slot = Quantity::max(*slot, *q);
    }
}

/// Effective per-pod requests of a pod spec, as Kubernetes' `PodRequests` computes
/// them after Kueue's request defaulting:
/// * each container's missing requests default to its limits;
/// * regular containers are summed; restartable init containers (sidecars,
///   `restartPolicy: Always`) are added to that sum;
/// * each other init container's peak is its request plus the sidecars started before
///   it; the result is the per-resource max of the sum and every init peak;
/// * pod-level `spec.resources` requests (cpu, memory, hugepages) override the
///   aggregate; finally `spec.overhead` is added.
pub(crate) fn pod_requests(spec: &At) -> FieldResult<ResourceList> {
    let mut reqs = ResourceList::new();
    for c in spec.opt_list("containers")? {
        add_into(
            &mut reqs,
            &container_requests(c.opt("resources")?.as_ref())?,
        );
    }
    let mut sidecars = ResourceList::new();
    let mut init_peak = ResourceList::new();
    for c in spec.opt_list("initContainers")? {
        let mut r = container_requests(c.opt("resources")?.as_ref())?;
        if c.opt_str("restartPolicy")? == Some("Always") {
            add_into(&mut reqs, &r);
            add_into(&mut sidecars, &r);
            r = sidecars.clone();
        } else {
            add_into(&mut r, &sidecars);
        }
        max_into(&mut init_peak, &r);
    }
    max_into(&mut reqs, &init_peak);
    if let Some(pod_res) = spec.opt("resources")? {
        for (name, q) in container_requests(Some(&pod_res))? {
            if pod_level_supported(&name) {
                reqs.insert(name, q);
            }
        }
    }
    add_into(&mut reqs, &spec.resource_list("overhead")?);
    Ok(reqs)
}

/// Kueue's checks on a pod template's resources, first failure only:
/// * the Workload webhook rejects negative quantities (`validateResourceList`,
///   `pkg/webhooks/workload_webhook.go`);
/// * `workload.ValidateResources` (`pkg/workload/resources.go`): for every init
///   container, container and the pod-level resources, no request may exceed the
///   limit of the same resource ("requests must not exceed its limits").
///
/// Limits without requests are not an error: the request defaults to the limit.
const NEGATIVE: &str = "must be greater than or equal to 0";

fn validate_resources(spec: &At) -> FieldResult<Option<String>> {
    let mut parts: Vec<(String, Option<At>)> = Vec::new();
    for (i, c) in spec.opt_list("initContainers")?.into_iter().enumerate() {
        parts.push((
            format!("template.spec.initContainers[{i}]"),
            c.opt("resources")?,
        ));
    }
    for (i, c) in spec.opt_list("containers")?.into_iter().enumerate() {
        parts.push((
            format!("template.spec.containers[{i}]"),
            c.opt("resources")?,
        ));
    }
    let pod_level = spec.opt("resources")?;
    if pod_level.is_some() {
        parts.push(("template.spec.resources".to_string(), pod_level));
    }
    for (path, res) in &parts {
        let Some(res) = res else { continue };
        let signed = |key: &str| -> FieldResult<ResourceList> {
            res.opt_entries(key)?
                .into_iter()
                .map(|(k, a)| Ok((k.to_string(), a.quantity()?)))
                .collect()
        };
        let requests = signed("requests")?;
        let limits = signed("limits")?;
        for (kind, list) in [("requests", &requests), ("limits", &limits)] {
            if let Some((name, q)) = list.iter().find(|(_, q)| q.milli() < 0) {
                return Ok(Some(format!(
                    "{path}.resources.{kind}[{name}]: Invalid value: \"{q}\": {NEGATIVE}"
                )));
            }
        }
        let over: Vec<&str> = requests
            .iter()
            .filter(|(name, q)| limits.get(*name).is_some_and(|l| q.milli() > l.milli()))
            .map(|(name, _)| name.as_str())
            .collect();
        if !over.is_empty() {
            return Ok(Some(format!(
                "{path}: Invalid value: [\"{}\"]: requests must not exceed its limits",
                over.join("\", \"")
            )));
        }
    }
    Ok(None)
}

/// `spec.tolerations`.
pub(crate) fn tolerations(a: &At, key: &str) -> FieldResult<Vec<Toleration>> {
    a.opt_list(key)?
        .iter()
        .map(|t| {
            Ok(Toleration {
                key: t.opt_string("key")?,
                operator: t.opt_string("operator")?,
                value: t.opt_string("value")?,
                effect: t.opt_string("effect")?,
            })
        })
        .collect()
}

/// `taints` / `nodeTaints`.
pub(crate) fn taints(a: &At, key: &str) -> FieldResult<Vec<Taint>> {
    a.opt_list(key)?
        .iter()
        .map(|t| {
            Ok(Taint {
                key: t.req_str("key")?.to_string(),
                value: t.opt_string("value")?,
                effect: t.req_str("effect")?.to_string(),
            })
        })
        .collect()
}

/// A list of selector requirements (`matchExpressions`).
pub(crate) fn requirements(a: &At, key: &str) -> FieldResult<Vec<SelectorRequirement>> {
    a.opt_list(key)?
        .iter()
        .map(|r| {
            Ok(SelectorRequirement {
                key: r.req_str("key")?.to_string(),
                operator: r.req_str("operator")?.to_string(),
                values: r.string_list("values")?,
            })
        })
        .collect()
}

/// `affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
/// Returns the affinity and whether any `matchFields` were present (not modeled).
pub(crate) fn required_affinity(spec: &At) -> FieldResult<(Option<NodeAffinity>, bool)> {
    let Some(required) = spec
        .opt("affinity")?
        .map(|a| a.opt("nodeAffinity"))
        .transpose()?
        .flatten()
        .map(|n| n.opt("requiredDuringSchedulingIgnoredDuringExecution"))
        .transpose()?
        .flatten()
    else {
        return Ok((None, false));
    };
    let mut terms = Vec::new();
    let mut match_fields = false;
    for term in required.opt_list("nodeSelectorTerms")? {
        terms.push(requirements(&term, "matchExpressions")?);
        match_fields |= !term.opt_list("matchFields")?.is_empty();
    }
    Ok((Some(NodeAffinity { terms }), match_fields))
}

/// Things noticed in a template that gangplank does not model.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct TemplateNotes {
    pub topology_request: bool,
    pub match_fields: bool,
    pub runtime_class_without_overhead: bool,
}

/// Builds a pod set from a pod template (`metadata` + `spec`).
pub(crate) fn pod_set_from_template(
    name: &str,
    count: i32,
    template: &At,
) -> FieldResult<(PodSet, TemplateNotes)> {
    let mut notes = TemplateNotes::default();
    if let Some(md) = template.opt("metadata")? {
        let annotations: crate::model::Labels = md.string_map("annotations")?;
        notes.topology_request = TAS_ANNOTATIONS.iter().any(|k| annotations.contains_key(*k));
    }
    let spec = template.req("spec")?;
    let (required_affinity, match_fields) = required_affinity(&spec)?;
    notes.match_fields = match_fields;
    notes.runtime_class_without_overhead =
        spec.opt("runtimeClassName")?.is_some() && spec.opt("overhead")?.is_none();
    let invalid = validate_resources(&spec)?;
    // a negative quantity makes the template unusable: Kueue never admits it, so its
    // requests are not computed (they would fail to parse)
    let negative = invalid.as_deref().is_some_and(|m| m.ends_with(NEGATIVE));
    let pod_set = PodSet {
        name: name.to_string(),
        count,
        min_count: None,
        requests: if negative {
            ResourceList::new()
        } else {
            pod_requests(&spec)?
        },
        node_selector: spec.string_map("nodeSelector")?,
        required_affinity,
        tolerations: tolerations(&spec, "tolerations")?,
        priority_class_name: spec
            .opt_string("priorityClassName")?
            .filter(|s| !s.is_empty()),
        invalid,
    };
    Ok((pod_set, notes))
}

/// The scheduling view of one pod: a Pod object or a pod template (`metadata` +
/// `spec`) read as a pod set of one pod, with its effective requests (init containers,
/// restartable sidecars, pod-level resources and overhead, as [`pod_requests`]), node
/// selector, required node affinity and tolerations. The simulator's scheduler places
/// pods by it, so a pod is sized the same there as in the engine. Errors name the
/// field (`spec.containers[0].resources.requests.cpu: …`).
pub fn pod_scheduling(pod: &serde_json::Value) -> Result<PodSet, String> {
    pod_set_from_template("", 1, &At::root(pod, ""))
        .map(|(pod_set, _)| pod_set)
        .map_err(|e| format!("{}: {}", e.path, e.message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reqs(spec: serde_json::Value) -> ResourceList {
        pod_requests(&At::root(&spec, "spec")).unwrap()
    }

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    #[test]
    fn requests_default_to_limits_and_sum() {
        let r = reqs(json!({"containers": [
            {"resources": {"limits": {"nvidia.com/gpu": 8, "cpu": "4"}, "requests": {"cpu": "2"}}},
            {"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}
        ]}));
        assert_eq!(r["nvidia.com/gpu"], q("8"));
        assert_eq!(r["cpu"], q("2500m"));
        assert_eq!(r["memory"], q("1Gi"));
    }

    #[test]
    fn init_containers_peak_and_sidecars_add() {
        let r = reqs(json!({
            "containers": [{"resources": {"requests": {"cpu": "1"}}}],
            "initContainers": [
                {"resources": {"requests": {"cpu": "3", "memory": "2Gi"}}},
                {"restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
                {"resources": {"requests": {"cpu": "2"}}}
            ],
            "overhead": {"cpu": "100m"}
        }));
        // regular 1 + sidecar 1 = 2; init peaks: 3, then sidecar-only 1, then 2+1 = 3.
        assert_eq!(r["cpu"], q("3100m"));
        assert_eq!(r["memory"], q("2Gi"));
    }

    #[test]
    fn pod_level_resources_override_cpu_memory_only() {
        let r = reqs(json!({
            "containers": [{"resources": {"requests": {"cpu": "1", "nvidia.com/gpu": 1}}}],
            "resources": {"limits": {"cpu": "4", "nvidia.com/gpu": 2}}
        }));
        assert_eq!(r["cpu"], q("4"));
        assert_eq!(r["nvidia.com/gpu"], q("1"));
    }

    #[test]
    fn template_to_pod_set() {
        let t = json!({"metadata": {"annotations": {"kueue.x-k8s.io/podset-required-topology": "rack"}},
            "spec": {"priorityClassName": "hi", "nodeSelector": {"pool": "a100"},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}},
            "containers": [{"name": "c"}]}});
        let (ps, notes) = pod_set_from_template("main", 2, &At::root(&t, "template")).unwrap();
        assert_eq!(ps.priority_class_name.as_deref(), Some("hi"));
        assert_eq!(ps.node_selector["pool"], "a100");
        assert_eq!(ps.tolerations.len(), 1);
        assert_eq!(ps.required_affinity.unwrap().terms[0][0].values, vec!["a"]);
        assert!(notes.topology_request);
        assert!(ps.requests.is_empty());
    }
}
