//! Pure: what to write for each action. No I/O; the executor sends these bodies.
//!
//! Every body is a JSON merge patch. A `resourceVersion` in the body is the
//! precondition: the apiserver answers 409 when the object changed since it was read.

use serde_json::{Value, json};

use super::catalog::PRIORITY_CLASS_LABEL;
use super::intent::{ApprovalIntent, annotations_patch};

/// Adds `metadata.resourceVersion` (the optimistic-concurrency precondition).
fn with_rv(mut patch: Value, rv: Option<&str>) -> Value {
    if let Some(rv) = rv {
        patch["metadata"]["resourceVersion"] = json!(rv);
    }
    patch
}

/// Hold: `spec.active=false` (what `kueuectl stop workload` writes). An operator's
/// hold supersedes any approval in flight: its intent annotations are removed, so
/// neither the approval nor recovery ever reactivates the Workload.
pub fn hold(rv: Option<&str>) -> Value {
    with_rv(
        json!({"spec": {"active": false}, "metadata": {"annotations": annotations_patch(None)}}),
        rv,
    )
}

/// Resume: `spec.active=true`, approval intent annotations removed.
pub fn resume(rv: Option<&str>) -> Value {
    with_rv(
        json!({"spec": {"active": true}, "metadata": {"annotations": annotations_patch(None)}}),
        rv,
    )
}

/// A queue's `spec.stopPolicy` (what `kueuectl stop|resume clusterqueue|localqueue`
/// writes): `Hold` stops new admissions and keeps what runs; `None` resumes.
pub fn queue_stop_policy(hold: bool, rv: Option<&str>) -> Value {
    let policy = if hold { "Hold" } else { "None" };
    with_rv(json!({"spec": {"stopPolicy": policy}}), rv)
}

/// A job's WorkloadPriorityClass label (Kueue propagates it to the Workload).
pub fn job_priority_class(class: &str, rv: Option<&str>) -> Value {
    with_rv(
        json!({"metadata": {"labels": {PRIORITY_CLASS_LABEL: class}}}),
        rv,
    )
}

/// The Workload's own `spec.priority`.
pub fn workload_priority(value: i32, rv: Option<&str>) -> Value {
    with_rv(json!({"spec": {"priority": value}}), rv)
}

/// Approval step 1: record the intent on the victim before evicting it
/// (`expect_active: true`), so any gangplank instance can tell an interrupted approval
/// of its own from somebody else's hold (see [`super::intent`]).
pub fn record_intent(intent: &ApprovalIntent, rv: Option<&str>) -> Value {
    with_rv(
        json!({"metadata": {"annotations": annotations_patch(Some(intent))}}),
        rv,
    )
}

/// Approval step 2: `spec.active=false` and, in the same write, the intent saying so
/// (`expect_active: false`, the generation this spec change gives the Workload).
pub fn deactivate(intent: &ApprovalIntent, rv: Option<&str>) -> Value {
    with_rv(
        json!({"spec": {"active": false}, "metadata": {"annotations": annotations_patch(Some(intent))}}),
        rv,
    )
}

/// Approval last step: reactivate the victim and drop the intent (merge patch `null`
/// deletes a key).
pub fn reactivate(rv: Option<&str>) -> Value {
    with_rv(
        json!({
            "metadata": {"annotations": annotations_patch(None)},
            "spec": {"active": true},
        }),
        rv,
    )
}

/// Removes the intent annotations and nothing else.
pub fn clear_intent(rv: Option<&str>) -> Value {
    with_rv(
        json!({"metadata": {"annotations": annotations_patch(None)}}),
        rv,
    )
}

/// What `set-priority` was given: a class name or a number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PriorityTarget {
    Class(String),
    Value(i32),
}

impl PriorityTarget {
    /// A number is a value; anything else a class name.
    pub fn parse(s: &str) -> PriorityTarget {
        match s.parse::<i32>() {
            Ok(v) => PriorityTarget::Value(v),
            Err(_) => PriorityTarget::Class(s.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies() {
        use super::super::intent::APPROVAL_ANNOTATION;
        let h = hold(Some("7"));
        assert_eq!(h["spec"], json!({"active": false}));
        assert_eq!(h["metadata"]["resourceVersion"], "7");
        // A hold removes any approval intent (merge patch null).
        assert!(
            h["metadata"]["annotations"]
                .as_object()
                .unwrap()
                .contains_key(APPROVAL_ANNOTATION)
        );
        assert_eq!(
            h["metadata"]["annotations"][APPROVAL_ANNOTATION],
            Value::Null
        );
        assert_eq!(resume(None)["spec"], json!({"active": true}));
        assert_eq!(
            reactivate(None)["metadata"]["annotations"][APPROVAL_ANNOTATION],
            Value::Null
        );
        assert_eq!(PriorityTarget::parse("12"), PriorityTarget::Value(12));
        assert_eq!(
            PriorityTarget::parse("high"),
            PriorityTarget::Class("high".into())
        );
    }
}
