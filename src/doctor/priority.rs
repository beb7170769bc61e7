//! Priority classes.
//!
//! * `multiple-global-default-priorityclasses` (warning).
//! * `unknown-priority-class` (error): a job's `kueue.x-k8s.io/priority-class` label names
//!   a missing WorkloadPriorityClass (Kueue does not fall back: no Workload is created),
//!   or a pod template's `priorityClassName` names a missing PriorityClass; for
//!   Workloads whose job is not in the input, the same from `priorityClassRef`, pod sets
//!   and the model's `priority_error`. The built-in `system-cluster-critical` and
//!   `system-node-critical` always exist.
//! * `priority-without-preemption` (info): priority classes exist but every ClusterQueue
//!   has all preemption policies at Never, so priority only orders the queues.

use std::collections::BTreeSet;

use super::context::{Context, cluster_ref, job_ref, workload_ref};
use super::{Finding, PRIORITY_CLASS_LABEL, Severity, ids};
use crate::model::{
    BorrowWithinCohortPolicy, ClusterQueue, PodSet, PriorityClassKind, ReclaimWithinCohort,
    WithinClusterQueue,
};

/// PriorityClasses every cluster has.
pub const BUILTIN_PRIORITY_CLASSES: &[&str] = &["system-cluster-critical", "system-node-critical"];

/// Runs the priority checks.
pub fn check(ctx: &Context, out: &mut Vec<Finding>) {
    global_defaults(ctx, out);
    unknown_classes(ctx, out);
    without_preemption(ctx, out);
}

fn global_defaults(ctx: &Context, out: &mut Vec<Finding>) {
    let defaults: Vec<_> = ctx
        .state
        .priority_classes
        .values()
        .filter(|p| p.global_default)
        .collect();
    if defaults.len() < 2 {
        return;
    }
    let names: Vec<String> = defaults
        .iter()
        .map(|p| format!("{} ({})", p.name, p.value))
        .collect();
    let lowest = defaults
        .iter()
        .min_by_key(|p| p.value)
        .map(|p| p.name.as_str());
    let message = format!(
        "{n} PriorityClasses are marked globalDefault: {list}. Which default a job without a \
         priority gets is not what anyone intended (Kueue takes the lowest value, {lowest}).",
        n = defaults.len(),
        list = names.join(", "),
        lowest = lowest.unwrap_or("?"),
    );
    let keep = defaults[0].name.as_str();
    let mut fix = format!("# keep one default (here {keep}) and clear the others:");
    for p in defaults.iter().skip(1) {
        fix.push_str(&format!(
            "\nkubectl patch priorityclass {} --type merge -p '{{\"globalDefault\":false}}'",
            p.name
        ));
    }
    out.push(Finding::new(
        Severity::Warning,
        ids::MULTIPLE_GLOBAL_DEFAULT_PRIORITYCLASSES,
        defaults
            .iter()
            .map(|p| cluster_ref("PriorityClass", &p.name))
            .collect(),
        message,
        fix,
    ));
}

fn pc_exists(ctx: &Context, name: &str) -> bool {
    ctx.state.priority_classes.contains_key(name) || BUILTIN_PRIORITY_CLASSES.contains(&name)
}

/// (kind, name) of the classes a job or workload names that do not exist.
type Missing = BTreeSet<(&'static str, String)>;

fn missing_in_pod_sets(ctx: &Context, pod_sets: &[PodSet], missing: &mut Missing) {
    for ps in pod_sets {
        if let Some(n) = ps.priority_class_name.as_deref()
            && !n.is_empty()
            && !pc_exists(ctx, n)
        {
            missing.insert(("PriorityClass", n.to_string()));
        }
    }
}

fn unknown_classes(ctx: &Context, out: &mut Vec<Finding>) {
    for job in &ctx.state.jobs {
        let mut missing = Missing::new();
        if let Some(n) = job.labels.get(PRIORITY_CLASS_LABEL)
            && !ctx.state.workload_priority_classes.contains_key(n)
        {
            missing.insert(("WorkloadPriorityClass", n.clone()));
        }
        missing_in_pod_sets(ctx, &job.pod_sets, &mut missing);
        for m in missing {
            out.push(unknown_finding(ctx, job_ref(job), m, None));
        }
    }
    for w in ctx.state.workloads.values() {
        if ctx.workload_has_listed_job(w) || w.is_finished() {
            continue;
        }
        let mut missing = Missing::new();
        if let Some(r) = &w.priority_class {
            let exists = match r.kind {
                PriorityClassKind::WorkloadPriorityClass => {
                    ctx.state.workload_priority_classes.contains_key(&r.name)
                }
                PriorityClassKind::PriorityClass => pc_exists(ctx, &r.name),
            };
            if !exists {
                let kind = match r.kind {
                    PriorityClassKind::WorkloadPriorityClass => "WorkloadPriorityClass",
                    PriorityClassKind::PriorityClass => "PriorityClass",
                };
                missing.insert((kind, r.name.clone()));
            }
        }
        if let Some(n) = w.labels.get(PRIORITY_CLASS_LABEL)
            && !ctx.state.workload_priority_classes.contains_key(n)
        {
            missing.insert(("WorkloadPriorityClass", n.clone()));
        }
        missing_in_pod_sets(ctx, &w.pod_sets, &mut missing);
        if missing.is_empty()
            && let Some(err) = &w.priority_error
        {
            let obj = workload_ref(w);
            out.push(Finding::new(
                Severity::Error,
                ids::UNKNOWN_PRIORITY_CLASS,
                vec![obj.clone()],
                format!("{obj}: priority cannot be resolved ({err}); Kueue does not create or update its Workload."),
                "kubectl get workloadpriorityclasses,priorityclasses   # create the class it names, or fix the name",
            ));
        }
        for m in missing {
            out.push(unknown_finding(
                ctx,
                workload_ref(w),
                m,
                w.priority_error.as_deref(),
            ));
        }
    }
}

fn unknown_finding(
    ctx: &Context,
    obj: String,
    (kind, name): (&'static str, String),
    detail: Option<&str>,
) -> Finding {
    let (existing, consequence, fix) = if kind == "WorkloadPriorityClass" {
        let names: Vec<&str> = ctx
            .state
            .workload_priority_classes
            .keys()
            .map(String::as_str)
            .collect();
        (
            names,
            "Kueue does not fall back to another priority: it creates no Workload and the job \
             stays suspended",
            format!(
                "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata:\n  \
                 name: {name}\nvalue: <priority>\ndescription: \"<what it is for>\"\n\
                 # or fix the {PRIORITY_CLASS_LABEL} label on the job"
            ),
        )
    } else {
        let names: Vec<&str> = ctx
            .state
            .priority_classes
            .keys()
            .map(String::as_str)
            .collect();
        (
            names,
            "Kueue cannot derive the workload's priority and the API server rejects its pods",
            format!(
                "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: {name}\n\
                 value: <priority>\nglobalDefault: false\n\
                 # or fix priorityClassName in the pod template"
            ),
        )
    };
    let existing = if existing.is_empty() {
        format!("there is no {kind} at all")
    } else {
        format!("existing: {}", existing.join(", "))
    };
    let detail = detail.map(|d| format!(" [{d}]")).unwrap_or_default();
    let message = format!(
        "{obj} names {kind} {name:?}, which does not exist ({existing}): {consequence}.{detail}"
    );
    Finding::new(
        Severity::Error,
        ids::UNKNOWN_PRIORITY_CLASS,
        vec![obj, cluster_ref(kind, &name)],
        message,
        fix,
    )
}

fn never_preempts(cq: &ClusterQueue) -> bool {
    let p = &cq.preemption;
    p.within_cluster_queue == WithinClusterQueue::Never
        && p.reclaim_within_cohort == ReclaimWithinCohort::Never
        && p.borrow_within_cohort.policy == BorrowWithinCohortPolicy::Never
}

fn without_preemption(ctx: &Context, out: &mut Vec<Finding>) {
    let mut classes: Vec<String> = ctx
        .state
        .priority_classes
        .keys()
        .filter(|n| !BUILTIN_PRIORITY_CLASSES.contains(&n.as_str()))
        .map(|n| cluster_ref("PriorityClass", n))
        .collect();
    classes.extend(
        ctx.state
            .workload_priority_classes
            .keys()
            .map(|n| cluster_ref("WorkloadPriorityClass", n)),
    );
    let cqs = &ctx.state.cluster_queues;
    if classes.is_empty() || cqs.is_empty() || !cqs.values().all(never_preempts) {
        return;
    }
    let message = format!(
        "Priority classes are defined ({list}) but every ClusterQueue has preemption Never \
         (withinClusterQueue, reclaimWithinCohort, borrowWithinCohort): priority only orders \
         the queues; a high-priority job waits for running jobs to finish instead of \
         preempting them.",
        list = classes.join(", "),
    );
    let fix = "# if high priority should displace running work (kubectl edit clusterqueue <name>):\n\
               spec:\n  preemption:\n    withinClusterQueue: LowerPriority\n    reclaimWithinCohort: Any";
    out.push(Finding::new(
        Severity::Info,
        ids::PRIORITY_WITHOUT_PREEMPTION,
        cqs.keys().map(|n| cluster_ref("ClusterQueue", n)).collect(),
        message,
        fix,
    ));
}
