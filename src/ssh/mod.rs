//! Read-only SSH server for wall screens and remote viewers.
