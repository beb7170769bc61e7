//! `gangplank serve-ssh`: the console, read-only, for many SSH viewers over one set
//! of cluster watches.
//!
//! Sessions are read-only by construction: each gets its own console `App` (view,
//! filter, selection, theme, size) over the shared `ConsoleData` feed, and nothing
//! else — no kube client, no action channel.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use crossterm::event::KeyEvent;
use ratatui::Frame;
use tokio::sync::watch;

use super::args::ServeSshArgs;
use super::embedded::EmbeddedSim;
use super::feed;
use super::signals::{Signalled, Terminations};
use crate::clock::Clock;
use crate::sim::scenario::Scenario;
use crate::source::{self, ReplanOptions, SourceOptions};
use crate::ssh::{self, KeyOutcome, SessionApp, SessionAppFactory, SessionInfo, SshServerOptions};
use crate::tui::color::{ColorDepth, ColorEnv};
use crate::tui::{App, Config, ConsoleData, Effect, Msg, Theme, update, view};

/// One viewer's console.
struct ConsoleSession {
    app: App,
    clock: Clock,
}

impl SessionApp<ConsoleData> for ConsoleSession {
    fn on_key(&mut self, key: KeyEvent) -> KeyOutcome {
        let effects = update(&mut self.app, Msg::Key(key));
        if effects.iter().any(|e| matches!(e, Effect::Quit)) {
            KeyOutcome::Quit
        } else {
            KeyOutcome::Continue
        }
    }

    fn on_resize(&mut self, cols: u16, rows: u16) {
        update(&mut self.app, Msg::Resize(cols, rows));
    }

    fn render(&mut self, data: &ConsoleData, frame: &mut Frame<'_>) {
        self.app.observe(data, self.clock.now_ms());
        view(&self.app, data, frame);
    }
}

/// Builds a read-only console per session over the shared feed.
struct ConsoleFactory {
    data: watch::Receiver<ConsoleData>,
    config: Config,
    /// Ages in the cluster's time (the simulator's with `--demo`).
    clock: Clock,
}

impl SessionAppFactory for ConsoleFactory {
    type Data = ConsoleData;

    fn subscribe(&self) -> watch::Receiver<ConsoleData> {
        self.data.clone()
    }

    fn new_session(&self, info: &SessionInfo) -> Box<dyn SessionApp<ConsoleData>> {
        let env = match info.color_depth {
            ssh::ColorDepth::None => ColorEnv {
                depth: ColorDepth::Ansi16,
                no_color: true,
            },
            ssh::ColorDepth::Ansi16 => ColorEnv {
                depth: ColorDepth::Ansi16,
                no_color: false,
            },
            ssh::ColorDepth::Ansi256 => ColorEnv {
                depth: ColorDepth::Ansi256,
                no_color: false,
            },
            ssh::ColorDepth::TrueColor => ColorEnv {
                depth: ColorDepth::TrueColor,
                no_color: false,
            },
        };
        let theme = self
            .config
            .theme(env)
            .or_else(|_| Theme::resolve("dark", None, env))
            .unwrap_or_default();
        let keymap = self.config.keymap().unwrap_or_default();
        // Read-only is not a setting here: a viewer session cannot write at all.
        let mut app = App::new(keymap, theme, true, self.config.default_view);
        update(&mut app, Msg::Resize(info.size.0, info.size.1));
        Box::new(ConsoleSession {
            app,
            clock: self.clock.clone(),
        })
    }
}

/// Without `--log-file` the server logs to stderr (it draws no console there): every
/// authentication attempt is an audit line that must not be lost. `GANGPLANK_LOG`
/// filters (default `info`).
fn log_to_stderr() -> Result<super::console::LogGuard> {
    let filter = tracing_subscriber::EnvFilter::try_from_env("GANGPLANK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(filter)
        .try_init()
        .map_err(|e| anyhow::anyhow!("cannot start logging: {e}"))?;
    // Nothing to flush: stderr is written synchronously.
    super::console::init_logging(None)
}

/// `--idle-timeout` ([`crate::duration`]'s syntax); `0`, `none` or `off`: never.
fn parse_duration(text: &str) -> Result<Option<Duration>> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("none") || text.eq_ignore_ascii_case("off") {
        return Ok(None);
    }
    let d = crate::duration::parse_duration(text)
        .map_err(|e| anyhow::anyhow!("--idle-timeout: {e}"))?;
    Ok(Some(d).filter(|d| !d.is_zero()))
}

/// Runs `serve-ssh` until interrupted.
pub fn run(args: &ServeSshArgs) -> Result<i32> {
    let _log = match &args.log_file {
        Some(path) => super::console::init_logging(Some(path))?,
        None => log_to_stderr()?,
    };
    let config = Config::load(args.config.as_deref()).map_err(|e| anyhow::anyhow!("{e}"))?;
    let opts = SshServerOptions {
        listen: args.listen,
        authorized_keys: args.authorized_keys.clone(),
        host_key: args.host_key.clone(),
        max_sessions: args.max_sessions,
        idle_timeout: parse_duration(&args.idle_timeout)?,
        ..SshServerOptions::default()
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(async move {
        // With --demo the watches go to the embedded simulator, through the same client.
        let mut sim = None;
        let mut clock = Clock::wall();
        let mut cluster = args.cluster.clone();
        let mut context = cluster
            .context
            .clone()
            .unwrap_or_else(|| "current context".into());
        if args.demo {
            let live = EmbeddedSim::start(&Scenario::seed(), args.speed, &cluster).await?;
            cluster = live.cluster.clone();
            clock = live.clock.clone();
            context = "demo: seed".into();
            sim = Some(live);
        }
        let mut source_opts = SourceOptions {
            namespace: cluster.namespace.clone(),
            clock: clock.clone(),
            ..SourceOptions::default()
        };
        let client = source::connect_source(&cluster, &mut source_opts).await?;
        let handle = source::start(client, source_opts).await;
        let (plans, _replan) = source::replan::spawn(handle.snapshots(), ReplanOptions::default());
        let (data, _feed) = feed::spawn(handle.snapshots(), plans, context);
        let factory = Arc::new(ConsoleFactory {
            data,
            config,
            clock,
        });
        // SIGTERM, SIGINT, SIGQUIT, SIGHUP: every session is closed cleanly, the
        // server stops accepting and the process exits 128 + n.
        let mut terms = Terminations::register().context("cannot handle signals")?;
        let received = Arc::new(std::sync::atomic::AtomicI32::new(0));
        let seen = received.clone();
        let server = ssh::serve(opts, factory, async move {
            let n = terms.recv().await;
            seen.store(n, std::sync::atomic::Ordering::SeqCst);
        })
        .await?;
        super::out::out(&format!(
            "gangplank serve-ssh listening on {}\nhost key fingerprint: {}\n",
            server.local_addr(),
            server.host_key_fingerprint()
        ))?;
        server.wait().await;
        handle.shutdown().await;
        if let Some(sim) = sim {
            sim.shutdown().await;
        }
        match received.load(std::sync::atomic::Ordering::SeqCst) {
            0 => Ok::<_, anyhow::Error>(0),
            n => Ok(Signalled(n).exit_code()),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_timeout_parses_units_and_off() {
        assert_eq!(
            parse_duration("30m").unwrap(),
            Some(Duration::from_secs(1800))
        );
        assert_eq!(
            parse_duration("90s").unwrap(),
            Some(Duration::from_secs(90))
        );
        assert_eq!(
            parse_duration("2h").unwrap(),
            Some(Duration::from_secs(7200))
        );
        assert_eq!(parse_duration("0").unwrap(), None);
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5y").is_err());
        // Was seconds; a bare number is refused everywhere now.
        assert!(parse_duration("90").is_err());
    }
}
