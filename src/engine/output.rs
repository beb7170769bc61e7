//! The serialized plan (the JSON contract shared with the CLI and the console).

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
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanCycle {
    pub admitted: Vec<PlanAdmitted>,
    pub preempted: Vec<PlanPreempted>,
    pub pending: Vec<PlanPending>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanAdmitted {
    pub workload: String,
    pub cluster_queue: String,
    /// pod set → resource → flavor.
    pub flavors: BTreeMap<String, BTreeMap<String, String>>,
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
