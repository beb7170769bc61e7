//! The console commands: `gangplank` (live cluster), `gangplank -f DIR` (a dump, for
//! post-mortems) and `gangplank demo` (the embedded simulator).
//!
//! The demo reaches the simulator through the same kube client, watchers, store and
//! re-planner as a real cluster: only the kubeconfig differs.

use std::path::PathBuf;

use anyhow::{Context, Result};
use tokio::sync::watch;

use super::actions::{ConsoleActionSettings, spawn_console_actions};
use super::args::{ConsoleArgs, DemoArgs};
use super::embedded::EmbeddedSim;
use super::feed;
use super::signals::{Terminations, until_signalled};
use crate::engine::{self, PlanOptions};
use crate::model::load_paths;
use crate::sim::scenario::{Scenario, load_scenario};
use crate::source::{self, ClusterArgs, LivePlan, ReplanOptions, Snapshot, SourceOptions};
use crate::tui::color::ColorEnv;
use crate::tui::{
    Config, ConsoleData, ContextSwitcher, RunOptions, Session, run_terminal, run_terminal_with,
};

/// Keeps the log writer alive for the whole run (tracing-appender flushes on drop).
pub struct LogGuard(#[allow(dead_code)] Option<tracing_appender::non_blocking::WorkerGuard>);

/// `--log-file`: everything goes to that file; without it nothing is logged, because
/// nothing may be printed while the console owns the terminal.
pub fn init_logging(path: Option<&PathBuf>) -> Result<LogGuard> {
    let Some(path) = path else {
        return Ok(LogGuard(None));
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("--log-file {}: cannot open for writing", path.display()))?;
    let (writer, guard) = tracing_appender::non_blocking(file);
    let filter = tracing_subscriber::EnvFilter::try_from_env("GANGPLANK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .map_err(|e| anyhow::anyhow!("cannot start logging: {e}"))?;
    Ok(LogGuard(Some(guard)))
}

fn run_options(args: &ConsoleArgs) -> Result<RunOptions> {
    let mut config = Config::load(args.config.as_deref()).map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(theme) = &args.theme {
        config.theme = theme.clone();
    }
    let mut opts =
        RunOptions::from_config(&config, args.readonly.then_some(true), ColorEnv::from_env())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    // `-n`: every view shows that namespace's objects (`:ns` changes it live).
    opts.namespace = args.cluster.namespace.clone();
    opts.contexts = crate::source::context_names(&args.cluster);
    Ok(opts)
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// `gangplank [-f PATH...]`: the console on the current kube context or on a dump.
pub fn run(args: &ConsoleArgs) -> Result<i32> {
    let _log = init_logging(args.log_file.as_ref())?;
    let opts = run_options(args)?;
    if !args.files.is_empty() {
        return run_static(args, opts);
    }
    let rt = runtime()?;
    rt.block_on(async {
        let context =
            source::context_name(&args.cluster).unwrap_or_else(|| "current context".to_string());
        live_console(
            &args.cluster,
            context,
            opts,
            &action_settings(args),
            args.history_file
                .clone()
                .or_else(source::default_history_path),
            true,
        )
        .await
    })?;
    Ok(0)
}

/// A dump of manifests: one snapshot, one plan, no network.
fn run_static(args: &ConsoleArgs, opts: RunOptions) -> Result<i32> {
    let state = match load_paths(&args.files) {
        Ok(s) => s,
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(1);
        }
    };
    let now = jiff::Timestamp::now();
    let plan = engine::plan(
        &state,
        &PlanOptions {
            now: now.as_millisecond(),
            // the console reads queue positions from the first cycle's rows
            pending_in_every_cycle: true,
            ..PlanOptions::default()
        },
    );
    let mut snap = Snapshot::empty(args.cluster.namespace.clone());
    // No watch ran: the Events view shows what the dump's conditions say happened.
    (snap.evictions, snap.events) = source::history::records_from_state(&state);
    snap.state = std::sync::Arc::new(state);
    snap.taken_at = now;
    let live_plan = LivePlan {
        generation: 0,
        plan,
        drift: Vec::new(),
        plan_time: std::time::Duration::ZERO,
    };
    let names: Vec<String> = args.files.iter().map(|p| p.display().to_string()).collect();
    let data = feed::console_data(
        &snap,
        Some(&live_plan),
        &format!("file: {}", names.join(", ")),
        1,
    );
    let (_tx, rx) = watch::channel::<ConsoleData>(data);
    runtime()?.block_on(async {
        let mut terms = Terminations::register().context("cannot handle signals")?;
        until_signalled(&mut terms, run_terminal(rx, opts)).await
    })?;
    Ok(0)
}

/// The console's action settings from its flags.
fn action_settings(args: &ConsoleArgs) -> ConsoleActionSettings {
    ConsoleActionSettings {
        readonly: args.readonly,
        audit_log: args.audit_log.clone(),
        policy: args.approval_policy.clone().unwrap_or_default(),
    }
}

/// The watches, re-planner, feed and action task of one cluster context.
struct LiveSession {
    handle: source::SourceHandle,
    replan_task: tokio::task::JoinHandle<()>,
    feed_task: tokio::task::JoinHandle<()>,
    actions_task: Option<tokio::task::JoinHandle<()>>,
}

impl LiveSession {
    /// Starts the source on `client` and everything that hangs off it; returns what the
    /// console reads.
    async fn start(
        cluster: &ClusterArgs,
        client: kube::Client,
        source_opts: SourceOptions,
        context: String,
        settings: &ConsoleActionSettings,
    ) -> (LiveSession, Session) {
        let handle = source::start(client, source_opts).await;
        let (plans, replan_task) =
            source::replan::spawn(handle.snapshots(), ReplanOptions::default());
        let extras = feed::FeedExtras {
            policy: settings.policy.clone(),
        };
        // Without an audit log or a connection for the executor the console still runs:
        // action keys then answer that actions are not available.
        let (actions, action_events, actions_task) =
            match spawn_console_actions(cluster, settings, handle.snapshots()).await {
                Ok(a) => (Some(a.requests), Some(a.events), Some(a.task)),
                Err(e) => {
                    tracing::warn!("actions unavailable: {e:#}");
                    (None, None, None)
                }
            };
        let (data, feed_task) = feed::spawn_with(handle.snapshots(), plans, context, extras);
        (
            LiveSession {
                handle,
                replan_task,
                feed_task,
                actions_task,
            },
            Session {
                data,
                actions,
                action_events,
            },
        )
    }

    async fn shutdown(self) {
        if let Some(t) = self.actions_task {
            t.abort();
        }
        self.feed_task.abort();
        self.replan_task.abort();
        self.handle.shutdown().await;
    }
}

/// The source options for `cluster` (before [`source::connect_source`] fills in the server).
fn source_options(
    cluster: &ClusterArgs,
    history_file: &Option<PathBuf>,
    opts: &RunOptions,
) -> SourceOptions {
    SourceOptions {
        namespace: cluster.namespace.clone(),
        history_file: history_file.clone(),
        clock: opts.clock.clone(),
        ..SourceOptions::default()
    }
}

/// `:ctx NAME` on a live cluster: the same kubeconfig and flags with another context.
struct LiveSwitcher<'s> {
    cluster: ClusterArgs,
    settings: &'s ConsoleActionSettings,
    source_opts: SourceOptions,
    session: Option<LiveSession>,
}

impl LiveSwitcher<'_> {
    async fn switch_to(&mut self, name: &str) -> Result<Session, String> {
        let known = source::context_names(&self.cluster);
        if !known.iter().any(|c| c == name) {
            return Err(format!(
                "no context {name:?} in the kubeconfig (contexts: {}); still on the current one",
                known.join(", ")
            ));
        }
        let cluster = ClusterArgs {
            context: Some(name.to_string()),
            ..self.cluster.clone()
        };
        // Connect first: a context whose credentials or server cannot be used leaves
        // the current one running.
        let mut source_opts = self.source_opts.clone();
        let client = source::connect_source(&cluster, &mut source_opts)
            .await
            .map_err(|e| format!("context {name}: {e}; still on the current one"))?;
        if let Some(old) = self.session.take() {
            old.shutdown().await;
        }
        let (session, console) = LiveSession::start(
            &cluster,
            client,
            source_opts,
            name.to_string(),
            self.settings,
        )
        .await;
        self.session = Some(session);
        self.cluster = cluster;
        Ok(console)
    }
}

impl ContextSwitcher for LiveSwitcher<'_> {
    fn switch<'a>(
        &'a mut self,
        context: &'a str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Session, String>> + 'a>> {
        Box::pin(self.switch_to(context))
    }
}

/// Watches the cluster the flags name and runs the console over it until `q`.
/// Action keys go to the action task (one executor, read-only under `--readonly`);
/// its notices come back to the message line and its audit rows into the Audit view.
/// With `switchable`, `:ctx NAME` replaces all of that with the kubeconfig's context
/// NAME without leaving the terminal.
async fn live_console(
    cluster: &ClusterArgs,
    context: String,
    mut opts: RunOptions,
    settings: &ConsoleActionSettings,
    history_file: Option<PathBuf>,
    switchable: bool,
) -> Result<()> {
    let mut source_opts = source_options(cluster, &history_file, &opts);
    let base_opts = source_opts.clone();
    let client = source::connect_source(cluster, &mut source_opts).await?;
    let (session, console) =
        LiveSession::start(cluster, client, source_opts, context, settings).await;
    opts.actions = console.actions;
    opts.action_events = console.action_events;
    let mut switcher = LiveSwitcher {
        cluster: cluster.clone(),
        settings,
        source_opts: base_opts,
        session: Some(session),
    };
    // A termination signal drops the console (its guard restores the terminal), then
    // the tasks below are shut down as after `q`.
    let mut terms = Terminations::register().context("cannot handle signals")?;
    let result = {
        let switch: Option<&mut dyn ContextSwitcher> = if switchable {
            Some(&mut switcher)
        } else {
            None
        };
        until_signalled(&mut terms, run_terminal_with(console.data, opts, switch)).await
    };
    if let Some(session) = switcher.session.take() {
        session.shutdown().await;
    }
    result
}

/// `gangplank demo`: the simulator in-process on loopback, and the console against it.
pub fn demo(args: &DemoArgs) -> Result<i32> {
    if !(args.speed.is_finite() && args.speed > 0.0) {
        anyhow::bail!("--speed must be a positive number, got {}", args.speed);
    }
    let _log = init_logging(args.console.log_file.as_ref())?;
    let mut opts = run_options(&args.console)?;
    // The demo's cluster is the embedded simulator, not a kubeconfig context.
    opts.contexts.clear();
    let scenario = match &args.scenario {
        Some(path) => load_scenario(path).context("cannot load the scenario")?,
        None => Scenario::seed(),
    };
    let rt = runtime()?;
    rt.block_on(async {
        let sim = EmbeddedSim::start(&scenario, args.speed, &args.console.cluster).await?;
        opts.clock = sim.clock.clone();
        let context = format!("demo: {} at {}x", scenario.name, args.speed);
        let result = live_console(
            &sim.cluster,
            context,
            opts,
            &action_settings(&args.console),
            // The simulator's evictions are not the cluster's history: the demo keeps
            // its own file, which `gangplank history` does not read.
            args.console
                .history_file
                .clone()
                .or_else(source::default_demo_history_path),
            false,
        )
        .await;
        sim.shutdown().await;
        result
    })?;
    Ok(0)
}
