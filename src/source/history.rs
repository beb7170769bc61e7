//! Preemption history: every eviction seen in the stream, kept as JSON lines in the
//! XDG state directory so that "who preempted my job, and why?" still has an answer
//! after Kueue's events (one hour by default) have expired.
//!
//! One line per eviction (format in docs/source.md). Lines are deduplicated by `id`
//! (victim uid + the Evicted condition's transition time), across runs too: the ids
//! already in the file are read when it is opened.

use std::collections::{HashSet, VecDeque};
use std::fs::OpenOptions;
use std::hash::{Hash, Hasher};
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

/// Something else that happened to a Workload, for the console's Events view:
/// an admission, a requeue, a finish (from condition transitions), a priority change,
/// a hold or a resume (from the difference to the previous version). Stored in the
/// same file as [`EvictionRecord`]s; the `event` field tells them apart (and
/// `gangplank history`, which reads evictions only, skips these lines).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineRecord {
    /// Deduplication key: `workloadUid@event@transitionMs` (or the change for priorities).
    pub id: String,
    /// `Admitted`, `Requeued`, `Finished`, `PriorityChanged`, `Held`, `Resumed`.
    pub event: String,
    /// When (RFC 3339): the condition's transition time, or when the change was seen.
    pub time: String,
    /// `namespace/name` of the Workload.
    pub workload: String,
    pub workload_uid: String,
    /// The condition's reason, or `from → to` for a priority change.
    pub reason: String,
    pub message: String,
}

impl TimelineRecord {
    pub fn time_ms(&self) -> Ms {
        self.time
            .parse::<Timestamp>()
            .map_or(0, |t| t.as_millisecond())
    }
}

fn rfc3339(ms: Ms) -> String {
    Timestamp::from_millisecond(ms)
        .unwrap_or(Timestamp::UNIX_EPOCH)
        .to_string()
}

/// The condition transitions of `wl` worth a line in the timeline: QuotaReserved
/// becoming True (admitted), Requeued, Finished. `previous` is the version seen before
/// (if any): a priority change or a flip of `spec.active` between the two is recorded
/// at `now`.
pub fn timeline_of(wl: &Workload, previous: Option<&Workload>, now: Ms) -> Vec<TimelineRecord> {
    timeline_unseen(wl, previous, now, |_| false)
}

/// [`timeline_of`] without the condition records whose id `known` says were recorded
/// already: every watch event of an admitted Workload repeats its QuotaReserved
/// transition, and building that record (eight strings) only to drop it as a
/// duplicate was a measurable part of the store's cost per event.
pub fn timeline_unseen(
    wl: &Workload,
    previous: Option<&Workload>,
    now: Ms,
    known: impl Fn(&str) -> bool,
) -> Vec<TimelineRecord> {
    let uid_or_key = if wl.uid.is_empty() {
        wl.key()
    } else {
        wl.uid.clone()
    };
    let mut out = Vec::new();
    let mut push = |event: &str, at: Ms, reason: &str, message: &str| {
        let id = format!("{uid_or_key}@{event}@{at}");
        if known(&id) {
            return;
        }
        out.push(TimelineRecord {
            id,
            event: event.to_string(),
            time: rfc3339(at),
            workload: wl.key(),
            workload_uid: wl.uid.clone(),
            reason: reason.to_string(),
            message: message.to_string(),
        });
    };
    for (cond, event) in [
        ("QuotaReserved", "Admitted"),
        ("Requeued", "Requeued"),
        ("Finished", "Finished"),
    ] {
        if let Some(c) = wl.condition(cond)
            && c.status == crate::model::ConditionStatus::True
            && let Some(at) = c.last_transition_time
        {
            push(event, at, &c.reason, &c.message);
        }
    }
    if let Some(prev) = previous {
        if prev.priority != wl.priority {
            let class = |w: &Workload| {
                w.priority_class
                    .as_ref()
                    .map_or(String::new(), |c| format!("{} ", c.name))
            };
            let change = format!(
                "{}({}) → {}({})",
                class(prev),
                prev.priority,
                class(wl),
                wl.priority
            );
            out.push(TimelineRecord {
                id: format!("{uid_or_key}@PriorityChanged@{}@{now}", wl.priority),
                event: "PriorityChanged".into(),
                time: rfc3339(now),
                workload: wl.key(),
                workload_uid: wl.uid.clone(),
                reason: change,
                message: String::new(),
            });
        }
        if prev.active != wl.active {
            let event = if wl.active { "Resumed" } else { "Held" };
            out.push(TimelineRecord {
                id: format!("{uid_or_key}@{event}@{now}"),
                event: event.into(),
                time: rfc3339(now),
                workload: wl.key(),
                workload_uid: wl.uid.clone(),
                reason: format!("spec.active={}", wl.active),
                message: String::new(),
            });
        }
    }
    out
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

/// What the live store would have recorded, read off one state: every evicted
/// Workload's eviction (the preemptor resolved from the UID in Kueue's message among
/// the state's Workloads) and each Workload's condition transitions. For a dump
/// (`gangplank -f`) or a test, where no watch ran.
pub fn records_from_state(
    state: &crate::model::ClusterState,
) -> (Vec<EvictionRecord>, Vec<TimelineRecord>) {
    let by_uid: std::collections::HashMap<&str, &Workload> = state
        .workloads
        .values()
        .filter(|w| !w.uid.is_empty())
        .map(|w| (w.uid.as_str(), &**w))
        .collect();
    let cq = |w: &Workload| {
        w.admission
            .as_ref()
            .map(|a| a.cluster_queue.clone())
            .or_else(|| {
                let lq = state
                    .local_queues
                    .get(&(w.namespace.clone(), w.queue_name.clone()?))?;
                Some(lq.cluster_queue.clone())
            })
    };
    let mut evictions = Vec::new();
    let mut timeline = Vec::new();
    for wl in state.workloads.values() {
        evictions.extend(eviction_of(wl, |uid| by_uid.get(uid).copied(), cq));
        timeline.extend(timeline_of(wl, None, 0));
    }
    evictions.sort_by_key(EvictionRecord::time_ms);
    timeline.sort_by_key(TimelineRecord::time_ms);
    (evictions, timeline)
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

/// The demo's own history file, next to [`default_history_path`]: the simulator's
/// evictions never mix with a real cluster's.
pub fn default_demo_history_path() -> Option<PathBuf> {
    default_history_path().map(|p| p.with_file_name("demo-history.jsonl"))
}

/// The append-only history file plus the recent records.
#[derive(Debug, Default)]
pub struct HistoryLog {
    path: Option<PathBuf>,
    /// Hashes of the ids recorded (in the file or this run): the set lives as long as
    /// the console and gains an entry per admission, requeue, priority change...; 8
    /// bytes an id instead of the id's text. Two ids colliding in 64 bits would drop the
    /// later record; at ten million ids the odds are about 3 in a million.
    seen: HashSet<u64>,
    recent: VecDeque<EvictionRecord>,
    recent_events: VecDeque<TimelineRecord>,
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
            log.seen = records.iter().map(|r| id_hash(&r.id)).collect();
            // The newest ones are what the console shows after a restart.
            let skip = records.len().saturating_sub(RECENT);
            log.recent = records.into_iter().skip(skip).collect();
        }
        if let Some(p) = &log.path
            && let Ok(events) = read_timeline(p, None)
        {
            log.seen.extend(events.iter().map(|r| id_hash(&r.id)));
            let skip = events.len().saturating_sub(RECENT);
            log.recent_events = events.into_iter().skip(skip).collect();
        }
        log
    }

    /// Records a timeline event unless already known; returns whether it was new.
    /// Whether a record with this id was recorded already.
    pub fn knows(&self, id: &str) -> bool {
        self.seen.contains(&id_hash(id))
    }

    pub fn record_event(&mut self, rec: TimelineRecord) -> bool {
        if !self.persist(&rec.id, &rec) {
            return false;
        }
        push_recent(&mut self.recent_events, rec);
        true
    }

    /// Recent timeline events, in the order seen.
    pub fn recent_events(&self) -> Vec<TimelineRecord> {
        self.recent_events.iter().cloned().collect()
    }

    /// Records `rec` unless already known; returns whether it was new.
    pub fn record(&mut self, rec: EvictionRecord) -> bool {
        if !self.persist(&rec.id, &rec) {
            return false;
        }
        push_recent(&mut self.recent, rec);
        true
    }

    /// Appends `rec` to the file unless `id` is already known; `false` when it was. A
    /// write failure is logged once and the record is still kept in memory.
    fn persist(&mut self, id: &str, rec: &impl Serialize) -> bool {
        if !self.seen.insert(id_hash(id)) {
            return false;
        }
        if let Some(path) = &self.path
            && let Err(e) = append(path, rec)
            && !self.failed
        {
            self.failed = true;
            tracing::warn!(path = %path.display(), error = %e, "cannot write the history file");
        }
        true
    }

    /// Recent records, oldest first.
    pub fn recent(&self) -> Vec<EvictionRecord> {
        self.recent.iter().cloned().collect()
    }
}

/// A record id's key in [`HistoryLog::seen`] (SipHash with fixed keys: the same in
/// every run of one build; the set is never written anywhere).
fn id_hash(id: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

/// Keeps the newest [`RECENT`] records.
fn push_recent<T>(recent: &mut VecDeque<T>, rec: T) {
    recent.push_back(rec);
    if recent.len() > RECENT {
        recent.pop_front();
    }
}

fn append(path: &Path, rec: &impl Serialize) -> std::io::Result<()> {
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
    read_records(path, since, |r: &EvictionRecord| (&r.id, r.time_ms()))
}

/// Reads the timeline events of the history file (evictions are skipped; see
/// [`read_history`]), at or after `since`, deduplicated, oldest first.
pub fn read_timeline(path: &Path, since: Option<Ms>) -> std::io::Result<Vec<TimelineRecord>> {
    read_records(path, since, |r: &TimelineRecord| (&r.id, r.time_ms()))
}

/// The lines of the history file that parse as `T`, at or after `since`, first of each
/// id, oldest first. `id_time` gives a record's id and time.
fn read_records<T: serde::de::DeserializeOwned>(
    path: &Path,
    since: Option<Ms>,
    id_time: impl Fn(&T) -> (&String, Ms),
) -> std::io::Result<Vec<T>> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for line in BufReader::new(file).lines() {
        let line = line?;
        let Ok(rec) = serde_json::from_str::<T>(&line) else {
            continue;
        };
        let (id, time) = id_time(&rec);
        if since.is_some_and(|s| time < s) || !seen.insert(id.clone()) {
            continue;
        }
        out.push(rec);
    }
    out.sort_by_key(|r| id_time(r).1);
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

    #[test]
    fn timeline_lines_share_the_file_and_survive_a_reopen() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("history.jsonl");
        let mut wl = Workload {
            namespace: "ns".into(),
            name: "a".into(),
            uid: "u".into(),
            priority: 1,
            active: true,
            ..Workload::default()
        };
        wl.conditions.push(crate::model::Condition {
            type_: "QuotaReserved".into(),
            status: crate::model::ConditionStatus::True,
            reason: "QuotaReserved".into(),
            message: "Quota reserved in ClusterQueue cq".into(),
            last_transition_time: Some(1_000),
        });
        let mut next = wl.clone();
        next.priority = 5;
        next.active = false;
        let recs = timeline_of(&next, Some(&wl), 2_000);
        let events: Vec<&str> = recs.iter().map(|r| r.event.as_str()).collect();
        assert_eq!(events, ["Admitted", "PriorityChanged", "Held"]);
        assert_eq!(recs[1].reason, "(1) → (5)");
        let mut log = HistoryLog::open(Some(path.clone()));
        for r in recs.clone() {
            assert!(log.record_event(r));
        }
        // Evictions readers skip timeline lines; a reopened log has the events back.
        assert!(read_history(&path, None).expect("read").is_empty());
        let again = HistoryLog::open(Some(path.clone()));
        assert_eq!(again.recent_events(), recs);
        let mut again = again;
        assert!(!again.record_event(recs[0].clone()), "deduplicated");
    }
}
