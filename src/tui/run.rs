//! The local terminal loop: input, data and a slow tick in, frames out.
//!
//! One `tokio::select!` over crossterm's `EventStream`, the data `watch` channel,
//! action notices and a tick (ages only). Redraws happen only when `update` asks for
//! one, at most `max_fps` times a second. Nothing is printed while the console owns
//! the terminal: feedback goes to the message line, diagnostics to `tracing`.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use anyhow::Context;
use crossterm::event::{Event, EventStream};
use futures::StreamExt;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Size;
use tokio::sync::{mpsc, watch};
use tokio::time::{Instant, MissedTickBehavior};

use super::app::{App, update};
use super::color::ColorEnv;
use super::config::{Config, ConfigError};
use super::data::ConsoleData;
use super::keymap::Keymap;
use super::msg::{Effect, Msg, ViewId};
use super::terminal::TerminalGuard;
use super::theme::Theme;
use super::views::view;
use crate::actions::{ActionEvent, ConsoleRequest};
use crate::clock::Clock;

/// How to run the console.
pub struct RunOptions {
    pub keymap: Keymap,
    pub theme: Theme,
    pub readonly: bool,
    pub default_view: ViewId,
    pub max_fps: u32,
    pub tick: Duration,
    /// Where action requests and answers go. `None`: actions answer "not available yet".
    pub actions: Option<mpsc::UnboundedSender<ConsoleRequest>>,
    /// What the action task reports: notices, prompts, access, audit rows.
    pub action_events: Option<mpsc::UnboundedReceiver<ActionEvent>>,
    /// "Now" for ages and waits: the wall clock, or the simulator's in the demo.
    pub clock: Clock,
    /// The namespace every view starts scoped to (`-n`); `:ns` changes it.
    pub namespace: Option<String>,
    /// The kubeconfig's context names, for `:ctx`.
    pub contexts: Vec<String>,
}

impl RunOptions {
    /// From a loaded config. `readonly` is the command-line flag, which wins when given
    /// (`--readonly` / `--write`).
    pub fn from_config(
        config: &Config,
        readonly: Option<bool>,
        env: ColorEnv,
    ) -> Result<RunOptions, ConfigError> {
        Ok(RunOptions {
            keymap: config.keymap()?,
            theme: config.theme(env)?,
            readonly: readonly.unwrap_or(config.readonly),
            default_view: config.default_view,
            max_fps: config.max_fps,
            tick: Duration::from_millis(config.tick_ms),
            actions: None,
            action_events: None,
            clock: Clock::wall(),
            namespace: None,
            contexts: Vec::new(),
        })
    }
}

/// What a new cluster context feeds the console: its data and its action task.
pub struct Session {
    pub data: watch::Receiver<ConsoleData>,
    /// Where action requests go (`None`: actions are not available on this context).
    pub actions: Option<mpsc::UnboundedSender<ConsoleRequest>>,
    pub action_events: Option<mpsc::UnboundedReceiver<ActionEvent>>,
}

/// Carries out `:ctx NAME` for [`run_terminal_with`]: shuts the current source down and
/// connects the named context, or says why not (the current one then keeps running).
/// Lives with the caller, which owns the watches and tasks.
pub trait ContextSwitcher {
    fn switch<'a>(
        &'a mut self,
        context: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<Session, String>> + 'a>>;
}

/// What `:ctx NAME` answers where the console cannot reconnect.
pub const NO_CONTEXT_SWITCH: &str =
    "switching contexts needs a live cluster: not available for `-f` dumps or the demo";

/// Runs the console in the local terminal until the operator quits.
pub async fn run_terminal(
    data_rx: watch::Receiver<ConsoleData>,
    opts: RunOptions,
) -> anyhow::Result<()> {
    run_terminal_with(data_rx, opts, None).await
}

/// [`run_terminal`], with `switcher` carrying out `:ctx NAME` without leaving the
/// terminal: the views, filters and namespace stay, the data and actions are replaced.
pub async fn run_terminal_with(
    mut data_rx: watch::Receiver<ConsoleData>,
    mut opts: RunOptions,
    mut switcher: Option<&mut dyn ContextSwitcher>,
) -> anyhow::Result<()> {
    let mut guard = TerminalGuard::enter().context("cannot set up the terminal")?;
    let mut app = App::new(
        opts.keymap.clone(),
        opts.theme.clone(),
        opts.readonly,
        opts.default_view,
    );
    app.set_namespace(opts.namespace.clone());
    app.contexts = opts.contexts.clone();
    let size = guard
        .terminal
        .size()
        .context("cannot read the terminal size")?;
    update(&mut app, Msg::Resize(size.width, size.height));
    update(&mut app, Msg::Tick(opts.clock.now_ms()));
    update(&mut app, Msg::Data(data_rx.borrow_and_update().clone()));

    let mut events = EventStream::new();
    let mut tick = tokio::time::interval(opts.tick);
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let min_frame = Duration::from_secs_f64(1.0 / f64::from(opts.max_fps.max(1)));
    let mut last_draw: Option<Instant> = None;
    let mut dirty = true;
    // Set when only the clock moved since the last frame: most ticks change nothing on
    // screen, and a draw that changes no cell still writes cursor escapes.
    let mut tick_only = false;
    let mut idle = IdleFrames::default();
    let mut data_open = true;
    let mut action_events = opts.action_events.take();

    loop {
        let due = last_draw.map_or(Instant::now(), |t| t + min_frame);
        if dirty && Instant::now() >= due {
            let size = guard
                .terminal
                .size()
                .context("cannot read the terminal size")?;
            if tick_only && idle.unchanged(&app, size) {
                dirty = false;
            } else {
                let frame = guard
                    .terminal
                    .draw(|frame| view(&app, &app.cache.data, frame))
                    .context("cannot draw")?;
                idle.remember(frame.buffer);
                last_draw = Some(Instant::now());
                dirty = false;
            }
            tick_only = false;
        }
        let msg = tokio::select! {
            biased;
            ev = events.next() => match ev {
                Some(Ok(Event::Key(key))) => Msg::Key(key),
                Some(Ok(Event::Resize(w, h))) => Msg::Resize(w, h),
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Err(e).context("cannot read terminal input"),
                None => return Ok(()),
            },
            changed = data_rx.changed(), if data_open => match changed {
                Ok(()) => Msg::Data(data_rx.borrow_and_update().clone()),
                // The publisher is gone: keep showing the last data.
                Err(_) => {
                    data_open = false;
                    Msg::Notice("data source closed; showing the last snapshot".into())
                }
            },
            Some(event) = async { action_events.as_mut()?.recv().await }, if action_events.is_some() => {
                match event {
                    ActionEvent::Notice(text) => Msg::Notice(text),
                    ActionEvent::Prompt(prompt) => Msg::Confirm(prompt),
                    ActionEvent::Access(access) => Msg::Access(access),
                    ActionEvent::Audited(row) => Msg::Audited(row),
                }
            }
            _ = tick.tick() => Msg::Tick(opts.clock.now_ms()),
            // Wake up to draw a frame that the rate limit held back.
            _ = tokio::time::sleep_until(due), if dirty => continue,
        };
        let is_tick = matches!(msg, Msg::Tick(_));
        for effect in update(&mut app, msg) {
            match effect {
                Effect::Quit => return Ok(()),
                Effect::Redraw => {
                    // A tick alone may change nothing visible; anything else redraws.
                    tick_only = if dirty { tick_only && is_tick } else { is_tick };
                    dirty = true;
                }
                Effect::Confirmed { prompt, yes } => {
                    if let Some(tx) = &opts.actions {
                        let _ = tx.send(ConsoleRequest::Answer { prompt, yes });
                    }
                    tick_only = false;
                    dirty = true;
                }
                Effect::RunAction(req) => {
                    let sent = opts
                        .actions
                        .as_ref()
                        .is_some_and(|tx| tx.send(ConsoleRequest::Run(req)).is_ok());
                    if !sent {
                        update(
                            &mut app,
                            Msg::Notice("actions are not available yet".into()),
                        );
                    }
                    tick_only = false;
                    dirty = true;
                }
                Effect::SwitchContext(name) => {
                    let Some(switcher) = switcher.as_deref_mut() else {
                        update(&mut app, Msg::Notice(NO_CONTEXT_SWITCH.into()));
                        tick_only = false;
                        dirty = true;
                        continue;
                    };
                    // Show "switching to …" while connecting.
                    guard
                        .terminal
                        .draw(|frame| view(&app, &app.cache.data, frame))
                        .context("cannot draw")?;
                    match switcher.switch(&name).await {
                        Ok(session) => {
                            data_rx = session.data;
                            data_open = true;
                            opts.actions = session.actions;
                            action_events = session.action_events;
                            // The new action task reads the audit log back and
                            // re-checks access: start both afresh.
                            app.audit_rows.clear();
                            app.access = Default::default();
                            update(&mut app, Msg::Data(data_rx.borrow_and_update().clone()));
                            update(&mut app, Msg::Notice(format!("context: {name}")));
                        }
                        Err(why) => {
                            update(&mut app, Msg::Notice(why));
                        }
                    }
                    tick_only = false;
                    dirty = true;
                }
            }
        }
    }
}

/// The last frame drawn, to tell whether a tick changed anything visible: the view is
/// rendered off-screen and compared cell by cell (a fraction of a millisecond), so an
/// idle console writes nothing at all.
#[derive(Default)]
struct IdleFrames {
    last: Option<Buffer>,
    scratch: Option<Terminal<TestBackend>>,
}

impl IdleFrames {
    fn remember(&mut self, buffer: &Buffer) {
        self.last = Some(buffer.clone());
    }

    fn unchanged(&mut self, app: &App, size: Size) -> bool {
        let Some(last) = &self.last else {
            return false;
        };
        if last.area.width != size.width || last.area.height != size.height {
            return false;
        }
        let scratch = match &mut self.scratch {
            Some(t) if t.backend().buffer().area == last.area => t,
            slot => match Terminal::new(TestBackend::new(size.width, size.height)) {
                Ok(t) => slot.insert(t),
                Err(_) => return false,
            },
        };
        match scratch.draw(|frame| view(app, &app.cache.data, frame)) {
            Ok(frame) => frame.buffer == last,
            Err(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::keymap::Keymap;

    fn drawn(app: &App, idle: &mut IdleFrames, w: u16, h: u16) {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        let frame = t.draw(|f| view(app, &app.cache.data, f)).unwrap();
        idle.remember(frame.buffer);
    }

    #[test]
    fn a_tick_that_changes_no_cell_is_not_drawn_and_one_that_does_is() {
        let mut app = App::new(
            Keymap::default(),
            Theme::preset("dark"),
            false,
            ViewId::Queues,
        );
        update(&mut app, Msg::Resize(100, 30));
        update(&mut app, Msg::Tick(1_000_000));
        let mut data = ConsoleData::default();
        data.sync.last_event = Some(1_000_000);
        update(&mut app, Msg::Data(data));
        let mut idle = IdleFrames::default();
        let size = Size::new(100, 30);
        assert!(!idle.unchanged(&app, size), "nothing drawn yet");
        drawn(&app, &mut idle, 100, 30);
        // 300 ms later "last event 0s ago" still reads the same: nothing to draw.
        update(&mut app, Msg::Tick(1_000_300));
        assert!(idle.unchanged(&app, size));
        // Two seconds later it reads "2s ago": draw.
        update(&mut app, Msg::Tick(1_002_000));
        assert!(!idle.unchanged(&app, size));
        // A resize always draws.
        assert!(!idle.unchanged(&app, Size::new(90, 30)));
    }
}
