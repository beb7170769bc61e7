//! The terminal console: Elm-style app state, update, views, widgets, themes, config.
//!
//! Data flows one way. Whoever owns the cluster data (the live source, a scenario, a
//! test) publishes a [`ConsoleData`] — immutable `Arc`s plus small row lists — over a
//! `tokio::sync::watch` channel. The console never mutates it:
//!
//! ```text
//! ConsoleData ─► Msg::Data ─► update(&mut App) ─► caches (rows, filtered+sorted index)
//! KeyEvent ─► Msg::Key ─► keymap ─► update(&mut App) ─► Vec<Effect> (Quit, RunAction, Redraw)
//! view(&App, &ConsoleData, &Theme, &mut Frame)  — pure, draws only visible rows
//! ```
//!
//! The same [`App`] runs in a local terminal ([`run_terminal`]) and, later, inside an
//! SSH session: nothing here touches the terminal except [`terminal`] and [`run`].

pub mod adapt;
pub mod app;
pub mod color;
pub mod command;
pub mod config;
pub mod confirm;
pub mod data;
pub mod describe;
pub mod filter;
pub mod keychord;
pub mod keymap;
pub mod msg;
pub mod priority;
pub mod rows;
pub mod run;
pub mod terminal;
pub mod theme;
pub mod update;
pub mod views;
pub mod widgets;

pub use app::{App, update};
pub use config::{Config, ConfigError, default_config_toml};
pub use data::{
    AdmissionView, AuditRow, ConsoleData, CycleView, DriftRow, EventKind, EventRow, HealthRow,
    PendingHeadView, PlanView, PreemptionView, ProposalView, ResourceSync, Severity, SyncState,
    SyncStatus, Verdict,
};
pub use msg::{
    ActionAccess, ActionKind, ActionRequest, ActionTarget, Effect, Msg, PriorityChoice, Prompt,
    ViewId,
};
pub use run::{
    ContextSwitcher, NO_CONTEXT_SWITCH, RunOptions, Session, run_terminal, run_terminal_with,
};
pub use theme::Theme;
pub use views::view;
