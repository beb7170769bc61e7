//! Queue wiring: LocalQueue → ClusterQueue → ResourceFlavor, and namespace selection.
//!
//! * `localqueue-missing-clusterqueue`, `clusterqueue-missing-flavor` (also for Cohorts).
//! * `namespace-selector-absent`: Kueue admits from no namespace when the field is absent.
//! * `namespace-excluded-by-selector`: a namespace with a LocalQueue pointing at a
//!   ClusterQueue whose selector does not match the namespace's labels. Namespaces are
//!   evaluated with their labels plus the automatic `kubernetes.io/metadata.name`; a
//!   namespace absent from the input is only judged when the selector uses that key alone.

use super::context::{Context, cluster_ref, list_names, ns_ref};
use super::{Finding, Severity, ids};
use crate::model::{ClusterQueue, LabelSelector, LocalQueue, ResourceGroup};

use crate::model::well_known::NAMESPACE_NAME_LABEL as NAME_LABEL;

/// Runs the queue wiring checks.
pub fn check(ctx: &Context, out: &mut Vec<Finding>) {
    for lq in ctx.state.local_queues.values() {
        match ctx.state.cluster_queues.get(&lq.cluster_queue) {
            None => out.push(missing_cq(ctx, lq)),
            Some(cq) => {
                if let Some(sel) = &cq.namespace_selector
                    && let Some(false) = namespace_matches(ctx, sel, &lq.namespace)
                {
                    out.push(excluded(ctx, cq, sel, lq));
                }
            }
        }
    }
    for cq in ctx.state.cluster_queues.values() {
        if cq.namespace_selector.is_none() {
            out.push(selector_absent(ctx, cq));
        }
        missing_flavors(
            ctx,
            cluster_ref("ClusterQueue", &cq.name),
            &cq.resource_groups,
            out,
        );
    }
    for cohort in ctx.state.cohorts.values() {
        missing_flavors(
            ctx,
            cluster_ref("Cohort", &cohort.name),
            &cohort.resource_groups,
            out,
        );
    }
}

/// `Some(matches)`, or `None` when the namespace's labels are unknown.
fn namespace_matches(ctx: &Context, sel: &LabelSelector, ns: &str) -> Option<bool> {
    let mut labels = match ctx.state.namespaces.get(ns) {
        Some(n) => n.labels.clone(),
        None => {
            let only_name = sel.match_labels.keys().all(|k| k == NAME_LABEL)
                && sel.match_expressions.iter().all(|e| e.key == NAME_LABEL);
            if !only_name {
                return None;
            }
            crate::model::Labels::new()
        }
    };
    labels
        .entry(NAME_LABEL.to_string())
        .or_insert_with(|| ns.to_string());
    Some(sel.matches(&labels))
}

fn missing_cq(ctx: &Context, lq: &LocalQueue) -> Finding {
    let obj = ns_ref("LocalQueue", &lq.namespace, &lq.name);
    let existing: Vec<&str> = ctx
        .state
        .cluster_queues
        .keys()
        .map(String::as_str)
        .collect();
    let there = if existing.is_empty() {
        "there is no ClusterQueue at all".to_string()
    } else {
        format!("existing: {}", list_names(&existing, 5))
    };
    let message = format!(
        "{obj} points at ClusterQueue {cq:?}, which does not exist ({there}): every job \
         submitted to this LocalQueue stays pending.",
        cq = lq.cluster_queue
    );
    let mut fix = format!(
        "# create the ClusterQueue:\n\
         apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: {cq}\nspec:\n  \
         namespaceSelector: {{}}\n  resourceGroups:\n  - coveredResources: [\"nvidia.com/gpu\"]\n    \
         flavors:\n    - name: <flavor>\n      resources:\n      - name: \"nvidia.com/gpu\"\n        \
         nominalQuota: <gpus>",
        cq = lq.cluster_queue
    );
    if !existing.is_empty() {
        fix.push_str(&format!(
            "\n# or point the LocalQueue at an existing one \
             (kubectl edit localqueue -n {ns} {name}):\nspec:\n  clusterQueue: {}",
            existing.join(" | "),
            ns = lq.namespace,
            name = lq.name,
        ));
    }
    Finding::new(
        Severity::Error,
        ids::LOCALQUEUE_MISSING_CLUSTERQUEUE,
        vec![obj, cluster_ref("ClusterQueue", &lq.cluster_queue)],
        message,
        fix,
    )
}

fn missing_flavors(ctx: &Context, owner: String, groups: &[ResourceGroup], out: &mut Vec<Finding>) {
    for group in groups {
        for fq in &group.flavors {
            if ctx.state.resource_flavors.contains_key(&fq.name) {
                continue;
            }
            let message = format!(
                "{owner} lists flavor {f:?} (for {res}), but ResourceFlavor {f} does not exist: \
                 Kueue marks the queue inactive (FlavorNotFound) and admits nothing through it.",
                f = fq.name,
                res = group.covered_resources.join(", "),
            );
            let fix = format!(
                "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: {f}\n\
                 spec:\n  nodeLabels:\n    <node-label-key>: <value>   # labels of the nodes this flavor stands for",
                f = fq.name
            );
            out.push(Finding::new(
                Severity::Error,
                ids::CLUSTERQUEUE_MISSING_FLAVOR,
                vec![owner.clone(), cluster_ref("ResourceFlavor", &fq.name)],
                message,
                fix,
            ));
        }
    }
}

fn selector_absent(ctx: &Context, cq: &ClusterQueue) -> Finding {
    let obj = cluster_ref("ClusterQueue", &cq.name);
    let mut objects = vec![obj.clone()];
    objects.extend(
        ctx.state
            .local_queues
            .values()
            .filter(|lq| lq.cluster_queue == cq.name)
            .map(|lq| ns_ref("LocalQueue", &lq.namespace, &lq.name)),
    );
    let message = format!(
        "{obj} has no spec.namespaceSelector: an absent selector matches no namespace, so the \
         queue admits nothing (an empty selector {{}} would admit every namespace)."
    );
    let fix = format!(
        "# kubectl edit clusterqueue {name}\nspec:\n  namespaceSelector: {{}}   # every namespace\n\
         # or only some:\n  # namespaceSelector:\n  #   matchLabels:\n  #     <label>: <value>",
        name = cq.name
    );
    Finding::new(
        Severity::Error,
        ids::NAMESPACE_SELECTOR_ABSENT,
        objects,
        message,
        fix,
    )
}

fn describe_selector(sel: &LabelSelector) -> String {
    let mut parts: Vec<String> = sel
        .match_labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for e in &sel.match_expressions {
        if e.values.is_empty() {
            parts.push(format!("{} {}", e.key, e.operator));
        } else {
            parts.push(format!(
                "{} {} ({})",
                e.key,
                e.operator,
                e.values.join(", ")
            ));
        }
    }
    parts.join(", ")
}

fn excluded(ctx: &Context, cq: &ClusterQueue, sel: &LabelSelector, lq: &LocalQueue) -> Finding {
    let ns = &lq.namespace;
    let cq_obj = cluster_ref("ClusterQueue", &cq.name);
    let lq_obj = ns_ref("LocalQueue", ns, &lq.name);
    let labels = ctx
        .state
        .namespaces
        .get(ns)
        .map(|n| {
            n.labels
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let labels = if labels.is_empty() {
        "no labels".to_string()
    } else {
        format!("labels {}", labels.join(", "))
    };
    let message = format!(
        "{lq_obj} points at {cq_obj}, but the ClusterQueue's namespaceSelector ({sel}) does not \
         match namespace {ns} ({labels}): its workloads are never admitted (NamespaceMismatch).",
        sel = describe_selector(sel),
    );
    // Labels that would satisfy the selector's positive terms.
    let mut wanted: Vec<String> = sel
        .match_labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for e in &sel.match_expressions {
        match (e.operator.as_str(), e.values.first()) {
            ("In", Some(v)) => wanted.push(format!("{}={v}", e.key)),
            ("Exists", _) => wanted.push(format!("{}=<value>", e.key)),
            _ => {}
        }
    }
    let mut fix = String::new();
    if !wanted.is_empty() {
        fix.push_str(&format!(
            "kubectl label namespace {ns} {} --overwrite\n",
            wanted.join(" ")
        ));
    }
    fix.push_str(&format!(
        "# or widen the selector (kubectl edit clusterqueue {name}) so it matches {ns}",
        name = cq.name
    ));
    Finding::new(
        Severity::Error,
        ids::NAMESPACE_EXCLUDED_BY_SELECTOR,
        vec![cq_obj, lq_obj, cluster_ref("Namespace", ns)],
        message,
        fix,
    )
}
