//! Jobs and their queue label (seed Q1, Q2).
//!
//! * `job-missing-queue-label`: a job in a namespace that has a LocalQueue, without the
//!   `kueue.x-k8s.io/queue-name` label: Kueue ignores it (default
//!   `manageJobsWithoutQueueName: false`) and it runs outside quota.
//! * `job-unknown-local-queue`: the label (or a Workload's `spec.queueName`) names a
//!   LocalQueue that does not exist in that namespace: the job waits forever.

use super::context::{Context, job_ref, list_names, ns_ref, workload_ref};
use super::{Finding, QUEUE_NAME_LABEL, Severity, ids};
use crate::model::LocalQueue;

/// Runs the job checks.
pub fn check(ctx: &Context, out: &mut Vec<Finding>) {
    for job in &ctx.state.jobs {
        let lqs = ctx.local_queues_in(&job.namespace);
        match job.labels.get(QUEUE_NAME_LABEL) {
            None if !lqs.is_empty() => {
                let names: Vec<&str> = lqs.iter().map(|l| l.name.as_str()).collect();
                let obj = job_ref(job);
                let message = format!(
                    "{obj} has no {QUEUE_NAME_LABEL} label, although namespace {ns} has \
                     LocalQueue {lqs}: Kueue does not manage it, so it starts at once outside \
                     any quota and competes with queued workloads for the same nodes.",
                    ns = job.namespace,
                    lqs = list_names(&names, 5),
                );
                let fix = format!(
                    "# add the label to the {kind}'s metadata (Kueue only takes over a job that \
                     is created or suspended with it):\n\
                     metadata:\n  labels:\n    {QUEUE_NAME_LABEL}: {lq}",
                    kind = job.kind,
                    lq = names.join(" | "),
                );
                let mut objects = vec![obj];
                objects.extend(lqs.iter().map(|l| lq_ref(l)));
                out.push(Finding::new(
                    Severity::Warning,
                    ids::JOB_MISSING_QUEUE_LABEL,
                    objects,
                    message,
                    fix,
                ));
            }
            Some(name) if ctx.local_queue(&job.namespace, name).is_none() => {
                let obj = job_ref(job);
                out.push(unknown_lq(ctx, obj, &job.namespace, name, "label"));
            }
            _ => {}
        }
    }
    // Workload objects (and job-derived workloads) whose job was not in the input.
    for w in ctx.state.workloads.values() {
        if ctx.workload_has_listed_job(w) || w.is_finished() {
            continue;
        }
        let Some(name) = w.queue_name.as_deref() else {
            continue;
        };
        if ctx.local_queue(&w.namespace, name).is_none() {
            out.push(unknown_lq(
                ctx,
                workload_ref(w),
                &w.namespace,
                name,
                "queue name",
            ));
        }
    }
}

fn lq_ref(lq: &LocalQueue) -> String {
    ns_ref("LocalQueue", &lq.namespace, &lq.name)
}

fn unknown_lq(ctx: &Context, obj: String, ns: &str, name: &str, what: &str) -> Finding {
    let existing: Vec<&str> = ctx
        .local_queues_in(ns)
        .iter()
        .map(|l| l.name.as_str())
        .collect();
    let there = if existing.is_empty() {
        format!("namespace {ns} has no LocalQueue at all")
    } else {
        format!("namespace {ns} has {}", list_names(&existing, 5))
    };
    let message = format!(
        "{obj} names LocalQueue {name:?} in its {what}, but no such LocalQueue exists in \
         namespace {ns} ({there}): Kueue keeps the job suspended and never admits it."
    );
    let cq_hint = ctx
        .state
        .cluster_queues
        .keys()
        .next()
        .cloned()
        .unwrap_or_else(|| "<cluster-queue>".to_string());
    let mut fix = format!(
        "# create the LocalQueue:\n\
         apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: {name}\n  \
         namespace: {ns}\nspec:\n  clusterQueue: {cq_hint}"
    );
    if !existing.is_empty() {
        fix.push_str(&format!(
            "\n# or point the job at an existing one:\nmetadata:\n  labels:\n    \
             {QUEUE_NAME_LABEL}: {}",
            existing.join(" | ")
        ));
    }
    Finding::new(
        Severity::Error,
        ids::JOB_UNKNOWN_LOCAL_QUEUE,
        vec![obj, ns_ref("LocalQueue", ns, name)],
        message,
        fix,
    )
}
