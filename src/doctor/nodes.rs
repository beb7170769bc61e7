//! GPU nodes and the pods that bypass Kueue on them (seed Q3).
//!
//! * `gpu-node-untainted`: accelerator nodes without a NoSchedule/NoExecute taint.
//! * `gpu-pod-outside-queue`: unmanaged pods that request accelerators.
//! * `pod-bypasses-queue-on-gpu-node`: other unmanaged pods bound to accelerator nodes.
//!
//! DaemonSet pods (device plugins, exporters) and static/mirror pods are node
//! infrastructure and never findings. A pod that requests accelerators is reported only
//! as `gpu-pod-outside-queue`, not also as `pod-bypasses-queue-on-gpu-node`.

use std::collections::BTreeMap;

use super::context::{Context, pod_is_finished};
use super::context::{cluster_ref, flavor_matches_node, is_daemonset_pod, list_names, ns_ref};
use super::{Finding, QUEUE_NAME_LABEL, Severity, ids};
use crate::model::{Node, Pod, Taint};

/// Runs the node checks.
pub fn check(ctx: &Context, out: &mut Vec<Finding>) {
    untainted_gpu_nodes(ctx, out);
    unmanaged_pods(ctx, out);
}

fn hard_taints(node: &Node) -> Vec<&Taint> {
    node.taints
        .iter()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .collect()
}

fn untainted_gpu_nodes(ctx: &Context, out: &mut Vec<Finding>) {
    // Grouped by the node's first accelerator resource, so one command fixes a group.
    let mut groups: BTreeMap<String, Vec<&Node>> = BTreeMap::new();
    for node in ctx.state.nodes.values() {
        let accel = ctx.accelerators_in(&node.allocatable);
        let Some((resource, _)) = accel.first() else {
            continue;
        };
        if hard_taints(node).is_empty() {
            groups.entry(resource.clone()).or_default().push(node);
        }
    }
    for (resource, nodes) in groups {
        let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        let flavors: Vec<&str> = ctx
            .state
            .resource_flavors
            .values()
            .filter(|f| !f.node_labels.is_empty())
            .filter(|f| nodes.iter().any(|n| flavor_matches_node(f, n)))
            .map(|f| f.name.as_str())
            .collect();
        let flavor_hint = if flavors.is_empty() {
            "<your GPU flavor>".to_string()
        } else {
            flavors.join(" / ")
        };
        let (plural, verb) = if names.len() == 1 {
            ("", "carries")
        } else {
            ("s", "carry")
        };
        let message = format!(
            "{n} node{plural} with allocatable {resource} ({list}) {verb} no NoSchedule or \
             NoExecute taint: any pod, including ones that never pass through a Kueue queue, \
             can be scheduled onto them and take CPU, memory or GPUs that Kueue counts as free.",
            n = names.len(),
            list = list_names(&names, 8),
        );
        let fix = format!(
            "kubectl taint nodes {nodes} {resource}=present:NoSchedule\n\
             # and let admitted workloads tolerate it through the flavor\n\
             # (kubectl edit resourceflavor {flavor_hint}):\n\
             spec:\n  tolerations:\n  - key: {resource}\n    operator: Exists\n    effect: NoSchedule",
            nodes = names.join(" "),
        );
        let objects = names.iter().map(|n| cluster_ref("Node", n)).collect();
        out.push(Finding::new(
            Severity::Warning,
            ids::GPU_NODE_UNTAINTED,
            objects,
            message,
            fix,
        ));
    }
}

/// Pods that are node infrastructure rather than work: DaemonSet and static pods.
fn is_infrastructure(pod: &Pod) -> bool {
    is_daemonset_pod(pod) || pod.owner_references.iter().any(|o| o.kind == "Node")
}

fn owner_phrase(pod: &Pod) -> String {
    match pod.owner_references.iter().find(|o| o.controller) {
        Some(o) => format!(" (owned by {}/{})", o.kind, o.name),
        None => match pod.owner_references.first() {
            Some(o) => format!(" (owned by {}/{})", o.kind, o.name),
            None => String::new(),
        },
    }
}

fn queue_label_fix(ctx: &Context, pod: &Pod) -> String {
    let lqs = ctx.local_queues_in(&pod.namespace);
    let lq = match lqs.as_slice() {
        [one] => one.name.clone(),
        [] => "<local-queue>".to_string(),
        many => many
            .iter()
            .map(|l| l.name.as_str())
            .collect::<Vec<_>>()
            .join(" | "),
    };
    let mut fix = format!(
        "# submit the work as a job with the queue label (on the Job/PyTorchJob, not the pod):\n\
         metadata:\n  labels:\n    {QUEUE_NAME_LABEL}: {lq}"
    );
    if lqs.is_empty() {
        fix.push_str(&format!(
            "\n# namespace {ns} has no LocalQueue yet; create one:\n\
             apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: <local-queue>\n  \
             namespace: {ns}\nspec:\n  clusterQueue: <cluster-queue>",
            ns = pod.namespace
        ));
    }
    fix
}

fn unmanaged_pods(ctx: &Context, out: &mut Vec<Finding>) {
    for pod in ctx.state.pods.values() {
        if pod_is_finished(pod) || is_infrastructure(pod) || ctx.pod_is_managed(pod) {
            continue;
        }
        let pod_obj = ns_ref("Pod", &pod.namespace, &pod.name);
        let accel = ctx.accelerators_in(&pod.requests);
        if !accel.is_empty() {
            let asks = accel
                .iter()
                .map(|(r, q)| format!("{q} {r}"))
                .collect::<Vec<_>>()
                .join(", ");
            let mut objects = vec![pod_obj.clone()];
            if let Some(n) = &pod.node_name {
                objects.push(cluster_ref("Node", n));
            }
            let message = format!(
                "{pod_obj}{owner} requests {asks} but is not in any Kueue queue (no \
                 {QUEUE_NAME_LABEL} label, no Kueue-managed owner): Kueue does not count it, so \
                 it admits workloads onto accelerators this pod holds and their pods stay Pending.",
                owner = owner_phrase(pod),
            );
            out.push(Finding::new(
                Severity::Warning,
                ids::GPU_POD_OUTSIDE_QUEUE,
                objects,
                message,
                queue_label_fix(ctx, pod),
            ));
            continue;
        }
        let Some(node_name) = &pod.node_name else {
            continue;
        };
        let Some(node) = ctx.state.nodes.get(node_name) else {
            continue;
        };
        if !ctx.is_gpu_node(node) {
            continue;
        }
        let taints = hard_taints(node);
        let fix = if taints.is_empty() {
            let resource = ctx
                .accelerators_in(&node.allocatable)
                .first()
                .map(|(r, _)| r.clone())
                .unwrap_or_else(|| crate::model::well_known::NVIDIA_GPU.to_string());
            format!(
                "kubectl taint nodes {node_name} {resource}=present:NoSchedule\n\
                 # then move the pod off the node: kubectl delete pod -n {ns} {name}",
                ns = pod.namespace,
                name = pod.name,
            )
        } else {
            let keys: Vec<&str> = taints.iter().map(|t| t.key.as_str()).collect();
            format!(
                "# the pod tolerates the node's taint ({keys}); remove that toleration from its \
                 owner's pod template, then: kubectl delete pod -n {ns} {name}",
                keys = keys.join(", "),
                ns = pod.namespace,
                name = pod.name,
            )
        };
        let message = format!(
            "{pod_obj}{owner} is not managed by Kueue but runs on GPU node {node_name}: it \
             takes CPU and memory there that Kueue-admitted GPU pods may need, so they can stay \
             Pending although quota was granted.",
            owner = owner_phrase(pod),
        );
        out.push(Finding::new(
            Severity::Warning,
            ids::POD_BYPASSES_QUEUE_ON_GPU_NODE,
            vec![pod_obj, cluster_ref("Node", node_name)],
            message,
            fix,
        ));
    }
}
