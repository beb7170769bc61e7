//! Headless simulation (`gangplank simulate`): run a scenario on a [`SimCluster`] in
//! virtual time, as fast as the CPU allows, and report what happened.

use serde::Serialize;

use super::cluster::{SimCluster, SimCounters, SimLimits, SimOptions, SimSummary, TimelineEvent};
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
    simulate_with(scenario, until_ms, SimLimits::default())
}

/// [`simulate`] with other pod caps.
pub fn simulate_with(scenario: &Scenario, until_ms: i64, limits: SimLimits) -> SimReport {
    let options = SimOptions {
        limits,
        ..SimOptions::default()
    };
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

/// The first scenario object over the pod caps, named with its file, document, object
/// and field: `big.yaml: document 3 (Deployment/web): spec.replicas: Invalid value: …`.
pub fn check_limits(scenario: &Scenario, limits: &SimLimits) -> Result<(), String> {
    for o in &scenario.objects {
        let kind = o
            .object
            .get("kind")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("");
        if let Err(v) = limits.check(kind, &o.object) {
            let name = o
                .object
                .pointer("/metadata/name")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("");
            return Err(format!(
                "{}: document {} ({kind}/{name}): {v}",
                o.origin.source,
                o.origin.document + 1
            ));
        }
    }
    Ok(())
}
