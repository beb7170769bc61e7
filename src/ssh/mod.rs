//! Read-only SSH server for wall screens and remote viewers (`gangplank serve-ssh`).
//!
//! Every SSH session runs its own console state (view, filter, selection, terminal size)
//! over ONE shared data feed, rendered with ratatui into a per-session ANSI buffer and
//! sent over the SSH channel. The seam to the console is two small traits:
//!
//! - [`SessionAppFactory`] hands out the shared data as a [`tokio::sync::watch::Receiver`]
//!   and builds one [`SessionApp`] per session;
//! - [`SessionApp`] gets decoded keys, resizes and, when drawing, a shared reference to
//!   the current data snapshot.
//!
//! **Read-only by construction:** nothing in the seam carries a handle that can write to
//! the cluster. A session only ever sees keys in and `&Data` + a `Frame` out, so the lead's
//! implementation must simply not smuggle a client into the app it builds.
//!
//! Module map: [`keys`] (authorized_keys), [`auth`] (decision + audit log), [`host_key`],
//! [`limits`], [`input`] (bytes → `KeyEvent`), [`output`] (ratatui backend writing ANSI),
//! [`session`] (one session's loop), [`server`] (accept loop + russh handler), [`demo`].

pub mod auth;
pub mod demo;
pub mod host_key;
pub mod input;
pub mod keys;
pub mod limits;
pub mod output;
pub mod server;
pub mod session;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crossterm::event::KeyEvent;
use ratatui::Frame;
use tokio::sync::watch;

pub use output::ColorDepth;
pub use server::{ServerHandle, serve};

/// What a session may do after handling a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyOutcome {
    /// Keep the session open (redraw follows).
    Continue,
    /// End the session (for example `q` or Ctrl-C).
    Quit,
}

/// Facts about a new session, passed to [`SessionAppFactory::new_session`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// SSH user name the client logged in as (any name with an authorized key is accepted).
    pub user: String,
    /// `TERM` from the pty request (empty without a pty).
    pub term: String,
    /// Colour capability derived from `TERM`, `COLORTERM` and `NO_COLOR`.
    pub color_depth: ColorDepth,
    /// Terminal size in cells (columns, rows), already clamped.
    pub size: (u16, u16),
    /// Remote address, for display/logging only.
    pub peer: Option<SocketAddr>,
}

/// One SSH viewer's console. Implemented by the real TUI (`update` + `view`) and by
/// [`demo::DemoApp`] for tests.
///
/// All methods are synchronous and are called inside `catch_unwind`: a panic ends only
/// this session. Keep them fast; they run on the session's tokio task.
pub trait SessionApp<D>: Send + 'static {
    /// Handle one decoded key.
    fn on_key(&mut self, key: KeyEvent) -> KeyOutcome;
    /// The client's terminal changed size (columns, rows). A redraw follows.
    fn on_resize(&mut self, _cols: u16, _rows: u16) {}
    /// Draw the current state over `data` (a snapshot of the shared feed).
    fn render(&mut self, data: &D, frame: &mut Frame<'_>);
}

/// Builds per-session apps over one shared, read-only data feed.
pub trait SessionAppFactory: Send + Sync + 'static {
    /// The snapshot type published by the shared cluster watch. Make it cheap to clone
    /// (e.g. `Arc<ConsoleData>`): the session clones it out of the watch before rendering
    /// so that a slow render never holds the publisher's lock.
    type Data: Clone + Send + Sync + 'static;

    /// A receiver for the shared snapshots. The server redraws a session whenever it
    /// reports a change (and on input or resize); idle sessions send nothing.
    fn subscribe(&self) -> watch::Receiver<Self::Data>;

    /// Build the state for one new session.
    fn new_session(&self, info: &SessionInfo) -> Box<dyn SessionApp<Self::Data>>;
}

/// Options for [`serve`]. `Default` gives safe values for everything but the paths.
#[derive(Debug, Clone)]
pub struct SshServerOptions {
    /// Address to listen on; use port 0 in tests and read [`ServerHandle::local_addr`].
    pub listen: SocketAddr,
    /// OpenSSH `authorized_keys` file; re-read when its mtime or size changes.
    pub authorized_keys: PathBuf,
    /// Host key path. `None`: `host_key::default_host_key_path()` (XDG state dir).
    /// Generated (ed25519, mode 0600) when missing.
    pub host_key: Option<PathBuf>,
    /// Maximum concurrent interactive sessions; further ones get a message and are closed.
    pub max_sessions: usize,
    /// Maximum connections that have not yet authenticated; a further one is admitted
    /// by dropping the oldest unauthenticated connection.
    pub max_unauthenticated: usize,
    /// Maximum unauthenticated connections from one address; a further one from that
    /// address drops that address's oldest.
    pub max_unauthenticated_per_address: usize,
    /// A connection must have started a session within this time, or it is disconnected.
    pub login_grace: Duration,
    /// End a session after this long without input. `None` disables (wall screens).
    pub idle_timeout: Option<Duration>,
    /// Redraw an otherwise idle session this often, so that the ages on a wall screen
    /// ("last event 3m ago") are never staler than this. Only changed cells are sent.
    /// `None`: redraw only on data, input or resize.
    pub age_refresh: Option<Duration>,
    /// Retained capacity of a session's frame buffer; larger frames are still sent but the
    /// buffer is shrunk back afterwards, so per-session memory stays near this.
    pub output_buffer_bytes: usize,
    /// Constant delay applied to every rejected authentication attempt.
    pub auth_rejection_delay: Duration,
    /// Authentication attempts per connection.
    pub max_auth_attempts: usize,
    /// SSH keepalive interval; a client that misses 3 in a row is dropped.
    pub keepalive_interval: Duration,
}

impl Default for SshServerOptions {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 2222)),
            authorized_keys: PathBuf::from("authorized_keys"),
            host_key: None,
            max_sessions: 8,
            max_unauthenticated: 16,
            max_unauthenticated_per_address: 4,
            login_grace: Duration::from_secs(20),
            idle_timeout: Some(Duration::from_secs(30 * 60)),
            age_refresh: Some(Duration::from_secs(60)),
            output_buffer_bytes: 256 * 1024,
            auth_rejection_delay: Duration::from_secs(1),
            max_auth_attempts: 6,
            keepalive_interval: Duration::from_secs(30),
        }
    }
}
