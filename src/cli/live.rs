//! `gangplank plan --live [--watch]`: the shadow engine over the live cluster.
//!
//! Waits for the initial sync of every available resource (or fails naming what did
//! not sync), plans, and prints the `plan -f` JSON contract plus `"drift"` and the
//! live keys of [`super::live_meta`]. With `--watch`, prints a new line whenever a
//! snapshot changes the plan or a resource's sync state, until Ctrl-C.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::Value;

use super::args::{PlanArgs, PlanOutput};
use super::doctor::terminal_width;
use super::live_meta;
use super::plan_table;
use crate::engine::{self, PlanOptions};
use crate::model::{ClusterState, Loader};
use crate::source::drift::DriftTracker;
use crate::source::replan::plan_json;
use crate::source::{self, KueueStatus, Snapshot, SourceOptions};

/// Runs `plan --live`; returns the exit code.
pub fn run(args: &PlanArgs) -> Result<i32> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(run_async(args))
}

/// `--history-file`, else the default path (in-memory only if there is no home).
pub fn history_path(flag: Option<&PathBuf>) -> Option<PathBuf> {
    flag.cloned().or_else(source::default_history_path)
}

async fn run_async(args: &PlanArgs) -> Result<i32> {
    let mut opts = SourceOptions {
        namespace: args.cluster.namespace.clone(),
        history_file: history_path(args.history_file.as_ref()),
        watch_timeout_secs: args.watch_timeout,
        ..SourceOptions::default()
    };
    // Kueue's configuration: `--kueue-config`, read once here; otherwise the live
    // source reads the cluster's ConfigMap when it starts (missing or forbidden: a
    // warning, and the defaults).
    let kueue_cfg = match &args.kueue_config {
        Some(p) => Some(super::plan::read_kueue_config(p).map_err(anyhow::Error::msg)?),
        None => None,
    };
    opts.read_kueue_config = kueue_cfg.is_none();
    let client = source::connect_source(&args.cluster, &mut opts).await?;
    let handle = source::start(client, opts).await;
    for n in &handle.kueue_config_notes {
        eprintln!("warning: {n}");
    }
    let snap = match handle
        .wait_synced(Duration::from_secs(args.sync_timeout))
        .await
    {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(2);
        }
    };
    if let KueueStatus::NotInstalled { message } = &snap.kueue {
        eprintln!("error: {message}");
        return Ok(2);
    }
    for s in snap
        .sync
        .iter()
        .filter(|s| !matches!(s.state, source::SyncState::Synced))
    {
        eprintln!("warning: {s}");
    }
    for s in &snap.skipped {
        eprintln!("warning: skipped {}: {}", s.object, s.error);
    }
    let mut tracker = DriftTracker::default();
    let mut last = render(args, &snap, &mut tracker, kueue_cfg.as_ref()).await?;
    let mut last_sync = live_meta::sync_key(&snap);
    let mut last_relists = live_meta::relists(&snap);
    emit(args, &annotated(&last, &snap), &snap)?;
    if !args.watch {
        if !args.allow_partial && !live_meta::degraded(&snap).is_empty() {
            eprintln!(
                "error: the plan is incomplete: a resource is forbidden or failing \
                 (see \"sync\"); pass --allow-partial to accept it"
            );
            return Ok(live_meta::PARTIAL_EXIT);
        }
        return Ok(0);
    }
    let mut rx = handle.snapshots();
    // Registered once: a Ctrl-C that arrives while a plan is computed is not lost.
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    loop {
        tokio::select! {
            _ = &mut ctrl_c => return Ok(0),
            changed = rx.changed() => {
                if changed.is_err() {
                    eprintln!("error: the live source stopped");
                    return Ok(2);
                }
            }
        }
        let snap = rx.borrow_and_update().clone();
        if !snap.ready() {
            continue;
        }
        let sync = live_meta::sync_key(&snap);
        // While a resource relists or fails, the view may hold objects of two server
        // incarnations (one resource relisted from a restarted server, another still
        // showing the old one): never plan it. The line reports the sync change with
        // the last consistent plan (`sync.complete` is false).
        if live_meta::transient(&snap) {
            if sync != last_sync {
                emit(args, &annotated(&last, &snap), &snap)?;
                last_sync = sync;
            }
            continue;
        }
        // A relist replaced a resource's whole view (410, reconnect, restarted server):
        // drift learned from the old view is dropped with it.
        let relists = live_meta::relists(&snap);
        if relists != last_relists {
            tracker = DriftTracker::default();
            last_relists = relists;
        }
        let json = render(args, &snap, &mut tracker, kueue_cfg.as_ref()).await?;
        // One line per change of the plan or of a resource's sync state (degraded,
        // recovered): events that change neither print nothing.
        if json != last || sync != last_sync {
            emit(args, &annotated(&json, &snap), &snap)?;
            last = json;
            last_sync = sync;
        }
    }
}

/// Plans `snap` (plus `--what-if`) off the async workers; the JSON with `"drift"`.
async fn render(
    args: &PlanArgs,
    snap: &Arc<Snapshot>,
    tracker: &mut DriftTracker,
    kueue_cfg: Option<&crate::model::kueue_config::KueueConfig>,
) -> Result<Value> {
    let snap = snap.clone();
    let what_if = args.what_if.clone();
    let max_cycles = args.max_cycles;
    let kueue_cfg = kueue_cfg.cloned();
    let now = match &args.now {
        Some(_) => super::time::now_or(args.now.as_deref())?,
        None => snap.taken_at.as_millisecond(),
    };
    let mut t = std::mem::take(tracker);
    let (json, t) = tokio::task::spawn_blocking(move || -> Result<(Value, DriftTracker)> {
        let mut state = with_what_if(&snap.state, &what_if)?;
        if let Some(cfg) = &kueue_cfg {
            state.kueue_config = Some(cfg.clone());
        }
        let po = PlanOptions {
            now,
            max_cycles,
            ..PlanOptions::default()
        };
        let mut plan = engine::plan(&state, &po);
        if state.kueue_config.is_none() {
            plan.warnings
                .insert(0, crate::model::kueue_config::assumed_defaults_notice());
        }
        // Drift compares Kueue's actual state with the engine, never the what-if.
        let drift = if what_if.is_empty() {
            t.update(&snap.state, &plan, now)
        } else {
            Vec::new()
        };
        Ok((plan_json(&plan, &drift, snap.namespace.as_deref()), t))
    })
    .await
    .context("planning failed")??;
    *tracker = t;
    Ok(json)
}

/// The live state with the `--what-if` manifests applied on top.
fn with_what_if(state: &ClusterState, files: &[PathBuf]) -> Result<ClusterState> {
    if files.is_empty() {
        return Ok(state.clone());
    }
    let mut loader = Loader::from_state(state.clone());
    loader
        .add_paths(files)
        .map_err(|e| anyhow::anyhow!("--what-if: {e}"))?;
    Ok(loader.finish())
}

/// `json` with the live keys (`sync`, `generatedAt`, `resourceVersion`, skipped objects).
fn annotated(json: &Value, snap: &Snapshot) -> Value {
    let mut v = json.clone();
    live_meta::annotate(&mut v, snap);
    v
}

/// Prints one plan; a closed stdout is [`super::out::BrokenPipe`] (the watch ends).
fn emit(args: &PlanArgs, json: &Value, snap: &Snapshot) -> Result<()> {
    use std::fmt::Write as _;
    let text = match args.output {
        PlanOutput::Json => serde_json::to_string_pretty(json)? + "\n",
        PlanOutput::Jsonl => serde_json::to_string(json)? + "\n",
        PlanOutput::Table => {
            let mut t = format!("live cluster: {}\n", snap.status_line());
            t.push_str(&plan_table::render(json, terminal_width()));
            if let Some(drift) = json.get("drift").and_then(Value::as_array)
                && !drift.is_empty()
            {
                t.push_str("\nDrift (Kueue vs the shadow engine):\n");
                for d in drift {
                    let _ = writeln!(
                        t,
                        "  {}: {}",
                        d["kind"].as_str().unwrap_or(""),
                        d["detail"].as_str().unwrap_or("")
                    );
                }
            }
            if args.watch {
                t.push('\n');
            }
            t
        }
    };
    super::out::out(&text)
}
