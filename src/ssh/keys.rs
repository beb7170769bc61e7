//! OpenSSH `authorized_keys` parsing, constant-time lookup and reload on change.
//!
//! Parsing is line by line (ssh-key's own `read_file` fails the whole file on one bad
//! line): a bad line is reported with its 1-based number and skipped, the others load.
//!
//! Options: ssh-key parses but does not enforce them, so we accept only options that
//! restrict features this server never offers anyway (`restrict`, `no-*-forwarding`,
//! `no-user-rc`). Any other option (`from=`, `command=`, `no-pty`, `expiry-time=`, …)
//! would mean a restriction we would silently ignore, so such a line is skipped
//! (fail closed) with a warning.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use russh::keys::ssh_key::authorized_keys::Entry;
use russh::keys::{HashAlg, PublicKey};

/// Options that only disable features this server does not provide.
const HARMLESS_OPTIONS: &[&str] = &[
    "restrict",
    "no-port-forwarding",
    "no-agent-forwarding",
    "no-x11-forwarding",
    "no-user-rc",
];

/// One accepted key.
#[derive(Debug, Clone)]
pub struct AuthorizedKey {
    /// SHA-256 fingerprint bytes of the key data (what we compare).
    pub fingerprint: [u8; 32],
    /// `SHA256:…` form for logs.
    pub fingerprint_str: String,
    /// The key's comment (often `user@host`), for logs.
    pub comment: String,
    /// 1-based line number in the file.
    pub line: usize,
}

/// A problem on one line of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    /// 1-based line number.
    pub line: usize,
    /// What was wrong (never contains the key material).
    pub message: String,
}

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// The parsed file: keys that loaded plus per-line errors.
#[derive(Debug, Clone, Default)]
pub struct KeySet {
    /// Keys accepted for login.
    pub keys: Vec<AuthorizedKey>,
    /// Lines that were skipped, with reasons.
    pub errors: Vec<LineError>,
}

/// SHA-256 fingerprint of a public key's data (comments do not matter).
pub fn fingerprint(key: &PublicKey) -> ([u8; 32], String) {
    let fp = key.fingerprint(HashAlg::Sha256);
    let mut bytes = [0u8; 32];
    if let Some(b) = fp.sha256() {
        bytes = b;
    }
    (bytes, fp.to_string())
}

impl KeySet {
    /// Parse the text of an authorized_keys file.
    pub fn parse(text: &str) -> KeySet {
        let mut set = KeySet::default();
        for (idx, raw) in text.lines().enumerate() {
            let line = idx + 1;
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let entry: Entry = match trimmed.parse() {
                Ok(e) => e,
                Err(e) => {
                    set.errors.push(LineError {
                        line,
                        message: format!("not a valid public key entry ({e})"),
                    });
                    continue;
                }
            };
            let unsupported: Vec<&str> = entry
                .config_opts()
                .iter()
                .filter(|opt| {
                    let name = opt.split('=').next().unwrap_or(opt);
                    !HARMLESS_OPTIONS
                        .iter()
                        .any(|h| h.eq_ignore_ascii_case(name))
                })
                .collect();
            if !unsupported.is_empty() {
                let names: Vec<&str> = unsupported
                    .iter()
                    .map(|o| o.split('=').next().unwrap_or(o))
                    .collect();
                set.errors.push(LineError {
                    line,
                    message: format!(
                        "unsupported option(s) {} (not enforced by this server, so the key is ignored)",
                        names.join(",")
                    ),
                });
                continue;
            }
            let (fingerprint, fingerprint_str) = fingerprint(entry.public_key());
            set.keys.push(AuthorizedKey {
                fingerprint,
                fingerprint_str,
                comment: entry.public_key().comment().to_string(),
                line,
            });
        }
        set
    }

    /// Find `fp` among the keys. Every entry is compared with a branch-free byte compare and
    /// the loop never exits early, so timing does not reveal where (or whether) it matched.
    pub fn find(&self, fp: &[u8; 32]) -> Option<&AuthorizedKey> {
        let mut found: usize = usize::MAX;
        for (i, k) in self.keys.iter().enumerate() {
            let mut diff = 0u8;
            for (a, b) in k.fingerprint.iter().zip(fp.iter()) {
                diff |= a ^ b;
            }
            // is_match is 1 on equality, 0 otherwise, computed without branching on bytes.
            let is_match = std::hint::black_box(((diff as u16).wrapping_sub(1) >> 8) as usize & 1);
            let mask = is_match.wrapping_neg();
            found = (found & !mask) | (i & mask);
        }
        self.keys.get(found)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
}

/// The authorized_keys file, re-read when its mtime or size changes (checked on each
/// authentication attempt, which is cheap: one `stat`).
///
/// If the file becomes unreadable we fail closed: the key set becomes empty until it can
/// be read again.
#[derive(Debug)]
pub struct AuthorizedKeysFile {
    path: PathBuf,
    state: Mutex<(Option<Stamp>, std::sync::Arc<KeySet>)>,
}

impl AuthorizedKeysFile {
    /// Load the file now. Errors only if it cannot be read at all (a missing file at
    /// startup is a configuration error); bad lines are logged and skipped.
    pub fn open(path: &Path) -> std::io::Result<AuthorizedKeysFile> {
        let (stamp, set) = read(path)?;
        log_errors(path, &set);
        tracing::info!(path = %path.display(), keys = set.keys.len(), "loaded authorized_keys");
        Ok(AuthorizedKeysFile {
            path: path.to_path_buf(),
            state: Mutex::new((Some(stamp), std::sync::Arc::new(set))),
        })
    }

    /// The current key set, re-reading the file first if it changed.
    pub fn current(&self) -> std::sync::Arc<KeySet> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = stat(&self.path);
        if now.as_ref().ok() != state.0.as_ref() {
            match read(&self.path) {
                Ok((stamp, set)) => {
                    log_errors(&self.path, &set);
                    tracing::info!(path = %self.path.display(), keys = set.keys.len(), "reloaded authorized_keys");
                    *state = (Some(stamp), std::sync::Arc::new(set));
                }
                Err(e) => {
                    if state.0.is_some() {
                        tracing::error!(path = %self.path.display(), error = %e,
                            "cannot read authorized_keys; refusing all keys until it is readable");
                    }
                    *state = (None, std::sync::Arc::new(KeySet::default()));
                }
            }
        }
        state.1.clone()
    }
}

fn stat(path: &Path) -> std::io::Result<Stamp> {
    let meta = std::fs::metadata(path)?;
    Ok(Stamp {
        modified: meta.modified().ok(),
        len: meta.len(),
    })
}

fn read(path: &Path) -> std::io::Result<(Stamp, KeySet)> {
    let stamp = stat(path)?;
    let text = std::fs::read_to_string(path)?;
    Ok((stamp, KeySet::parse(&text)))
}

fn log_errors(path: &Path, set: &KeySet) {
    for e in &set.errors {
        tracing::warn!(path = %path.display(), line = e.line, "authorized_keys: {}", e.message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ED1: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB4ffJRc72qPKPq0LdSKuzPXWkkDNXCAyd/XnYavXXbw alice@laptop";
    const ED2: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMBzaPWUKSZfxvKBfOE8R1EzuInry7ebNXyhocWcZEw/ bob";

    #[test]
    fn parses_keys_comments_and_reports_bad_lines_with_numbers() {
        let text = format!(
            "# comment\n\n{ED1}\nnot a key\nrestrict,no-pty {ED2}\nrestrict {ED2}\nfrom=\"10.0.0.0/8\" {ED1}\n"
        );
        let set = KeySet::parse(&text);
        assert_eq!(set.keys.len(), 2);
        assert_eq!(set.keys[0].line, 3);
        assert_eq!(set.keys[0].comment, "alice@laptop");
        assert_eq!(set.keys[1].line, 6);
        let lines: Vec<usize> = set.errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![4, 5, 7]);
        assert!(set.errors[1].message.contains("no-pty"));
        assert!(set.errors[2].message.contains("from"));
    }

    #[test]
    fn find_matches_by_key_data_not_comment() {
        let set = KeySet::parse(&format!("{ED1}\n{ED2}\n"));
        let other: PublicKey = ED2.replace(" bob", " someone-else").parse().unwrap();
        let (fp, _) = fingerprint(&other);
        assert_eq!(set.find(&fp).unwrap().line, 2);
        assert!(set.find(&[0u8; 32]).is_none());
    }
}
