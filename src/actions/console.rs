//! The console's action task: one channel in ([`ConsoleRequest`]: requests and the
//! operator's answers), one channel out ([`ActionEvent`]: prompts, notices, access,
//! audit rows), in the vocabulary of [`super::protocol`].
//!
//! Each request is prepared (resolved, planned, permission-checked where the write
//! depends on the target), its summary sent as a prompt (the console shows "press y
//! to confirm"), and run through the one executor only when the operator answers `y`;
//! one request at a time. Every attempt — cancelled, refused, done — leaves one audit
//! line. See docs/actions.md.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::sync::{mpsc, watch};

use super::approve::{ApprovalPlan, execute_approval, plan_approval};
use super::ops::{plan_set_priority, preflight};
use super::protocol::{
    ActionAccess, ActionEvent, ActionTarget, AuditRow, ConsoleRequest, PriorityChoice, Prompt,
    PromptId,
};
use super::recovery::recover;
use super::reprioritize;
use super::{ActionKind, Actor, ApprovalPolicy, ApproveOptions, AuditLog, Outcome, PriorityTarget};
use crate::source::{ClusterArgs, Snapshot};

/// The console's action settings (`--readonly`, `--audit-log`, `--approval-policy`).
#[derive(Clone, Debug, Default)]
pub struct ConsoleActionSettings {
    pub readonly: bool,
    pub audit_log: Option<std::path::PathBuf>,
    pub policy: ApprovalPolicy,
}

/// How many earlier audit rows are sent at start (the console keeps 200).
const AUDIT_ROWS_SENT: usize = 200;

/// How long a prompt waits for the operator's answer before the action lapses.
const CONFIRM_WINDOW: Duration = Duration::from_secs(120);

/// The console's side of actions: requests and answers in, events out.
pub struct ConsoleActions {
    pub requests: mpsc::UnboundedSender<ConsoleRequest>,
    /// Earlier audit rows first (read back from the audit log), then everything the
    /// task reports, in order. Where RBAC refuses the writes is sent once after start.
    pub events: mpsc::UnboundedReceiver<ActionEvent>,
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
            id: 0,
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
/// its summary sent as a confirmation prompt with a fresh id (the console shows "press
/// y to confirm"), and run only when the operator answers `y` to that prompt; one
/// request at a time. Earlier audit rows are sent first.
pub async fn spawn_console_actions(
    cluster: &ClusterArgs,
    settings: &ConsoleActionSettings,
    snapshots: watch::Receiver<Arc<Snapshot>>,
) -> Result<ConsoleActions> {
    let audit = AuditLog::open_or_default(settings.audit_log.as_deref()).context("audit log")?;
    let (event_tx, event_rx) = mpsc::unbounded_channel::<ActionEvent>();
    if let Some(p) = audit.path()
        && let Ok(old) = super::read_audit(p)
    {
        let skip = old.len().saturating_sub(AUDIT_ROWS_SENT);
        for r in old.iter().skip(skip) {
            let _ = event_tx.send(ActionEvent::Audited(audit_row(r)));
        }
    }
    let actor = Actor::connect(cluster, settings.readonly, false, audit).await?;
    let (req_tx, req_rx) = mpsc::unbounded_channel::<ConsoleRequest>();
    let policy = settings.policy.clone();
    let task = tokio::spawn(async move {
        let mut task = ActionTask {
            actor,
            snapshots,
            policy,
            events: event_tx,
            requests: req_rx,
            next_prompt: 1,
        };
        task.run().await;
    });
    Ok(ConsoleActions {
        requests: req_tx,
        events: event_rx,
        task,
    })
}

/// The action task's state: one request at a time.
struct ActionTask {
    actor: Actor,
    snapshots: watch::Receiver<Arc<Snapshot>>,
    policy: ApprovalPolicy,
    events: mpsc::UnboundedSender<ActionEvent>,
    requests: mpsc::UnboundedReceiver<ConsoleRequest>,
    next_prompt: PromptId,
}

impl ActionTask {
    fn notice(&self, text: String) {
        let _ = self.events.send(ActionEvent::Notice(text));
    }

    fn audited(&self, o: &Outcome) {
        let _ = self.events.send(ActionEvent::Audited(audit_row(&o.record)));
    }

    async fn run(&mut self) {
        if let Ok(done) = recover(&self.actor, Duration::from_secs(30)).await {
            for o in done {
                self.audited(&o);
                self.notice(o.message.clone());
            }
        }
        // Before offering actions: where will RBAC refuse them? (Only when the
        // cluster-wide review says no does this wait, for the first snapshot's
        // namespaces, and ask per namespace.)
        if !self.actor.exec.is_readonly() {
            let mut snaps = self.snapshots.clone();
            let access = survey_access(&self.actor, &mut snaps, Duration::from_secs(10)).await;
            if let Some(why) = &access.everywhere {
                self.notice(format!(
                    "actions unavailable: you may not patch workloads ({why})"
                ));
            } else if !access.namespaces.is_empty() {
                let list: Vec<&str> = access.namespaces.keys().map(String::as_str).collect();
                self.notice(format!(
                    "actions unavailable in {}: you may not patch workloads there",
                    list.join(", ")
                ));
            }
            let _ = self.events.send(ActionEvent::Access(access));
        }
        while let Some(msg) = self.requests.recv().await {
            match msg {
                ConsoleRequest::Run(req) => {
                    if !self.handle(req).await {
                        return;
                    }
                }
                // An answer with no prompt up is a late answer to one that lapsed.
                ConsoleRequest::Answer { .. } => {}
            }
        }
    }

    /// One request: prepare, prompt, wait for the answer, execute. `false` when the
    /// console is gone.
    async fn handle(&mut self, req: super::protocol::ActionRequest) -> bool {
        let prepared = self.prepare(&req).await;
        let (prep, mut prompt) = match prepared {
            Ok(p) => p,
            Err(n) => {
                if let Some((kind, target, outcome)) = n.audit {
                    self.audited(&self.actor.not_done(kind, &target, outcome, &n.why));
                }
                self.notice(format!("{}: {}", req.kind.console_word(), n.why));
                return true;
            }
        };
        let (kind, target) = prep.kind_and_target();
        prompt.id = self.next_prompt;
        self.next_prompt += 1;
        let id = prompt.id;
        if self.events.send(ActionEvent::Prompt(prompt)).is_err() {
            return false;
        }
        let yes = match tokio::time::timeout(CONFIRM_WINDOW, self.answer_to(id)).await {
            Ok(Some(yes)) => yes,
            Ok(None) => return false,
            Err(_) => false,
        };
        if !yes {
            let o = self
                .actor
                .cancelled(kind, &target, "cancelled by the operator");
            self.audited(&o);
            return true;
        }
        let actor = &self.actor;
        let o = match prep {
            Prepared::Hold(t) => actor.hold(&t).await,
            Prepared::Resume(t) => actor.resume(&t).await,
            Prepared::Approve(plan) => {
                execute_approval(actor, &plan, &ApproveOptions::default()).await
            }
            Prepared::SetPriority(t, to) => actor.set_priority(&t, &to).await,
            Prepared::Queue(kind, ns, name, hold) => {
                actor.set_queue_stop(kind, &ns, &name, hold).await
            }
        };
        self.audited(&o);
        self.notice(if o.ok {
            o.message.clone()
        } else {
            format!("failed: {}", o.message)
        });
        true
    }

    /// Waits for the answer to prompt `id`: answers to other (lapsed) prompts are
    /// ignored, and a request arriving meanwhile is refused (one action at a time).
    /// `None` when the console is gone.
    async fn answer_to(&mut self, id: PromptId) -> Option<bool> {
        loop {
            match self.requests.recv().await? {
                ConsoleRequest::Answer { prompt, yes } if prompt == id => return Some(yes),
                ConsoleRequest::Answer { .. } => {}
                ConsoleRequest::Run(other) => self.notice(format!(
                    "{}: another action is waiting for confirmation",
                    other.kind.console_word()
                )),
            }
        }
    }

    async fn prepare(
        &self,
        req: &super::protocol::ActionRequest,
    ) -> Result<(Prepared, Prompt), NotOffered> {
        use ActionKind as Key;
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
                let state = self.snapshots.borrow().state.clone();
                plan_approval(&self.actor, &state, id, &self.policy)
                    .await
                    .map(|p| {
                        let prompt = Prompt {
                            id: 0,
                            summary: p.summary(),
                            details: p.confirm_lines(&state),
                        };
                        (Prepared::Approve(Box::new(p)), prompt)
                    })
                    .map_err(|e| e.to_string().into())
            }
            (Key::SetPriority, ActionTarget::Workload { namespace, name }, Some(choice)) => {
                prepare_priority(
                    &self.actor,
                    &self.snapshots,
                    format!("{namespace}/{name}"),
                    choice,
                )
                .await
            }
            (Key::SetPriority, _, _) => {
                Err("choose a workload and a priority first".to_string().into())
            }
            (Key::Hold | Key::Resume, ActionTarget::ClusterQueue { name }, _) => Ok(queue_prompt(
                "ClusterQueue",
                String::new(),
                name.clone(),
                req.kind == Key::Hold,
            )),
            (Key::Hold | Key::Resume, ActionTarget::LocalQueue { namespace, name }, _) => {
                Ok(queue_prompt(
                    "LocalQueue",
                    namespace.clone(),
                    name.clone(),
                    req.kind == Key::Hold,
                ))
            }
            _ => Err("not supported for this selection".to_string().into()),
        }
    }
}

impl Prepared {
    /// What the audit log names the attempt.
    fn kind_and_target(&self) -> (ActionKind, String) {
        match self {
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
        }
    }
}

#[cfg(test)]
mod console_tests {
    use std::time::{Duration, Instant};

    use tokio::sync::mpsc::UnboundedReceiver;

    use super::{ConsoleActionSettings, spawn_console_actions};
    use crate::actions::ActionKind;
    use crate::actions::protocol::{
        ActionEvent, ActionRequest, ActionTarget, AuditRow, ConsoleRequest, Prompt,
    };
    use crate::sim::{LiveOptions, LiveSim, ResourceKey, Scenario, SimCluster, SimOptions};
    use crate::source::{self, ClusterArgs, SourceOptions};

    /// The next event that `pick` accepts, within 30 s; other events are skipped.
    async fn next<T>(
        events: &mut UnboundedReceiver<ActionEvent>,
        pick: impl Fn(ActionEvent) -> Option<T>,
    ) -> T {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let ev = tokio::time::timeout_at(deadline, events.recv())
                .await
                .expect("an action event in time")
                .expect("the action task is running");
            if let Some(t) = pick(ev) {
                return t;
            }
        }
    }

    fn prompt(ev: ActionEvent) -> Option<Prompt> {
        match ev {
            ActionEvent::Prompt(p) => Some(p),
            _ => None,
        }
    }

    fn audited(ev: ActionEvent) -> Option<AuditRow> {
        match ev {
            ActionEvent::Audited(r) => Some(r),
            _ => None,
        }
    }

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
        let settings = ConsoleActionSettings {
            audit_log: Some(dir.path().join("audit.jsonl")),
            ..Default::default()
        };
        let mut a = spawn_console_actions(&cluster, &settings, handle.snapshots())
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
        // Cancelled: nothing written, one audit row.
        a.requests.send(ConsoleRequest::Run(req.clone())).unwrap();
        let first = next(&mut a.events, prompt).await;
        assert_eq!(first.summary, "hold nlp-team/bert-pretrain");
        a.requests
            .send(ConsoleRequest::Answer {
                prompt: first.id,
                yes: false,
            })
            .unwrap();
        let row = next(&mut a.events, audited).await;
        assert_eq!(row.outcome, "cancelled");
        assert_eq!(bert(&sim).unwrap()["spec"]["active"], true);
        // A late `y` to the lapsed first prompt confirms nothing: only the answer that
        // names the second prompt does.
        a.requests.send(ConsoleRequest::Run(req)).unwrap();
        let second = next(&mut a.events, prompt).await;
        assert_ne!(second.id, first.id);
        a.requests
            .send(ConsoleRequest::Answer {
                prompt: first.id,
                yes: true,
            })
            .unwrap();
        a.requests
            .send(ConsoleRequest::Answer {
                prompt: second.id,
                yes: true,
            })
            .unwrap();
        let row = next(&mut a.events, audited).await;
        assert_eq!(row.outcome, "done");
        let notice = next(&mut a.events, |e| match e {
            ActionEvent::Notice(n) => Some(n),
            _ => None,
        })
        .await;
        assert!(notice.starts_with("held"), "{notice}");
        assert_eq!(bert(&sim).unwrap()["spec"]["active"], false);
        a.task.abort();
        handle.shutdown().await;
        sim.shutdown().await;
    }
}
