//! The serialized plan (the JSON contract shared with the CLI and the console).

use std::collections::BTreeMap;

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

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanPending {
    pub workload: String,
    /// `null` when the workload reaches no known ClusterQueue.
    pub cluster_queue: Option<String>,
    /// 1-based position in the ClusterQueue; `null` when Kueue holds it in no queue
    /// (missing LocalQueue/ClusterQueue, inactive workload, stopped LocalQueue).
    pub position: Option<usize>,
    pub reason: String,
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
