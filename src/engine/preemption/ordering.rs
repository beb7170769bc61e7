//! Candidate ordering (`pkg/scheduler/preemption/common/ordering.go` `CandidatesOrdering`).

use std::cmp::Reverse;

use super::super::state::{CqIdx, EngineState, WlIdx};

/// Sort key, first difference wins: evicted first, other ClusterQueues before the
/// preemptor's, lower priority, most recently reserved, then uid (and key).
pub fn candidate_key<'s>(
    st: &'s EngineState<'_>,
    wl: WlIdx,
    preemptor_cq: CqIdx,
) -> (bool, bool, i32, Reverse<i64>, &'s str, &'s str) {
    let w = &st.wls[wl];
    (
        !w.evicted,
        w.cq == Some(preemptor_cq),
        w.priority,
        Reverse(w.reserve_time),
        w.wl.uid.as_str(),
        w.key.as_str(),
    )
}
