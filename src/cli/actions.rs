//! `gangplank hold|resume|set-priority|approve NS/NAME`: the headless action commands.
//!
//! Each connects like the console, first finishes any interrupted approval (recovery),
//! shows what it will do, asks on the terminal unless `--yes` (and refuses when stdin
//! is not a terminal), acts through the one executor, prints what happened and exits
//! non-zero if any part failed. Every attempt leaves one audit line.

use std::io::{BufRead, IsTerminal, Write};
use std::time::Duration;

use anyhow::{Context, Result};

use super::args::{ActionArgs, ApproveArgs, SetPriorityArgs};
use crate::actions::approve::{execute_approval, plan_approval};
use crate::actions::recovery::recover;
use crate::actions::{ActionKind, Actor, ApproveOptions, AuditLog, Outcome, PriorityTarget};
use crate::source::{self, SourceOptions};

/// Asks `question`; only `y`/`yes` confirms. Refuses without asking when `interactive`
/// is false (stdin is not a terminal): an unattended run must say `--yes`.
pub fn confirm(
    question: &str,
    interactive: bool,
    input: &mut impl BufRead,
) -> Result<bool, String> {
    if !interactive {
        return Err("stdin is not a terminal: pass --yes to act without confirmation".into());
    }
    print!("{question} [y/N] ");
    let _ = std::io::stdout().flush();
    let mut line = String::new();
    if input.read_line(&mut line).is_err() {
        return Ok(false);
    }
    Ok(matches!(line.trim(), "y" | "Y" | "yes"))
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

async fn actor(args: &ActionArgs) -> Result<Actor> {
    let audit = AuditLog::open_or_default(args.audit_log.as_deref()).context("audit log")?;
    let actor = Actor::connect(&args.cluster, args.readonly, args.dry_run, audit).await?;
    // Any gangplank start finishes interrupted approvals first.
    match recover(&actor, Duration::from_secs(30)).await {
        Ok(done) => {
            for o in done {
                println!("recovery: {}", o.message);
            }
        }
        Err(e) => eprintln!("warning: recovery could not look for interrupted approvals: {e}"),
    }
    Ok(actor)
}

/// Asks unless `--yes`, `--dry-run` or `--readonly` (the last two write nothing).
fn ask(actor: &Actor, args: &ActionArgs, kind: ActionKind, question: &str) -> Option<Outcome> {
    if args.yes || args.dry_run || args.readonly {
        return None;
    }
    let stdin = std::io::stdin();
    match confirm(question, stdin.is_terminal(), &mut stdin.lock()) {
        Ok(true) => None,
        Ok(false) => Some(actor.cancelled(kind, &args.target, "cancelled by the operator")),
        Err(why) => Some(actor.cancelled(kind, &args.target, &why)),
    }
}

fn report(o: &Outcome) -> i32 {
    if o.ok {
        println!("{}", o.message);
        0
    } else {
        eprintln!("error: {}", o.message);
        1
    }
}

fn simple(args: &ActionArgs, kind: ActionKind, to: Option<PriorityTarget>) -> Result<i32> {
    runtime()?.block_on(async {
        let actor = actor(args).await?;
        let question = match &to {
            Some(PriorityTarget::Class(c)) => {
                format!("set the priority of {} to class {c}?", args.target)
            }
            Some(PriorityTarget::Value(v)) => {
                format!("set the priority of {} to {v}?", args.target)
            }
            None => format!("{} {}?", kind.name(), args.target),
        };
        if let Some(o) = ask(&actor, args, kind, &question) {
            return Ok(report(&o));
        }
        let o = match (kind, &to) {
            (ActionKind::Hold, _) => actor.hold(&args.target).await,
            (ActionKind::Resume, _) => actor.resume(&args.target).await,
            (_, Some(p)) => actor.set_priority(&args.target, p).await,
            _ => unreachable!("set-priority always has a priority"),
        };
        Ok(report(&o))
    })
}

pub fn hold(args: &ActionArgs) -> Result<i32> {
    simple(args, ActionKind::Hold, None)
}

pub fn resume(args: &ActionArgs) -> Result<i32> {
    simple(args, ActionKind::Resume, None)
}

pub fn set_priority(args: &SetPriorityArgs) -> Result<i32> {
    simple(
        &args.action,
        ActionKind::SetPriority,
        Some(PriorityTarget::parse(&args.priority)),
    )
}

pub fn approve(args: &ApproveArgs) -> Result<i32> {
    let a = &args.action;
    runtime()?.block_on(async {
        let actor = actor(a).await?;
        let opts = SourceOptions::default();
        let client = source::connect(&a.cluster, opts.read_timeout()).await?;
        let handle = source::start(client, opts).await;
        let snap = handle
            .wait_synced(Duration::from_secs(args.sync_timeout))
            .await?;
        let plan = match plan_approval(&actor, &snap.state, &a.target, &args.approval_policy).await
        {
            Ok(p) => p,
            Err(e) => {
                let o = actor.not_done(ActionKind::Approve, &a.target, "refused", &e.to_string());
                handle.shutdown().await;
                return Ok(report(&o));
            }
        };
        handle.shutdown().await;
        print!("{}", plan.describe());
        if let Some(o) = ask(&actor, a, ActionKind::Approve, "approve?") {
            return Ok(report(&o));
        }
        let o = execute_approval(
            &actor,
            &plan,
            &ApproveOptions {
                eviction_deadline: Duration::from_secs(args.eviction_timeout),
                ..ApproveOptions::default()
            },
        )
        .await;
        Ok(report(&o))
    })
}

/// The console's action settings (`--readonly`, `--audit-log`, `--approval-policy`).
#[derive(Clone, Debug, Default)]
pub struct ConsoleActionSettings {
    pub readonly: bool,
    pub audit_log: Option<std::path::PathBuf>,
    pub policy: crate::actions::ApprovalPolicy,
}

/// How long a prompt waits for the operator's answer before the action lapses.
const CONFIRM_WINDOW: Duration = Duration::from_secs(120);

/// The console's side of actions: requests in, notices out, audit rows into the feed.
pub struct ConsoleActions {
    pub requests: tokio::sync::mpsc::UnboundedSender<crate::tui::ActionRequest>,
    pub notices: tokio::sync::mpsc::UnboundedReceiver<String>,
    pub prompts: tokio::sync::mpsc::UnboundedReceiver<String>,
    pub confirms: tokio::sync::mpsc::UnboundedSender<bool>,
    pub task: tokio::task::JoinHandle<()>,
}

fn audit_row(r: &crate::actions::AuditRecord) -> crate::tui::AuditRow {
    crate::tui::AuditRow {
        time: r
            .time
            .parse::<jiff::Timestamp>()
            .map(|t| t.as_millisecond())
            .unwrap_or_default(),
        actor: r.who.clone(),
        action: r.action.clone(),
        target: r.target.clone(),
        outcome: r.outcome.clone(),
    }
}

/// What a request will do once confirmed.
enum Prepared {
    Hold(String),
    Resume(String),
    Approve(Box<crate::actions::ApprovalPlan>),
}

/// Starts the console's action task. Each request is prepared (resolved, planned),
/// its summary sent as a confirmation prompt (the console shows "press y to confirm"),
/// and run only when the operator answers `y`; one request at a time.
pub async fn spawn_console_actions(
    cluster: &crate::source::ClusterArgs,
    settings: &ConsoleActionSettings,
    snapshots: tokio::sync::watch::Receiver<std::sync::Arc<crate::source::Snapshot>>,
    audit_rows: std::sync::Arc<std::sync::Mutex<Vec<crate::tui::AuditRow>>>,
    poke: tokio::sync::mpsc::UnboundedSender<()>,
) -> Result<ConsoleActions> {
    use crate::tui::{ActionKind as Key, ActionTarget};
    let audit = AuditLog::open_or_default(settings.audit_log.as_deref()).context("audit log")?;
    if let Some(p) = audit.path()
        && let Ok(old) = crate::actions::read_audit(p)
    {
        let mut rows = audit_rows.lock().unwrap_or_else(|e| e.into_inner());
        let skip = old.len().saturating_sub(200);
        rows.extend(old.iter().skip(skip).map(audit_row));
    }
    let actor = Actor::connect(cluster, settings.readonly, false, audit).await?;
    let (req_tx, mut req_rx) = tokio::sync::mpsc::unbounded_channel::<crate::tui::ActionRequest>();
    let (note_tx, note_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let (prompt_tx, prompt_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let (confirm_tx, mut confirm_rx) = tokio::sync::mpsc::unbounded_channel::<bool>();
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
        // Before offering actions: say so at once when RBAC will refuse them.
        if !actor.exec.is_readonly()
            && let crate::actions::permissions::Access::Denied { reason } =
                crate::actions::permissions::check(
                    &actor.exec,
                    &crate::actions::catalog::WORKLOADS_PATCH,
                    "",
                    None,
                )
                .await
        {
            let _ = note_tx.send(format!(
                "actions will be refused: you may not patch workloads in every namespace ({reason})"
            ));
        }
        while let Some(req) = req_rx.recv().await {
            let prepared = match (&req.kind, &req.target) {
                (Key::Hold, ActionTarget::Workload { namespace, name }) => {
                    Ok(Prepared::Hold(format!("{namespace}/{name}")))
                }
                (Key::Resume, ActionTarget::Workload { namespace, name }) => {
                    Ok(Prepared::Resume(format!("{namespace}/{name}")))
                }
                (Key::Approve, ActionTarget::Proposal { id }) => {
                    let state = snapshots.borrow().state.clone();
                    plan_approval(&actor, &state, id, &policy)
                        .await
                        .map(|p| Prepared::Approve(Box::new(p)))
                        .map_err(|e| e.to_string())
                }
                (Key::Reprioritize, _) => Err(
                    "reprioritize from the command line: gangplank set-priority NS/NAME CLASS|VALUE"
                        .to_string(),
                ),
                (_, ActionTarget::ClusterQueue { .. } | ActionTarget::LocalQueue { .. }) => Err(
                    "holding a whole queue is not supported; hold its workloads".to_string(),
                ),
                _ => Err("not supported for this selection".to_string()),
            };
            let prep = match prepared {
                Ok(p) => p,
                Err(why) => {
                    let _ = note_tx.send(format!("{}: {why}", req.kind.name()));
                    continue;
                }
            };
            let (kind, target, what) = match &prep {
                Prepared::Hold(t) => (ActionKind::Hold, t.clone(), format!("hold {t}")),
                Prepared::Resume(t) => (ActionKind::Resume, t.clone(), format!("resume {t}")),
                Prepared::Approve(p) => (ActionKind::Approve, p.preemptor.clone(), p.summary()),
            };
            // Answers to an earlier, lapsed prompt must not confirm this one.
            while confirm_rx.try_recv().is_ok() {}
            if prompt_tx.send(what).is_err() {
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
        task,
    })
}

#[cfg(test)]
mod tests {
    use super::confirm;

    #[test]
    fn only_y_confirms_and_no_terminal_refuses() {
        assert_eq!(confirm("hold?", true, &mut "y\n".as_bytes()), Ok(true));
        assert_eq!(confirm("hold?", true, &mut "yes\n".as_bytes()), Ok(true));
        assert_eq!(confirm("hold?", true, &mut "n\n".as_bytes()), Ok(false));
        assert_eq!(confirm("hold?", true, &mut "\n".as_bytes()), Ok(false));
        assert_eq!(confirm("hold?", true, &mut "".as_bytes()), Ok(false));
        assert!(confirm("hold?", false, &mut "y\n".as_bytes()).is_err());
    }
}

#[cfg(test)]
mod console_tests {
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use super::{ConsoleActionSettings, spawn_console_actions};
    use crate::sim::{LiveOptions, LiveSim, ResourceKey, Scenario, SimCluster, SimOptions};
    use crate::source::{self, ClusterArgs, SourceOptions};
    use crate::tui::{ActionKind, ActionRequest, ActionTarget};

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
        };
        let within = Duration::from_secs(30);
        // Cancelled: nothing written, one audit row.
        a.requests.send(req.clone()).unwrap();
        let prompt = tokio::time::timeout(within, a.prompts.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(prompt, "hold nlp-team/bert-pretrain");
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
