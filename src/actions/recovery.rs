//! Recovery of interrupted approvals. Any gangplank instance (the console and every
//! headless command that may write) runs it on start. For each Workload carrying an
//! approval intent, [`super::intent::decide`] says what to do, and every decision is
//! audited with its reason (one line per Workload):
//!
//! * provably our own interrupted approval (inactive, intent written by the
//!   deactivation itself, spec unchanged since, younger than its deadline): wait until
//!   Kueue has cleared the admission, then reactivate and remove the intent;
//! * anything else (active with an intent, held by someone else, spec changed since,
//!   old or unreadable annotations, expired): remove the intent and leave `spec.active`
//!   exactly as it is. A hold is never reverted.

use std::time::Duration;

use serde_json::{Value, json};

use super::approve::{Reactivation, reactivate_if_ours, wait_admission_cleared};
use super::catalog::ActionKind;
use super::executor::ActionError;
use super::intent::{self, Decision};
use super::resolve::rv;
use super::{Actor, Outcome, plan};

fn intent_json(w: &Value) -> Value {
    match intent::carried(w) {
        intent::Carried::Intent(i) => serde_json::to_value(i).unwrap_or(Value::Null),
        intent::Carried::Unprovable { why } => json!({"unprovable": why}),
        intent::Carried::None => Value::Null,
    }
}

/// Finds approval intents and decides on each, waiting at most `deadline` per Workload
/// for its admission to clear. Returns one outcome per Workload that carried one.
/// Read-only executors return nothing (they never write).
pub async fn recover(actor: &Actor, deadline: Duration) -> Result<Vec<Outcome>, ActionError> {
    if actor.exec.is_readonly() || actor.exec.is_dry_run_only() {
        return Ok(Vec::new());
    }
    let all = actor
        .exec
        .list(&actor.exec.workload_resource(), None, None)
        .await?;
    let mut out = Vec::new();
    for w in all {
        let decision = intent::decide(&w, jiff::Timestamp::now());
        if decision == Decision::Skip {
            continue;
        }
        let ns = w["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = w["metadata"]["name"].as_str().unwrap_or_default();
        let obj = actor.exec.workload(ns, name);
        let mut rec = actor.record(ActionKind::Recover, &obj.key());
        rec.victims = vec![obj.key()];
        let active = intent::is_active(&w);
        rec.before = json!({"active": active, "approval": intent_json(&w)});
        let result = match decision {
            Decision::Skip => continue,
            Decision::Reactivate { intent } => {
                rec.approval_id = Some(intent.id.clone());
                async {
                    let cur = wait_admission_cleared(actor, &obj, deadline).await?;
                    rec.dry_run = "ok".into();
                    match reactivate_if_ours(actor, &obj, &intent.id, Some(cur)).await? {
                        Reactivation::Reactivated => {
                            rec.after = json!({"active": true});
                            Ok((
                                "done",
                                format!(
                                    "recovered an interrupted approval: reactivated {} (evicted for {} by approval {})",
                                    obj.key(),
                                    intent.preemptor,
                                    intent.id
                                ),
                            ))
                        }
                        Reactivation::NotOurs { reason } => Ok((
                            "noop",
                            format!("{} not reactivated: {reason}", obj.key()),
                        )),
                    }
                }
                .await
            }
            Decision::Clear { outcome, reason } => {
                if let intent::Carried::Intent(i) = intent::carried(&w) {
                    rec.approval_id = Some(i.id);
                }
                async {
                    actor
                        .exec
                        .write(&obj, &plan::clear_intent(rv(&w).as_deref()))
                        .await?;
                    rec.dry_run = "skipped".into();
                    rec.after = json!({"active": active, "approval": null});
                    Ok((outcome, format!("{}: {reason}", obj.key())))
                }
                .await
            }
        };
        out.push(actor.finish(rec, result));
    }
    Ok(out)
}
