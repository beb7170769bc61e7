//! Multi-cycle planning: run cycles as Kueue would, assuming victims are evicted and
//! requeued before the next cycle and admitted workloads keep running.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{ClusterState, Quantity, QueueingStrategy};

use super::PlanOptions;
use super::cycle::{self, EntryOutcome};
use super::explain::{self, Explanation};
use super::output::{
    ClusterQueueUsage, Plan, PlanAdmitted, PlanCycle, PlanPending, PlanPreempted, UsageFigures,
};
use super::state::{CqIdx, EngineState, WlIdx, WlState};

/// Runs the next cycle exactly as Kueue would, then following cycles until one
/// changes nothing or `opts.max_cycles` is reached.
pub fn plan(state: &ClusterState, opts: &PlanOptions) -> Plan {
    let mut st = EngineState::new(state, opts);
    let cluster_queues = usage_report(&st);
    let mut last: BTreeMap<WlIdx, Explanation> = BTreeMap::new();
    let mut cycles = Vec::new();
    let mut converged = false;
    let mut first = true;
    for i in 0..opts.max_cycles.max(1) {
        if !first && !has_heads(&st) {
            converged = true;
            break;
        }
        let res = cycle::run(&mut st);
        let mut out = PlanCycle::default();
        let mut touched: BTreeSet<CqIdx> = BTreeSet::new();
        for e in &res.entries {
            if matches!(e.outcome, EntryOutcome::Admitted) {
                let a = e.assignment.as_ref().expect("admitted has assignment");
                out.admitted.push(PlanAdmitted {
                    workload: st.wls[e.wl].key(),
                    cluster_queue: st.cqs[e.cq].name().to_string(),
                    flavors: a.flavor_map(),
                    borrowing: a.borrowing > 0,
                });
                touched.insert(e.cq);
                last.remove(&e.wl);
            }
        }
        out.admitted.sort_by(|a, b| a.workload.cmp(&b.workload));
        for (t, by) in &res.victims {
            let cq = st.wls[t.wl].cq.expect("victim has cq");
            out.preempted.push(PlanPreempted {
                workload: st.wls[t.wl].key(),
                by: st.wls[*by].key(),
                reason: t.reason,
                cluster_queue: st.cqs[cq].name().to_string(),
            });
        }
        last.extend(res.explanations(&st));

        // between cycles: victims and externally evicted workloads release quota
        let mut releases: Vec<WlIdx> = res.victims.iter().map(|(t, _)| t.wl).collect();
        if first {
            releases.extend(
                (0..st.wls.len())
                    .filter(|&w| st.wls[w].state == WlState::Admitted && st.wls[w].releasing),
            );
        }
        releases.sort_unstable();
        releases.dedup();
        for &w in &releases {
            if let Some(c) = st.wls[w].cq {
                touched.insert(c);
            }
            st.release(w);
            last.remove(&w);
        }
        for (t, by) in &res.victims {
            if let (WlState::Queued, Some(c)) = (&st.wls[t.wl].state, st.wls[t.wl].cq) {
                let ex = explain::for_requeued_victim(&st, t.wl, c, *by, t.reason.as_str());
                last.insert(t.wl, ex);
            }
        }
        for &c in &touched {
            st.flush_inadmissible(c);
        }
        st.clock += 1;

        let changed = !out.admitted.is_empty()
            || !out.preempted.is_empty()
            || !releases.is_empty()
            || res.parked > 0;
        let final_cycle = !changed || i + 1 == opts.max_cycles.max(1) || !has_heads(&st);
        if opts.pending_in_every_cycle || final_cycle {
            out.pending = pending_list(&st, &last, final_cycle);
        }
        cycles.push(out);
        first = false;
        if !changed {
            converged = true;
            break;
        }
    }
    if !converged && !has_heads(&st) {
        converged = true;
    }
    let mut warnings = st.warnings.clone();
    if !converged {
        warnings.push(format!(
            "the plan stopped after {} cycles before settling",
            opts.max_cycles
        ));
    }
    Plan {
        cycles,
        cluster_queues,
        warnings,
        converged,
    }
}

fn has_heads(st: &EngineState<'_>) -> bool {
    st.cqs
        .iter()
        .any(|c| c.inactive.is_none() && !c.heap.is_empty())
}

/// Every queued workload of `cq` in Kueue's order (sticky preemptor first, then the
/// heap and the inadmissible set merged by the heap comparator).
pub fn queue_order(st: &EngineState<'_>, cq: CqIdx) -> Vec<WlIdx> {
    let c = &st.cqs[cq];
    let sticky = c.sticky.filter(|&w| c.heap.contains(&st.wls[w].qkey(w)));
    let mut all: Vec<_> = c
        .heap
        .iter()
        .chain(c.inadmissible.iter())
        .copied()
        .collect();
    all.sort_unstable();
    let mut out: Vec<WlIdx> = Vec::with_capacity(all.len());
    out.extend(sticky);
    out.extend(
        all.into_iter()
            .map(|k| k.idx)
            .filter(|&w| Some(w) != sticky),
    );
    out
}

/// The pending list after a cycle, with positions and reasons.
pub fn pending_list(
    st: &EngineState<'_>,
    last: &BTreeMap<WlIdx, Explanation>,
    with_explanations: bool,
) -> Vec<PlanPending> {
    let mut out = Vec::new();
    for cq in 0..st.cqs.len() {
        let order = queue_order(st, cq);
        let strict_head = (st.cqs[cq].spec.queueing_strategy == QueueingStrategy::StrictFifo)
            .then(|| st.cqs[cq].heap.first().map(|k| k.idx))
            .flatten();
        let mut lq_pos: BTreeMap<Option<&String>, usize> = BTreeMap::new();
        for (i, &w) in order.iter().enumerate() {
            let mut ex = match last.get(&w) {
                Some(e) if st.cqs[cq].inactive.is_none() => e.clone(),
                _ => explain::for_queued(st, w, cq, strict_head),
            };
            if strict_head.is_some_and(|h| h != w)
                && ex.kind != super::PendingKind::ClusterQueueInactive
            {
                ex = explain::for_queued(st, w, cq, strict_head);
            }
            let p = lq_pos.entry(st.wls[w].wl.queue_name.as_ref()).or_insert(0);
            *p += 1;
            ex.position_in_cluster_queue = Some(i + 1);
            ex.position_in_local_queue = Some(*p);
            out.push(PlanPending {
                workload: st.wls[w].key(),
                cluster_queue: Some(st.cqs[cq].name().to_string()),
                position: Some(i + 1),
                reason: ex.reason.clone(),
                explanation: with_explanations.then_some(ex),
            });
        }
    }
    let mut not_queued = Vec::new();
    for (w, info) in st.wls.iter().enumerate() {
        if let WlState::NotQueued(why) = info.state {
            let ex = explain::for_not_queued(st, w, why);
            not_queued.push(PlanPending {
                workload: info.key(),
                cluster_queue: ex.cluster_queue.clone(),
                position: None,
                reason: ex.reason.clone(),
                explanation: with_explanations.then_some(ex),
            });
        }
    }
    not_queued.sort_by(|a, b| a.workload.cmp(&b.workload));
    out.extend(not_queued);
    out
}

/// Per-ClusterQueue usage of the current state.
pub fn usage_report(st: &EngineState<'_>) -> Vec<ClusterQueueUsage> {
    st.cqs
        .iter()
        .map(|c| {
            let node = &st.tree.nodes[c.node];
            let mut usage: BTreeMap<String, BTreeMap<String, UsageFigures>> = BTreeMap::new();
            for fr in 0..st.frs.len() {
                if !node.has_quota[fr] && node.usage[fr] == 0 {
                    continue;
                }
                let (nominal, used) = (node.nominal[fr], node.usage[fr]);
                usage
                    .entry(st.frs.flavor(fr).to_string())
                    .or_default()
                    .insert(
                        st.frs.resource(fr).to_string(),
                        UsageFigures {
                            nominal: Quantity::from_milli(nominal),
                            used: Quantity::from_milli(used),
                            borrowed: Quantity::from_milli((used - nominal).max(0)),
                        },
                    );
            }
            ClusterQueueUsage {
                name: c.name().to_string(),
                cohort: c.spec.cohort.clone(),
                usage,
            }
        })
        .collect()
}
