//! Kueue configuration objects: ResourceFlavor, ClusterQueue, LocalQueue, Cohort,
//! WorkloadPriorityClass (v1beta1 and v1beta2).

use super::error::FieldResult;
use super::meta::Meta;
use super::notes::Notes;
use super::podspec::{requirements, taints, tolerations};
use super::value::At;
use crate::model::types::*;

/// Notes recorded for approximated features.
pub(crate) const FAIR_SHARING: &str = "fairSharing set; the weight is used only when Kueue's configuration enables fair sharing, and LocalQueue fair sharing (admission fair sharing) is not modelled";
pub(crate) const ADMISSION_CHECKS: &str =
    "admission checks configured; their states are not evaluated";
pub(crate) const FLAVOR_TOPOLOGY: &str =
    "ResourceFlavor topologyName set; topology-aware scheduling is not modeled";
pub(crate) const DEPRECATED_FUNGIBILITY: &str =
    "deprecated v1beta1 flavorFungibility values (Borrow/Preempt) read as MayStopSearch";

/// `spec.nodeLabels`, `nodeTaints`, `tolerations`, `topologyName`.
pub(crate) fn resource_flavor(
    root: &At,
    meta: &Meta,
    api_version: KueueApiVersion,
    origin: Origin,
    notes: &mut Notes,
) -> FieldResult<ResourceFlavor> {
    let spec = root
        .opt("spec")?
        .unwrap_or_else(|| At::root(&serde_json::Value::Null, "spec"));
    let topology_name = spec.opt_string("topologyName")?;
    if topology_name.is_some() {
        notes.note(FLAVOR_TOPOLOGY, format!("ResourceFlavor/{}", meta.name));
    }
    Ok(ResourceFlavor {
        name: meta.name.clone(),
        node_labels: spec.string_map("nodeLabels")?,
        node_taints: taints(&spec, "nodeTaints")?,
        tolerations: tolerations(&spec, "tolerations")?,
        topology_name,
        api_version,
        origin,
    })
}

/// A metav1 LabelSelector.
pub(crate) fn label_selector(a: &At) -> FieldResult<LabelSelector> {
    Ok(LabelSelector {
        match_labels: a.string_map("matchLabels")?,
        match_expressions: requirements(a, "matchExpressions")?,
    })
}

/// `resourceGroups` of a ClusterQueue or Cohort.
pub(crate) fn resource_groups(spec: &At) -> FieldResult<Vec<ResourceGroup>> {
    spec.opt_list("resourceGroups")?
        .iter()
        .map(|g| {
            let flavors = g
                .opt_list("flavors")?
                .iter()
                .map(|f| {
                    let resources = f
                        .opt_list("resources")?
                        .iter()
                        .map(|r| {
                            Ok(ResourceQuota {
                                name: r.req_str("name")?.to_string(),
                                nominal: r.req("nominalQuota")?.non_negative_quantity()?,
                                borrowing_limit: r.opt_quantity("borrowingLimit")?,
                                lending_limit: r.opt_quantity("lendingLimit")?,
                            })
                        })
                        .collect::<FieldResult<Vec<_>>>()?;
                    Ok(FlavorQuotas {
                        name: f.req_str("name")?.to_string(),
                        resources,
                    })
                })
                .collect::<FieldResult<Vec<_>>>()?;
            Ok(ResourceGroup {
                covered_resources: g.string_list("coveredResources")?,
                flavors,
            })
        })
        .collect()
}

const STOP_POLICIES: [(&str, StopPolicy); 3] = [
    ("None", StopPolicy::None),
    ("Hold", StopPolicy::Hold),
    ("HoldAndDrain", StopPolicy::HoldAndDrain),
];

fn preemption(spec: &At) -> FieldResult<PreemptionPolicy> {
    let Some(p) = spec.opt("preemption")? else {
        return Ok(PreemptionPolicy::default());
    };
    let within = p.opt_enum(
        "withinClusterQueue",
        &[
            ("Never", WithinClusterQueue::Never),
            ("LowerPriority", WithinClusterQueue::LowerPriority),
            (
                "LowerOrNewerEqualPriority",
                WithinClusterQueue::LowerOrNewerEqualPriority,
            ),
        ],
    )?;
    let reclaim = p.opt_enum(
        "reclaimWithinCohort",
        &[
            ("Never", ReclaimWithinCohort::Never),
            ("LowerPriority", ReclaimWithinCohort::LowerPriority),
            ("Any", ReclaimWithinCohort::Any),
        ],
    )?;
    let borrow = match p.opt("borrowWithinCohort")? {
        Some(b) => BorrowWithinCohort {
            policy: b
                .opt_enum(
                    "policy",
                    &[
                        ("Never", BorrowWithinCohortPolicy::Never),
                        ("LowerPriority", BorrowWithinCohortPolicy::LowerPriority),
                    ],
                )?
                .unwrap_or_default(),
            max_priority_threshold: b.opt_i32("maxPriorityThreshold")?,
        },
        None => BorrowWithinCohort::default(),
    };
    Ok(PreemptionPolicy {
        within_cluster_queue: within.unwrap_or_default(),
        reclaim_within_cohort: reclaim.unwrap_or_default(),
        borrow_within_cohort: borrow,
    })
}

fn flavor_fungibility(
    spec: &At,
    subject: &str,
    notes: &mut Notes,
) -> FieldResult<FlavorFungibility> {
    let mut ff = FlavorFungibility::default();
    let Some(f) = spec.opt("flavorFungibility")? else {
        return Ok(ff);
    };
    use FungibilityPolicy::{MayStopSearch, TryNextFlavor};
    // (value, policy, deprecated)
    let borrow = [
        ("MayStopSearch", (MayStopSearch, false)),
        ("TryNextFlavor", (TryNextFlavor, false)),
        ("Borrow", (MayStopSearch, true)),
    ];
    let preempt = [
        ("MayStopSearch", (MayStopSearch, false)),
        ("TryNextFlavor", (TryNextFlavor, false)),
        ("Preempt", (MayStopSearch, true)),
    ];
    if let Some((policy, deprecated)) = f.opt_enum("whenCanBorrow", &borrow)? {
        ff.when_can_borrow = policy;
        if deprecated {
            ff.deprecated_values
                .push("whenCanBorrow: Borrow".to_string());
        }
    }
    if let Some((policy, deprecated)) = f.opt_enum("whenCanPreempt", &preempt)? {
        ff.when_can_preempt = policy;
        if deprecated {
            ff.deprecated_values
                .push("whenCanPreempt: Preempt".to_string());
        }
    }
    ff.preference = f.opt_enum(
        "preference",
        &[
            (
                "BorrowingOverPreemption",
                FungibilityPreference::BorrowingOverPreemption,
            ),
            (
                "PreemptionOverBorrowing",
                FungibilityPreference::PreemptionOverBorrowing,
            ),
        ],
    )?;
    if !ff.deprecated_values.is_empty() {
        notes.note(DEPRECATED_FUNGIBILITY, subject);
    }
    Ok(ff)
}

fn flavor_usages(status: &At, key: &str) -> FieldResult<Vec<FlavorUsage>> {
    status
        .opt_list(key)?
        .iter()
        .map(|f| {
            let mut resources = std::collections::BTreeMap::new();
            for r in f.opt_list("resources")? {
                let total = r.opt_quantity("total")?.unwrap_or_default();
                let borrowed = r.opt_quantity("borrowed")?.unwrap_or_default();
                resources.insert(r.req_str("name")?.to_string(), (total, borrowed));
            }
            Ok(FlavorUsage {
                flavor: f.req_str("name")?.to_string(),
                resources,
            })
        })
        .collect()
}

fn fair_sharing_weight(spec: &At) -> FieldResult<Option<crate::model::Quantity>> {
    match spec.opt("fairSharing")? {
        Some(fs) => fs.opt_quantity("weight"),
        None => Ok(None),
    }
}

/// A ClusterQueue of either API version.
pub(crate) fn cluster_queue(
    root: &At,
    meta: &Meta,
    api_version: KueueApiVersion,
    origin: Origin,
    notes: &mut Notes,
) -> FieldResult<ClusterQueue> {
    let subject = format!("ClusterQueue/{}", meta.name);
    let null = serde_json::Value::Null;
    let spec = root.opt("spec")?.unwrap_or_else(|| At::root(&null, "spec"));
    // v1beta2 `cohortName`; v1beta1 `cohort`. Accept either in both versions.
    let cohort = match spec.opt_string("cohortName")? {
        Some(c) => Some(c),
        None => spec.opt_string("cohort")?,
    }
    .filter(|c| !c.is_empty());
    let namespace_selector = spec
        .opt("namespaceSelector")?
        .map(|s| label_selector(&s))
        .transpose()?;
    let queueing_strategy = spec
        .opt_enum(
            "queueingStrategy",
            &[
                ("BestEffortFIFO", QueueingStrategy::BestEffortFifo),
                ("StrictFIFO", QueueingStrategy::StrictFifo),
            ],
        )?
        .unwrap_or_default();
    let fair_sharing_weight = fair_sharing_weight(&spec)?;
    if spec.opt("fairSharing")?.is_some() {
        notes.note(FAIR_SHARING, subject.clone());
    }
    let mut admission_checks = spec.string_list("admissionChecks")?;
    if let Some(strategy) = spec.opt("admissionChecksStrategy")? {
        for check in strategy.opt_list("admissionChecks")? {
            admission_checks.push(check.req_str("name")?.to_string());
        }
    }
    if !admission_checks.is_empty() {
        notes.note(ADMISSION_CHECKS, subject.clone());
    }
    let status = match root.opt("status")? {
        Some(s) => Some(ClusterQueueStatus {
            flavors_reservation: flavor_usages(&s, "flavorsReservation")?,
            flavors_usage: flavor_usages(&s, "flavorsUsage")?,
            pending_workloads: s.opt_i64("pendingWorkloads")?,
            reserving_workloads: s.opt_i64("reservingWorkloads")?,
            admitted_workloads: s.opt_i64("admittedWorkloads")?,
        }),
        None => None,
    };
    Ok(ClusterQueue {
        name: meta.name.clone(),
        cohort,
        namespace_selector,
        queueing_strategy,
        resource_groups: resource_groups(&spec)?,
        preemption: preemption(&spec)?,
        flavor_fungibility: flavor_fungibility(&spec, &subject, notes)?,
        stop_policy: spec
            .opt_enum("stopPolicy", &STOP_POLICIES)?
            .unwrap_or_default(),
        fair_sharing_weight,
        admission_checks,
        status,
        api_version,
        origin,
    })
}

/// A LocalQueue; `spec.clusterQueue` is required.
pub(crate) fn local_queue(
    root: &At,
    meta: &Meta,
    api_version: KueueApiVersion,
    origin: Origin,
    notes: &mut Notes,
) -> FieldResult<LocalQueue> {
    let spec = root.req("spec")?;
    if spec.opt("fairSharing")?.is_some() {
        notes.note(
            FAIR_SHARING,
            format!("LocalQueue/{}/{}", meta.namespace_or_default(), meta.name),
        );
    }
    let (pending, admitted) = match root.opt("status")? {
        Some(s) => (
            s.opt_i64("pendingWorkloads")?,
            s.opt_i64("admittedWorkloads")?,
        ),
        None => (None, None),
    };
    Ok(LocalQueue {
        namespace: meta.namespace_or_default(),
        name: meta.name.clone(),
        cluster_queue: spec.req_str("clusterQueue")?.to_string(),
        stop_policy: spec
            .opt_enum("stopPolicy", &STOP_POLICIES)?
            .unwrap_or_default(),
        pending_workloads: pending,
        admitted_workloads: admitted,
        api_version,
        origin,
    })
}

/// A Cohort: `spec.parentName` (older `spec.parent` also accepted) and own quota.
pub(crate) fn cohort(
    root: &At,
    meta: &Meta,
    api_version: KueueApiVersion,
    origin: Origin,
    notes: &mut Notes,
) -> FieldResult<Cohort> {
    let null = serde_json::Value::Null;
    let spec = root.opt("spec")?.unwrap_or_else(|| At::root(&null, "spec"));
    let parent = match spec.opt_string("parentName")? {
        Some(p) => Some(p),
        None => spec.opt_string("parent")?,
    }
    .filter(|p| !p.is_empty());
    if spec.opt("fairSharing")?.is_some() {
        notes.note(FAIR_SHARING, format!("Cohort/{}", meta.name));
    }
    Ok(Cohort {
        name: meta.name.clone(),
        parent,
        resource_groups: resource_groups(&spec)?,
        fair_sharing_weight: fair_sharing_weight(&spec)?,
        api_version,
        origin,
    })
}

/// A WorkloadPriorityClass: top-level `value` (required) and `description`.
pub(crate) fn workload_priority_class(
    root: &At,
    meta: &Meta,
    origin: Origin,
) -> FieldResult<WorkloadPriorityClass> {
    Ok(WorkloadPriorityClass {
        name: meta.name.clone(),
        value: root.req_i32("value")?,
        description: root.opt_string("description")?,
        origin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Quantity;
    use crate::model::parse::meta::read_meta;
    use serde_json::json;

    fn cq(v: serde_json::Value, version: KueueApiVersion) -> FieldResult<(ClusterQueue, Notes)> {
        let root = At::root(&v, "");
        let meta = read_meta(&root)?;
        let mut notes = Notes::default();
        let cq = cluster_queue(&root, &meta, version, Origin::default(), &mut notes)?;
        Ok((cq, notes))
    }

    #[test]
    fn v1beta1_cluster_queue_defaults_and_deprecated_values() {
        let (q, notes) = cq(
            json!({"metadata": {"name": "q"}, "spec": {
                "cohort": "all", "namespaceSelector": {},
                "preemption": {"withinClusterQueue": "LowerPriority"},
                "flavorFungibility": {"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"},
                "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [
                    {"name": "f", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 32, "borrowingLimit": "8"}]}]}]}}),
            KueueApiVersion::V1beta1,
        )
        .unwrap();
        assert_eq!(q.cohort.as_deref(), Some("all"));
        assert_eq!(q.namespace_selector, Some(LabelSelector::default()));
        assert_eq!(
            q.preemption.within_cluster_queue,
            WithinClusterQueue::LowerPriority
        );
        assert_eq!(
            q.preemption.reclaim_within_cohort,
            ReclaimWithinCohort::Never
        );
        assert_eq!(
            q.flavor_fungibility.when_can_borrow,
            FungibilityPolicy::MayStopSearch
        );
        assert_eq!(
            q.flavor_fungibility.when_can_preempt,
            FungibilityPolicy::MayStopSearch
        );
        assert_eq!(q.flavor_fungibility.deprecated_values.len(), 2);
        assert_eq!(
            q.resource_groups[0].flavors[0].resources[0].nominal,
            Quantity::from_units(32)
        );
        assert_eq!(
            q.resource_groups[0].flavors[0].resources[0].borrowing_limit,
            Some(Quantity::from_units(8))
        );
        assert_eq!(notes.render().len(), 1);
    }

    #[test]
    fn absent_selector_is_none_and_bad_enum_is_named() {
        let (q, _) = cq(
            json!({"metadata": {"name": "q"}, "spec": {}}),
            KueueApiVersion::V1beta2,
        )
        .unwrap();
        assert_eq!(q.namespace_selector, None);
        assert_eq!(q.flavor_fungibility, FlavorFungibility::default());
        let e = cq(
            json!({"metadata": {"name": "q"}, "spec": {"stopPolicy": "Pause"}}),
            KueueApiVersion::V1beta2,
        )
        .unwrap_err();
        assert_eq!(e.path, "spec.stopPolicy");
        assert!(e.message.contains("unknown value \"Pause\""));
    }
}
