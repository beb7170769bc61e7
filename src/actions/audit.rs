//! The audit log: one JSON line per attempted action, appended to `audit.jsonl`.
//!
//! Why not tracing-appender's `non_blocking` writer: it drops lines when its buffer is
//! full (lossy by default) and loses what is still buffered if the process exits
//! without the guard being dropped (a panic, `std::process::exit`). An audit log must
//! not lose a line, so each record is serialised first and written with a single
//! `write_all` of the whole line to a file opened with `O_APPEND`, under a mutex, then
//! flushed and `sync_data`'d before the action reports its outcome. With `O_APPEND`
//! every write lands at the end even when two gangplank processes share the file.
//! A tracing event mirrors each record for the diagnostics log.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One attempt, as written to the audit log.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    /// RFC 3339, when the attempt ended.
    pub time: String,
    /// The user the apiserver sees (SelfSubjectReview), or the local fallback.
    pub who: String,
    /// `hold`, `resume`, `set-priority`, `approve`, `recover`.
    pub action: String,
    /// `namespace/name` of the Workload acted on (or the preemptor, for approve).
    pub target: String,
    /// Approve: the victims (`namespace/name`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub victims: Vec<String>,
    /// The fields the action changes, before.
    pub before: Value,
    /// The same fields after (null when nothing was written).
    pub after: Value,
    /// `ok`, `skipped` or the server's refusal, verbatim.
    pub dry_run: String,
    /// `done`, `dry-run`, `cancelled`, `refused`, `conflict`, `failed`, `partial`.
    pub outcome: String,
    /// What the operator was told.
    pub message: String,
    /// True when the executor was read-only.
    #[serde(default)]
    pub readonly: bool,
    /// Approve and recover: the approval's id (its `gangplank.io/approval` intent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
}

/// Where the audit log goes by default: `audit.jsonl` in the XDG state dir.
pub fn default_audit_path() -> Option<PathBuf> {
    let dirs = directories::ProjectDirs::from("io", "gangplank", "gangplank")?;
    let base = dirs
        .state_dir()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| dirs.data_local_dir().to_path_buf());
    Some(base.join("audit.jsonl"))
}

/// An append-only, flushed-per-line audit log (cheap to clone).
#[derive(Clone, Debug)]
pub struct AuditLog {
    inner: Arc<Mutex<Option<File>>>,
    path: Option<PathBuf>,
}

impl AuditLog {
    /// Opens (creating directories and the file) for appending.
    pub fn open(path: &Path) -> std::io::Result<AuditLog> {
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(AuditLog {
            inner: Arc::new(Mutex::new(Some(file))),
            path: Some(path.to_path_buf()),
        })
    }

    /// The given path, else the default one.
    pub fn open_or_default(path: Option<&Path>) -> std::io::Result<AuditLog> {
        match path.map(Path::to_path_buf).or_else(default_audit_path) {
            Some(p) => AuditLog::open(&p),
            None => Err(std::io::Error::other(
                "no home directory for the audit log; pass --audit-log PATH",
            )),
        }
    }

    /// A log that keeps nothing (tests of pure parts only).
    pub fn discard() -> AuditLog {
        AuditLog {
            inner: Arc::new(Mutex::new(None)),
            path: None,
        }
    }

    /// The file, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Appends one record as one line and flushes it to disk.
    pub fn append(&self, record: &AuditRecord) -> std::io::Result<()> {
        let mut line = serde_json::to_string(record).map_err(std::io::Error::other)?;
        line.push('\n');
        tracing::info!(target: "gangplank::audit", action = %record.action, target_obj = %record.target, outcome = %record.outcome, "{}", record.message);
        let mut guard = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = guard.as_mut() {
            f.write_all(line.as_bytes())?;
            f.flush()?;
            f.sync_data()?;
        }
        Ok(())
    }
}

/// Reads every record of an audit log (tests, `docs`).
pub fn read_audit(path: &Path) -> std::io::Result<Vec<AuditRecord>> {
    let text = std::fs::read_to_string(path)?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).map_err(std::io::Error::other))
        .collect()
}

/// Now, RFC 3339.
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_record() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/audit.jsonl");
        let log = AuditLog::open(&p).unwrap();
        for i in 0..3 {
            log.append(&AuditRecord {
                action: "hold".into(),
                target: format!("ns/w{i}"),
                message: "line\nbreak".into(),
                ..Default::default()
            })
            .unwrap();
        }
        let recs = read_audit(&p).unwrap();
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[2].target, "ns/w2");
        assert_eq!(std::fs::read_to_string(&p).unwrap().lines().count(), 3);
    }
}
