//! `gangplank hold|resume|set-priority|approve NS/NAME`: the headless action commands.
//!
//! Each connects like the console, first finishes any interrupted approval (recovery),
//! shows what it will do, asks on the terminal unless `--yes` (and refuses when stdin
//! is not a terminal), acts through the one executor, prints what happened and exits
//! non-zero if any part failed. Every attempt leaves one audit line.

use std::io::{BufRead, IsTerminal};
use std::time::Duration;

use anyhow::{Context, Result};

use super::args::{ActionArgs, ApproveArgs, SetPriorityArgs};
use crate::actions::approve::{execute_approval, plan_approval};
use crate::actions::recovery::recover;
use crate::actions::{ActionKind, Actor, ApproveOptions, AuditLog, Outcome, PriorityTarget};
// The console's action task lives with the actions (tests drive it from there).
pub use crate::actions::console::{ConsoleActionSettings, spawn_console_actions};
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
    let _ = super::out::out(&format!("{question} [y/N] "));
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
                let _ = super::out::outln(&format!("recovery: {}", o.message));
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
        let _ = super::out::outln(&o.message);
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
        let mut opts = SourceOptions::default();
        let client = source::connect_source(&a.cluster, &mut opts).await?;
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
        let _ = super::out::out(&plan.describe());
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
