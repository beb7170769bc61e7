//! The serialized plan (the JSON contract shared with the CLI and the console).

use crate::model::SmallMap;
use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::Serialize;

use crate::model::Quantity;

use super::explain::Explanation;
use super::preemption::PreemptionReason;

/// What [`super::plan`] returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub cycles: Vec<PlanCycle>,
    /// Usage in the CURRENT state (before any simulated cycle), sorted by name.
    pub cluster_queues: Vec<ClusterQueueUsage>,
    pub warnings: Vec<String>,
    /// `false` when `max_cycles` stopped the simulation before it settled.
    pub converged: bool,
    /// Set when the simulation reached a state it had been in before (the same
    /// workloads admitted where they were, the same queues) and the cycles in between
    /// then repeated: Kueue would loop the same way, so the plan stops there.
    /// Additive key `detectedCycle`, absent when no loop was found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detected_cycle: Option<DetectedCycle>,
    /// Work counters (not serialized): for scale tests and benchmarks.
    #[serde(skip)]
    pub stats: PlanStats,
}

/// A loop the plan found: the state after cycle `to` equals the state after cycle
/// `from` (indexes into `cycles`), and the `period` cycles after `to` repeated the
/// admissions and preemptions of the `period` cycles after `from`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DetectedCycle {
    /// A name for the loop: `preemption-loop` when victims are preempted again within a
    /// period, else `admission-loop`.
    pub name: String,
    pub from: usize,
    pub to: usize,
    pub period: usize,
    /// Workloads admitted or preempted within one period (sorted, `namespace/name`).
    pub workloads: Vec<String>,
    /// Preemptions within one period.
    pub preemptions_per_period: usize,
}

/// Counted engine work of a plan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlanStats {
    /// Heads nominated + preemption candidates classified + fit checks.
    pub steps: u64,
    pub cycles: usize,
    /// Heads nominated in cycles that shared their nominations among threads
    /// ([`super::PlanOptions::workers`]).
    pub parallel_heads: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanCycle {
    pub admitted: Vec<PlanAdmitted>,
    pub preempted: Vec<PlanPreempted>,
    pub pending: PendingList,
}

/// A cycle's pending rows, in order. Stored as segments (one per ClusterQueue, one for
/// the workloads in no queue) that consecutive cycles share when they are unchanged: a
/// plan lists every pending workload in every cycle, and most queues look the same
/// from one cycle to the next. Reads like a slice (`len`, `iter`, `[i]`, `for p in
/// &list`); serializes, prints and compares exactly as a `Vec<PlanPending>` would.
#[derive(Clone, Default)]
pub struct PendingList {
    segments: Vec<Arc<[PlanPending]>>,
    len: usize,
}

impl PendingList {
    /// A list made of `segments`, in order (empty ones are dropped).
    pub fn from_segments(segments: Vec<Arc<[PlanPending]>>) -> Self {
        let segments: Vec<_> = segments.into_iter().filter(|s| !s.is_empty()).collect();
        let len = segments.iter().map(|s| s.len()).sum();
        PendingList { segments, len }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &PlanPending> + Clone + '_ {
        self.segments.iter().flat_map(|s| s.iter())
    }

    pub fn get(&self, mut i: usize) -> Option<&PlanPending> {
        for s in &self.segments {
            if i < s.len() {
                return Some(&s[i]);
            }
            i -= s.len();
        }
        None
    }

    pub fn first(&self) -> Option<&PlanPending> {
        self.get(0)
    }

    pub fn last(&self) -> Option<&PlanPending> {
        self.segments.last().and_then(|s| s.last())
    }

    /// The segments, shared with other cycles where unchanged.
    pub fn segments(&self) -> &[Arc<[PlanPending]>] {
        &self.segments
    }

    pub fn to_vec(&self) -> Vec<PlanPending> {
        self.iter().cloned().collect()
    }
}

impl From<Vec<PlanPending>> for PendingList {
    fn from(rows: Vec<PlanPending>) -> Self {
        PendingList::from_segments(vec![rows.into()])
    }
}

impl std::ops::Index<usize> for PendingList {
    type Output = PlanPending;
    fn index(&self, i: usize) -> &PlanPending {
        match self.get(i) {
            Some(p) => p,
            None => panic!("index {i} out of range for a pending list of {}", self.len),
        }
    }
}

impl<'a> IntoIterator for &'a PendingList {
    type Item = &'a PlanPending;
    type IntoIter = std::iter::FlatMap<
        std::slice::Iter<'a, Arc<[PlanPending]>>,
        std::slice::Iter<'a, PlanPending>,
        fn(&'a Arc<[PlanPending]>) -> std::slice::Iter<'a, PlanPending>,
    >;
    fn into_iter(self) -> Self::IntoIter {
        let f: fn(&'a Arc<[PlanPending]>) -> std::slice::Iter<'a, PlanPending> = |s| s.iter();
        self.segments.iter().flat_map(f)
    }
}

impl PartialEq for PendingList {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl Eq for PendingList {}

impl fmt::Debug for PendingList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for PendingList {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.len))?;
        for p in self.iter() {
            seq.serialize_element(p)?;
        }
        seq.end()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanAdmitted {
    pub workload: String,
    pub cluster_queue: String,
    /// pod set → resource → flavor. Compact sorted maps (iterated and serialized as
    /// `BTreeMap`s): a long plan lists tens of thousands of admissions, and a
    /// `BTreeMap` allocates room for eleven entries per node.
    pub flavors: SmallMap<String, SmallMap<String, String>>,
    pub borrowing: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanPreempted {
    pub workload: String,
    pub by: String,
    pub reason: PreemptionReason,
    pub cluster_queue: String,
}

/// An immutable string shared by reference count: a plan lists every pending workload
/// in every cycle (millions of rows on a large cluster), and its key, ClusterQueue and
/// reason are the same text cycle after cycle, so rows share them instead of owning
/// copies. Reads as a `str` (`Deref`), serializes, prints and `Debug`s exactly as a
/// `String` would.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SharedStr(Arc<str>);

impl SharedStr {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether both are the same allocation (not only the same text).
    pub fn shares_with(&self, other: &SharedStr) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Deref for SharedStr {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedStr {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for SharedStr {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl Serialize for SharedStr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl From<String> for SharedStr {
    fn from(s: String) -> Self {
        SharedStr(s.into())
    }
}

impl From<&str> for SharedStr {
    fn from(s: &str) -> Self {
        SharedStr(s.into())
    }
}

impl From<SharedStr> for String {
    fn from(s: SharedStr) -> Self {
        s.0.to_string()
    }
}

impl PartialEq<str> for SharedStr {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for SharedStr {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for SharedStr {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<SharedStr> for str {
    fn eq(&self, other: &SharedStr) -> bool {
        self == &*other.0
    }
}

impl PartialEq<SharedStr> for &str {
    fn eq(&self, other: &SharedStr) -> bool {
        *self == &*other.0
    }
}

impl PartialEq<SharedStr> for String {
    fn eq(&self, other: &SharedStr) -> bool {
        **self == *other.0
    }
}

/// One pending workload in one cycle. Its strings are shared with the same workload's
/// rows in other cycles (see [`SharedStr`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanPending {
    pub workload: SharedStr,
    /// `null` when the workload reaches no known ClusterQueue.
    pub cluster_queue: Option<SharedStr>,
    /// 1-based position in the ClusterQueue; `null` when Kueue holds it in no queue
    /// (missing LocalQueue/ClusterQueue, inactive workload, stopped LocalQueue).
    pub position: Option<usize>,
    pub reason: SharedStr,
    /// Full explanation (only on the last cycle, to keep plans small). Boxed: a plan
    /// holds one `PlanPending` per pending workload per cycle, nearly all without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanation: Option<Box<Explanation>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterQueueUsage {
    pub name: String,
    pub cohort: Option<String>,
    /// flavor → resource → figures.
    pub usage: BTreeMap<String, BTreeMap<String, UsageFigures>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageFigures {
    pub nominal: Quantity,
    pub used: Quantity,
    /// Usage above nominal.
    pub borrowed: Quantity,
}
