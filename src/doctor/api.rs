//! Kueue API versions and deprecated values.
//!
//! * `deprecated-fungibility-value` (warning): `flavorFungibility` uses the v1beta1 aliases
//!   `Borrow` / `Preempt` (both now `MayStopSearch`); v1beta2 does not accept them.
//! * `deprecated-api-field`: with `served_kueue_version = Some(V1beta2)`, objects written
//!   in v1beta1. Warning, per kind, for objects that use a field renamed in v1beta2
//!   (ClusterQueue `spec.cohort` → `spec.cohortName`, `spec.admissionChecks` →
//!   `spec.admissionChecksStrategy.admissionChecks`; Workload `spec.priorityClassName` +
//!   `spec.priorityClassSource` → `spec.priorityClassRef`); info, per kind, for the rest.
//! * `api-version-not-served` (error): with `served_kueue_version = Some(V1beta1)` (Kueue
//!   before 0.15), objects written in v1beta2, which that API server rejects.

use std::collections::BTreeMap;

use super::context::{Context, cluster_ref, ns_ref, workload_ref};
use super::{Finding, Severity, ids};
use crate::model::KueueApiVersion;

/// One Kueue object as far as API versions are concerned.
struct Obj {
    kind: &'static str,
    reference: String,
    version: KueueApiVersion,
    /// v1beta1 field → v1beta2 field, for renamed fields the object uses.
    renames: Vec<(&'static str, &'static str)>,
}

fn objects(ctx: &Context) -> Vec<Obj> {
    let s = ctx.state;
    let mut v = Vec::new();
    for f in s.resource_flavors.values() {
        v.push(Obj {
            kind: "ResourceFlavor",
            reference: cluster_ref("ResourceFlavor", &f.name),
            version: f.api_version,
            renames: Vec::new(),
        });
    }
    for cq in s.cluster_queues.values() {
        let mut renames = Vec::new();
        if cq.cohort.is_some() {
            renames.push(("spec.cohort", "spec.cohortName"));
        }
        if !cq.admission_checks.is_empty() {
            renames.push((
                "spec.admissionChecks",
                "spec.admissionChecksStrategy.admissionChecks",
            ));
        }
        v.push(Obj {
            kind: "ClusterQueue",
            reference: cluster_ref("ClusterQueue", &cq.name),
            version: cq.api_version,
            renames,
        });
    }
    for c in s.cohorts.values() {
        v.push(Obj {
            kind: "Cohort",
            reference: cluster_ref("Cohort", &c.name),
            version: c.api_version,
            renames: Vec::new(),
        });
    }
    for lq in s.local_queues.values() {
        v.push(Obj {
            kind: "LocalQueue",
            reference: ns_ref("LocalQueue", &lq.namespace, &lq.name),
            version: lq.api_version,
            renames: Vec::new(),
        });
    }
    for w in s.workloads.values() {
        // Job-derived workloads have no Kueue object of their own.
        if !matches!(w.source, crate::model::WorkloadSource::Workload) {
            continue;
        }
        let mut renames = Vec::new();
        if w.priority_class.is_some() {
            renames.push((
                "spec.priorityClassName + spec.priorityClassSource",
                "spec.priorityClassRef",
            ));
        }
        v.push(Obj {
            kind: "Workload",
            reference: workload_ref(w),
            version: w.api_version,
            renames,
        });
    }
    v
}

/// Runs the API checks.
pub fn check(ctx: &Context, out: &mut Vec<Finding>) {
    fungibility(ctx, out);
    match ctx.opts.served_kueue_version {
        Some(KueueApiVersion::V1beta2) => deprecated_fields(ctx, out),
        Some(KueueApiVersion::V1beta1) => not_served(ctx, out),
        None => {}
    }
}

fn fungibility(ctx: &Context, out: &mut Vec<Finding>) {
    for cq in ctx.state.cluster_queues.values() {
        let ff = &cq.flavor_fungibility;
        if ff.deprecated_values.is_empty() {
            continue;
        }
        let obj = cluster_ref("ClusterQueue", &cq.name);
        let values = ff.deprecated_values.join(", ");
        let message = format!(
            "{obj} sets spec.flavorFungibility to the deprecated value{s} {values}: `Borrow` and \
             `Preempt` are old names for `MayStopSearch`; they are accepted only in v1beta1 and \
             rejected once the manifest is moved to v1beta2.",
            s = if ff.deprecated_values.len() == 1 {
                ""
            } else {
                "s"
            },
        );
        let mut fix = format!(
            "# kubectl edit clusterqueue {}\nspec:\n  flavorFungibility:",
            cq.name
        );
        for v in &ff.deprecated_values {
            match v.as_str() {
                "Borrow" => fix.push_str("\n    whenCanBorrow: MayStopSearch   # was Borrow"),
                "Preempt" => fix.push_str("\n    whenCanPreempt: MayStopSearch   # was Preempt"),
                other => fix.push_str(&format!("\n    # {other} → MayStopSearch")),
            }
        }
        out.push(Finding::new(
            Severity::Warning,
            ids::DEPRECATED_FUNGIBILITY_VALUE,
            vec![obj],
            message,
            fix,
        ));
    }
}

fn deprecated_fields(ctx: &Context, out: &mut Vec<Finding>) {
    // (kind, uses renamed fields) → objects
    let mut groups: BTreeMap<(&'static str, bool), Vec<Obj>> = BTreeMap::new();
    for o in objects(ctx) {
        if o.version == KueueApiVersion::V1beta1 {
            groups
                .entry((o.kind, !o.renames.is_empty()))
                .or_default()
                .push(o);
        }
    }
    for ((kind, renamed), objs) in groups {
        let refs: Vec<String> = objs.iter().map(|o| o.reference.clone()).collect();
        let mut renames: Vec<(&str, &str)> = objs.iter().flat_map(|o| o.renames.clone()).collect();
        renames.sort_unstable();
        renames.dedup();
        let n = refs.len();
        let plural = if n == 1 { "" } else { "s" };
        let (severity, message) = if renamed {
            let list: Vec<String> = renames.iter().map(|(a, b)| format!("{a} → {b}")).collect();
            (
                Severity::Warning,
                format!(
                    "{n} {kind}{plural} written in kueue.x-k8s.io/v1beta1 use fields renamed in \
                     v1beta2, which this cluster serves as its storage version: {list}. v1beta1 \
                     is deprecated; manifests copied into v1beta2 without the rename lose the \
                     setting. Objects: {objs}.",
                    list = list.join("; "),
                    objs = refs.join(", "),
                ),
            )
        } else {
            (
                Severity::Info,
                format!(
                    "{n} {kind}{plural} written in the deprecated kueue.x-k8s.io/v1beta1 while \
                     the cluster serves v1beta2 (no renamed fields used): {objs}.",
                    objs = refs.join(", "),
                ),
            )
        };
        let mut fix = String::from("# in the manifests:\napiVersion: kueue.x-k8s.io/v1beta2");
        for (a, b) in &renames {
            fix.push_str(&format!("\n# rename {a} → {b}"));
        }
        out.push(Finding::new(
            severity,
            ids::DEPRECATED_API_FIELD,
            refs,
            message,
            fix,
        ));
    }
}

fn not_served(ctx: &Context, out: &mut Vec<Finding>) {
    let mut groups: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    for o in objects(ctx) {
        if o.version == KueueApiVersion::V1beta2 {
            groups.entry(o.kind).or_default().push(o.reference);
        }
    }
    for (kind, refs) in groups {
        let message = format!(
            "{n} {kind} object(s) are written in kueue.x-k8s.io/v1beta2, but the cluster's Kueue \
             serves only v1beta1 (v1beta2 arrived in Kueue 0.15): applying them fails. \
             Objects: {objs}.",
            n = refs.len(),
            objs = refs.join(", "),
        );
        let fix = "# upgrade Kueue to 0.15 or later, or write these manifests as\n\
                   apiVersion: kueue.x-k8s.io/v1beta1\n\
                   # (spec.cohortName → spec.cohort, spec.priorityClassRef → spec.priorityClassName + spec.priorityClassSource)";
        out.push(Finding::new(
            Severity::Error,
            ids::API_VERSION_NOT_SERVED,
            refs,
            message,
            fix,
        ));
    }
}
