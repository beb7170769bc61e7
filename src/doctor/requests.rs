//! Requests a ClusterQueue can never satisfy.
//!
//! * `workload-uncovered-resource`: a pending workload requests (non-zero) a resource that
//!   no resource group of its ClusterQueue covers: Kueue reports "resource X unavailable
//!   in ClusterQueue" and the workload waits forever.
//! * `workload-exceeds-max-quota`: a pod set needs more of some resource than any flavor
//!   can ever give (nominal + borrowable, honouring borrowingLimit and cohort capacity;
//!   see [`super::quota`]), or all pod sets together need more than every flavor combined.
//!   Partial admission is honoured: a pod set with `minCount` is judged at `minCount`.
//!
//! Only workloads without a quota reservation and not finished are judged.

use super::context::{Context, cluster_ref, workload_ref};
use super::quota::{QuotaTree, quota_in};
use super::{Finding, Severity, ids};
use crate::model::{ClusterQueue, Quantity, ResourceGroup, ResourceList, Workload};

/// Runs the request checks.
pub fn check(ctx: &Context, out: &mut Vec<Finding>) {
    let tree = QuotaTree::new(ctx.state);
    for w in ctx.state.workloads.values() {
        if w.is_finished() || w.has_quota_reservation() {
            continue;
        }
        let Some(cq) = ctx.cluster_queue_of(w) else {
            continue;
        };
        let uncovered = uncovered_requests(w, cq);
        if !uncovered.is_empty() {
            out.push(uncovered_finding(ctx, w, cq, &uncovered));
        }
        for (gi, group) in cq.resource_groups.iter().enumerate() {
            if let Some(f) = exceeds_in_group(&tree, w, cq, gi, group) {
                out.push(f);
            }
        }
    }
}

/// resource → total (count × per-pod) request, for non-zero requests no group covers.
fn uncovered_requests(w: &Workload, cq: &ClusterQueue) -> ResourceList {
    let mut missing = ResourceList::new();
    for ps in w.pod_sets.iter() {
        for (r, q) in &ps.requests {
            if *q == Quantity::ZERO {
                continue;
            }
            let covered = cq
                .resource_groups
                .iter()
                .any(|g| g.covered_resources.iter().any(|c| c == r));
            if !covered {
                *missing.entry(r.clone()).or_default() += *q * i64::from(ps.count.max(0));
            }
        }
    }
    missing
}

fn uncovered_finding(
    ctx: &Context,
    w: &Workload,
    cq: &ClusterQueue,
    missing: &ResourceList,
) -> Finding {
    let names: Vec<&str> = missing.keys().map(String::as_str).collect();
    let wref = workload_ref(w);
    let covered: Vec<&str> = cq
        .resource_groups
        .iter()
        .flat_map(|g| g.covered_resources.iter().map(String::as_str))
        .collect();
    let covered = if covered.is_empty() {
        "nothing".to_string()
    } else {
        covered.join(", ")
    };
    let message = format!(
        "{wref} requests {res}, which no resource group of ClusterQueue {cq} covers (it covers \
         {covered}): Kueue reports the resource as unavailable and the workload stays pending \
         forever.",
        res = names.join(", "),
        cq = cq.name,
    );
    let fix = format!(
        "# kubectl edit clusterqueue {cq}: add {res} to coveredResources with a nominalQuota in \
         every flavor of the group (here: at least what this workload needs)\n{yaml}\n\
         # or remove the {res} request from the job's pod template",
        cq = cq.name,
        res = names.join(", "),
        yaml = covered_group_yaml(ctx, cq, missing),
    );
    Finding::new(
        Severity::Error,
        ids::WORKLOAD_UNCOVERED_RESOURCE,
        vec![wref, cluster_ref("ClusterQueue", &cq.name)],
        message,
        fix,
    )
}

/// The ClusterQueue's first resource group with the missing resources added (or a new
/// group when it has none), as a `spec.resourceGroups` YAML snippet.
fn covered_group_yaml(ctx: &Context, cq: &ClusterQueue, missing: &ResourceList) -> String {
    let mut group = cq.resource_groups.first().cloned().unwrap_or_else(|| {
        let flavor = ctx
            .state
            .resource_flavors
            .keys()
            .next()
            .cloned()
            .unwrap_or_else(|| "default-flavor".to_string());
        ResourceGroup {
            covered_resources: Vec::new(),
            flavors: vec![crate::model::FlavorQuotas {
                name: flavor,
                resources: Vec::new(),
            }],
        }
    });
    for (r, q) in missing {
        group.covered_resources.push(r.clone());
        for f in &mut group.flavors {
            f.resources.push(crate::model::ResourceQuota {
                name: r.clone(),
                nominal: *q,
                borrowing_limit: None,
                lending_limit: None,
            });
        }
    }
    let covered: Vec<String> = group
        .covered_resources
        .iter()
        .map(|r| format!("\"{r}\""))
        .collect();
    let mut y = format!(
        "spec:\n  resourceGroups:\n  - coveredResources: [{}]\n    flavors:",
        covered.join(", ")
    );
    for f in &group.flavors {
        y.push_str(&format!("\n    - name: \"{}\"\n      resources:", f.name));
        for r in &f.resources {
            y.push_str(&format!(
                "\n      - name: \"{}\"\n        nominalQuota: {}",
                r.name, r.nominal
            ));
        }
    }
    if cq.resource_groups.len() > 1 {
        y.push_str("\n  # ... keep the other resource groups unchanged");
    }
    y
}

/// Pods that must run at once: `minCount` when partial admission is allowed, else `count`.
fn min_pods(count: i32, min_count: Option<i32>) -> i64 {
    i64::from(min_count.unwrap_or(count).clamp(0, count.max(0)))
}

fn exceeds_in_group(
    tree: &QuotaTree,
    w: &Workload,
    cq: &ClusterQueue,
    gi: usize,
    group: &ResourceGroup,
) -> Option<Finding> {
    if group.flavors.is_empty() {
        return None;
    }
    let in_group = |r: &str| group.covered_resources.iter().any(|c| c == r);
    let max = |f: &str, r: &str| tree.potential_available(cq, f, r);
    let mut total = ResourceList::new();
    for ps in w.pod_sets.iter() {
        let pods = min_pods(ps.count, ps.min_count);
        let need: ResourceList = ps
            .requests
            .iter()
            .filter(|(r, q)| in_group(r) && **q > Quantity::ZERO)
            .map(|(r, q)| (r.clone(), *q * pods))
            .collect();
        if need.is_empty() {
            continue;
        }
        for (r, q) in &need {
            *total.entry(r.clone()).or_default() += *q;
        }
        let fits_some = group
            .flavors
            .iter()
            .any(|f| need.iter().all(|(r, q)| *q <= max(&f.name, r)));
        if !fits_some {
            // Name the resource that fails in every flavor, else the first failing one.
            let (r, q) = need
                .iter()
                .find(|(r, q)| group.flavors.iter().all(|f| **q > max(&f.name, r)))
                .or_else(|| need.iter().next())?;
            let per_pod = ps.requests.get(r).copied().unwrap_or_default();
            let what = format!("pod set {} ({pods} pods × {per_pod} {r})", ps.name);
            return Some(exceeds_finding(tree, w, cq, gi, group, r, *q, &what));
        }
    }
    for (r, q) in &total {
        let sum: Quantity = group.flavors.iter().map(|f| max(&f.name, r)).sum();
        if *q > sum {
            let what = "all pod sets together".to_string();
            return Some(exceeds_finding(tree, w, cq, gi, group, r, *q, &what));
        }
    }
    None
}

#[allow(clippy::too_many_arguments)] // one call site per branch; a struct would only rename them
fn exceeds_finding(
    tree: &QuotaTree,
    w: &Workload,
    cq: &ClusterQueue,
    gi: usize,
    group: &ResourceGroup,
    resource: &str,
    need: Quantity,
    what: &str,
) -> Finding {
    let wref = workload_ref(w);
    let per_flavor: Vec<String> = group
        .flavors
        .iter()
        .map(|f| {
            let max = tree.potential_available(cq, &f.name, resource);
            let q = quota_in(&cq.resource_groups, &f.name, resource);
            let nominal = q.map(|q| q.nominal).unwrap_or_default();
            let borrow = match (&cq.cohort, q.and_then(|q| q.borrowing_limit)) {
                (None, _) => "no cohort to borrow from".to_string(),
                (Some(_), Some(b)) => format!("borrowingLimit {b}"),
                (Some(c), None) => format!("borrowing up to what cohort {c} holds"),
            };
            format!("{max} in flavor {} (nominal {nominal}, {borrow})", f.name)
        })
        .collect();
    let message = format!(
        "{wref} needs {need} {resource} for {what}, but the most ClusterQueue {cq} can ever \
         admit is {per_flavor}: Kueue rejects it as ExceedsMaxQuota and it never runs.",
        cq = cq.name,
        per_flavor = per_flavor.join("; "),
    );
    let first = &group.flavors[0].name;
    let fix = format!(
        "# shrink the job (fewer pods or smaller per-pod requests), or raise the quota \
         (kubectl edit clusterqueue {cq}), e.g. in resource group {n}:\n\
         spec:\n  resourceGroups:\n  - coveredResources: [{covered}]\n    flavors:\n    \
         - name: \"{first}\"\n      resources:\n      - name: \"{resource}\"\n        \
         nominalQuota: {need}   # plus the group's other resources, unchanged",
        cq = cq.name,
        n = gi + 1,
        covered = group
            .covered_resources
            .iter()
            .map(|r| format!("\"{r}\""))
            .collect::<Vec<_>>()
            .join(", "),
    );
    Finding::new(
        Severity::Error,
        ids::WORKLOAD_EXCEEDS_MAX_QUOTA,
        vec![wref, cluster_ref("ClusterQueue", &cq.name)],
        message,
        fix,
    )
}
