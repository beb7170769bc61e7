//! Headless simulation (`gangplank simulate`): run a scenario on a [`SimCluster`] in
//! virtual time, as fast as the CPU allows, and report what happened.

use serde::Serialize;

use super::cluster::{SimCluster, SimCounters, SimOptions, SimSummary, TimelineEvent};
use super::scenario::Scenario;

/// The result of a headless run (the JSON contract of `gangplank simulate -o json`).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SimReport {
    /// Events in simulated-time order.
    pub timeline: Vec<TimelineEvent>,
    /// Figures per ClusterQueue and per priority class.
    pub summary: SimSummary,
    /// What the simulator could not model or skipped.
    pub warnings: Vec<String>,
    /// Work done (not part of the JSON contract).
    #[serde(skip)]
    pub counters: SimCounters,
}

/// Runs `scenario` from the start for `until_ms` of simulated time.
pub fn simulate(scenario: &Scenario, until_ms: i64) -> SimReport {
    let options = SimOptions::default();
    let end = options.start_ms + until_ms.max(0);
    let mut cluster = SimCluster::from_scenario(scenario, options);
    cluster.advance_to(end);
    report(&cluster)
}

/// The report of a cluster as it stands.
pub fn report(cluster: &SimCluster) -> SimReport {
    SimReport {
        timeline: cluster.timeline().to_vec(),
        summary: cluster.summary(),
        warnings: cluster.warnings().to_vec(),
        counters: cluster.counters(),
    }
}
