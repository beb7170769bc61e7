//! Integration tests of the e2e area, in one test binary to keep link time and disk small.

#[path = "../support_tools/mod.rs"]
mod support_tools;
#[path = "../tmux_support/mod.rs"]
mod tmux_support;

mod e2e_approve_tmux;
mod e2e_console_tmux;
mod e2e_context_switch_tmux;
mod e2e_demo_tmux;
mod e2e_events_tmux;
mod e2e_signals_tmux;
mod e2e_ssh_demo;
mod e2e_unreachable;
