//! Adapters from the engine's plan and doctor's report to the console's own view types.
//!
//! The console's views never see engine types; these functions are the one seam.

use std::collections::{BTreeMap, HashMap};

use crate::doctor;
use crate::engine::{Explanation, Plan};
use crate::model::{ClusterState, Quantity};

use super::data::{
    AdmissionView, CycleView, HealthRow, PlanView, PreemptionView, Severity, Verdict,
};

/// Accelerator units a workload holds or asks for (GPUs, Neuron devices, ...).
fn accelerators(state: &ClusterState, key: &str) -> i64 {
    let Some((ns, name)) = key.split_once('/') else {
        return 0;
    };
    let Some(wl) = state.workloads.get(&(ns.to_string(), name.to_string())) else {
        return 0;
    };
    let total = wl.total_requests();
    let sum: Quantity = doctor::DEFAULT_ACCELERATOR_RESOURCES
        .iter()
        .filter_map(|r| total.get(*r).copied())
        .sum();
    i64::try_from(sum.units_ceil()).unwrap_or(i64::MAX)
}

fn split_key(key: &str) -> (String, String) {
    match key.split_once('/') {
        Some((ns, name)) => (ns.to_string(), name.to_string()),
        None => (String::new(), key.to_string()),
    }
}

/// The explanation as lines for the detail pane.
fn explanation_lines(e: &Explanation) -> Vec<String> {
    let mut lines = vec![e.reason.to_string()];
    if !e.message.is_empty() && e.message != e.reason {
        lines.push(format!(
            "Kueue would say: {} ({})",
            e.message, e.condition_reason
        ));
    }
    for need in &e.needs {
        lines.push(format!(
            "pod set {}: {} × {} {} in flavor {}: needs {}, free {}, nominal {}, borrowable {}",
            need.pod_set,
            need.count,
            need.per_pod,
            need.resource,
            need.flavor,
            need.needed,
            need.free,
            need.nominal,
            need.borrowable
        ));
    }
    for victim in &e.waiting_for {
        lines.push(format!("waiting for {victim} to release its quota"));
    }
    match (e.position_in_cluster_queue, e.position_in_local_queue) {
        (Some(cq), Some(lq)) => lines.push(format!(
            "position {cq} in ClusterQueue {}, {lq} in LocalQueue {}",
            e.cluster_queue.as_deref().unwrap_or("?"),
            e.local_queue.as_deref().unwrap_or("?")
        )),
        (Some(cq), None) => lines.push(format!(
            "position {cq} in ClusterQueue {}",
            e.cluster_queue.as_deref().unwrap_or("?")
        )),
        _ => {}
    }
    lines
}

/// Builds the console's picture of a plan computed over `state`.
pub fn plan_view(plan: &Plan, state: &ClusterState) -> PlanView {
    let mut verdicts: HashMap<(String, String), Verdict> = HashMap::new();
    let mut cycles = Vec::with_capacity(plan.cycles.len());

    for (i, cycle) in plan.cycles.iter().enumerate() {
        let n = i + 1;
        let mut by_preemptor: BTreeMap<(&str, String), Vec<&str>> = BTreeMap::new();
        for p in &cycle.preempted {
            by_preemptor
                .entry((p.by.as_str(), p.reason.to_string()))
                .or_default()
                .push(p.workload.as_str());
            verdicts
                .entry(split_key(&p.workload))
                .or_insert_with(|| Verdict {
                    verdict: format!("preempted by {} (cycle {n})", p.by),
                    position: None,
                    explanation: vec![format!(
                        "cycle {n}: Kueue evicts it to make room for {} ({})",
                        p.by, p.reason
                    )],
                });
        }
        let preempted = by_preemptor
            .into_iter()
            .map(|((by, reason), victims)| {
                let gpus_freed = victims.iter().map(|v| accelerators(state, v)).sum();
                verdicts.entry(split_key(by)).or_insert_with(|| Verdict {
                    verdict: format!("preempts {}", victims.len()),
                    position: None,
                    explanation: vec![format!(
                        "cycle {n}: preempts {} ({reason})",
                        victims.join(", ")
                    )],
                });
                PreemptionView {
                    preemptor: by.to_string(),
                    victims: victims.into_iter().map(str::to_string).collect(),
                    reason,
                    gpus_freed,
                }
            })
            .collect();
        let admitted = cycle
            .admitted
            .iter()
            .map(|a| {
                let flavors = a
                    .flavors
                    .iter()
                    .flat_map(|(podset, res)| {
                        res.iter().map(move |(r, f)| format!("{podset} {r}: {f}"))
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                let when = if n == 1 {
                    "admits next cycle".to_string()
                } else {
                    format!("admits in cycle {n}")
                };
                let entry = verdicts.entry(split_key(&a.workload)).or_default();
                if entry.verdict.is_empty() {
                    entry.verdict = when.clone();
                } else if entry.verdict.starts_with("preempts") {
                    entry.verdict = format!("{}, {when}", entry.verdict);
                }
                entry.explanation.push(format!(
                    "cycle {n}: admitted in {} ({flavors})",
                    a.cluster_queue
                ));
                AdmissionView {
                    workload: a.workload.clone(),
                    cluster_queue: a.cluster_queue.clone(),
                    flavors,
                }
            })
            .collect();
        cycles.push(CycleView {
            index: n as u32,
            admitted,
            preempted,
        });
    }

    // Workloads still pending after the last cycle: why they wait.
    if let Some(last) = plan.cycles.last() {
        for p in &last.pending {
            let entry = verdicts.entry(split_key(&p.workload)).or_default();
            entry.position = p.position.map(|x| x as u32);
            if entry.verdict.is_empty() {
                entry.verdict = format!("blocked: {}", p.reason);
            }
            match &p.explanation {
                Some(e) => entry.explanation.extend(explanation_lines(e)),
                None => entry.explanation.push(p.reason.to_string()),
            }
        }
    }
    // Positions before the first cycle are what the operator sees in the queue now.
    if let Some(first) = plan.cycles.first() {
        for p in &first.pending {
            if let Some(v) = verdicts.get_mut(&split_key(&p.workload)) {
                v.position = p.position.map(|x| x as u32).or(v.position);
            }
        }
    }

    let pending = plan
        .cycles
        .last()
        .map(|last| pending_heads(state, last.pending.iter()))
        .unwrap_or_default();
    PlanView {
        verdicts,
        cycles,
        proposals: Vec::new(),
        computed_at: None,
        duration_ms: None,
        pending,
    }
}

/// The first pending workload of each ClusterQueue (position 1), with the shortfall
/// summed per resource and flavor over its pod sets, and what could free room.
fn pending_heads<'a>(
    state: &ClusterState,
    pending: impl Iterator<Item = &'a crate::engine::PlanPending>,
) -> Vec<super::data::PendingHeadView> {
    let mut out = Vec::new();
    for p in pending.filter(|p| p.position == Some(1)) {
        let cq = p.cluster_queue.as_deref().unwrap_or("").to_string();
        let mut short: BTreeMap<(String, String), Quantity> = BTreeMap::new();
        let mut could_free = String::new();
        if let Some(e) = &p.explanation {
            for need in &e.needs {
                let gap = need
                    .needed
                    .saturating_sub_zero(need.free)
                    .saturating_sub_zero(need.borrowable);
                let slot = short
                    .entry((need.resource.clone(), need.flavor.clone()))
                    .or_default();
                *slot = (*slot).max(gap);
            }
            if !e.waiting_for.is_empty() {
                could_free = format!("preempting {} (pending)", e.waiting_for.join(", "));
            }
        }
        let shortfall: Vec<String> = short
            .iter()
            .filter(|(_, q)| !q.is_zero())
            .map(|((r, f), q)| format!("{q} {r} in {f}"))
            .collect();
        if could_free.is_empty() && !shortfall.is_empty() {
            could_free = lower_priority_running(state, &p.workload, &cq);
        }
        out.push(super::data::PendingHeadView {
            workload: p.workload.to_string(),
            cluster_queue: cq,
            reason: p.reason.to_string(),
            shortfall: shortfall.join(", "),
            could_free,
        });
    }
    out.sort_by(|a, b| a.cluster_queue.cmp(&b.cluster_queue));
    out
}

/// Admitted workloads in `cq` of lower priority than `key`'s: what preemption (or an
/// operator's approval) could evict to make room. Up to five, lowest priority first.
fn lower_priority_running(state: &ClusterState, key: &str, cq: &str) -> String {
    let (ns, name) = split_key(key);
    let Some(head) = state.workloads.get(&(ns, name)) else {
        return String::new();
    };
    let mut lower: Vec<(i32, String, i64)> = state
        .workloads
        .values()
        .filter(|w| {
            w.priority < head.priority
                && w.admission.as_ref().is_some_and(|a| a.cluster_queue == cq)
                && !w.is_finished()
        })
        .map(|w| (w.priority, w.key(), accelerators(state, &w.key())))
        .collect();
    if lower.is_empty() {
        return format!("nothing of lower priority runs in {cq}: a finish or more quota");
    }
    lower.sort();
    let n = lower.len();
    let shown: Vec<String> = lower
        .iter()
        .take(5)
        .map(|(p, k, g)| format!("{k} ({g} GPUs, priority {p})"))
        .collect();
    let more = if n > 5 {
        format!(" and {} more", n - 5)
    } else {
        String::new()
    };
    format!("evicting {}{more}", shown.join(", "))
}

/// doctor findings as Health view rows.
pub fn health_rows(report: &doctor::Report) -> Vec<HealthRow> {
    report
        .findings
        .iter()
        .map(|f| HealthRow {
            severity: match f.severity {
                doctor::Severity::Error => Severity::Error,
                doctor::Severity::Warning => Severity::Warning,
                doctor::Severity::Info => Severity::Info,
            },
            check: f.check.clone(),
            objects: f.objects.clone(),
            message: f.message.clone(),
            fix: f.fix.clone(),
        })
        .collect()
}

/// At most this many pending workloads are asked for a proposal per plan: each asks
/// the engine once over the whole state.
pub const MAX_PROPOSAL_CANDIDATES: usize = 50;

/// Preemptions awaiting approval: pending workloads their ClusterQueue's own policy
/// will not free room for, but the approval policy would (see docs/actions.md). The
/// id is the preemptor's `namespace/name`, which `approve` takes.
pub fn proposal_views(
    state: &ClusterState,
    policy: &crate::actions::ApprovalPolicy,
) -> Vec<super::data::ProposalView> {
    state
        .workloads
        .values()
        .filter(|w| {
            w.active
                && w.queue_name.is_some()
                && !w.has_quota_reservation()
                && !w.is_finished()
                && w.priority_error.is_none()
        })
        .take(MAX_PROPOSAL_CANDIDATES)
        .filter_map(|w| {
            let key = w.key();
            let p = crate::actions::approve::proposal_for(state, &key, policy).ok()?;
            let gpus: i64 = p
                .victims
                .iter()
                .map(|v| accelerators(state, &v.workload))
                .sum();
            Some(super::data::ProposalView {
                id: key.clone(),
                action: "evict".into(),
                target: key.clone(),
                summary: format!(
                    "evict {} ({gpus} GPUs) for {key}",
                    p.victims
                        .iter()
                        .map(|v| v.workload.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
        })
        .collect()
}

/// The operator actions of the audit ledger as Events view rows (unsorted).
pub fn operator_event_rows(
    state: &ClusterState,
    audit: &[super::data::AuditRow],
) -> Vec<super::data::EventRow> {
    use super::data::{EventKind, EventRow};
    use super::rows::workloads::display_name;
    let mut out = Vec::with_capacity(audit.len());
    for a in audit {
        out.push(EventRow {
            time: a.time,
            kind: EventKind::Operator,
            object: a.target.clone(),
            object_name: display_name(state, &a.target),
            by: Some(a.actor.clone()),
            reason: a.outcome.clone(),
            gpus: 0,
            text: format!(
                "{} {} {}: {}",
                a.actor,
                a.action,
                display_name(state, &a.target),
                a.outcome
            ),
            message: a.details.join("; "),
        });
    }
    out
}

/// `feed` (the watch's events, newest first) with the operator actions of `audit`
/// merged in, newest first.
pub fn with_operator_events(
    state: &ClusterState,
    feed: &[super::data::EventRow],
    audit: &[super::data::AuditRow],
) -> Vec<super::data::EventRow> {
    let mut out: Vec<_> = feed
        .iter()
        .filter(|e| e.kind != super::data::EventKind::Operator)
        .cloned()
        .chain(operator_event_rows(state, audit))
        .collect();
    sort_newest_first(&mut out);
    out
}

fn sort_newest_first(out: &mut [super::data::EventRow]) {
    // Newest first; ties keep a stable, readable order.
    out.sort_by(|a, b| b.time.cmp(&a.time).then_with(|| a.kind.cmp(&b.kind)));
}

/// The Events view's rows, newest first: evictions and preemptions (preemptor by name,
/// reason, GPUs freed), the timeline (admissions, requeues, finishes, holds, resumes,
/// priority changes) and the operator actions of the audit ledger.
pub fn event_rows(
    state: &ClusterState,
    evictions: &[crate::source::EvictionRecord],
    timeline: &[crate::source::TimelineRecord],
    audit: &[super::data::AuditRow],
) -> Vec<super::data::EventRow> {
    use super::data::{EventKind, EventRow};
    use super::rows::workloads::display_name;
    let mut out = Vec::with_capacity(evictions.len() + timeline.len() + audit.len());
    for e in evictions {
        let victim = display_name(state, &e.victim);
        let gpus = accelerators(state, &e.victim);
        let preempted = e.reason.contains("Preempted") || e.preemption_reason.is_some();
        let by = e.preemptor.as_deref().map(|p| display_name(state, p));
        let reason = e
            .preemption_reason
            .clone()
            .unwrap_or_else(|| e.reason.clone());
        let (kind, text) = if preempted {
            let who = by.clone().unwrap_or_else(|| match &e.preemptor_uid {
                Some(uid) => format!("workload with UID {uid} (gone)"),
                None => "an unknown workload".to_string(),
            });
            (
                EventKind::Preempted,
                format!("{who} preempted {victim} ({reason}, {gpus} GPUs freed)"),
            )
        } else if e.reason == "Deactivated" {
            // The hold itself is its own `Held` line (spec.active flipped): this is the
            // eviction that followed, with the GPUs it freed.
            let by = e
                .approved_by
                .as_deref()
                .map_or(String::new(), |who| format!(", approved by {who}"));
            (
                EventKind::Evicted,
                format!("{victim} evicted: deactivated ({gpus} GPUs freed{by})"),
            )
        } else {
            (
                EventKind::Evicted,
                format!("{victim} evicted ({reason}, {gpus} GPUs freed)"),
            )
        };
        out.push(EventRow {
            time: e.time_ms(),
            kind,
            object: e.victim.clone(),
            object_name: victim,
            by,
            reason,
            gpus,
            text,
            message: e.message.clone(),
        });
    }
    for t in timeline {
        let name = display_name(state, &t.workload);
        let (kind, text) = match t.event.as_str() {
            "Admitted" => (EventKind::Admitted, format!("{name} admitted")),
            "Requeued" => (
                EventKind::Requeued,
                format!("{name} requeued ({})", t.reason),
            ),
            "Finished" => (
                EventKind::Finished,
                format!("{name} finished ({})", t.reason),
            ),
            "Held" => (EventKind::Held, format!("{name} held (spec.active=false)")),
            "Resumed" => (
                EventKind::Resumed,
                format!("{name} resumed (spec.active=true)"),
            ),
            "PriorityChanged" => (
                EventKind::PriorityChanged,
                format!("{name} priority {}", t.reason),
            ),
            other => (EventKind::Requeued, format!("{name} {other}")),
        };
        out.push(EventRow {
            time: t.time_ms(),
            kind,
            object: t.workload.clone(),
            object_name: name,
            by: None,
            reason: t.reason.clone(),
            gpus: 0,
            text,
            message: t.message.clone(),
        });
    }
    out.extend(operator_event_rows(state, audit));
    sort_newest_first(&mut out);
    out
}

#[cfg(test)]
mod event_tests {
    use super::*;
    use crate::source::{EvictionRecord, TimelineRecord};
    use crate::tui::data::{AuditRow, EventKind};

    fn eviction(victim: &str, reason: &str, preemptor: Option<&str>) -> EvictionRecord {
        EvictionRecord {
            id: format!("{victim}@1"),
            time: "2026-01-01T00:10:00Z".into(),
            victim: victim.into(),
            victim_uid: "v".into(),
            victim_priority: 1,
            victim_cluster_queue: None,
            preemptor: preemptor.map(str::to_string),
            preemptor_uid: Some("gone-uid".into()),
            preemptor_job_uid: None,
            preemptor_priority: None,
            preemptor_cluster_queue: None,
            reason: reason.into(),
            preemption_reason: (reason == "Preempted").then(|| "InClusterQueue".to_string()),
            message: String::new(),
            approved_by: Some("alice".into()),
        }
    }

    #[test]
    fn events_are_newest_first_and_say_who_did_what() {
        let state = ClusterState::default();
        let evictions = [
            eviction(
                "cv-team/pytorchjob-yolo-train-1d9fd",
                "Preempted",
                Some("nlp-team/pytorchjob-boss-7c3e0"),
            ),
            eviction("cv-team/pytorchjob-resnet-sweep-aaaaa", "Preempted", None),
            eviction("nlp-team/pytorchjob-bert-bbbbb", "Deactivated", None),
        ];
        let timeline = [TimelineRecord {
            id: "x@Admitted@1".into(),
            event: "Admitted".into(),
            time: "2026-01-01T00:11:00Z".into(),
            workload: "nlp-team/pytorchjob-boss-7c3e0".into(),
            workload_uid: "x".into(),
            reason: "QuotaReserved".into(),
            message: String::new(),
        }];
        let audit = [AuditRow {
            time: 0,
            actor: "alice".into(),
            action: "hold".into(),
            target: "cv-team/pytorchjob-resnet-sweep-aaaaa".into(),
            outcome: "ok".into(),
            details: vec![],
        }];
        let rows = event_rows(&state, &evictions, &timeline, &audit);
        assert_eq!(rows[0].kind, EventKind::Admitted, "newest first: {rows:?}");
        assert_eq!(rows[0].text, "nlp-team/boss admitted");
        let pre = rows.iter().find(|r| r.object.contains("yolo")).unwrap();
        assert_eq!(
            pre.text,
            "nlp-team/boss preempted cv-team/yolo-train (InClusterQueue, 0 GPUs freed)"
        );
        let gone = rows
            .iter()
            .find(|r| r.object.contains("resnet") && r.kind == EventKind::Preempted)
            .unwrap();
        assert!(
            gone.text
                .starts_with("workload with UID gone-uid (gone) preempted"),
            "{}",
            gone.text
        );
        let held = rows.iter().find(|r| r.object.contains("bert")).unwrap();
        assert_eq!(held.kind, EventKind::Evicted);
        assert!(held.text.contains("deactivated") && held.text.contains("approved by alice"));
        // The operator action with an unknown time sorts last and keeps time 0 (`—`).
        let last = rows.last().unwrap();
        assert_eq!((last.kind, last.time), (EventKind::Operator, 0));
        assert_eq!(last.text, "alice hold cv-team/resnet-sweep: ok");
    }
}
