//! Integration tests of the tui area, in one test binary to keep link time and disk small.

#[path = "../tui_fixture/mod.rs"]
mod tui_fixture;

mod sim_views;
mod tui_config;
mod tui_console;
mod tui_docs;
mod tui_fair_share;
mod tui_input;
mod tui_snapshots;
mod tui_themes;
