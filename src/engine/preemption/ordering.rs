//! Candidate ordering (`pkg/scheduler/preemption/common/ordering.go` `CandidatesOrdering`).

use std::cmp::Reverse;

use super::super::state::{CqIdx, EngineState, WlIdx};

/// Sort key, first difference wins: evicted first, other ClusterQueues before the
/// preemptor's, lower priority, most recently reserved, then uid (its dense rank).
/// Equal keys fall back to the key `namespace/name` ([`super::super::state::key_cmp`]).
pub fn candidate_key(
    st: &EngineState<'_>,
    wl: WlIdx,
    preemptor_cq: CqIdx,
) -> (bool, bool, i32, Reverse<i64>, u32) {
    let w = &st.wls[wl];
    (
        !w.evicted,
        w.cq == Some(preemptor_cq),
        w.priority,
        Reverse(w.reserve_time),
        w.uid_rank,
    )
}
