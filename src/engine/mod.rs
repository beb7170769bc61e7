//! The shadow engine: a pure, deterministic copy of Kueue admission and preemption.
//!
//! No I/O, no clock (time is [`PlanOptions::now`]), no async runtime; every map that
//! reaches the output is a `BTreeMap` or sorted, so the result does not depend on input
//! order. See `docs/engine.md` for the algorithm and where gangplank differs from Kueue.
//!
//! Entry points:
//! * [`plan`] — the next cycle and the following ones, until nothing changes.
//! * [`schedule_cycle`] — one cycle, with the exact writes Kueue would make (for the simulator).
//! * [`propose_preemption`] — the victims a preemption would need under another policy.

pub mod cycle;
pub mod digest;
pub mod explain;
pub mod fair;
pub mod flavor;
pub mod kueue_cfg;
pub mod output;
pub mod pending;
pub mod plan;
pub mod preemption;
pub mod proposals;
pub mod quota;
pub mod shared;
pub mod state;
pub mod step;
pub mod testing;

use crate::model::Timestamp;

pub use explain::{Explanation, PendingKind, ResourceNeed};
pub use output::{
    ClusterQueueUsage, DetectedCycle, PendingList, Plan, PlanAdmitted, PlanCycle, PlanPending,
    PlanPreempted, PlanStats, SharedStr, UsageFigures,
};
pub use plan::plan;
pub use preemption::PreemptionReason;
pub use proposals::{PolicyOverride, Proposal, ProposedVictim, propose_preemption};
pub use state::EngineState;
pub use step::{
    AdmitDecision, CycleOutcome, PendingDecision, PreemptDecision, SchedulerMemory, schedule_cycle,
};

/// Options for [`plan`] and [`schedule_cycle`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanOptions {
    /// "Now", in ms since the epoch: used where Kueue reads the clock (a reservation
    /// without a transition time counts as reserved now) and as the simulated
    /// reservation time of workloads admitted by the plan.
    pub now: Timestamp,
    /// Upper bound on simulated cycles.
    pub max_cycles: usize,
    /// Plan with Kueue's fair sharing (default strategies) even when the state's Kueue
    /// configuration ([`crate::model::ClusterState::kueue_config`]) does not enable it.
    /// Normally left false: the configuration decides.
    pub fair_sharing: bool,
    /// List the pending workloads after every cycle (`true`) or only after the last
    /// (`false`, the default: the plan's size stays linear in cycles + objects; earlier
    /// cycles keep their `pending` key as an empty list).
    pub pending_in_every_cycle: bool,
    /// Threads that nominate a cycle's heads (classical preemption, 32 heads or more;
    /// see `cycle.rs`). The plan is the same for any number; the default is what the
    /// machine offers ([`available_workers`]).
    pub workers: usize,
}

/// The nomination threads a plan uses by default: the machine's parallelism, at most 4
/// (beyond that, the cycle's serial processing dominates).
pub fn available_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            now: 0,
            max_cycles: 100,
            fair_sharing: false,
            pending_in_every_cycle: false,
            workers: available_workers(),
        }
    }
}
