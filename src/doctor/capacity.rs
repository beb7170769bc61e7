//! Quota versus hardware, per ResourceFlavor.
//!
//! A flavor's nodes are the nodes carrying all its `nodeLabels` (an empty map matches
//! every node). Capacity counts only usable nodes (Ready, not cordoned). All checks here
//! are skipped when the input has no Node objects at all (a manifest dump of queues only).
//!
//! * `flavor-quota-exceeds-capacity` (warning): Σ nominal quota of all ClusterQueues and
//!   Cohorts for (flavor, resource) > Σ allocatable of the flavor's usable nodes.
//! * `flavor-idle-capacity` (info): allocatable > [`IDLE_CAPACITY_FACTOR`] × that quota.
//! * `flavor-matches-no-node` (warning): non-empty nodeLabels that no node carries.
//! * `flavor-taints-not-tolerated`: NoSchedule/NoExecute taints on the flavor's nodes that
//!   neither the flavor's `tolerations` tolerate nor its `nodeTaints` declare (Kueue would
//!   then require the workload to tolerate them). Warning when every node of the flavor is
//!   blocked; info when only some are (labelled flavors only). Transient
//!   `node.kubernetes.io/*` taints (cordon, not-ready) are ignored.

use std::collections::BTreeMap;

use super::context::{Context, cluster_ref, list_names, node_usable};
use super::{Finding, Severity, ids};
use crate::model::{Node, Quantity, ResourceFlavor, Taint, well_known};

/// Hardware more than this many times the quota is reported as idle.
pub const IDLE_CAPACITY_FACTOR: i64 = 2;

/// Runs the capacity checks.
pub fn check(ctx: &Context, out: &mut Vec<Finding>) {
    if ctx.state.nodes.is_empty() {
        return;
    }
    for flavor in ctx.state.resource_flavors.values() {
        let nodes = ctx.flavor_nodes(flavor);
        if nodes.is_empty() {
            if !flavor.node_labels.is_empty() {
                out.push(matches_no_node(ctx, flavor));
            }
            continue;
        }
        taints(flavor, &nodes, out);
        quota_vs_capacity(ctx, flavor, &nodes, out);
    }
}

fn label_list(flavor: &ResourceFlavor) -> Vec<String> {
    flavor
        .node_labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect()
}

fn matches_no_node(ctx: &Context, flavor: &ResourceFlavor) -> Finding {
    let labels = label_list(flavor);
    // What values the cluster does carry for these keys, to spot typos.
    let mut seen: Vec<String> = Vec::new();
    for key in flavor.node_labels.keys() {
        let mut values: Vec<&str> = ctx
            .state
            .nodes
            .values()
            .filter_map(|n| n.labels.get(key).map(String::as_str))
            .collect();
        values.sort_unstable();
        values.dedup();
        if !values.is_empty() {
            seen.push(format!("{key} ∈ {{{}}}", list_names(&values, 6)));
        }
    }
    let seen = if seen.is_empty() {
        "no node carries any of these keys".to_string()
    } else {
        format!("nodes carry {}", seen.join("; "))
    };
    let message = format!(
        "ResourceFlavor {f} selects nodes with {labels}, but no node has them ({seen}): pods \
         admitted with this flavor get its nodeSelector and stay Pending.",
        f = flavor.name,
        labels = labels.join(", "),
    );
    let fix = format!(
        "kubectl label nodes <node> {labels}\n\
         # or correct spec.nodeLabels (kubectl edit resourceflavor {f})",
        labels = labels.join(" "),
        f = flavor.name,
    );
    Finding::new(
        Severity::Warning,
        ids::FLAVOR_MATCHES_NO_NODE,
        vec![cluster_ref("ResourceFlavor", &flavor.name)],
        message,
        fix,
    )
}

fn untolerated<'n>(flavor: &ResourceFlavor, node: &'n Node) -> Vec<&'n Taint> {
    node.taints
        .iter()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .filter(|t| !t.key.starts_with(well_known::NODE_LIFECYCLE_PREFIX))
        .filter(|t| !flavor.tolerations.iter().any(|tol| tol.tolerates(t)))
        .filter(|t| {
            !flavor
                .node_taints
                .iter()
                .any(|d| d.key == t.key && d.effect == t.effect)
        })
        .collect()
}

fn taint_str(t: &Taint) -> String {
    match &t.value {
        Some(v) if !v.is_empty() => format!("{}={}:{}", t.key, v, t.effect),
        _ => format!("{}:{}", t.key, t.effect),
    }
}

fn taints(flavor: &ResourceFlavor, nodes: &[&Node], out: &mut Vec<Finding>) {
    let mut by_taint: BTreeMap<String, (&Taint, Vec<&str>)> = BTreeMap::new();
    let mut blocked = Vec::new();
    for node in nodes {
        let ts = untolerated(flavor, node);
        if ts.is_empty() {
            continue;
        }
        blocked.push(node.name.as_str());
        for t in ts {
            by_taint
                .entry(taint_str(t))
                .or_insert_with(|| (t, Vec::new()))
                .1
                .push(node.name.as_str());
        }
    }
    if blocked.is_empty() {
        return;
    }
    let all = blocked.len() == nodes.len();
    if !all && flavor.node_labels.is_empty() {
        return; // an unlabelled flavor does not pin pods to the tainted nodes
    }
    let taint_list: Vec<&str> = by_taint.keys().map(String::as_str).collect();
    let consequence = if all {
        "pods admitted with this flavor cannot schedule on any of its nodes and stay Pending, \
         unless every job adds the toleration itself"
            .to_string()
    } else {
        format!(
            "{} of its {} nodes are out of reach for pods admitted with this flavor, unless \
             the jobs add the toleration themselves",
            blocked.len(),
            nodes.len()
        )
    };
    let message = format!(
        "ResourceFlavor {f} has no toleration for taint {t} on its nodes ({n}): {consequence}.",
        f = flavor.name,
        t = taint_list.join(", "),
        n = list_names(&blocked, 6),
    );
    let mut fix = format!(
        "# kubectl edit resourceflavor {f}  (Kueue adds these to admitted pods)\nspec:\n  tolerations:",
        f = flavor.name
    );
    for (t, _) in by_taint.values() {
        match &t.value {
            Some(v) if !v.is_empty() => fix.push_str(&format!(
                "\n  - key: {}\n    operator: Equal\n    value: \"{v}\"\n    effect: {}",
                t.key, t.effect
            )),
            _ => fix.push_str(&format!(
                "\n  - key: {}\n    operator: Exists\n    effect: {}",
                t.key, t.effect
            )),
        }
    }
    let mut objects = vec![cluster_ref("ResourceFlavor", &flavor.name)];
    objects.extend(blocked.iter().map(|n| cluster_ref("Node", n)));
    out.push(Finding::new(
        if all {
            Severity::Warning
        } else {
            Severity::Info
        },
        ids::FLAVOR_TAINTS_NOT_TOLERATED,
        objects,
        message,
        fix,
    ));
}

fn quota_vs_capacity(
    ctx: &Context,
    flavor: &ResourceFlavor,
    nodes: &[&Node],
    out: &mut Vec<Finding>,
) {
    // resource → [(owner ref, nominal)]
    let mut quotas: BTreeMap<&str, Vec<(String, Quantity)>> = BTreeMap::new();
    let owners = ctx
        .state
        .cluster_queues
        .values()
        .map(|cq| (cluster_ref("ClusterQueue", &cq.name), &cq.resource_groups))
        .chain(
            ctx.state
                .cohorts
                .values()
                .map(|c| (cluster_ref("Cohort", &c.name), &c.resource_groups)),
        );
    for (owner, groups) in owners {
        for fq in groups.iter().flat_map(|g| &g.flavors) {
            if fq.name != flavor.name {
                continue;
            }
            for rq in &fq.resources {
                quotas
                    .entry(rq.name.as_str())
                    .or_default()
                    .push((owner.clone(), rq.nominal));
            }
        }
    }
    let usable: Vec<&&Node> = nodes.iter().filter(|n| node_usable(n)).collect();
    let unusable = nodes.len() - usable.len();
    let fref = cluster_ref("ResourceFlavor", &flavor.name);
    let selector = if flavor.node_labels.is_empty() {
        String::new()
    } else {
        format!(" -l {}", label_list(flavor).join(","))
    };
    for (resource, owners) in quotas {
        let quota: Quantity = owners.iter().map(|(_, q)| *q).sum();
        let capacity: Quantity = usable
            .iter()
            .filter_map(|n| n.allocatable.get(resource).copied())
            .sum();
        let mut objects = vec![fref.clone()];
        objects.extend(owners.iter().map(|(o, _)| o.clone()));
        let breakdown = owners
            .iter()
            .map(|(o, q)| format!("{o} {q}"))
            .collect::<Vec<_>>()
            .join(", ");
        let hw = format!(
            "its {n} usable node{s} have {capacity} allocatable{cordoned}",
            n = usable.len(),
            s = if usable.len() == 1 { "" } else { "s" },
            cordoned = if unusable > 0 {
                format!(" ({unusable} more cordoned or not Ready)")
            } else {
                String::new()
            }
        );
        if quota > capacity {
            let message = format!(
                "Flavor {f}: nominal quotas add up to {quota} {resource} ({breakdown}) but {hw}: \
                 Kueue can admit workloads whose pods then find no room and stay Pending.",
                f = flavor.name,
            );
            let fix = format!(
                "kubectl get nodes{selector}   # check the hardware behind the flavor\n\
                 # lower nominalQuota for {resource} in flavor {f} so the total is at most {capacity}, or add nodes",
                f = flavor.name,
            );
            out.push(Finding::new(
                Severity::Warning,
                ids::FLAVOR_QUOTA_EXCEEDS_CAPACITY,
                objects,
                message,
                fix,
            ));
        } else if capacity > quota * IDLE_CAPACITY_FACTOR {
            let message = format!(
                "Flavor {f}: nominal quotas add up to {quota} {resource} ({breakdown}) but {hw}: \
                 most of it can never be handed out through Kueue and sits idle (or is used by \
                 pods outside any queue).",
                f = flavor.name,
            );
            let fix = format!(
                "# raise nominalQuota for {resource} in flavor {f} towards {capacity} \
                 (kubectl edit clusterqueue <queue>), or narrow the flavor's nodeLabels",
                f = flavor.name,
            );
            out.push(Finding::new(
                Severity::Info,
                ids::FLAVOR_IDLE_CAPACITY,
                objects,
                message,
                fix,
            ));
        }
    }
}
