//! Classical preemption (semantics notes §6.1–§6.4): candidate collection, ordering,
//! and the greedy removal + fill-back search. Fair preemption is in [`super::fair`];
//! [`search::get_targets`] dispatches to it when fair sharing is on.

pub mod candidates;
pub mod ordering;
pub mod search;

use serde::Serialize;

use crate::model::PreemptionPolicy;

use super::quota::FrId;
use super::state::{CqIdx, WlIdx};

/// The `Preempted` condition reason Kueue records on a victim (§6.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum PreemptionReason {
    InClusterQueue,
    InCohortReclamation,
    InCohortReclaimWhileBorrowing,
    /// Fair sharing: the target's queue has a higher share (`InCohortFairSharing`).
    InCohortFairSharing,
}

impl PreemptionReason {
    pub fn as_str(self) -> &'static str {
        match self {
            PreemptionReason::InClusterQueue => "InClusterQueue",
            PreemptionReason::InCohortReclamation => "InCohortReclamation",
            PreemptionReason::InCohortReclaimWhileBorrowing => "InCohortReclaimWhileBorrowing",
            PreemptionReason::InCohortFairSharing => "InCohortFairSharing",
        }
    }

    /// Kueue's `HumanReadablePreemptionReasons` (`pkg/scheduler/preemption/preemption.go`).
    pub fn human(self) -> &'static str {
        match self {
            PreemptionReason::InClusterQueue => "prioritization in the ClusterQueue",
            PreemptionReason::InCohortReclamation => "reclamation within the cohort",
            PreemptionReason::InCohortReclaimWhileBorrowing => {
                "reclamation within the cohort while borrowing"
            }
            PreemptionReason::InCohortFairSharing => "Fair Sharing within the cohort",
        }
    }
}

impl std::fmt::Display for PreemptionReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One victim chosen by the search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    pub wl: WlIdx,
    pub reason: PreemptionReason,
}

/// Everything the search needs to know about the preemptor.
#[derive(Clone, Debug)]
pub struct PreemptionCtx<'p> {
    pub priority: i32,
    pub queue_ts: i64,
    /// The preemptor itself, if it is a known workload (never its own victim).
    pub preemptor: Option<WlIdx>,
    pub cq: CqIdx,
    /// The preemptor's full assigned usage.
    pub usage: Vec<(FrId, i128)>,
    /// (flavor, resource) pairs whose assignment mode is Preempt.
    pub frs_need: Vec<FrId>,
    pub policy: &'p PreemptionPolicy,
}

impl<'p> PreemptionCtx<'p> {
    /// The context of workload `wl` preempting from ClusterQueue `cq` under `policy`,
    /// before flavors are assigned (no usage yet).
    pub fn for_workload(
        st: &super::state::EngineState<'_>,
        wl: WlIdx,
        cq: CqIdx,
        policy: &'p PreemptionPolicy,
    ) -> Self {
        PreemptionCtx {
            priority: st.wls[wl].priority,
            queue_ts: st.wls[wl].queue_ts,
            preemptor: Some(wl),
            cq,
            usage: Vec::new(),
            frs_need: Vec::new(),
            policy,
        }
    }
}
