//! "What would it take?" hooks: the victims a pending workload's preemption would
//! need under an alternative policy, using the same candidate ordering and minimal
//! set search as the real cycle.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::{BorrowWithinCohort, ClusterState, ReclaimWithinCohort, WithinClusterQueue};

use super::PlanOptions;
use super::flavor::{self, Mode};
use super::preemption::search::get_targets;
use super::preemption::{PreemptionCtx, PreemptionReason};
use super::state::{EngineState, WlState};

/// Policy fields to replace; `None` keeps the ClusterQueue's own value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyOverride {
    pub within_cluster_queue: Option<WithinClusterQueue>,
    pub reclaim_within_cohort: Option<ReclaimWithinCohort>,
    pub borrow_within_cohort: Option<BorrowWithinCohort>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposedVictim {
    pub workload: String,
    pub cluster_queue: String,
    pub priority: i32,
    pub reason: PreemptionReason,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Proposal {
    pub workload: String,
    pub cluster_queue: String,
    /// pod set → resource → flavor the workload would get.
    pub flavors: BTreeMap<String, BTreeMap<String, String>>,
    /// Empty when it fits without preemption.
    pub victims: Vec<ProposedVictim>,
}

/// For a pending workload, the minimal victim set Kueue's classical preemption would
/// choose if its ClusterQueue's policy were changed by `policy_override`. `None` when
/// the workload is unknown, not queued, or cannot be admitted even with that policy.
pub fn propose_preemption(
    state: &ClusterState,
    workload_key: &str,
    policy_override: &PolicyOverride,
) -> Option<Proposal> {
    // Reservations without a transition time count as the most recent ones.
    let opts = PlanOptions {
        now: i64::MAX / 2,
        ..PlanOptions::default()
    };
    let mut st = EngineState::new(state, &opts);
    let w = st.wl_index(workload_key)?;
    if st.wls[w].state != WlState::Queued {
        return None;
    }
    let cq = st.wls[w].cq?;
    let spec = st.cqs[cq].spec;
    let mut policy = spec.preemption.clone();
    if let Some(v) = policy_override.within_cluster_queue {
        policy.within_cluster_queue = v;
    }
    if let Some(v) = policy_override.reclaim_within_cohort {
        policy.reclaim_within_cohort = v;
    }
    if let Some(v) = &policy_override.borrow_within_cohort {
        policy.borrow_within_cohort = v.clone();
    }
    let wl = st.wls[w].wl;
    let base = PreemptionCtx::for_workload(&st, w, cq, &policy);
    let a = flavor::assign(&mut st, cq, &wl.pod_sets, None, &wl.reclaimable_pods, &base);
    let targets = match a.mode {
        Mode::NoFit => return None,
        Mode::Fit => Vec::new(),
        Mode::Preempt => {
            let ctx = PreemptionCtx {
                usage: a.usage.clone(),
                frs_need: a.frs_need_preemption(),
                ..base
            };
            let t = get_targets(&mut st, &ctx);
            if t.is_empty() {
                return None;
            }
            t
        }
    };
    Some(Proposal {
        workload: workload_key.to_string(),
        cluster_queue: spec.name.clone(),
        flavors: a.flavor_map(),
        victims: targets
            .iter()
            .map(|t| ProposedVictim {
                workload: st.wls[t.wl].key(),
                cluster_queue: st.wls[t.wl]
                    .cq
                    .map(|c| st.cqs[c].name().to_string())
                    .unwrap_or_default(),
                priority: st.wls[t.wl].priority,
                reason: t.reason,
            })
            .collect(),
    })
}
