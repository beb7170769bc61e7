//! Integration tests of the actions area, in one test binary to keep link time and disk small.

#[path = "../tui_fixture/mod.rs"]
mod tui_fixture;

mod actions_cli;
mod actions_console;
mod actions_sim;
