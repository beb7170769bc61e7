//! One interactive session: the loop that owns the app, the ratatui terminal and the
//! channel, on its own tokio task (so a panic anywhere in it ends only this session).
//!
//! Output flow control: at most ONE frame is in flight. The frame is written with
//! `ChannelWriteHalf::data_bytes`, which waits for the client's SSH window, so nothing
//! queues inside russh. While a frame is in flight, changes only mark the session dirty
//! (intermediate frames are skipped, never rendered or buffered); once the client
//! catches up we force a full repaint and send the latest state. Per-session memory is
//! therefore one in-flight frame + the sink + ratatui's two cell buffers.

use std::future::Future;
use std::net::SocketAddr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ratatui::layout::{Rect, Size};
use ratatui::{Terminal, TerminalOptions, Viewport};
use russh::server::Msg;
use russh::{Channel, ChannelMsg, ChannelWriteHalf};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::input::InputDecoder;
use super::limits::{SessionSlot, clamp_size};
use super::output::{ColorDepth, FrameSink, SessionBackend};
use super::{KeyOutcome, SessionApp, SessionAppFactory, SessionInfo};

/// Enter the alternate screen, hide the cursor, clear.
const ENTER: &[u8] = b"\x1b[?1049h\x1b[?25l\x1b[0m\x1b[2J\x1b[H";
/// Reset attributes, show the cursor, leave the alternate screen.
const LEAVE: &[u8] = b"\x1b[0m\x1b[?25h\x1b[?1049l";
/// How long we try to deliver the goodbye bytes to a client before just closing.
const GOODBYE_TIMEOUT: Duration = Duration::from_secs(2);

/// Settings a session needs from the server options.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// End after this long without input.
    pub idle_timeout: Option<Duration>,
    /// Periodic redraw of an idle session (ages); see `SshServerOptions::age_refresh`.
    pub age_refresh: Option<Duration>,
    /// Retained capacity of the frame buffer.
    pub output_buffer_bytes: usize,
}

/// Everything a session task receives from its connection.
pub struct SessionParams<F: SessionAppFactory> {
    /// Builds the app and supplies the data feed.
    pub factory: Arc<F>,
    /// Session settings.
    pub config: SessionConfig,
    /// Authenticated user name.
    pub user: String,
    /// Remote address.
    pub peer: Option<SocketAddr>,
    /// The session slot, or `None` when the server is full (the client gets a message).
    pub slot: Option<SessionSlot>,
    /// Maximum sessions, for the "server full" message.
    pub max_sessions: usize,
    /// Set once the shell starts: the connection's login-grace timer checks it.
    pub started: Arc<AtomicBool>,
    /// Server shutdown.
    pub shutdown: CancellationToken,
}

/// Why a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// The app asked to quit (`q`, Ctrl-C).
    Quit,
    /// The client closed the channel or connection.
    ClientGone,
    /// No input for the idle timeout.
    Idle,
    /// The server is shutting down.
    Shutdown,
    /// The app panicked.
    Panic,
    /// The client asked for something other than an interactive shell.
    Refused,
    /// No free session slot.
    Full,
}

type Sending = Pin<Box<dyn Future<Output = Result<(), russh::Error>> + Send>>;

/// Run one session channel to completion.
pub async fn run<F: SessionAppFactory>(p: SessionParams<F>, channel: Channel<Msg>) {
    let (mut read, write) = channel.split();
    let write = Arc::new(write);

    // --- setup: collect pty-req / env until the shell request ---
    let mut term = String::new();
    let mut size = (80u16, 24u16);
    let mut colorterm: Option<String> = None;
    let mut no_color: Option<String> = None;
    loop {
        let msg = tokio::select! {
            m = read.wait() => m,
            () = p.shutdown.cancelled() => return,
        };
        match msg {
            Some(ChannelMsg::RequestPty {
                term: t,
                col_width,
                row_height,
                ..
            }) => {
                term = t;
                size = clamp_size(col_width, row_height);
            }
            Some(ChannelMsg::WindowChange {
                col_width,
                row_height,
                ..
            }) => size = clamp_size(col_width, row_height),
            Some(ChannelMsg::SetEnv {
                variable_name,
                variable_value,
                ..
            }) => match variable_name.as_str() {
                "COLORTERM" => colorterm = Some(variable_value),
                "NO_COLOR" => no_color = Some(variable_value),
                _ => {}
            },
            Some(ChannelMsg::RequestShell { .. }) => break,
            Some(ChannelMsg::Exec { .. }) | Some(ChannelMsg::RequestSubsystem { .. }) => {
                p.started.store(true, Ordering::SeqCst);
                goodbye(
                    &write,
                    b"gangplank: only interactive sessions are supported; connect with `ssh -t`\r\n",
                    1,
                )
                .await;
                log_end(&p, EndReason::Refused, 0, 0);
                return;
            }
            Some(ChannelMsg::Eof) | Some(ChannelMsg::Close) | None => return,
            Some(_) => {}
        }
    }
    p.started.store(true, Ordering::SeqCst);

    if p.slot.is_none() {
        let msg = format!(
            "gangplank: server full ({} sessions); try again later\r\n",
            p.max_sessions
        );
        goodbye(&write, msg.as_bytes(), 1).await;
        log_end(&p, EndReason::Full, 0, 0);
        return;
    }

    let depth = ColorDepth::detect(&term, colorterm.as_deref(), no_color.as_deref());
    let info = SessionInfo {
        user: p.user.clone(),
        term: term.clone(),
        color_depth: depth,
        size,
        peer: p.peer,
    };
    tracing::info!(user = %p.user, peer = ?p.peer, term = %term, cols = size.0, rows = size.1,
        color = ?depth, "ssh session started");

    let app = match catch_unwind(AssertUnwindSafe(|| p.factory.new_session(&info))) {
        Ok(app) => app,
        Err(_) => {
            tracing::error!(user = %p.user, "ssh session: app construction panicked");
            goodbye(&write, b"gangplank: internal error\r\n", 1).await;
            log_end(&p, EndReason::Panic, 0, 0);
            return;
        }
    };
    let data = p.factory.subscribe();
    let mut s = Live::new(app, data, size, depth, p.config.clone());
    let reason = s.run(&mut read, &write, &p.shutdown).await;

    let bye: &[u8] = match reason {
        EndReason::Idle => b"gangplank: session ended after idle timeout\r\n",
        EndReason::Shutdown => b"gangplank: server shutting down\r\n",
        EndReason::Panic => b"gangplank: internal error; session ended\r\n",
        _ => b"",
    };
    if reason != EndReason::ClientGone {
        let mut out = LEAVE.to_vec();
        out.extend_from_slice(bye);
        let code = if reason == EndReason::Quit { 0 } else { 1 };
        goodbye(&write, &out, code).await;
    }
    log_end(&p, reason, s.frames_sent, s.frames_skipped);
}

fn log_end<F: SessionAppFactory>(p: &SessionParams<F>, reason: EndReason, sent: u64, skipped: u64) {
    tracing::info!(user = %p.user, peer = ?p.peer, reason = ?reason, frames_sent = sent,
        frames_skipped = skipped, "ssh session ended");
}

/// Send final bytes and an exit status, then close; bounded in time because a client
/// with a full window might never accept them.
async fn goodbye(write: &ChannelWriteHalf<Msg>, bytes: &[u8], code: u32) {
    let _ = tokio::time::timeout(GOODBYE_TIMEOUT, async {
        if !bytes.is_empty() {
            write.data_bytes(bytes.to_vec()).await?;
        }
        write.exit_status(code).await?;
        write.eof().await?;
        Ok::<(), russh::Error>(())
    })
    .await;
    let _ = write.close().await;
}

/// The running state of an interactive session.
struct Live<D> {
    app: Box<dyn SessionApp<D>>,
    data: tokio::sync::watch::Receiver<D>,
    data_open: bool,
    terminal: Terminal<SessionBackend>,
    sink: FrameSink,
    decoder: InputDecoder,
    config: SessionConfig,
    dirty: bool,
    /// A change arrived while a frame was in flight: repaint fully once it lands.
    skipped: bool,
    frames_sent: u64,
    /// Data updates that arrived while a frame was in flight (never rendered on their own).
    frames_skipped: u64,
}

impl<D: Clone + Send + Sync + 'static> Live<D> {
    fn new(
        app: Box<dyn SessionApp<D>>,
        mut data: tokio::sync::watch::Receiver<D>,
        size: (u16, u16),
        depth: ColorDepth,
        config: SessionConfig,
    ) -> Self {
        let sink = FrameSink::default();
        let area = Rect::new(0, 0, size.0, size.1);
        let backend = SessionBackend::new(sink.clone(), Size::new(size.0, size.1), depth);
        // Fixed viewport: ratatui must never ask the server's own tty for its size.
        let terminal = Terminal::with_options(
            backend,
            TerminalOptions {
                viewport: Viewport::Fixed(area),
            },
        )
        .expect("SessionBackend never fails");
        data.mark_unchanged();
        let mut sink_w = sink.clone();
        let _ = std::io::Write::write_all(&mut sink_w, ENTER);
        Live {
            app,
            data,
            data_open: true,
            terminal,
            sink,
            decoder: InputDecoder::new(),
            config,
            dirty: true,
            skipped: false,
            frames_sent: 0,
            frames_skipped: 0,
        }
    }

    async fn run(
        &mut self,
        read: &mut russh::ChannelReadHalf,
        write: &Arc<ChannelWriteHalf<Msg>>,
        shutdown: &CancellationToken,
    ) -> EndReason {
        let mut in_flight: Option<Sending> = None;
        let idle = self.config.idle_timeout;
        let mut last_input = Instant::now();
        // Far-future period when refresh is off, to keep one select shape.
        let refresh_every = self
            .config
            .age_refresh
            .unwrap_or(Duration::from_secs(100 * 365 * 86400));
        let mut refresh = tokio::time::interval_at(Instant::now() + refresh_every, refresh_every);
        refresh.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            if self.dirty {
                if in_flight.is_none() {
                    match self.render() {
                        Ok(Some(frame)) => {
                            let w = write.clone();
                            in_flight = Some(Box::pin(async move { w.data_bytes(frame).await }));
                            self.frames_sent += 1;
                        }
                        Ok(None) => {}
                        Err(reason) => return reason,
                    }
                } else {
                    self.skipped = true;
                }
            }
            // Far-future deadline when idle timeout is off, to keep one select shape.
            let deadline = last_input + idle.unwrap_or(Duration::from_secs(100 * 365 * 86400));
            tokio::select! {
                msg = read.wait() => match msg {
                    Some(ChannelMsg::Data { data }) => {
                        last_input = Instant::now();
                        for key in self.decoder.feed(&data) {
                            match catch_unwind(AssertUnwindSafe(|| self.app.on_key(key))) {
                                Ok(KeyOutcome::Continue) => self.dirty = true,
                                Ok(KeyOutcome::Quit) => return EndReason::Quit,
                                Err(_) => return EndReason::Panic,
                            }
                        }
                    }
                    Some(ChannelMsg::WindowChange { col_width, row_height, .. }) => {
                        last_input = Instant::now();
                        if let Err(r) = self.resize(clamp_size(col_width, row_height)) {
                            return r;
                        }
                    }
                    Some(ChannelMsg::Eof) | Some(ChannelMsg::Close) | None => return EndReason::ClientGone,
                    Some(_) => {}
                },
                changed = self.data.changed(), if self.data_open => {
                    match changed {
                        Ok(()) => {
                            self.dirty = true;
                            if in_flight.is_some() {
                                // This update will be folded into the next frame.
                                self.frames_skipped += 1;
                            }
                        }
                        // The publisher is gone: keep showing the last snapshot.
                        Err(_) => self.data_open = false,
                    }
                }
                sent = async { in_flight.as_mut().expect("guarded").await }, if in_flight.is_some() => {
                    in_flight = None;
                    if sent.is_err() {
                        return EndReason::ClientGone;
                    }
                }
                _ = refresh.tick(), if self.config.age_refresh.is_some() => self.dirty = true,
                () = tokio::time::sleep_until(deadline), if idle.is_some() => return EndReason::Idle,
                () = shutdown.cancelled() => return EndReason::Shutdown,
            }
        }
    }

    fn resize(&mut self, (cols, rows): (u16, u16)) -> Result<(), EndReason> {
        let area = Rect::new(0, 0, cols, rows);
        if area == self.terminal.get_frame().area() {
            return Ok(());
        }
        self.terminal.backend_mut().set_size(Size::new(cols, rows));
        // resize() clears and resets the back buffer, so the next draw is a full repaint.
        let _ = self.terminal.resize(area);
        catch_unwind(AssertUnwindSafe(|| self.app.on_resize(cols, rows)))
            .map_err(|_| EndReason::Panic)?;
        self.dirty = true;
        Ok(())
    }

    /// Draw the latest snapshot; return the bytes to send (None when nothing changed).
    fn render(&mut self) -> Result<Option<Vec<u8>>, EndReason> {
        self.dirty = false;
        if std::mem::take(&mut self.skipped) {
            // Frames were skipped while the client was slow; a full repaint makes sure the
            // screen is right whatever the client did meanwhile.
            let _ = self.terminal.clear();
        }
        // Clone out of the watch so the publisher's lock is not held while rendering.
        let snapshot = self.data.borrow_and_update().clone();
        let app = &mut self.app;
        let terminal = &mut self.terminal;
        match catch_unwind(AssertUnwindSafe(|| {
            terminal.draw(|f| app.render(&snapshot, f)).map(|_| ())
        })) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "ssh session: draw failed");
                return Err(EndReason::ClientGone);
            }
            Err(_) => return Err(EndReason::Panic),
        }
        let bytes = self.sink.take(self.config.output_buffer_bytes);
        Ok(if bytes.is_empty() { None } else { Some(bytes) })
    }
}
