//! The preemption approval flow.
//!
//! A proposal exists for a pending workload that its ClusterQueue's own policy will not
//! free room for, but the approval policy (default withinClusterQueue LowerPriority +
//! reclaimWithinCohort Any) would. Approving it, per victim: record the intent
//! (annotations), deactivate with a resourceVersion precondition, wait until Kueue has
//! cleared its admission, then reactivate it and drop the intent, so Kueue requeues it
//! in its original place and admits the higher-priority preemptor first. An interrupted
//! approval is finished by [`super::recovery`].

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::catalog::ActionKind;
use super::executor::{ActionError, ObjRef, dry_run_refusal};
use super::intent::{self, ApprovalIntent};
use super::ops::preflight;
use super::plan;
use super::resolve::{resolve, rv};
use super::{Actor, Outcome};
use crate::engine::{PolicyOverride, propose_preemption};
use crate::model::{ClusterState, ReclaimWithinCohort, WithinClusterQueue, well_known};

/// The policy approvals are proposed under (`--approval-policy`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalPolicy(pub PolicyOverride);

impl Default for ApprovalPolicy {
    fn default() -> Self {
        ApprovalPolicy(PolicyOverride {
            within_cluster_queue: Some(WithinClusterQueue::LowerPriority),
            reclaim_within_cohort: Some(ReclaimWithinCohort::Any),
            borrow_within_cohort: None,
        })
    }
}

impl std::str::FromStr for ApprovalPolicy {
    type Err = String;

    /// `within=LowerPriority,reclaim=Any` (either part may be left out).
    fn from_str(s: &str) -> Result<Self, String> {
        let mut p = PolicyOverride::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("expected key=value, got {part:?}"))?;
            match k {
                "within" | "withinClusterQueue" => {
                    p.within_cluster_queue = Some(match v {
                        "Never" => WithinClusterQueue::Never,
                        "LowerPriority" => WithinClusterQueue::LowerPriority,
                        "LowerOrNewerEqualPriority" => {
                            WithinClusterQueue::LowerOrNewerEqualPriority
                        }
                        _ => return Err(format!("unknown withinClusterQueue {v:?}")),
                    })
                }
                "reclaim" | "reclaimWithinCohort" => {
                    p.reclaim_within_cohort = Some(match v {
                        "Never" => ReclaimWithinCohort::Never,
                        "LowerPriority" => ReclaimWithinCohort::LowerPriority,
                        "Any" => ReclaimWithinCohort::Any,
                        _ => return Err(format!("unknown reclaimWithinCohort {v:?}")),
                    })
                }
                _ => return Err(format!("unknown policy key {k:?} (within, reclaim)")),
            }
        }
        Ok(ApprovalPolicy(p))
    }
}

/// One victim as the operator sees it before confirming.
#[derive(Clone, Debug, PartialEq)]
pub struct VictimPlan {
    /// `namespace/name` of the Workload.
    pub key: String,
    pub namespace: String,
    pub name: String,
    /// The owning job (`Kind name`), or the Workload itself.
    pub owner: String,
    pub gpus: i128,
    pub priority: i32,
    /// Seconds of run time lost (now − QuotaReserved time), when known.
    pub run_time_lost_secs: Option<i64>,
    /// The resourceVersion the plan was made against (the write precondition).
    pub resource_version: Option<String>,
}

/// An approval, ready to confirm.
#[derive(Clone, Debug, PartialEq)]
pub struct ApprovalPlan {
    /// `namespace/name` of the preemptor's Workload.
    pub preemptor: String,
    pub cluster_queue: String,
    /// pod set → resource → flavor the preemptor would get.
    pub flavors: BTreeMap<String, BTreeMap<String, String>>,
    pub victims: Vec<VictimPlan>,
}

fn gpus(state: &ClusterState, ns: &str, name: &str) -> i128 {
    state
        .workloads
        .get(&(ns.to_string(), name.to_string()))
        .map(|w| i128::from(well_known::accelerator_units(&w.total_requests())))
        .unwrap_or(0)
}

fn quota_reserved_at(obj: &Value) -> Option<jiff::Timestamp> {
    obj.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == "QuotaReserved" && c["status"] == "True")?
        .get("lastTransitionTime")?
        .as_str()?
        .parse()
        .ok()
}

/// Pure: the proposal for `key` under `policy`, unless Kueue's own policy frees room
/// itself (then there is nothing to approve).
pub fn proposal_for(
    state: &ClusterState,
    key: &str,
    policy: &ApprovalPolicy,
) -> Result<crate::engine::Proposal, String> {
    if let Some(own) = propose_preemption(state, key, &PolicyOverride::default()) {
        return Err(if own.victims.is_empty() {
            format!("{key} fits without preemption; Kueue will admit it")
        } else {
            format!(
                "Kueue's own policy already preempts for {key} ({}); nothing to approve",
                own.victims
                    .iter()
                    .map(|v| v.workload.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        });
    }
    match propose_preemption(state, key, &policy.0) {
        Some(p) if !p.victims.is_empty() => Ok(p),
        Some(_) => Err(format!(
            "{key} fits without preemption; Kueue will admit it"
        )),
        None => Err(format!(
            "no proposal for {key}: it is not pending, or cannot be admitted even under the approval policy"
        )),
    }
}

/// Builds the plan for `target` (a Workload or its job) from `state`, reading each
/// victim's live resourceVersion (the precondition of the writes).
pub async fn plan_approval(
    actor: &Actor,
    state: &ClusterState,
    target: &str,
    policy: &ApprovalPolicy,
) -> Result<ApprovalPlan, ActionError> {
    let r = resolve(&actor.exec, target).await?;
    let key = r.workload.key();
    // The snapshot may predate the Workload Kueue just created for a job (the API
    // answered `resolve` first): the job's own pending entry in the snapshot stands
    // for the same gang until the next snapshot arrives.
    let known = |k: &str| {
        k.split_once('/').is_some_and(|(ns, name)| {
            state
                .workloads
                .contains_key(&(ns.to_string(), name.to_string()))
        })
    };
    let plan_key = if !known(&key) && known(target) {
        target
    } else {
        key.as_str()
    };
    let proposal = proposal_for(state, plan_key, policy).map_err(ActionError::Other)?;
    let now = jiff::Timestamp::now();
    let mut victims = Vec::new();
    for v in &proposal.victims {
        let (ns, name) = v.workload.split_once('/').unwrap_or(("", &v.workload));
        let obj = actor.exec.get(&actor.exec.workload(ns, name)).await?;
        let owner = super::resolve::owner_job(&obj)
            .map(|j| format!("{} {}", j.resource.kind, j.name))
            .unwrap_or_else(|| format!("Workload {name}"));
        victims.push(VictimPlan {
            key: v.workload.clone(),
            namespace: ns.into(),
            name: name.into(),
            owner,
            gpus: gpus(state, ns, name),
            priority: v.priority,
            // Clamped: a simulator running faster than the wall clock stamps the future.
            run_time_lost_secs: quota_reserved_at(&obj)
                .map(|t| now.duration_since(t).as_secs().max(0)),
            resource_version: rv(&obj),
        });
    }
    Ok(ApprovalPlan {
        preemptor: key,
        cluster_queue: proposal.cluster_queue,
        flavors: proposal.flavors,
        victims,
    })
}

fn human_secs(s: i64) -> String {
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

impl ApprovalPlan {
    /// The confirmation text: preemptor, each victim, the resulting admission.
    pub fn describe(&self) -> String {
        let mut out = format!(
            "approve preemption for {} (ClusterQueue {})\n",
            self.preemptor, self.cluster_queue
        );
        out.push_str("victims (deactivated, then requeued in their original place):\n");
        for v in &self.victims {
            out.push_str(&format!(
                "  {:<40} owner {:<32} team {:<12} {:>3} GPUs  priority {:>8}  run time lost {}\n",
                v.key,
                v.owner,
                v.namespace,
                v.gpus,
                v.priority,
                v.run_time_lost_secs
                    .map(human_secs)
                    .unwrap_or_else(|| "unknown".into())
            ));
        }
        let flavors: Vec<String> = self
            .flavors
            .iter()
            .flat_map(|(ps, m)| m.iter().map(move |(r, f)| format!("{ps}: {r} on {f}")))
            .collect();
        out.push_str(&format!(
            "then Kueue admits {} in {} ({})\n",
            self.preemptor,
            self.cluster_queue,
            flavors.join(", ")
        ));
        out
    }

    /// The console's confirmation panel: the preemptor, every victim (one line each,
    /// wrapped by the panel), the quota freed, the resulting admission, and what stays
    /// pending in the ClusterQueue afterwards (from `state`, the snapshot the plan
    /// was made on).
    pub fn confirm_lines(&self, state: &ClusterState) -> Vec<String> {
        let mut out = vec![format!(
            "preemptor: {} ({} GPUs) in ClusterQueue {}",
            self.preemptor,
            self.preemptor
                .split_once('/')
                .map_or(0, |(ns, n)| gpus(state, ns, n)),
            self.cluster_queue
        )];
        out.push(format!(
            "victims ({}; deactivated, then requeued in their original place):",
            self.victims.len()
        ));
        for v in &self.victims {
            out.push(format!(
                "  {} — {}, {} GPUs, priority {}, run time lost {}",
                v.key,
                v.owner,
                v.gpus,
                v.priority,
                v.run_time_lost_secs
                    .map(human_secs)
                    .unwrap_or_else(|| "unknown".into())
            ));
        }
        let freed: i128 = self.victims.iter().map(|v| v.gpus).sum();
        out.push(format!(
            "quota freed: {freed} GPUs in {}",
            self.cluster_queue
        ));
        let flavors: Vec<String> = self
            .flavors
            .iter()
            .flat_map(|(ps, m)| m.iter().map(move |(r, f)| format!("{ps}: {r} on {f}")))
            .collect();
        out.push(format!(
            "then Kueue admits {} ({})",
            self.preemptor,
            flavors.join(", ")
        ));
        // Pending workloads of the same ClusterQueue other than the preemptor.
        let victims: Vec<&str> = self.victims.iter().map(|v| v.key.as_str()).collect();
        let blocked: Vec<String> = state
            .workloads
            .values()
            .filter(|w| {
                w.active
                    && !w.is_finished()
                    && !w.has_quota_reservation()
                    && w.queue_name.as_ref().is_some_and(|q| {
                        state
                            .local_queues
                            .get(&(w.namespace.clone(), q.clone()))
                            .is_some_and(|lq| lq.cluster_queue == self.cluster_queue)
                    })
            })
            .map(|w| w.key())
            .filter(|k| *k != self.preemptor && !victims.contains(&k.as_str()))
            .collect();
        out.push(if blocked.is_empty() {
            format!(
                "stays blocked: the victims, until {} frees quota again",
                self.cluster_queue
            )
        } else {
            format!(
                "stays blocked: the victims, and {} already pending in {}: {}",
                blocked.len(),
                self.cluster_queue,
                blocked.join(", ")
            )
        });
        out
    }

    /// One line, for the console's confirmation prompt.
    pub fn summary(&self) -> String {
        format!(
            "evict {} for {}",
            self.victims
                .iter()
                .map(|v| v.key.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            self.preemptor
        )
    }
}

/// Knobs of [`execute_approval`].
#[derive(Clone, Debug)]
pub struct ApproveOptions {
    /// How long to wait for Kueue to clear a victim's admission.
    pub eviction_deadline: Duration,
    /// Tests: stop after deactivating (as if the process were killed there).
    pub stop_after_deactivate: bool,
    /// Tests: stop after recording the first victim's intent, before deactivating it
    /// (as if the process were killed between the two writes).
    pub stop_after_intent: bool,
}

impl Default for ApproveOptions {
    fn default() -> Self {
        ApproveOptions {
            eviction_deadline: Duration::from_secs(120),
            stop_after_deactivate: false,
            stop_after_intent: false,
        }
    }
}

/// Whether Kueue has cleared the Workload's admission (`status.admission` absent).
pub fn admission_cleared(obj: &Value) -> bool {
    obj.pointer("/status/admission").is_none_or(Value::is_null)
}

/// Polls until `obj`'s admission is cleared or the deadline passes; returns the last
/// object read. Polling (not sleeping as synchronisation): every read is checked.
pub async fn wait_admission_cleared(
    actor: &Actor,
    obj: &ObjRef,
    deadline: Duration,
) -> Result<Value, ActionError> {
    let end = Instant::now() + deadline;
    loop {
        let cur = actor.exec.get(obj).await?;
        if admission_cleared(&cur) {
            return Ok(cur);
        }
        if Instant::now() >= end {
            return Err(ActionError::Timeout {
                what: format!("waiting for Kueue to evict {}", obj.describe()),
                secs: deadline.as_secs(),
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// What [`reactivate_if_ours`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reactivation {
    Reactivated,
    /// The Workload no longer carries approval `id`'s intent as left by its
    /// deactivation (an operator held or resumed it since): nothing written.
    NotOurs {
        reason: String,
    },
}

/// Reactivates a victim and drops the intent, only while it still carries approval
/// `id`'s intent exactly as the deactivation left it (see [`super::intent::decide`]).
/// The write has the read's resourceVersion as precondition: Kueue bumps it with every
/// status change while evicting, so a 409 re-reads and decides again.
pub async fn reactivate_if_ours(
    actor: &Actor,
    obj: &ObjRef,
    id: &str,
    first_read: Option<Value>,
) -> Result<Reactivation, ActionError> {
    let mut cur = first_read;
    for _ in 0..20 {
        let o = match cur.take() {
            Some(o) => o,
            None => actor.exec.get(obj).await?,
        };
        match intent::decide(&o, jiff::Timestamp::now()) {
            intent::Decision::Reactivate { intent } if intent.id == id => {}
            intent::Decision::Reactivate { intent } => {
                return Ok(Reactivation::NotOurs {
                    reason: format!("it now carries approval {}'s intent", intent.id),
                });
            }
            intent::Decision::Clear { reason, .. } => {
                return Ok(Reactivation::NotOurs { reason });
            }
            intent::Decision::Skip => {
                return Ok(Reactivation::NotOurs {
                    reason: "its approval intent was removed (held or resumed by an operator)"
                        .into(),
                });
            }
        }
        match actor
            .exec
            .write(obj, &plan::reactivate(rv(&o).as_deref()))
            .await
        {
            Ok(_) => return Ok(Reactivation::Reactivated),
            Err(ActionError::Conflict { .. }) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(ActionError::Other(format!(
        "{} kept changing; gave up reactivating it after 20 conflicts",
        obj.describe()
    )))
}

/// Runs an approved plan (after the operator confirmed). Exactly one audit line.
pub async fn execute_approval(
    actor: &Actor,
    plan: &ApprovalPlan,
    opts: &ApproveOptions,
) -> Outcome {
    let mut rec = actor.record(ActionKind::Approve, &plan.preemptor);
    rec.victims = plan.victims.iter().map(|v| v.key.clone()).collect();
    rec.before = json!(
        plan.victims
            .iter()
            .map(|v| json!({"workload": v.key, "active": true, "resourceVersion": v.resource_version}))
            .collect::<Vec<_>>()
    );
    let objs: Vec<ObjRef> = plan
        .victims
        .iter()
        .map(|v| actor.exec.workload(&v.namespace, &v.name))
        .collect();
    let mut evicted: Vec<String> = Vec::new();
    let mut left_held: Vec<String> = Vec::new();
    let intent = ApprovalIntent {
        id: intent::new_id(),
        preemptor: plan.preemptor.clone(),
        approved_by: actor.who.clone(),
        at: jiff::Timestamp::now().to_string(),
        deadline_seconds: opts.eviction_deadline.as_secs(),
        expect_active: true,
        generation: None,
    };
    rec.approval_id = Some(intent.id.clone());
    let result: Result<(&str, String), ActionError> = async {
        for o in &objs {
            preflight(actor, o).await?;
        }
        // Dry-run every intent against the plan's resourceVersions first: a victim that
        // changed since the plan answers 409 here and nothing at all is written.
        for (v, o) in plan.victims.iter().zip(&objs) {
            let body = plan::record_intent(&intent, v.resource_version.as_deref());
            actor
                .exec
                .dry_run(o, &body)
                .await
                .inspect_err(|e| rec.dry_run = dry_run_refusal(e))?;
        }
        rec.dry_run = "ok".into();
        if actor.exec.is_dry_run_only() {
            return Ok((
                "dry-run",
                format!(
                    "dry run: the apiserver accepts the approval ({})",
                    plan.summary()
                ),
            ));
        }
        for (v, o) in plan.victims.iter().zip(&objs) {
            let body = plan::record_intent(&intent, v.resource_version.as_deref());
            let w = actor.exec.write(o, &body).await?;
            if opts.stop_after_intent {
                return Ok((
                    "partial",
                    format!("stopped after recording the intent on {}", v.key),
                ));
            }
            // The spec change bumps generation by one; the intent records the result so
            // recovery can tell this deactivation from any later hold.
            let deactivated = ApprovalIntent {
                expect_active: false,
                generation: Some(intent::generation(&w.after) + 1),
                ..intent.clone()
            };
            if let Err(e) = actor
                .exec
                .write(o, &plan::deactivate(&deactivated, rv(&w.after).as_deref()))
                .await
            {
                // The intent is on a victim that stays active: take it back (recovery
                // would remove it too, and never reactivates on its account).
                let undo = actor.exec.write(o, &plan::clear_intent(None)).await;
                return Err(ActionError::Other(format!(
                    "{e}; {} was not deactivated ({})",
                    v.key,
                    match undo {
                        Ok(_) => "its intent annotation was removed".to_string(),
                        Err(u) => format!("removing its intent annotation failed too: {u}"),
                    }
                )));
            }
            evicted.push(v.key.clone());
        }
        if opts.stop_after_deactivate {
            return Ok((
                "partial",
                format!("stopped after deactivating {}", evicted.join(", ")),
            ));
        }
        let mut last = Vec::new();
        for o in &objs {
            last.push(wait_admission_cleared(actor, o, opts.eviction_deadline).await?);
        }
        for (o, cur) in objs.iter().zip(last) {
            if let Reactivation::NotOurs { reason } =
                reactivate_if_ours(actor, o, &intent.id, Some(cur)).await?
            {
                left_held.push(format!("{} ({reason})", o.key()));
            }
        }
        let held = if left_held.is_empty() {
            String::new()
        } else {
            format!("; left held, not reactivated: {}", left_held.join(", "))
        };
        Ok((
            "done",
            format!(
                "approved: evicted and requeued {}; Kueue admits {} first{held}",
                evicted.join(", "),
                plan.preemptor
            ),
        ))
    }
    .await;
    rec.after = json!(
        plan.victims
            .iter()
            .map(|v| json!({"workload": v.key, "deactivated": evicted.contains(&v.key)}))
            .collect::<Vec<_>>()
    );
    match result {
        Err(e) if !evicted.is_empty() => {
            // Say exactly which victims were evicted: they carry the intent
            // annotation, and recovery (any gangplank start before the intent's
            // deadline) reactivates them.
            let msg = format!(
                "{e}; already evicted: {} (they carry {} {} and are reactivated by recovery on a gangplank start within {} s)",
                evicted.join(", "),
                intent::APPROVAL_ANNOTATION,
                intent.id,
                intent.deadline_seconds
            );
            rec.outcome = "partial".into();
            rec.message = msg;
            actor.log(&mut rec);
            Outcome {
                ok: false,
                message: rec.message.clone(),
                record: rec,
            }
        }
        r => actor.finish(rec, r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_policy_parses() {
        assert_eq!(
            "within=LowerPriority,reclaim=Any".parse::<ApprovalPolicy>(),
            Ok(ApprovalPolicy::default())
        );
        let p: ApprovalPolicy = "reclaim=Never".parse().unwrap();
        assert_eq!(p.0.within_cluster_queue, None);
        assert_eq!(p.0.reclaim_within_cohort, Some(ReclaimWithinCohort::Never));
        assert!("within=Sometimes".parse::<ApprovalPolicy>().is_err());
        assert!("colour=red".parse::<ApprovalPolicy>().is_err());
    }

    #[test]
    fn admission_cleared_reads_status() {
        assert!(admission_cleared(&json!({"status": {}})));
        assert!(admission_cleared(&json!({"status": {"admission": null}})));
        assert!(!admission_cleared(
            &json!({"status": {"admission": {"clusterQueue": "cq"}}})
        ));
    }
}
