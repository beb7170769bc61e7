//! Authentication decisions and their audit log.
//!
//! Only public keys are accepted. The constant rejection delay itself is russh's
//! `Config::auth_rejection_time` (set from [`super::SshServerOptions::auth_rejection_delay`]):
//! russh pads every rejection to that duration, so a wrong key, an unknown key and a
//! password attempt all take the same time.

use std::net::SocketAddr;

use russh::keys::PublicKey;

use super::keys::{AuthorizedKeysFile, fingerprint};

/// Result of checking a public key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyDecision {
    /// The key is in authorized_keys (line number, comment).
    Accept {
        /// 1-based line of the matching entry.
        line: usize,
        /// Its comment.
        comment: String,
    },
    /// The key is not authorized.
    Reject,
}

/// Stage of a public-key attempt, for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The client offered a key (no signature yet).
    Offered,
    /// The client proved ownership (signature verified by russh).
    Verified,
}

/// Check `key` against the current authorized_keys (re-read if changed) and log the
/// attempt: user, fingerprint, peer, outcome. Never logs key material.
pub fn check_key(
    file: &AuthorizedKeysFile,
    user: &str,
    key: &PublicKey,
    peer: Option<SocketAddr>,
    stage: Stage,
) -> KeyDecision {
    let (fp, fp_str) = fingerprint(key);
    let set = file.current();
    let peer = peer.map(|p| p.to_string()).unwrap_or_default();
    match set.find(&fp) {
        Some(k) => {
            if stage == Stage::Verified {
                tracing::info!(target: "gangplank::ssh::auth", user, fingerprint = %fp_str, peer,
                    line = k.line, comment = %k.comment, outcome = "accepted", "ssh login");
            } else {
                tracing::debug!(target: "gangplank::ssh::auth", user, fingerprint = %fp_str, peer,
                    outcome = "offer-ok", "ssh key offered");
            }
            KeyDecision::Accept {
                line: k.line,
                comment: k.comment.clone(),
            }
        }
        None => {
            tracing::warn!(target: "gangplank::ssh::auth", user, fingerprint = %fp_str, peer,
                outcome = "rejected", stage = ?stage, "ssh key not authorized");
            KeyDecision::Reject
        }
    }
}

/// Log a non-publickey attempt (password, keyboard-interactive), which is always refused.
pub fn log_refused_method(user: &str, method: &str, peer: Option<SocketAddr>) {
    let peer = peer.map(|p| p.to_string()).unwrap_or_default();
    tracing::warn!(target: "gangplank::ssh::auth", user, method, peer, outcome = "rejected",
        "ssh auth method not allowed (public key only)");
}
