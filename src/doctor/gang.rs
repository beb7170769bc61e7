//! Gang health: quota was granted but the pods do not run.
//!
//! Pods are matched to workloads by [`Context::pods_of_workload`] (owner reference,
//! job-name labels, pod-group label).
//!
//! * `admitted-pods-pending` (warning): a workload with `Admitted=True` has pods in phase
//!   Pending for longer than `pending_pod_threshold_ms`, counted from the later of the
//!   pod's creation and the Admitted condition's transition time (pods with neither
//!   timestamp are not judged).
//! * `gpu-fragmentation` (warning): an admitted workload has an unscheduled Pending pod
//!   whose per-pod accelerator request no eligible node has free (allocatable minus the
//!   requests of unfinished pods bound to it), although the eligible nodes together have
//!   enough. Eligible: Ready, not cordoned, matching the flavor assigned to that resource,
//!   the pod's nodeSelector, and tolerated hard taints.
//! * `pod-larger-than-any-node` (error): a pod set's per-pod accelerator request exceeds
//!   the allocatable of every node that could host it (nodeSelector and the ClusterQueue's
//!   flavors for that resource), so its pods can never be scheduled.

use std::collections::{BTreeSet, HashMap};

use super::context::workload_ref;
use super::context::{Context, cluster_ref, flavor_matches_node, list_names, node_usable, ns_ref};
use super::{Finding, Severity, ids};
use crate::model::{Node, Pod, Quantity, Workload};

/// Runs the gang checks.
pub fn check(ctx: &Context, out: &mut Vec<Finding>) {
    let mut memo = Memo::default();
    for w in ctx.state.workloads.values() {
        if w.is_finished() {
            continue;
        }
        if w.condition_true("Admitted") {
            let pods = ctx.pods_of_workload(w);
            pending_pods(ctx, w, &pods, out);
            fragmentation(ctx, w, &pods, &mut memo, out);
        }
        larger_than_any_node(ctx, w, &mut memo, out);
    }
}

/// Node scans shared by workloads with the same constraints: many workloads ask for the
/// same flavors, selector and resource, and scanning every node for each of them is
/// quadratic in the size of the cluster.
#[derive(Default)]
struct Memo<'a> {
    /// (flavors, nodeSelector, tolerations, resource) → eligible nodes (fragmentation).
    eligible: HashMap<String, Vec<&'a Node>>,
    /// (flavors, nodeSelector, resource) → (candidate host count, largest allocatable).
    hosts: HashMap<String, (usize, Quantity)>,
}

fn minutes(ms: i64) -> String {
    let m = ms / 60_000;
    if m >= 1 {
        format!("{m} min")
    } else {
        format!("{} s", ms / 1000)
    }
}

fn pending_pods(ctx: &Context, w: &Workload, pods: &[&Pod], out: &mut Vec<Finding>) {
    let admitted_at = w.condition("Admitted").and_then(|c| c.last_transition_time);
    let mut stuck: Vec<(&Pod, i64)> = Vec::new();
    for pod in pods.iter().filter(|p| p.phase == "Pending") {
        let since = match (pod.creation_timestamp, admitted_at) {
            (Some(a), Some(b)) => a.max(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => continue,
        };
        let age = ctx.opts.now.saturating_sub(since);
        if age >= ctx.opts.pending_pod_threshold_ms {
            stuck.push((pod, age));
        }
    }
    if stuck.is_empty() {
        return;
    }
    let wref = workload_ref(w);
    let oldest = stuck.iter().map(|(_, a)| *a).max().unwrap_or_default();
    let names: Vec<&str> = stuck.iter().map(|(p, _)| p.name.as_str()).collect();
    let message = format!(
        "{wref} was admitted (quota is reserved) but {n} of its {total} pods are still Pending \
         after up to {age} (threshold {th}): {list}. The gang holds quota while it cannot run; \
         the scheduler cannot place its pods.",
        n = stuck.len(),
        total = pods.len(),
        age = minutes(oldest),
        th = minutes(ctx.opts.pending_pod_threshold_ms),
        list = list_names(&names, 6),
    );
    let first = stuck[0].0;
    let fix = format!(
        "kubectl describe pod -n {ns} {p}   # the FailedScheduling event says why\n\
         # usual causes: a flavor toleration or nodeLabel mismatch, too few free GPUs on one \
         node (fragmentation), or pods outside Kueue on the nodes",
        ns = first.namespace,
        p = first.name,
    );
    let mut objects = vec![wref];
    objects.extend(
        stuck
            .iter()
            .map(|(p, _)| ns_ref("Pod", &p.namespace, &p.name)),
    );
    out.push(Finding::new(
        Severity::Warning,
        ids::ADMITTED_PODS_PENDING,
        objects,
        message,
        fix,
    ));
}

/// Flavors the admission assigned to `resource`, over all pod sets.
fn assigned_flavors(w: &Workload, resource: &str) -> BTreeSet<String> {
    w.admission
        .iter()
        .flat_map(|a| &a.pod_set_assignments)
        .filter_map(|psa| psa.flavors.get(resource).cloned())
        .collect()
}

fn tolerates_node(pod_tolerations: &[crate::model::Toleration], node: &Node) -> bool {
    node.taints
        .iter()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .all(|t| pod_tolerations.iter().any(|tol| tol.tolerates(t)))
}

fn fragmentation<'a>(
    ctx: &Context<'a>,
    w: &Workload,
    pods: &[&Pod],
    memo: &mut Memo<'a>,
    out: &mut Vec<Finding>,
) {
    for pod in pods
        .iter()
        .filter(|p| p.phase == "Pending" && p.node_name.is_none())
    {
        for (resource, need) in ctx.accelerators_in(&pod.requests) {
            let flavors = assigned_flavors(w, &resource);
            let key = format!(
                "{flavors:?}\u{0}{:?}\u{0}{:?}",
                pod.node_selector, pod.tolerations
            );
            let candidates = memo.eligible.entry(key).or_insert_with(|| {
                eligible_nodes(ctx, &flavors, &pod.node_selector, &pod.tolerations)
            });
            let free: Vec<(Quantity, &str)> = candidates
                .iter()
                .map(|n| (ctx.node_free(n, &resource), n.name.as_str()))
                .collect();
            let max_free = free.iter().map(|(q, _)| *q).max().unwrap_or_default();
            let total: Quantity = free.iter().map(|(q, _)| *q).sum();
            if candidates.is_empty() || max_free >= need || total < need {
                continue;
            }
            let wref = workload_ref(w);
            let pref = ns_ref("Pod", &pod.namespace, &pod.name);
            let mut spread: Vec<(Quantity, &str)> = free
                .iter()
                .filter(|(q, _)| *q > Quantity::ZERO)
                .copied()
                .collect();
            spread.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
            let spread: Vec<String> = spread.iter().map(|(q, n)| format!("{n}: {q}")).collect();
            let message = format!(
                "{pref} of {wref} needs {need} {resource} on one node, but no eligible node has \
                 that many free (most is {max_free}; {total} free in total, spread as {spread}): \
                 quota fits, the hardware is fragmented, and the pod stays Pending.",
                spread = list_names(&spread, 6),
            );
            let fix = format!(
                "kubectl get pods -A -o wide --field-selector spec.nodeName={node}   # what holds the GPUs\n\
                 # consolidate small jobs onto fewer nodes, use smaller per-pod requests \
                 (more pods), or enable topology-aware scheduling for the flavor",
                node = free
                    .iter()
                    .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(a.1)))
                    .map(|(_, n)| *n)
                    .unwrap_or("<node>"),
            );
            let mut objects = vec![wref, pref];
            objects.extend(candidates.iter().map(|n| cluster_ref("Node", &n.name)));
            out.push(Finding::new(
                Severity::Warning,
                ids::GPU_FRAGMENTATION,
                objects,
                message,
                fix,
            ));
            return; // one example per workload is enough
        }
    }
}

/// Ready, uncordoned nodes matching one of `flavors` (any node when empty), the node
/// selector, and whose hard taints the tolerations tolerate.
fn eligible_nodes<'a>(
    ctx: &Context<'a>,
    flavors: &BTreeSet<String>,
    node_selector: &crate::model::Labels,
    tolerations: &[crate::model::Toleration],
) -> Vec<&'a Node> {
    ctx.state
        .nodes
        .values()
        .filter(|n| node_usable(n))
        .filter(|n| {
            flavors.is_empty()
                || flavors.iter().any(|f| {
                    ctx.state
                        .resource_flavors
                        .get(f)
                        .is_none_or(|rf| flavor_matches_node(rf, n))
                })
        })
        .filter(|n| {
            node_selector
                .iter()
                .all(|(k, v)| n.labels.get(k) == Some(v))
        })
        .filter(|n| tolerates_node(tolerations, n))
        .map(|n| &**n)
        .collect()
}

fn larger_than_any_node<'a>(
    ctx: &Context<'a>,
    w: &Workload,
    memo: &mut Memo<'a>,
    out: &mut Vec<Finding>,
) {
    if ctx.state.nodes.is_empty() {
        return;
    }
    let cq = ctx.cluster_queue_of(w);
    for ps in w.pod_sets.iter() {
        for (resource, need) in ctx.accelerators_in(&ps.requests) {
            // Flavors that could serve this resource: the admitted ones, else the CQ's.
            let mut flavors = assigned_flavors(w, &resource);
            if flavors.is_empty()
                && let Some(cq) = cq
            {
                flavors = cq
                    .resource_groups
                    .iter()
                    .filter(|g| g.covered_resources.contains(&resource))
                    .flat_map(|g| g.flavors.iter().map(|f| f.name.clone()))
                    .collect();
            }
            let fits = |n: &Node| {
                ps.node_selector
                    .iter()
                    .all(|(k, v)| n.labels.get(k) == Some(v))
                    && (flavors.is_empty()
                        || flavors.iter().any(|f| {
                            ctx.state
                                .resource_flavors
                                .get(f)
                                .is_none_or(|rf| flavor_matches_node(rf, n))
                        }))
            };
            let key = format!("{flavors:?}\u{0}{:?}\u{0}{resource}", ps.node_selector);
            let (hosts, largest) = *memo.hosts.entry(key).or_insert_with(|| {
                let hosts: Vec<&Node> = ctx
                    .state
                    .nodes
                    .values()
                    .filter(|n| fits(n))
                    .map(|n| &**n)
                    .collect();
                let largest = hosts
                    .iter()
                    .filter_map(|n| n.allocatable.get(&resource).copied())
                    .max()
                    .unwrap_or_default();
                (hosts.len(), largest)
            });
            if hosts == 0 {
                continue; // no eligible node at all: flavor-matches-no-node covers it
            }
            if need <= largest {
                continue;
            }
            let wref = workload_ref(w);
            let message = format!(
                "{wref}: pod set {ps} asks {need} {resource} per pod, but the largest node that \
                 could host it has {largest} allocatable ({n} candidate nodes): these pods can \
                 never be scheduled, even with all quota free.",
                ps = ps.name,
                n = hosts,
            );
            let fix = format!(
                "# split the work into more pods of at most {largest} {resource} each \
                 (e.g. {pods} pods × {largest}), or add nodes with {need} {resource}",
                pods = if largest > Quantity::ZERO {
                    ((need.milli() + largest.milli() - 1) / largest.milli())
                        * i128::from(ps.count.max(1))
                } else {
                    0
                },
            );
            out.push(Finding::new(
                Severity::Error,
                ids::POD_LARGER_THAN_ANY_NODE,
                vec![wref],
                message,
                fix,
            ));
        }
    }
}
