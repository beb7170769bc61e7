//! Integration tests of the ssh area, in one test binary to keep link time and disk small.

mod ssh_openssh;
mod ssh_server;
