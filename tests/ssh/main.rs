//! Integration tests of the ssh area, in one test binary to keep link time and disk small.

#[path = "../support_tools/mod.rs"]
mod support_tools;

mod client;
mod ssh_log;
mod ssh_openssh;
mod ssh_preauth_flood;
mod ssh_readonly;
mod ssh_server;
