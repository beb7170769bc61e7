//! Recovery of interrupted approvals. Any gangplank instance (the console and every
//! headless command that may write) runs it on start: Workloads carrying
//! `gangplank.io/reactivate` with `spec.active=false` were deactivated by an approval
//! that did not finish; once Kueue has cleared their admission they are reactivated
//! and the annotation removed. One audit line per Workload acted on.

use std::time::Duration;

use serde_json::{Value, json};

use super::approve::{reactivate, wait_admission_cleared};
use super::catalog::{ActionKind, REACTIVATE_ANNOTATION};
use super::executor::ActionError;
use super::{Actor, Outcome};

fn annotation<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.pointer("/metadata/annotations")?.get(key)?.as_str()
}

/// Finds interrupted approvals and completes them, waiting at most `deadline` per
/// Workload for its admission to clear. Returns one outcome per Workload acted on.
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
        let Some(preemptor) = annotation(&w, REACTIVATE_ANNOTATION) else {
            continue;
        };
        if w.pointer("/spec/active").and_then(Value::as_bool) != Some(false) {
            continue;
        }
        let ns = w["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = w["metadata"]["name"].as_str().unwrap_or_default();
        let obj = actor.exec.workload(ns, name);
        let mut rec = actor.record(ActionKind::Recover, &obj.key());
        rec.victims = vec![obj.key()];
        rec.before = json!({"active": false, "reactivateFor": preemptor});
        let preemptor = preemptor.to_string();
        let result = async {
            wait_admission_cleared(actor, &obj, deadline).await?;
            reactivate(actor, &obj).await?;
            rec.dry_run = "ok".into();
            rec.after = json!({"active": true});
            Ok((
                "done",
                format!(
                    "recovered an interrupted approval: reactivated {} (evicted for {preemptor})",
                    obj.key()
                ),
            ))
        }
        .await;
        out.push(actor.finish(rec, result));
    }
    Ok(out)
}
