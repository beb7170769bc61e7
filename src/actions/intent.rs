//! Pure: the approval intent a victim carries while an approval deactivates it, and the
//! recovery decision for a Workload that carries one.
//!
//! The intent is one annotation, [`APPROVAL_ANNOTATION`], holding JSON:
//! `{"id", "preemptor", "approvedBy", "at", "deadlineSeconds", "expectActive", "generation"}`.
//! It is written in two steps of the approval:
//!
//! 1. before deactivating: `expectActive: true` and the Workload's `metadata.generation`
//!    (an annotation change does not bump it);
//! 2. in the same merge patch that sets `spec.active=false`: `expectActive: false` and
//!    `generation + 1` (the apiserver bumps `generation` by one for a spec change; status
//!    and metadata changes leave it alone, so Kueue's evicting does not change it).
//!
//! An interrupted approval is therefore *provably ours* only when the Workload is
//! inactive, the intent says `expectActive: false`, its generation is the Workload's
//! (nobody changed the spec since our deactivation — a resume followed by a hold bumps
//! it twice) and the intent is younger than its own eviction deadline. Everything else
//! is somebody else's decision (a hold by an operator, by kubectl or by Kueue) or a
//! stale leftover: the intent is removed and `spec.active` is never touched.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::catalog::{APPROVED_BY_ANNOTATION, REACTIVATE_ANNOTATION};

/// The annotation holding an approval's intent (JSON, see the module docs).
pub const APPROVAL_ANNOTATION: &str = "gangplank.io/approval";

/// An approval's intent on one victim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalIntent {
    /// Random id of the approval (all its victims share it).
    pub id: String,
    /// `namespace/name` of the preemptor's Workload.
    pub preemptor: String,
    pub approved_by: String,
    /// When the approval started (RFC 3339).
    pub at: String,
    /// The approval's eviction deadline: after `at + deadlineSeconds` the intent has
    /// expired and recovery only reports it.
    pub deadline_seconds: u64,
    /// The `spec.active` the approval left the Workload with.
    pub expect_active: bool,
    /// The `metadata.generation` the Workload has after that write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
}

/// A fresh approval id.
pub fn new_id() -> String {
    format!("{:016x}", rand::random::<u64>())
}

fn annotations(obj: &Value) -> Option<&serde_json::Map<String, Value>> {
    obj.pointer("/metadata/annotations")?.as_object()
}

/// The Workload's `metadata.generation` (1 when absent, as the apiserver starts it).
pub fn generation(obj: &Value) -> i64 {
    obj.pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

/// Whether the Workload is active (`spec.active` defaults to true).
pub fn is_active(obj: &Value) -> bool {
    obj.pointer("/spec/active")
        .and_then(Value::as_bool)
        .unwrap_or(true)
}

/// What a Workload carries: nothing, a readable intent, or something recovery cannot
/// prove is its own (an old `gangplank.io/reactivate`, unreadable JSON).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Carried {
    None,
    Intent(ApprovalIntent),
    Unprovable { why: String },
}

/// Reads the intent annotations of `obj`.
pub fn carried(obj: &Value) -> Carried {
    let Some(a) = annotations(obj) else {
        return Carried::None;
    };
    if let Some(raw) = a.get(APPROVAL_ANNOTATION) {
        let parsed = raw
            .as_str()
            .ok_or_else(|| "not a string".to_string())
            .and_then(|s| serde_json::from_str::<ApprovalIntent>(s).map_err(|e| e.to_string()));
        return match parsed {
            Ok(i) => Carried::Intent(i),
            Err(e) => Carried::Unprovable {
                why: format!("its {APPROVAL_ANNOTATION} annotation is unreadable ({e})"),
            },
        };
    }
    if let Some(p) = a.get(REACTIVATE_ANNOTATION) {
        return Carried::Unprovable {
            why: format!(
                "it carries only the old {REACTIVATE_ANNOTATION}={} annotation (no approval id, time or expected state)",
                p.as_str().unwrap_or("?")
            ),
        };
    }
    Carried::None
}

/// What recovery does with one Workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Nothing of ours on it.
    Skip,
    /// Our own interrupted approval: wait for the eviction, then reactivate.
    Reactivate { intent: ApprovalIntent },
    /// Remove the intent annotations; `spec.active` stays as it is. `outcome` is the
    /// audit word (`cleared`, `expired`), `reason` says why.
    Clear {
        outcome: &'static str,
        reason: String,
    },
}

/// Pure: the recovery decision for `obj` at `now`.
pub fn decide(obj: &Value, now: jiff::Timestamp) -> Decision {
    let active = is_active(obj);
    let intent = match carried(obj) {
        Carried::None => return Decision::Skip,
        Carried::Unprovable { why } => {
            return Decision::Clear {
                outcome: "cleared",
                reason: if active {
                    format!("stale approval annotations removed: {why}")
                } else {
                    format!(
                        "not reactivated, left held: {why}, so it cannot be proven to be gangplank's own interrupted approval; resume it yourself if it should run"
                    )
                },
            };
        }
        Carried::Intent(i) => i,
    };
    let expired = intent
        .at
        .parse::<jiff::Timestamp>()
        .ok()
        .and_then(|at| {
            let secs = i64::try_from(intent.deadline_seconds).ok()?;
            at.checked_add(jiff::SignedDuration::from_secs(secs)).ok()
        })
        .is_none_or(|end| now > end);
    if active {
        return Decision::Clear {
            outcome: "cleared",
            reason: format!(
                "approval {} for {} left an intent on an active Workload (it never deactivated it, or it was resumed since); intent removed",
                intent.id, intent.preemptor
            ),
        };
    }
    if intent.expect_active {
        return Decision::Clear {
            outcome: "cleared",
            reason: format!(
                "held by someone else after approval {} recorded its intent (the approval never deactivated it); the hold stands, intent removed",
                intent.id
            ),
        };
    }
    if intent.generation != Some(generation(obj)) {
        return Decision::Clear {
            outcome: "cleared",
            reason: format!(
                "its spec changed after approval {} deactivated it (generation {} now, {} then): a later hold stands, intent removed",
                intent.id,
                generation(obj),
                intent
                    .generation
                    .map_or_else(|| "unknown".to_string(), |g| g.to_string())
            ),
        };
    }
    if expired {
        return Decision::Clear {
            outcome: "expired",
            reason: format!(
                "approval {} for {} (started {}) is older than its {} s eviction deadline: not reactivated, left held; resume it yourself if it should run",
                intent.id, intent.preemptor, intent.at, intent.deadline_seconds
            ),
        };
    }
    Decision::Reactivate { intent }
}

/// The annotations part of a merge patch: the intent set (`Some`) or removed (`None`),
/// with the old annotations always removed (merge patch `null` deletes a key).
pub fn annotations_patch(intent: Option<&ApprovalIntent>) -> Value {
    match intent {
        Some(i) => json!({
            APPROVAL_ANNOTATION: serde_json::to_string(i).unwrap_or_default(),
            APPROVED_BY_ANNOTATION: i.approved_by,
            REACTIVATE_ANNOTATION: null,
        }),
        None => json!({
            APPROVAL_ANNOTATION: null,
            APPROVED_BY_ANNOTATION: null,
            REACTIVATE_ANNOTATION: null,
        }),
    }
}

/// Whether `obj` carries any approval annotation (new or old).
pub fn has_any(obj: &Value) -> bool {
    annotations(obj).is_some_and(|a| {
        [
            APPROVAL_ANNOTATION,
            REACTIVATE_ANNOTATION,
            APPROVED_BY_ANNOTATION,
        ]
        .iter()
        .any(|k| a.contains_key(*k))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intent(expect_active: bool, generation: Option<i64>, at: &str) -> ApprovalIntent {
        ApprovalIntent {
            id: "abc".into(),
            preemptor: "ns/boss".into(),
            approved_by: "alice".into(),
            at: at.into(),
            deadline_seconds: 120,
            expect_active,
            generation,
        }
    }

    fn wl(active: bool, generation: i64, i: Option<&ApprovalIntent>) -> Value {
        let mut w = json!({"metadata": {"generation": generation}, "spec": {"active": active}});
        if let Some(i) = i {
            w["metadata"]["annotations"] = annotations_patch(Some(i));
        }
        w
    }

    const AT: &str = "2026-12-01T10:00:00Z";

    fn now(s: &str) -> jiff::Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn only_our_own_deactivation_is_reactivated() {
        let t = now("2026-12-01T10:01:00Z");
        let ours = intent(false, Some(3), AT);
        assert!(matches!(
            decide(&wl(false, 3, Some(&ours)), t),
            Decision::Reactivate { .. }
        ));
        // Intent written, never deactivated, then held by an operator: never reverted.
        let before = intent(true, Some(2), AT);
        assert!(matches!(
            decide(&wl(false, 3, Some(&before)), t),
            Decision::Clear {
                outcome: "cleared",
                ..
            }
        ));
        // Resumed and held again since our deactivation: generation moved on.
        assert!(matches!(
            decide(&wl(false, 5, Some(&ours)), t),
            Decision::Clear {
                outcome: "cleared",
                ..
            }
        ));
        // Active with an intent: the intent goes.
        assert!(matches!(
            decide(&wl(true, 2, Some(&before)), t),
            Decision::Clear {
                outcome: "cleared",
                ..
            }
        ));
        // Older than its deadline: reported, not acted on.
        assert!(matches!(
            decide(&wl(false, 3, Some(&ours)), now("2026-12-01T10:02:01Z")),
            Decision::Clear {
                outcome: "expired",
                ..
            }
        ));
        // An unreadable time counts as expired.
        let bad_time = intent(false, Some(3), "yesterday");
        assert!(matches!(
            decide(&wl(false, 3, Some(&bad_time)), t),
            Decision::Clear {
                outcome: "expired",
                ..
            }
        ));
        assert_eq!(decide(&wl(false, 3, None), t), Decision::Skip);
    }

    #[test]
    fn old_and_unreadable_annotations_are_never_acted_on() {
        let t = now("2026-12-01T10:01:00Z");
        let old = json!({"metadata": {"annotations": {REACTIVATE_ANNOTATION: "ns/boss"}}, "spec": {"active": false}});
        let Decision::Clear { reason, .. } = decide(&old, t) else {
            panic!("old annotation acted on");
        };
        assert!(reason.contains("left held"), "{reason}");
        let junk = json!({"metadata": {"annotations": {APPROVAL_ANNOTATION: "{not json"}}, "spec": {"active": false}});
        let Decision::Clear { reason, .. } = decide(&junk, t) else {
            panic!("junk acted on");
        };
        assert!(reason.contains("unreadable"), "{reason}");
    }

    #[test]
    fn intent_round_trips_through_the_annotation() {
        let i = intent(false, Some(4), AT);
        let w = wl(false, 4, Some(&i));
        assert_eq!(carried(&w), Carried::Intent(i));
        assert!(has_any(&w));
        assert!(!has_any(&json!({"metadata": {}})));
    }
}
