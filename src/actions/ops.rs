//! Hold, resume and set-priority: resolve, check permission, write (dry run first),
//! and append exactly one audit line per attempt.

use kube::api::ApiResource;
use kube::core::GroupVersionKind;
use serde_json::{Value, json};

use super::audit::{AuditRecord, now_rfc3339};
use super::catalog::{ActionKind, PRIORITY_CLASS_LABEL, Permission};
use super::executor::{ActionError, ObjRef, dry_run_refusal};
use super::permissions::{Access, check};
use super::plan::{self, PriorityTarget};
use super::resolve::{Resolved, resolve, rv};
use super::{Actor, Outcome};
use crate::source::KUEUE_GROUP;

fn active(obj: &Value) -> bool {
    obj.pointer("/spec/active")
        .and_then(Value::as_bool)
        .unwrap_or(true)
}

/// Refuses when RBAC says no to `patch` on `obj`; `Unknown` proceeds (the write itself
/// is still checked by the apiserver).
pub(super) async fn preflight(actor: &Actor, obj: &ObjRef) -> Result<(), ActionError> {
    if actor.exec.is_readonly() {
        // The executor refuses the write itself; no review request is sent.
        return Ok(());
    }
    let perm = Permission {
        verb: "patch",
        group: &obj.resource.group,
        resource: &obj.resource.plural,
    };
    match check(&actor.exec, &perm, &obj.namespace, Some(&obj.name)).await {
        Access::Denied { reason } => Err(ActionError::Forbidden {
            what: format!("{perm} ({})", obj.describe()),
            message: reason,
        }),
        Access::Allowed | Access::Unknown { .. } => Ok(()),
    }
}

/// The audit outcome word of an error.
pub(super) fn outcome_of(e: &ActionError) -> &'static str {
    match e {
        ActionError::ReadOnly { .. } | ActionError::Forbidden { .. } => "refused",
        ActionError::Conflict { .. } => "conflict",
        _ => "failed",
    }
}

/// Hold (`active=false`) or resume (`active=true`) a Workload or the job owning one.
pub async fn set_active(actor: &Actor, target: &str, want: bool) -> Outcome {
    let kind = if want {
        ActionKind::Resume
    } else {
        ActionKind::Hold
    };
    let mut rec = actor.record(kind, target);
    let result = async {
        let r = resolve(&actor.exec, target).await?;
        rec.target = r.workload.key();
        rec.before = json!({"active": active(&r.object)});
        // Already in the wanted state and carrying no approval intent: nothing to do.
        // With an intent, the write still happens: it removes the intent, so an
        // operator's hold is never "recovered" into a reactivation.
        if active(&r.object) == want && !super::intent::has_any(&r.object) {
            rec.dry_run = "skipped".into();
            return Ok((
                "noop",
                format!(
                    "{} is already {}; nothing written",
                    r.workload.describe(),
                    if want { "active" } else { "held" }
                ),
            ));
        }
        preflight(actor, &r.workload).await?;
        let body = if want {
            plan::resume(r.resource_version().as_deref())
        } else {
            plan::hold(r.resource_version().as_deref())
        };
        let dry = actor
            .exec
            .dry_run(&r.workload, &body)
            .await
            .inspect_err(|e| rec.dry_run = dry_run_refusal(e))?;
        rec.dry_run = "ok".into();
        let w = actor.exec.commit(&r.workload, &body, dry).await?;
        rec.after = json!({"active": active(&w.after)});
        Ok(if w.dry_run_only {
            (
                "dry-run",
                format!(
                    "dry run: the apiserver accepts {} of {}",
                    kind.name(),
                    r.workload.describe()
                ),
            )
        } else if active(&r.object) == want {
            (
                "done",
                format!(
                    "{} was already {}; its approval intent annotations were removed",
                    r.workload.describe(),
                    if want { "active" } else { "held" }
                ),
            )
        } else if want {
            (
                "done",
                format!("resumed {}: Kueue requeues it", r.workload.describe()),
            )
        } else {
            (
                "done",
                format!(
                    "held {}: Kueue evicts it (reason Deactivated) and keeps it out of the queue",
                    r.workload.describe()
                ),
            )
        })
    }
    .await;
    actor.finish(rec, result)
}

/// How audit lines name a queue: `clusterqueue/NAME` or `localqueue/NS/NAME`.
pub(super) fn queue_target(kind: &str, namespace: &str, name: &str) -> String {
    let kind = kind.to_ascii_lowercase();
    if namespace.is_empty() {
        format!("{kind}/{name}")
    } else {
        format!("{kind}/{namespace}/{name}")
    }
}

/// Hold or resume a whole queue through its `spec.stopPolicy`, as `kueuectl stop
/// --keep-already-running` / `kueuectl resume` do: `Hold` admits nothing new and
/// evicts nothing. Same steps as every action: read, access review, dry run, write.
pub async fn set_queue_stop(
    actor: &Actor,
    kind: &str,
    namespace: &str,
    name: &str,
    hold: bool,
) -> Outcome {
    let action = if hold {
        ActionKind::Hold
    } else {
        ActionKind::Resume
    };
    let obj = actor.exec.queue(kind, namespace, name);
    let mut rec = actor.record(action, &queue_target(kind, namespace, name));
    let result = async {
        let current = actor.exec.get(&obj).await?;
        let before = current
            .pointer("/spec/stopPolicy")
            .and_then(Value::as_str)
            .unwrap_or("None")
            .to_string();
        rec.before = json!({"stopPolicy": before});
        let want = if hold { "Hold" } else { "None" };
        // Resuming undoes HoldAndDrain too; holding an already drained queue is a no-op.
        if before == want || (hold && before == "HoldAndDrain") {
            rec.dry_run = "skipped".into();
            return Ok((
                "noop",
                format!("{} is already stopPolicy {before}; nothing written", obj.describe()),
            ));
        }
        preflight(actor, &obj).await?;
        let body = plan::queue_stop_policy(hold, super::resolve::rv(&current).as_deref());
        let dry = actor
            .exec
            .dry_run(&obj, &body)
            .await
            .inspect_err(|e| rec.dry_run = dry_run_refusal(e))?;
        rec.dry_run = "ok".into();
        let w = actor.exec.commit(&obj, &body, dry).await?;
        rec.after = json!({"stopPolicy": w.after.pointer("/spec/stopPolicy").cloned().unwrap_or(json!("None"))});
        Ok(if w.dry_run_only {
            ("dry-run", format!("dry run: the apiserver accepts stopPolicy {want} on {}", obj.describe()))
        } else if hold {
            (
                "done",
                format!("held {}: Kueue admits nothing new from it; running workloads keep running", obj.describe()),
            )
        } else {
            ("done", format!("resumed {}: Kueue admits from it again", obj.describe()))
        })
    }
    .await;
    actor.finish(rec, result)
}

fn uses_workload_priority_class(wl: &Value, job: Option<&Value>) -> bool {
    let by_ref = wl
        .pointer("/spec/priorityClassRef/kind")
        .and_then(Value::as_str)
        == Some("WorkloadPriorityClass");
    let by_source = wl
        .pointer("/spec/priorityClassSource")
        .and_then(Value::as_str)
        == Some(crate::model::well_known::WORKLOAD_PRIORITY_CLASS_SOURCE);
    let by_label = job
        .and_then(|j| j.pointer("/metadata/labels"))
        .and_then(|l| l.get(PRIORITY_CLASS_LABEL))
        .is_some();
    by_ref || by_source || by_label
}

fn wpc_resource(version: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(KUEUE_GROUP, version, "WorkloadPriorityClass"),
        "workloadpriorityclasses",
    )
}

fn pc_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("scheduling.k8s.io", "v1", "PriorityClass"),
        "priorityclasses",
    )
}

/// A cluster-scoped class's `value`, if it exists.
async fn class_value(actor: &Actor, res: &ApiResource, name: &str) -> Option<i64> {
    let items = actor.exec.list(res, None, None).await.ok()?;
    items
        .iter()
        .find(|c| c.pointer("/metadata/name").and_then(Value::as_str) == Some(name))
        .and_then(|c| c.get("value").and_then(Value::as_i64))
}

/// What a priority change will write, worked out from the live objects.
#[derive(Clone, Debug)]
pub struct PriorityWrite {
    /// The object patched: the job (WorkloadPriorityClass label) or the Workload.
    pub object: ObjRef,
    pub body: Value,
    /// In words, e.g. "label kueue.x-k8s.io/priority-class=high on Job team/x".
    pub what: String,
    /// `namespace/name` of the Workload.
    pub workload: String,
    /// The audit line's `before`.
    pub before: Value,
    before_priority: Option<Value>,
}

/// Resolves `target` and works out the write for `to`, without writing: for a job
/// using a WorkloadPriorityClass (or when CLASS is one) its
/// `kueue.x-k8s.io/priority-class` label; otherwise the Workload's `spec.priority` (a
/// VALUE, or the value of the PriorityClass CLASS).
pub async fn plan_set_priority(
    actor: &Actor,
    target: &str,
    to: &PriorityTarget,
) -> Result<PriorityWrite, ActionError> {
    let r: Resolved = resolve(&actor.exec, target).await?;
    let job = match &r.job {
        Some(j) => Some(actor.exec.get(j).await?),
        None => None,
    };
    let wpc_job = uses_workload_priority_class(&r.object, job.as_ref());
    let before_priority = r.object.pointer("/spec/priority").cloned();
    let before_class = job
        .as_ref()
        .and_then(|j| j.pointer("/metadata/labels"))
        .and_then(|l| l.get(PRIORITY_CLASS_LABEL))
        .cloned();
    let (object, body, what) = match to {
        PriorityTarget::Class(class) => {
            let is_wpc = class_value(actor, &wpc_resource(actor.exec.kueue_version()), class)
                .await
                .is_some();
            match (&r.job, &job, is_wpc || wpc_job) {
                (Some(jref), Some(j), true) => {
                    if !is_wpc {
                        return Err(ActionError::Other(format!(
                            "{} uses WorkloadPriorityClasses and there is no WorkloadPriorityClass {class:?}",
                            jref.describe()
                        )));
                    }
                    (
                        jref.clone(),
                        plan::job_priority_class(class, rv(j).as_deref()),
                        format!(
                            "label {PRIORITY_CLASS_LABEL}={class} on {}",
                            jref.describe()
                        ),
                    )
                }
                _ => match class_value(actor, &pc_resource(), class).await {
                    Some(v) => (
                        r.workload.clone(),
                        plan::workload_priority(v as i32, r.resource_version().as_deref()),
                        format!(
                            "spec.priority={v} (PriorityClass {class}) on {}",
                            r.workload.describe()
                        ),
                    ),
                    None => {
                        return Err(ActionError::NotFound {
                            object: format!("WorkloadPriorityClass or PriorityClass {class}"),
                        });
                    }
                },
            }
        }
        PriorityTarget::Value(v) => (
            r.workload.clone(),
            plan::workload_priority(*v, r.resource_version().as_deref()),
            format!("spec.priority={v} on {}", r.workload.describe()),
        ),
    };
    Ok(PriorityWrite {
        object,
        body,
        what,
        workload: r.workload.key(),
        before: json!({"priority": before_priority, "priorityClass": before_class}),
        before_priority,
    })
}

/// Changes a job's priority (see [`plan_set_priority`]): permission check, dry run,
/// write, one audit line.
pub async fn set_priority(actor: &Actor, target: &str, to: &PriorityTarget) -> Outcome {
    let mut rec = actor.record(ActionKind::SetPriority, target);
    let result = async {
        let w = plan_set_priority(actor, target, to).await?;
        rec.target = w.workload.clone();
        rec.before = w.before.clone();
        preflight(actor, &w.object).await?;
        let dry = actor
            .exec
            .dry_run(&w.object, &w.body)
            .await
            .inspect_err(|e| rec.dry_run = dry_run_refusal(e))?;
        rec.dry_run = "ok".into();
        let written = actor.exec.commit(&w.object, &w.body, dry).await?;
        rec.after = json!({
            "priority": if w.object.resource.kind == "Workload" { written.after.pointer("/spec/priority").cloned() } else { w.before_priority.clone() },
            "priorityClass": written.after.pointer("/metadata/labels").and_then(|l| l.get(PRIORITY_CLASS_LABEL)).cloned(),
        });
        Ok(if written.dry_run_only {
            ("dry-run", format!("dry run: the apiserver accepts {}", w.what))
        } else {
            ("done", format!("set {}", w.what))
        })
    }
    .await;
    actor.finish(rec, result)
}

/// An audit record for an action about to be attempted.
pub(super) fn new_record(actor: &Actor, kind: ActionKind, target: &str) -> AuditRecord {
    AuditRecord {
        time: now_rfc3339(),
        who: actor.who.clone(),
        action: kind.name().into(),
        target: target.into(),
        dry_run: "not run".into(),
        readonly: actor.exec.is_readonly(),
        ..Default::default()
    }
}
