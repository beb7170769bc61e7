//! Integration tests of the source area, in one test binary to keep link time and disk small.

#[path = "../source_support/mod.rs"]
mod source_support;

mod source_cli;
mod source_drift;
mod source_honest;
mod source_resilience;
mod source_sync;
