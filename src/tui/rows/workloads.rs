//! Workload rows: derived once per data change, then filtered and sorted by index.

use std::cmp::Ordering;
use std::collections::HashMap;

use super::{GPU, gpus_of};
use crate::model::{ClusterState, ConditionStatus, Timestamp, Workload};
use crate::tui::data::{PlanView, Verdict};
use crate::tui::filter::{Filter, FilterKey};

/// A workload's state as an operator thinks of it, derived from conditions,
/// admission and `spec.active`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WlState {
    Pending,
    QuotaReserved,
    Admitted,
    Evicted,
    Preempted,
    Finished,
    Inactive,
}

impl WlState {
    pub fn label(self) -> &'static str {
        match self {
            WlState::Pending => "Pending",
            WlState::QuotaReserved => "QuotaReserved",
            WlState::Admitted => "Admitted",
            WlState::Evicted => "Evicted",
            WlState::Preempted => "Preempted",
            WlState::Finished => "Finished",
            WlState::Inactive => "Inactive",
        }
    }

    /// Finished beats everything; a deactivated workload is Inactive whatever else it
    /// says; an evicted one reports why (Preempted) until it is admitted again.
    pub fn of(wl: &Workload) -> WlState {
        let is = |t: &str| wl.condition_true(t);
        if is("Finished") {
            WlState::Finished
        } else if !wl.active {
            WlState::Inactive
        } else if is("Evicted") || is("Preempted") {
            if is("Preempted")
                || wl
                    .condition("Evicted")
                    .is_some_and(|c| c.reason.contains("Preempted"))
            {
                WlState::Preempted
            } else {
                WlState::Evicted
            }
        } else if wl.admission.is_some() && (is("Admitted") || wl.conditions.is_empty()) {
            WlState::Admitted
        } else if wl.has_quota_reservation() {
            WlState::QuotaReserved
        } else {
            WlState::Pending
        }
    }
}

/// One row of the Workloads view.
#[derive(Clone, Debug)]
pub struct WorkloadRow {
    pub namespace: String,
    pub name: String,
    /// The job's own name (see [`job_name`]), what an operator submitted.
    pub job: String,
    pub queue: String,
    pub cluster_queue: String,
    pub priority_class: String,
    pub priority: i32,
    pub state: WlState,
    pub gpus: i64,
    pub created: Timestamp,
    /// When the wait ended (quota reserved), if it did.
    pub admitted_at: Option<Timestamp>,
    /// When the current wait started (creation, or the last eviction/requeue).
    pub waiting_since: Timestamp,
    pub position: Option<u32>,
    pub verdict: Option<String>,
    /// The verdict as the list shows it: resource names shortened so the shortfall
    /// fits (`needs 8 GPU in p4d-flavor …`); the details show [`Self::verdict`].
    pub verdict_short: Option<String>,
    /// The last preemption of this workload seen (Events view data), and how many.
    pub preempted: Option<Preemption>,
    /// Lower-case searchable text.
    haystack: String,
}

impl WorkloadRow {
    /// Builds every row. Lookup tables are built once and borrow from the inputs, so
    /// the per-workload cost is a handful of string copies (100,000 rows: tens of ms).
    pub fn build_all(state: &ClusterState, plan: Option<&PlanView>) -> Vec<WorkloadRow> {
        let lq_cq: HashMap<(&str, &str), &str> = state
            .local_queues
            .values()
            .map(|lq| {
                (
                    (lq.namespace.as_str(), lq.name.as_str()),
                    lq.cluster_queue.as_str(),
                )
            })
            .collect();
        let verdicts: HashMap<(&str, &str), &Verdict> = plan
            .map(|p| {
                p.verdicts
                    .iter()
                    .map(|((ns, n), v)| ((ns.as_str(), n.as_str()), v))
                    .collect()
            })
            .unwrap_or_default();
        state
            .workloads
            .values()
            .map(|wl| {
                let key = (wl.namespace.as_str(), wl.name.as_str());
                let queue = wl.queue_name.as_deref().unwrap_or("");
                let cq = match &wl.admission {
                    Some(a) => a.cluster_queue.as_str(),
                    None => lq_cq.get(&(key.0, queue)).copied().unwrap_or(""),
                };
                WorkloadRow::build(wl, cq, verdicts.get(&key).copied())
            })
            .collect()
    }

    fn build(wl: &Workload, cluster_queue: &str, verdict: Option<&Verdict>) -> WorkloadRow {
        let reserved = wl
            .condition("QuotaReserved")
            .filter(|c| c.status == ConditionStatus::True);
        let admitted_at = reserved.and_then(|c| c.last_transition_time);
        // The current wait began at creation or at the last eviction/requeue. For an
        // admitted workload only transitions before its admission count: Kueue rewrites
        // Evicted to False (reason QuotaReserved) when it admits again
        // (pkg/workload/workload.go, SetQuotaReservation), which must not end the wait
        // at zero, and a run before an eviction is not waiting.
        let waiting_since = ["Requeued", "Evicted", "Preempted"]
            .iter()
            .filter_map(|t| wl.condition(t).and_then(|c| c.last_transition_time))
            .filter(|&t| t > 0 && admitted_at.is_none_or(|a| t < a))
            .max()
            .unwrap_or(wl.creation_timestamp);
        let st = WlState::of(wl);
        let priority_class = wl.priority_class.as_ref().map_or("", |p| p.name.as_str());
        let queue = wl.queue_name.as_deref().unwrap_or("");
        let verdict_text = verdict.map(|v| v.verdict.clone());
        // Kubernetes names are lower-case already; only the state and verdict need it.
        let mut haystack = String::with_capacity(96);
        for part in [
            wl.namespace.as_str(),
            "/",
            &wl.name,
            " ",
            queue,
            " ",
            cluster_queue,
            " ",
        ] {
            haystack.push_str(part);
        }
        haystack.push_str(&priority_class.to_lowercase());
        haystack.push(' ');
        haystack.push_str(&st.label().to_lowercase());
        if let Some(v) = &verdict_text {
            haystack.push(' ');
            haystack.push_str(&v.to_lowercase());
        }
        let gpus = wl
            .pod_sets
            .iter()
            .map(|ps| ps.requests.get(GPU).map_or(0, |q| gpus_of(*q)) * i64::from(ps.count))
            .sum();
        WorkloadRow {
            namespace: wl.namespace.clone(),
            name: wl.name.clone(),
            job: job_name(wl),
            queue: queue.to_string(),
            cluster_queue: cluster_queue.to_string(),
            priority_class: priority_class.to_string(),
            priority: wl.priority,
            state: st,
            gpus,
            created: wl.creation_timestamp,
            admitted_at,
            waiting_since,
            position: verdict.and_then(|v| v.position),
            verdict_short: verdict_text.as_deref().map(compact_verdict),
            preempted: None,
            verdict: verdict_text,
            haystack,
        }
    }

    /// The list's VERDICT cell: a preempted workload says by whom first
    /// (`preempted by NS/NAME (reason, when) · needs 8 GPU in …`).
    pub fn verdict_cell(&self, now: Timestamp) -> Option<String> {
        match (&self.preempted, self.state) {
            (Some(p), WlState::Preempted | WlState::Evicted | WlState::Pending) => {
                Some(match &self.verdict_short {
                    Some(v) => format!("{} · {v}", p.describe(now)),
                    None => p.describe(now),
                })
            }
            _ => self.verdict_short.clone(),
        }
    }

    /// How long it waited (admitted: from creation or its last eviction to the
    /// admission, run time not counted) or has been waiting (pending: since creation or
    /// the last eviction), at `now`. `None` when unknown (no timestamps) or finished.
    pub fn wait_ms(&self, now: Timestamp) -> Option<i64> {
        if self.waiting_since <= 0 {
            return None;
        }
        match self.state {
            WlState::Finished | WlState::Inactive => None,
            WlState::Admitted | WlState::QuotaReserved => self
                .admitted_at
                .filter(|&t| t > 0)
                .map(|t| (t - self.waiting_since).max(0)),
            _ => Some(now - self.waiting_since),
        }
    }

    /// Age at `now`; `None` when the creation time is unknown (a dump without
    /// timestamps), shown as `—`.
    pub fn age_ms(&self, now: Timestamp) -> Option<i64> {
        (self.created > 0).then(|| now - self.created)
    }

    pub fn matches(&self, filter: &Filter) -> bool {
        let prio = self.priority.to_string();
        filter.matches(&self.haystack, |key| {
            Some(match key {
                FilterKey::Namespace => vec![self.namespace.as_str()],
                FilterKey::Queue => vec![self.queue.as_str()],
                FilterKey::ClusterQueue => vec![self.cluster_queue.as_str()],
                FilterKey::State => vec![self.state.label()],
                FilterKey::Priority => vec![self.priority_class.as_str(), prio.as_str()],
            })
        })
    }
}

/// Who preempted a workload last, and how often it has been preempted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preemption {
    /// `namespace/job-name` of the preemptor, or what is known of it.
    pub by: String,
    pub reason: String,
    pub time: Timestamp,
    pub count: u32,
}

impl Preemption {
    /// `preempted by NS/NAME (reason, 4m ago)`, plus `×N` when it happened more than once.
    pub fn describe(&self, now: Timestamp) -> String {
        let when = if self.time > 0 {
            format!("{} ago", crate::tui::widgets::format_age(now - self.time))
        } else {
            "—".to_string()
        };
        let times = if self.count > 1 {
            format!(" ×{}", self.count)
        } else {
            String::new()
        };
        format!("preempted by {} ({}, {when}){times}", self.by, self.reason)
    }
}

/// Attaches the preemptions in `events` (newest first) to the rows of their victims.
pub fn attach_preemptions(rows: &mut [WorkloadRow], events: &[crate::tui::data::EventRow]) {
    use crate::tui::data::EventKind;
    let mut by_victim: HashMap<&str, Preemption> = HashMap::new();
    for e in events.iter().filter(|e| e.kind == EventKind::Preempted) {
        by_victim
            .entry(e.object.as_str())
            .and_modify(|p| p.count += 1)
            .or_insert_with(|| Preemption {
                by: e.by.clone().unwrap_or_else(|| "an unknown workload".into()),
                reason: e.reason.clone(),
                time: e.time,
                count: 1,
            });
    }
    if by_victim.is_empty() {
        return;
    }
    for r in rows {
        let key = format!("{}/{}", r.namespace, r.name);
        // The filter keeps matching the row's own names only: `/boss` shows the boss
        // job, not its victims (the Events view answers who preempted whom).
        if let Some(p) = by_victim.remove(key.as_str()) {
            r.preempted = Some(p);
        }
    }
}

/// The widest cell of each text column over a set of rows (terminal cells).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ColumnWidths {
    pub namespace: usize,
    pub job: usize,
    pub queue: usize,
    /// "class (value)".
    pub priority: usize,
    /// The value alone.
    pub priority_value: usize,
    pub state: usize,
    pub verdict: usize,
}

impl ColumnWidths {
    /// Measures the rows at `index`.
    pub fn measure(rows: &[WorkloadRow], index: &[u32], now: Timestamp) -> ColumnWidths {
        use crate::tui::widgets::width;
        let mut w = ColumnWidths::default();
        for &i in index {
            let r = &rows[i as usize];
            w.namespace = w.namespace.max(width(&r.namespace));
            w.job = w.job.max(width(&r.job));
            w.queue = w.queue.max(width(&r.queue));
            let value = decimal_width(r.priority);
            w.priority_value = w.priority_value.max(value);
            let class = width(&r.priority_class);
            w.priority = w
                .priority
                .max(if class == 0 { value } else { class + value + 3 });
            w.state = w.state.max(r.state.label().len());
            w.verdict = w
                .verdict
                .max(r.verdict_cell(now).as_deref().map_or(1, width));
        }
        w
    }
}

fn decimal_width(v: i32) -> usize {
    let mut n = if v < 0 { 2 } else { 1 };
    let mut v = v.unsigned_abs();
    while v >= 10 {
        v /= 10;
        n += 1;
    }
    n
}

/// Shortens a verdict for a list cell: accelerator resource names become "GPU",
/// "in flavor X" becomes "in X", the pod-set detail in parentheses is dropped, and
/// "blocked: " goes (STATE says it waits; the shortfall is the news).
pub fn compact_verdict(v: &str) -> String {
    let mut out = v
        .strip_prefix("blocked: ")
        .unwrap_or(v)
        .replace(" nvidia.com/gpu", " GPU")
        .replace(" amd.com/gpu", " GPU")
        .replace(" in flavor ", " in ");
    if let Some(open) = out.find(" (pod set ")
        && let Some(close) = out[open..].find(')')
    {
        out.replace_range(open..open + close + 1, "");
    }
    out
}

/// Kueue's label naming the job a Workload belongs to (set on some integrations).
pub const JOB_NAME_LABEL: &str = "kueue.x-k8s.io/job-name";
/// Kueue's label on a job that runs a prebuilt Workload.
pub const PREBUILT_WORKLOAD_LABEL: &str = "kueue.x-k8s.io/prebuilt-workload-name";

/// Lower-cased job kinds Kueue integrates, longest first so `pytorchjob-` wins over `job-`.
const JOB_KINDS: [&str; 12] = [
    "trainjob",
    "pytorchjob",
    "paddlejob",
    "xgboostjob",
    "jaxjob",
    "mpijob",
    "tfjob",
    "raycluster",
    "rayjob",
    "jobset",
    "appwrapper",
    "job",
];

/// The name of the job a Workload stands for. Kueue names a job's Workload
/// `<kind>-<job name>-<5-char hash>` (pkg/controller/jobframework/workload_names.go,
/// `GetWorkloadNameForOwnerWithGVK`), which makes rows of one kind all start alike.
/// In order: the controller owner reference's name, the `kueue.x-k8s.io/job-name`
/// label, the name with a `<kind>-` prefix and `-<hash>` suffix removed, the name.
pub fn job_name(wl: &Workload) -> String {
    if let Some(o) = &wl.owner
        && !o.name.is_empty()
    {
        return o.name.clone();
    }
    if let Some(n) = wl.labels.get(JOB_NAME_LABEL).filter(|n| !n.is_empty()) {
        return n.clone();
    }
    // A prebuilt Workload is named by its job's label: the name is what the user chose.
    if wl.labels.contains_key(PREBUILT_WORKLOAD_LABEL) {
        return wl.name.clone();
    }
    let kinds: Vec<String> = match &wl.source {
        crate::model::WorkloadSource::Job { kind } => vec![kind.to_lowercase()],
        crate::model::WorkloadSource::Workload => JOB_KINDS.iter().map(|k| k.to_string()).collect(),
    };
    for kind in kinds {
        if let Some(rest) = wl
            .name
            .strip_prefix(kind.as_str())
            .and_then(|r| r.strip_prefix('-'))
            && let Some((job, hash)) = rest.rsplit_once('-')
            && hash.len() == 5
            && hash.chars().all(|c| c.is_ascii_hexdigit())
            && !job.is_empty()
        {
            return job.to_string();
        }
    }
    wl.name.clone()
}

/// `namespace/job-name` for a Workload key (`namespace/name`): the job's name when
/// the Workload is in `state`, else what its generated name says.
pub fn display_name(state: &ClusterState, key: &str) -> String {
    let Some((ns, name)) = key.split_once('/') else {
        return key.to_string();
    };
    let job = match state.workloads.get(&(ns.to_string(), name.to_string())) {
        Some(wl) => job_name(wl),
        None => job_name(&Workload {
            name: name.to_string(),
            ..Workload::default()
        }),
    };
    format!("{ns}/{job}")
}

/// The sortable columns of the Workloads view, in `s` order.
pub const SORT_COLUMNS: [&str; 9] = [
    "NAME", "QUEUE", "PRIORITY", "STATE", "GPUS", "AGE", "WAIT", "POS", "VERDICT",
];

/// Compares two rows on a column (ascending), ties broken by namespace/name.
pub fn compare(a: &WorkloadRow, b: &WorkloadRow, column: usize, now: Timestamp) -> Ordering {
    let primary = match column {
        1 => a.queue.cmp(&b.queue),
        2 => a.priority.cmp(&b.priority),
        3 => a.state.cmp(&b.state),
        4 => a.gpus.cmp(&b.gpus),
        // Ascending age: the younger (later-created) workload first.
        5 => b.created.cmp(&a.created),
        6 => a.wait_ms(now).cmp(&b.wait_ms(now)),
        // Rows without a position sort last.
        7 => match (a.position, b.position) {
            (Some(x), Some(y)) => x.cmp(&y),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        },
        8 => a.verdict.cmp(&b.verdict),
        _ => Ordering::Equal,
    };
    primary
        .then_with(|| a.namespace.cmp(&b.namespace))
        .then_with(|| a.name.cmp(&b.name))
}

#[cfg(test)]
mod job_name_tests {
    use super::*;

    #[test]
    fn job_name_comes_from_the_owner_then_the_label_then_the_generated_name() {
        let mut wl = Workload {
            name: "pytorchjob-resnet-sweep-1d9fd".into(),
            ..Workload::default()
        };
        assert_eq!(job_name(&wl), "resnet-sweep");
        wl.labels.insert(JOB_NAME_LABEL.into(), "from-label".into());
        assert_eq!(job_name(&wl), "from-label");
        wl.owner = Some(crate::model::OwnerReference {
            name: "from-owner".into(),
            ..Default::default()
        });
        assert_eq!(job_name(&wl), "from-owner");
        // Not a generated name: kept whole.
        let plain = Workload {
            name: "my-workload".into(),
            ..Workload::default()
        };
        assert_eq!(job_name(&plain), "my-workload");
    }
}
