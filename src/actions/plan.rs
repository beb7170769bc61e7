//! Pure: what to write for each action. No I/O; the executor sends these bodies.
//!
//! Every body is a JSON merge patch. A `resourceVersion` in the body is the
//! precondition: the apiserver answers 409 when the object changed since it was read.

use serde_json::{Value, json};

use super::catalog::{APPROVED_BY_ANNOTATION, PRIORITY_CLASS_LABEL, REACTIVATE_ANNOTATION};

/// Adds `metadata.resourceVersion` (the optimistic-concurrency precondition).
fn with_rv(mut patch: Value, rv: Option<&str>) -> Value {
    if let Some(rv) = rv {
        patch["metadata"]["resourceVersion"] = json!(rv);
    }
    patch
}

/// Hold: `spec.active=false` (what `kueuectl stop workload` writes).
pub fn hold(rv: Option<&str>) -> Value {
    with_rv(json!({"spec": {"active": false}}), rv)
}

/// Resume: `spec.active=true`.
pub fn resume(rv: Option<&str>) -> Value {
    with_rv(json!({"spec": {"active": true}}), rv)
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

/// Approval step 1: record the intent on the victim before evicting it, so any
/// gangplank instance can finish the job if this one dies.
pub fn record_intent(preemptor: &str, approved_by: &str, rv: Option<&str>) -> Value {
    with_rv(
        json!({"metadata": {"annotations": {
            REACTIVATE_ANNOTATION: preemptor,
            APPROVED_BY_ANNOTATION: approved_by,
        }}}),
        rv,
    )
}

/// Approval last step: reactivate the victim and drop the intent (merge patch `null`
/// deletes a key).
pub fn reactivate(rv: Option<&str>) -> Value {
    with_rv(
        json!({
            "metadata": {"annotations": {REACTIVATE_ANNOTATION: null, APPROVED_BY_ANNOTATION: null}},
            "spec": {"active": true},
        }),
        rv,
    )
}

/// Takes back a recorded intent (the victim could not be deactivated).
pub fn clear_intent() -> Value {
    json!({"metadata": {"annotations": {REACTIVATE_ANNOTATION: null, APPROVED_BY_ANNOTATION: null}}})
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
        assert_eq!(
            hold(Some("7")),
            json!({"spec": {"active": false}, "metadata": {"resourceVersion": "7"}})
        );
        assert_eq!(resume(None), json!({"spec": {"active": true}}));
        assert_eq!(
            reactivate(None)["metadata"]["annotations"][REACTIVATE_ANNOTATION],
            Value::Null
        );
        assert_eq!(PriorityTarget::parse("12"), PriorityTarget::Value(12));
        assert_eq!(
            PriorityTarget::parse("high"),
            PriorityTarget::Class("high".into())
        );
    }
}
