//! Preemption history: every eviction seen in the stream, kept as JSON lines in the
//! XDG state directory so that "who preempted my job, and why?" still has an answer
//! after Kueue's events (one hour by default) have expired.
//!
//! One line per eviction (format in docs/source.md). Lines are deduplicated by `id`
//! (victim uid + the Evicted condition's transition time), across runs too: the ids
//! already in the file are read when it is opened.

use std::collections::{HashSet, VecDeque};
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::model::{Timestamp as Ms, Workload};

/// Annotation naming who approved a gangplank action that caused the eviction.
pub use crate::model::well_known::APPROVED_BY_ANNOTATION;

/// How many records a snapshot carries.
const RECENT: usize = 500;

/// One eviction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvictionRecord {
    /// Deduplication key: `victimUid@transitionMs`.
    pub id: String,
    /// When Kueue evicted it (RFC 3339).
    pub time: String,
    /// `namespace/name` of the evicted Workload.
    pub victim: String,
    pub victim_uid: String,
    pub victim_priority: i32,
    pub victim_cluster_queue: Option<String>,
    /// `namespace/name` of the Workload it made room for, when the uid is known.
    pub preemptor: Option<String>,
    pub preemptor_uid: Option<String>,
    pub preemptor_job_uid: Option<String>,
    pub preemptor_priority: Option<i32>,
    pub preemptor_cluster_queue: Option<String>,
    /// The Evicted condition's reason (Preempted, PodsReadyTimeout, Deactivated…).
    pub reason: String,
    /// The Preempted condition's reason (InClusterQueue, InCohortReclamation…).
    pub preemption_reason: Option<String>,
    pub message: String,
    /// From the `gangplank.io/approved-by` annotation, when gangplank approved it.
    pub approved_by: Option<String>,
}

impl EvictionRecord {
    /// The eviction time in ms since the epoch (0 if unreadable).
    pub fn time_ms(&self) -> Ms {
        self.time
            .parse::<Timestamp>()
            .map_or(0, |t| t.as_millisecond())
    }
}

/// `(UID, JobUID)` from Kueue's "Preempted to accommodate a workload (UID: …, JobUID: …)
/// due to …" message.
pub fn parse_preemptor(message: &str) -> (Option<String>, Option<String>) {
    let field = |name: &str| {
        let start = message.find(name)? + name.len();
        let rest = &message[start..];
        let end = rest.find([',', ')']).unwrap_or(rest.len());
        let v = rest[..end].trim();
        (!v.is_empty() && v != "UNKNOWN").then(|| v.to_string())
    };
    (field("(UID:"), field("JobUID:"))
}

/// The eviction record of `wl`, if it is evicted. `by_uid` finds a Workload by uid;
/// `cluster_queue` resolves a Workload's ClusterQueue.
pub fn eviction_of<'a>(
    wl: &Workload,
    by_uid: impl Fn(&str) -> Option<&'a Workload>,
    cluster_queue: impl Fn(&Workload) -> Option<String>,
) -> Option<EvictionRecord> {
    let evicted = wl
        .condition("Evicted")
        .filter(|c| wl.is_evicted() && c.type_ == "Evicted")?;
    let at = evicted.last_transition_time.unwrap_or(0);
    let preempted = wl
        .condition("Preempted")
        .filter(|_| wl.condition_true("Preempted"));
    let message = if evicted.message.is_empty() {
        preempted.map(|p| p.message.clone()).unwrap_or_default()
    } else {
        evicted.message.clone()
    };
    let (preemptor_uid, preemptor_job_uid) = parse_preemptor(&message);
    let preemptor = preemptor_uid.as_deref().and_then(&by_uid);
    let approved = |w: &Workload| w.annotations.get(APPROVED_BY_ANNOTATION).cloned();
    let uid_or_key = if wl.uid.is_empty() {
        wl.key()
    } else {
        wl.uid.clone()
    };
    Some(EvictionRecord {
        id: format!("{uid_or_key}@{at}"),
        time: Timestamp::from_millisecond(at)
            .unwrap_or(Timestamp::UNIX_EPOCH)
            .to_string(),
        victim: wl.key(),
        victim_uid: wl.uid.clone(),
        victim_priority: wl.priority,
        victim_cluster_queue: cluster_queue(wl),
        preemptor: preemptor.map(Workload::key),
        preemptor_uid,
        preemptor_job_uid,
        preemptor_priority: preemptor.map(|p| p.priority),
        preemptor_cluster_queue: preemptor.and_then(&cluster_queue),
        reason: evicted.reason.clone(),
        preemption_reason: preempted.map(|p| p.reason.clone()),
        message,
        approved_by: approved(wl).or_else(|| preemptor.and_then(approved)),
    })
}

/// The default history file: `$XDG_STATE_HOME/gangplank/history.jsonl` (or the local
/// data directory on systems without a state directory).
pub fn default_history_path() -> Option<PathBuf> {
    let dirs = directories::ProjectDirs::from("io", "gangplank", "gangplank")?;
    let dir = dirs
        .state_dir()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| dirs.data_local_dir().to_path_buf());
    Some(dir.join("history.jsonl"))
}

/// The append-only history file plus the recent records.
#[derive(Debug, Default)]
pub struct HistoryLog {
    path: Option<PathBuf>,
    seen: HashSet<String>,
    recent: VecDeque<EvictionRecord>,
    /// The last write error, reported once in the log.
    failed: bool,
}

impl HistoryLog {
    /// Opens (without creating) the file at `path`; `None` keeps history in memory only.
    pub fn open(path: Option<PathBuf>) -> Self {
        let mut log = HistoryLog {
            path,
            ..Self::default()
        };
        if let Some(p) = &log.path
            && let Ok(records) = read_history(p, None)
        {
            log.seen = records.into_iter().map(|r| r.id).collect();
        }
        log
    }

    /// Records `rec` unless already known; returns whether it was new.
    pub fn record(&mut self, rec: EvictionRecord) -> bool {
        if !self.seen.insert(rec.id.clone()) {
            return false;
        }
        if let Some(path) = &self.path
            && let Err(e) = append(path, &rec)
            && !self.failed
        {
            self.failed = true;
            tracing::warn!(path = %path.display(), error = %e, "cannot write the history file");
        }
        self.recent.push_back(rec);
        if self.recent.len() > RECENT {
            self.recent.pop_front();
        }
        true
    }

    /// Recent records, oldest first.
    pub fn recent(&self) -> Vec<EvictionRecord> {
        self.recent.iter().cloned().collect()
    }
}

fn append(path: &Path, rec: &EvictionRecord) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut line = serde_json::to_string(rec).map_err(std::io::Error::other)?;
    line.push('\n');
    // One write per line with O_APPEND: concurrent gangplank processes interleave whole lines.
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?
        .write_all(line.as_bytes())
}

/// Reads the history file (a missing file is empty; unreadable lines are skipped),
/// keeping records at or after `since`, deduplicated, oldest first.
pub fn read_history(path: &Path, since: Option<Ms>) -> std::io::Result<Vec<EvictionRecord>> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for line in BufReader::new(file).lines() {
        let line = line?;
        let Ok(rec) = serde_json::from_str::<EvictionRecord>(&line) else {
            continue;
        };
        if since.is_some_and(|s| rec.time_ms() < s) || !seen.insert(rec.id.clone()) {
            continue;
        }
        out.push(rec);
    }
    out.sort_by_key(EvictionRecord::time_ms);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kueue_message() {
        let m = "Preempted to accommodate a workload (UID: abc-1, JobUID: job-9) due to \
                 prioritization in the ClusterQueue";
        assert_eq!(
            parse_preemptor(m),
            (Some("abc-1".into()), Some("job-9".into()))
        );
        assert_eq!(parse_preemptor("Evicted by test"), (None, None));
    }

    #[test]
    fn dedupes_across_reopen() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("h/history.jsonl");
        let rec = EvictionRecord {
            id: "u@1".into(),
            time: "2026-01-01T00:00:00Z".into(),
            victim: "ns/a".into(),
            victim_uid: "u".into(),
            victim_priority: 1,
            victim_cluster_queue: None,
            preemptor: None,
            preemptor_uid: None,
            preemptor_job_uid: None,
            preemptor_priority: None,
            preemptor_cluster_queue: None,
            reason: "Preempted".into(),
            preemption_reason: None,
            message: String::new(),
            approved_by: None,
        };
        let mut log = HistoryLog::open(Some(path.clone()));
        assert!(log.record(rec.clone()));
        assert!(!log.record(rec.clone()));
        let mut again = HistoryLog::open(Some(path.clone()));
        assert!(!again.record(rec));
        assert_eq!(read_history(&path, None).expect("read").len(), 1);
    }
}
