//! Multi-cycle planning: run cycles as Kueue would, assuming victims are evicted and
//! requeued before the next cycle and admitted workloads keep running.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{ClusterState, Quantity};

use super::PlanOptions;
use super::cycle::{self, EntryOutcome};
use super::explain;
use super::output::{
    ClusterQueueUsage, Plan, PlanAdmitted, PlanCycle, PlanPreempted, UsageFigures,
};
use super::pending::{Last, LastExplanations, PendingRows};
use super::state::{CqIdx, EngineState, WlIdx, WlState};

/// Runs the next cycle exactly as Kueue would, then following cycles until one
/// changes nothing or `opts.max_cycles` is reached.
pub fn plan(state: &ClusterState, opts: &PlanOptions) -> Plan {
    let mut st = EngineState::new(state, opts);
    let cluster_queues = usage_report(&st);
    let mut last: LastExplanations = std::iter::repeat_with(|| None).take(st.wls.len()).collect();
    let mut rows = PendingRows::new(&st);
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
                last[e.wl] = None;
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
        for (w, ex) in res.explanations(&st) {
            last[w] = Some(Last::new(ex));
        }

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
            last[w] = None;
        }
        for (t, by) in &res.victims {
            if let (WlState::Queued, Some(c)) = (&st.wls[t.wl].state, st.wls[t.wl].cq) {
                let ex = explain::for_requeued_victim(&st, t.wl, c, *by, t.reason.as_str());
                last[t.wl] = Some(Last::new(ex));
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
            out.pending = rows.list(&st, &last, final_cycle);
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
