//! gangplank: a terminal operations console for Kueue-governed GPU clusters.
//!
//! Data flows one way: watch events → [`source`] store → snapshot → [`engine`] →
//! console view model → render. The [`model`] and [`engine`] modules are pure: no I/O,
//! no clock, no async runtime, no terminal.

pub mod actions;
pub mod cli;
pub mod clock;
pub mod doctor;
pub mod duration;
pub mod engine;
pub mod model;
pub mod sim;
pub mod source;
pub mod ssh;
pub mod tui;
