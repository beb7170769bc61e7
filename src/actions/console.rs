//! The console's action task: requests in from the console, confirmation prompts out,
//! the operator's answers in, notices and Audit view rows out.
//!
//! Each request is prepared (resolved, planned, permission-checked where the write
//! depends on the target), its summary sent as a prompt (the console shows "press y
//! to confirm"), and run through the one executor only when the operator answers `y`;
//! one request at a time. Every attempt — cancelled, refused, done — leaves one audit
//! line. See docs/actions.md.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::sync::{mpsc, watch};

use super::approve::{ApprovalPlan, execute_approval, plan_approval};
use super::ops::{plan_set_priority, preflight};
use super::recovery::recover;
use super::reprioritize;
use super::{ActionKind, Actor, ApprovalPolicy, ApproveOptions, AuditLog, Outcome, PriorityTarget};
use crate::source::{ClusterArgs, Snapshot};
use crate::tui::{
    ActionAccess, ActionKind as Key, ActionRequest, ActionTarget, AuditRow, PriorityChoice, Prompt,
};

/// The console's action settings (`--readonly`, `--audit-log`, `--approval-policy`).
#[derive(Clone, Debug, Default)]
pub struct ConsoleActionSettings {
    pub readonly: bool,
    pub audit_log: Option<std::path::PathBuf>,
    pub policy: ApprovalPolicy,
}

/// How long a prompt waits for the operator's answer before the action lapses.
const CONFIRM_WINDOW: Duration = Duration::from_secs(120);

/// The console's side of actions: requests in, notices out, audit rows into the feed.
pub struct ConsoleActions {
    pub requests: mpsc::UnboundedSender<ActionRequest>,
    pub notices: mpsc::UnboundedReceiver<String>,
    pub prompts: mpsc::UnboundedReceiver<Prompt>,
    pub confirms: mpsc::UnboundedSender<bool>,
    /// Where RBAC refuses the action keys' writes, sent once after start.
    pub access: mpsc::UnboundedReceiver<ActionAccess>,
    pub task: tokio::task::JoinHandle<()>,
}

/// At most this many namespaces are asked about one by one when the cluster-wide
/// review says no (an operator's Role may be per team namespace).
const MAX_NAMESPACE_REVIEWS: usize = 64;

/// Where may we patch Workloads? One cluster-wide access review; when it says no, one
/// per namespace that has LocalQueues or Workloads (waiting up to `wait` for the first
/// snapshot to name them). An unanswered review (404, timeout) counts as allowed: the
/// write's own answer will tell.
async fn survey_access(
    actor: &Actor,
    snapshots: &mut watch::Receiver<Arc<Snapshot>>,
    wait: Duration,
) -> ActionAccess {
    use super::catalog::WORKLOADS_PATCH;
    use super::permissions::{Access, check};
    let reason = match check(&actor.exec, &WORKLOADS_PATCH, "", None).await {
        Access::Denied { reason } => reason,
        Access::Allowed | Access::Unknown { .. } => return ActionAccess::default(),
    };
    let namespaces_of = |s: &Snapshot| -> std::collections::BTreeSet<String> {
        let st = &s.state;
        st.local_queues
            .keys()
            .map(|(ns, _)| ns.clone())
            .chain(st.workloads.keys().map(|(ns, _)| ns.clone()))
            .collect()
    };
    let deadline = tokio::time::Instant::now() + wait;
    let mut namespaces = namespaces_of(&snapshots.borrow());
    while namespaces.is_empty() {
        match tokio::time::timeout_at(deadline, snapshots.changed()).await {
            Ok(Ok(())) => namespaces = namespaces_of(&snapshots.borrow()),
            _ => break,
        }
    }
    let mut denied = std::collections::BTreeMap::new();
    let mut asked = 0;
    for ns in namespaces.iter().take(MAX_NAMESPACE_REVIEWS) {
        asked += 1;
        if let Access::Denied { reason } = check(&actor.exec, &WORKLOADS_PATCH, ns, None).await {
            denied.insert(ns.clone(), reason);
        }
    }
    if denied.len() == asked {
        ActionAccess {
            everywhere: Some(reason),
            namespaces: Default::default(),
        }
    } else {
        ActionAccess {
            everywhere: None,
            namespaces: denied,
        }
    }
}

fn audit_row(r: &super::AuditRecord) -> AuditRow {
    AuditRow {
        time: r
            .time
            .parse::<jiff::Timestamp>()
            .map(|t| t.as_millisecond())
            .unwrap_or_default(),
        actor: r.who.clone(),
        action: r.action.clone(),
        target: r.target.clone(),
        outcome: r.outcome.clone(),
        details: audit_details(r),
    }
}

/// The Audit detail pane's lines: victims, message, approval, before/after as YAML.
fn audit_details(r: &super::AuditRecord) -> Vec<String> {
    let mut out = Vec::new();
    if !r.victims.is_empty() {
        out.push(format!("victims: {}", r.victims.join(", ")));
    }
    if !r.message.is_empty() {
        out.push(format!("message: {}", r.message));
    }
    if let Some(id) = &r.approval_id {
        out.push(format!("approval: {id}"));
    }
    if !r.dry_run.is_empty() {
        out.push(format!("dry run: {}", r.dry_run));
    }
    for (label, v) in [("before", &r.before), ("after", &r.after)] {
        if v.is_null() {
            continue;
        }
        out.push(format!("{label}:"));
        let yaml = serde_yaml_ng::to_string(v).unwrap_or_else(|_| v.to_string());
        out.extend(yaml.lines().map(|l| format!("  {l}")));
    }
    out
}

/// What a request will do once confirmed.
enum Prepared {
    Hold(String),
    Resume(String),
    Approve(Box<ApprovalPlan>),
    SetPriority(String, PriorityTarget),
    /// Queue kind, namespace ("" for a ClusterQueue), name, hold?
    Queue(&'static str, String, String, bool),
}

/// Why a request was not offered: a message, and whether the refusal is audited
/// (an attempt that reached the cluster's answer is; a bad selection is not).
struct NotOffered {
    why: String,
    audit: Option<(ActionKind, String, &'static str)>,
}

impl From<String> for NotOffered {
    fn from(why: String) -> Self {
        NotOffered { why, audit: None }
    }
}

/// Reprioritize: what would be written and may we (before offering it), then the
/// consequence on the latest snapshot, computed off the async workers.
async fn prepare_priority(
    actor: &Actor,
    snapshots: &watch::Receiver<Arc<Snapshot>>,
    target: String,
    choice: &PriorityChoice,
) -> Result<(Prepared, Prompt), NotOffered> {
    let to = match choice {
        PriorityChoice::Class(c) => PriorityTarget::Class(c.clone()),
        PriorityChoice::Value(v) => PriorityTarget::Value(*v),
    };
    let refused = |e: super::ActionError| NotOffered {
        why: format!("unavailable: {e}"),
        audit: Some((
            ActionKind::SetPriority,
            target.clone(),
            super::ops::outcome_of(&e),
        )),
    };
    let write = plan_set_priority(actor, &target, &to)
        .await
        .map_err(refused)?;
    preflight(actor, &write.object).await.map_err(refused)?;
    let snap = snapshots.borrow().clone();
    let (key, goal) = (target.clone(), to.clone());
    let details = tokio::task::spawn_blocking(move || {
        let now = snap.taken_at.as_millisecond();
        reprioritize::consequence(&snap.state, &key, &goal, now)
    })
    .await
    .map_err(|e| format!("the consequence could not be computed: {e}"))?;
    let details = match details {
        Ok(c) => c.lines(),
        // Still offered: the write is valid; the snapshot may lag behind the cluster.
        Err(why) => vec![format!("consequence unknown: {why}")],
    };
    Ok((
        Prepared::SetPriority(target, to),
        Prompt {
            summary: format!("set {}", write.what),
            details,
        },
    ))
}

/// Hold or resume a queue: what will be written, in words.
fn queue_prompt(
    kind: &'static str,
    namespace: String,
    name: String,
    hold: bool,
) -> (Prepared, Prompt) {
    let shown = if namespace.is_empty() {
        name.clone()
    } else {
        format!("{namespace}/{name}")
    };
    let summary = if hold {
        format!(
            "hold {kind} {shown} (stopPolicy: Hold — nothing new is admitted, running workloads keep running)"
        )
    } else {
        format!("resume {kind} {shown} (stopPolicy: None)")
    };
    (Prepared::Queue(kind, namespace, name, hold), summary.into())
}

/// Starts the console's action task. Each request is prepared (resolved, planned),
/// its summary sent as a confirmation prompt (the console shows "press y to confirm"),
/// and run only when the operator answers `y`; one request at a time.
pub async fn spawn_console_actions(
    cluster: &ClusterArgs,
    settings: &ConsoleActionSettings,
    snapshots: watch::Receiver<Arc<Snapshot>>,
    audit_rows: Arc<Mutex<Vec<AuditRow>>>,
    poke: mpsc::UnboundedSender<()>,
) -> Result<ConsoleActions> {
    let audit = AuditLog::open_or_default(settings.audit_log.as_deref()).context("audit log")?;
    if let Some(p) = audit.path()
        && let Ok(old) = super::read_audit(p)
    {
        let mut rows = audit_rows.lock().unwrap_or_else(|e| e.into_inner());
        let skip = old.len().saturating_sub(200);
        rows.extend(old.iter().skip(skip).map(audit_row));
    }
    let actor = Actor::connect(cluster, settings.readonly, false, audit).await?;
    let (req_tx, mut req_rx) = mpsc::unbounded_channel::<ActionRequest>();
    let (note_tx, note_rx) = mpsc::unbounded_channel::<String>();
    let (prompt_tx, prompt_rx) = mpsc::unbounded_channel::<Prompt>();
    let (confirm_tx, mut confirm_rx) = mpsc::unbounded_channel::<bool>();
    let (access_tx, access_rx) = mpsc::unbounded_channel::<ActionAccess>();
    let policy = settings.policy.clone();
    let task = tokio::spawn(async move {
        let push = |o: &Outcome| {
            audit_rows
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(audit_row(&o.record));
            let _ = poke.send(());
        };
        if let Ok(done) = recover(&actor, Duration::from_secs(30)).await {
            for o in done {
                push(&o);
                let _ = note_tx.send(o.message.clone());
            }
        }
        // Before offering actions: where will RBAC refuse them? (Only when the
        // cluster-wide review says no does this wait, for the first snapshot's
        // namespaces, and ask per namespace.)
        if !actor.exec.is_readonly() {
            let mut snaps = snapshots.clone();
            let access = survey_access(&actor, &mut snaps, Duration::from_secs(10)).await;
            if let Some(why) = &access.everywhere {
                let _ = note_tx.send(format!(
                    "actions unavailable: you may not patch workloads ({why})"
                ));
            } else if !access.namespaces.is_empty() {
                let list: Vec<&str> = access.namespaces.keys().map(String::as_str).collect();
                let _ = note_tx.send(format!(
                    "actions unavailable in {}: you may not patch workloads there",
                    list.join(", ")
                ));
            }
            let _ = access_tx.send(access);
        }
        while let Some(req) = req_rx.recv().await {
            let prepared: Result<(Prepared, Prompt), NotOffered> =
                match (&req.kind, &req.target, &req.priority) {
                    (Key::Hold, ActionTarget::Workload { namespace, name }, _) => {
                        let t = format!("{namespace}/{name}");
                        Ok((Prepared::Hold(t.clone()), format!("hold {t}").into()))
                    }
                    (Key::Resume, ActionTarget::Workload { namespace, name }, _) => {
                        let t = format!("{namespace}/{name}");
                        Ok((Prepared::Resume(t.clone()), format!("resume {t}").into()))
                    }
                    (Key::Approve, ActionTarget::Proposal { id }, _) => {
                        let state = snapshots.borrow().state.clone();
                        plan_approval(&actor, &state, id, &policy)
                            .await
                            .map(|p| {
                                let prompt = Prompt {
                                    summary: p.summary(),
                                    details: p.confirm_lines(&state),
                                };
                                (Prepared::Approve(Box::new(p)), prompt)
                            })
                            .map_err(|e| e.to_string().into())
                    }
                    (
                        Key::Reprioritize,
                        ActionTarget::Workload { namespace, name },
                        Some(choice),
                    ) => {
                        prepare_priority(&actor, &snapshots, format!("{namespace}/{name}"), choice)
                            .await
                    }
                    (Key::Reprioritize, _, _) => {
                        Err("choose a workload and a priority first".to_string().into())
                    }
                    (Key::Hold | Key::Resume, ActionTarget::ClusterQueue { name }, _) => {
                        Ok(queue_prompt(
                            "ClusterQueue",
                            String::new(),
                            name.clone(),
                            req.kind == Key::Hold,
                        ))
                    }
                    (Key::Hold | Key::Resume, ActionTarget::LocalQueue { namespace, name }, _) => {
                        Ok(queue_prompt(
                            "LocalQueue",
                            namespace.clone(),
                            name.clone(),
                            req.kind == Key::Hold,
                        ))
                    }
                    _ => Err("not supported for this selection".to_string().into()),
                };
            let (prep, prompt) = match prepared {
                Ok(p) => p,
                Err(n) => {
                    if let Some((kind, target, outcome)) = n.audit {
                        push(&actor.not_done(kind, &target, outcome, &n.why));
                    }
                    let _ = note_tx.send(format!("{}: {}", req.kind.name(), n.why));
                    continue;
                }
            };
            let (kind, target) = match &prep {
                Prepared::Hold(t) => (ActionKind::Hold, t.clone()),
                Prepared::Resume(t) => (ActionKind::Resume, t.clone()),
                Prepared::Approve(p) => (ActionKind::Approve, p.preemptor.clone()),
                Prepared::SetPriority(t, _) => (ActionKind::SetPriority, t.clone()),
                Prepared::Queue(kind, ns, name, hold) => (
                    if *hold {
                        ActionKind::Hold
                    } else {
                        ActionKind::Resume
                    },
                    super::ops::queue_target(kind, ns, name),
                ),
            };
            // Answers to an earlier, lapsed prompt must not confirm this one.
            while confirm_rx.try_recv().is_ok() {}
            if prompt_tx.send(prompt).is_err() {
                return;
            }
            let yes = matches!(
                tokio::time::timeout(CONFIRM_WINDOW, confirm_rx.recv()).await,
                Ok(Some(true))
            );
            if !yes {
                let o = actor.cancelled(kind, &target, "cancelled by the operator");
                push(&o);
                continue;
            }
            let o = match prep {
                Prepared::Hold(t) => actor.hold(&t).await,
                Prepared::Resume(t) => actor.resume(&t).await,
                Prepared::Approve(plan) => {
                    execute_approval(&actor, &plan, &ApproveOptions::default()).await
                }
                Prepared::SetPriority(t, to) => actor.set_priority(&t, &to).await,
                Prepared::Queue(kind, ns, name, hold) => {
                    actor.set_queue_stop(kind, &ns, &name, hold).await
                }
            };
            push(&o);
            let _ = note_tx.send(if o.ok {
                o.message.clone()
            } else {
                format!("failed: {}", o.message)
            });
        }
    });
    Ok(ConsoleActions {
        requests: req_tx,
        notices: note_rx,
        prompts: prompt_rx,
        confirms: confirm_tx,
        access: access_rx,
        task,
    })
}

#[cfg(test)]
mod console_tests {
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use super::{ConsoleActionSettings, spawn_console_actions};
    use crate::sim::{LiveOptions, LiveSim, ResourceKey, Scenario, SimCluster, SimOptions};
    use crate::source::{self, ClusterArgs, SourceOptions};
    use crate::tui::{ActionKind, ActionRequest, ActionTarget, Prompt};

    /// The console's action task: a hold request is prompted, confirmed with `y`,
    /// executed, reported as a notice and as an Audit view row; a cancelled one writes
    /// nothing but is audited.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn console_hold_is_prompted_confirmed_and_audited() {
        let sim = LiveSim::start(
            SimCluster::from_scenario(&Scenario::seed(), SimOptions::live()),
            LiveOptions {
                speed: 30.0,
                ..Default::default()
            },
        )
        .await
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let kc = dir.path().join("kubeconfig");
        sim.write_kubeconfig(&kc).unwrap();
        let cluster = ClusterArgs {
            kubeconfig: Some(kc),
            context: Some("gangplank-sim".into()),
            ..Default::default()
        };
        let opts = SourceOptions::default();
        let client = source::connect(&cluster, opts.read_timeout())
            .await
            .unwrap();
        let handle = source::start(client, opts).await;
        let bert = |sim: &LiveSim| {
            sim.store()
                .list(&ResourceKey::WORKLOADS, Some("nlp-team"))
                .items
                .into_iter()
                .find(|w| w["metadata"]["ownerReferences"][0]["name"] == "bert-pretrain")
        };
        let end = Instant::now() + Duration::from_secs(30);
        while bert(&sim).is_none_or(|w| w["status"]["admission"].is_null()) {
            assert!(Instant::now() < end, "bert never admitted");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let rows = Arc::new(Mutex::new(Vec::new()));
        let (poke_tx, mut poke_rx) = tokio::sync::mpsc::unbounded_channel();
        let settings = ConsoleActionSettings {
            audit_log: Some(dir.path().join("audit.jsonl")),
            ..Default::default()
        };
        let mut a = spawn_console_actions(
            &cluster,
            &settings,
            handle.snapshots(),
            rows.clone(),
            poke_tx,
        )
        .await
        .unwrap();
        let req = ActionRequest {
            kind: ActionKind::Hold,
            target: ActionTarget::Workload {
                namespace: "nlp-team".into(),
                name: "bert-pretrain".into(),
            },
            priority: None,
        };
        let within = Duration::from_secs(30);
        // Cancelled: nothing written, one audit row.
        a.requests.send(req.clone()).unwrap();
        let prompt = tokio::time::timeout(within, a.prompts.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(prompt, Prompt::from("hold nlp-team/bert-pretrain"));
        a.confirms.send(false).unwrap();
        tokio::time::timeout(within, poke_rx.recv()).await.unwrap();
        assert_eq!(bert(&sim).unwrap()["spec"]["active"], true);
        // Confirmed: held, reported, audited.
        a.requests.send(req).unwrap();
        tokio::time::timeout(within, a.prompts.recv())
            .await
            .unwrap()
            .unwrap();
        a.confirms.send(true).unwrap();
        let notice = tokio::time::timeout(within, a.notices.recv())
            .await
            .unwrap()
            .unwrap();
        assert!(notice.starts_with("held"), "{notice}");
        assert_eq!(bert(&sim).unwrap()["spec"]["active"], false);
        tokio::time::timeout(within, poke_rx.recv()).await.unwrap();
        let outcomes: Vec<String> = rows
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.outcome.clone())
            .collect();
        assert_eq!(outcomes, ["cancelled", "done"]);
        a.task.abort();
        handle.shutdown().await;
        sim.shutdown().await;
    }
}
