//! Multi-cycle planning: run cycles as Kueue would, assuming victims are evicted and
//! requeued before the next cycle and admitted workloads keep running.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};

use crate::model::{ClusterState, Quantity};

use super::PlanOptions;
use super::cycle::{self, EntryOutcome};
use super::digest::state_hasher;
use super::explain;
use super::output::{
    ClusterQueueUsage, DetectedCycle, Plan, PlanAdmitted, PlanCycle, PlanPreempted, PlanStats,
    UsageFigures,
};
use super::pending::{Last, LastExplanations, PendingRows};
use super::state::{CqIdx, EngineState, WlIdx, WlState};

/// A head's last entry and its NoCandidates text, explained when the plan ends.
type DeferredEntry<'a> = Box<(cycle::Entry<'a>, Option<String>)>;

/// Runs the next cycle exactly as Kueue would, then following cycles until one
/// changes nothing or `opts.max_cycles` is reached.
pub fn plan(state: &ClusterState, opts: &PlanOptions) -> Plan {
    let mut st = EngineState::new(state, opts);
    let cluster_queues = usage_report(&st);
    let mut last: LastExplanations = std::iter::repeat_with(|| None).take(st.wls.len()).collect();
    let mut rows = PendingRows::new(&st);
    // Heads' last entries not explained yet (see `explain::no_candidates_why`); every
    // write to `last` clears the workload's entry here.
    let mut deferred: Vec<Option<DeferredEntry>> =
        std::iter::repeat_with(|| None).take(st.wls.len()).collect();
    let mut cycles = Vec::new();
    let mut converged = false;
    let mut first = true;
    let mut loops = LoopDetector::default();
    let mut detected_cycle = None;
    for i in 0..opts.max_cycles.max(1) {
        if !first && !has_heads(&st) {
            converged = true;
            break;
        }
        let mut res = cycle::run(&mut st);
        let mut out = PlanCycle::default();
        let mut touched: BTreeSet<CqIdx> = BTreeSet::new();
        for e in &res.entries {
            if matches!(e.outcome, EntryOutcome::Admitted) {
                let a = e.assignment.as_ref().expect("admitted has assignment");
                out.admitted.push(PlanAdmitted {
                    workload: st.wls[e.wl].key(),
                    cluster_queue: st.cqs[e.cq].name().to_string(),
                    flavors: a.flavors_as(),
                    borrowing: a.borrowing > 0,
                });
                // no `touched`: an admission requeues nothing in Kueue (see
                // `step::schedule_cycle`); releases below do
                last[e.wl] = None;
                deferred[e.wl] = None;
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
        for e in std::mem::take(&mut res.entries) {
            if matches!(e.outcome, EntryOutcome::Admitted) {
                continue;
            }
            if opts.pending_in_every_cycle {
                last[e.wl] = Some(Last::new(explain::for_entry(&st, &e)));
            } else {
                // explained only if still the workload's last evaluation at the end
                let why = explain::no_candidates_why(&st, &e);
                let mut e = e;
                // the explanation reads the assignment's notes and failure, not its
                // per-pod-set maps (nomination freed them unless the entry was to be
                // admitted and no longer fitted)
                if let Some(a) = e.assignment.as_mut() {
                    a.pod_sets = Vec::new();
                }
                let w = e.wl;
                last[w] = None;
                deferred[w] = Some(Box::new((e, why)));
            }
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
            deferred[w] = None;
        }
        for (t, by) in &res.victims {
            if let (WlState::Queued, Some(c)) = (&st.wls[t.wl].state, st.wls[t.wl].cq) {
                let ex = explain::for_requeued_victim(&st, t.wl, c, *by, t.reason.as_str());
                last[t.wl] = Some(Last::new(ex));
                deferred[t.wl] = None;
            }
        }
        st.flush_inadmissible_of(touched.iter().copied());
        st.clock += 1;

        let changed = !out.admitted.is_empty()
            || !out.preempted.is_empty()
            || !releases.is_empty()
            || res.parked > 0;
        if changed {
            detected_cycle = loops.observe(&st, &out, i);
        }
        let final_cycle = !changed
            || i + 1 == opts.max_cycles.max(1)
            || !has_heads(&st)
            || detected_cycle.is_some();
        if opts.pending_in_every_cycle || final_cycle {
            for (w, d) in deferred.iter_mut().enumerate() {
                if let Some(d) = d.take() {
                    let (e, why) = *d;
                    last[w] = Some(Last::new(explain::for_entry_with(&st, &e, why)));
                }
            }
            out.pending = rows.list(&st, &last, final_cycle);
        }
        cycles.push(out);
        first = false;
        if !changed {
            converged = true;
            break;
        }
        if detected_cycle.is_some() {
            break;
        }
    }
    if !converged && !has_heads(&st) && detected_cycle.is_none() {
        converged = true;
    }
    let mut warnings = st.warnings.clone();
    if let Some(d) = &detected_cycle {
        warnings.push(format!(
            "the plan loops ({name}): the state after cycle {to} is the state after cycle {from}, \
             and the {period} cycles after it repeated the same admissions and {pre} preemptions; \
             Kueue would repeat them too, so the plan stops after cycle {last} (see detectedCycle)",
            name = d.name,
            to = d.to,
            from = d.from,
            period = d.period,
            pre = d.preemptions_per_period,
            last = d.to + d.period,
        ));
    } else if !converged {
        warnings.push(format!(
            "the plan stopped after {} cycles before settling",
            opts.max_cycles
        ));
    }
    let stats = PlanStats {
        steps: st.steps.get(),
        cycles: cycles.len(),
        parallel_heads: st.parallel_heads,
    };
    Plan {
        cycles,
        cluster_queues,
        warnings,
        converged,
        detected_cycle,
        stats,
    }
}

/// Finds a loop in the simulated cycles: a fingerprint of the state after each cycle
/// (which workloads hold quota where, with which flavors; what each ClusterQueue's
/// queue, parked set and sticky head hold) and of each cycle's admissions and
/// preemptions. When the state after cycle `to` equals the state after an earlier
/// cycle `from`, the next `to - from` cycles must repeat the events of the cycles
/// after `from` and end in the same state again before the loop is reported.
#[derive(Default)]
struct LoopDetector {
    /// fingerprint of the state → first cycle that ended in it.
    seen: HashMap<u64, usize>,
    states: Vec<u64>,
    events: Vec<u64>,
    /// (from, to) being confirmed.
    candidate: Option<(usize, usize)>,
    /// Workloads admitted or preempted per cycle (to name the loop).
    touched: Vec<Vec<String>>,
    preemptions: Vec<usize>,
}

impl LoopDetector {
    fn observe(
        &mut self,
        st: &EngineState<'_>,
        out: &PlanCycle,
        i: usize,
    ) -> Option<DetectedCycle> {
        let state = fingerprint(st);
        let mut h = state_hasher();
        for a in &out.admitted {
            (&a.workload, &a.cluster_queue, &a.flavors).hash(&mut h);
        }
        for p in &out.preempted {
            (&p.workload, &p.by).hash(&mut h);
        }
        // cycles where nothing changed end the plan, so indexes stay aligned
        debug_assert_eq!(self.states.len(), i);
        self.states.push(state);
        self.events.push(h.finish());
        self.touched.push(
            out.admitted
                .iter()
                .map(|a| a.workload.clone())
                .chain(out.preempted.iter().map(|p| p.workload.clone()))
                .collect(),
        );
        self.preemptions.push(out.preempted.len());
        if let Some((from, to)) = self.candidate {
            let period = to - from;
            if i < to + period {
                return None;
            }
            self.candidate = None;
            let repeated = self.states[i] == self.states[to]
                && self.events[from + 1..=to] == self.events[to + 1..=i];
            if repeated {
                let mut workloads: Vec<String> =
                    self.touched[to + 1..=i].iter().flatten().cloned().collect();
                workloads.sort();
                workloads.dedup();
                let pre: usize = self.preemptions[to + 1..=i].iter().sum();
                return Some(DetectedCycle {
                    name: if pre > 0 {
                        "preemption-loop"
                    } else {
                        "admission-loop"
                    }
                    .to_string(),
                    from,
                    to,
                    period,
                    workloads,
                    preemptions_per_period: pre,
                });
            }
        }
        match self.seen.get(&state) {
            Some(&from) if self.candidate.is_none() => self.candidate = Some((from, i)),
            _ => {}
        }
        self.seen.entry(state).or_insert(i);
        None
    }
}

/// A hash of the scheduling state between cycles (not of simulated time): which
/// workloads hold quota where, with which flavors (each workload's state, queue and
/// usage), and what each ClusterQueue's queue, parked set and sticky head hold. Read
/// from the digests the state keeps up to date ([`super::digest`]), so it costs one
/// word per ClusterQueue rather than a pass over every workload.
fn fingerprint(st: &EngineState<'_>) -> u64 {
    debug_assert_eq!(st.wl_digest, st.recomputed_wl_digest(), "workload digest");
    let mut h = state_hasher();
    h.write_u64(st.wl_digest);
    for c in st.cqs.iter() {
        debug_assert_eq!(c.heap.digest(), c.heap.recomputed(), "queue digest");
        debug_assert_eq!(c.inadmissible.digest(), c.inadmissible.recomputed());
        h.write_u64(c.heap.len() as u64);
        h.write_u64(c.heap.digest());
        h.write_u64(c.inadmissible.len() as u64);
        h.write_u64(c.inadmissible.digest());
        h.write_u64(c.sticky.map_or(0, |w| w as u64 + 1));
    }
    h.finish()
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
            let (node, n) = (&st.tree.nodes[c.node], c.node);
            let mut usage: BTreeMap<String, BTreeMap<String, UsageFigures>> = BTreeMap::new();
            for fr in 0..st.frs.len() {
                if !node.has_quota[fr] && st.tree.usage(n, fr) == 0 {
                    continue;
                }
                let (nominal, used) = (node.nominal[fr], st.tree.usage(n, fr));
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
