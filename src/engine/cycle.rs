//! One scheduling cycle (semantics notes §5; `pkg/scheduler/scheduler.go` `schedule`).
//!
//! Pop one head per active ClusterQueue, nominate (admissibility, flavors, targets),
//! order the entries, then process them one by one against the shared snapshot.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{QueueingStrategy, ReclaimWithinCohort};

use super::explain::{self, Explanation};
use super::flavor::{self, Assignment, Mode};
use super::preemption::search::get_targets;
use super::preemption::{PreemptionCtx, Target};
use super::state::{CqIdx, EngineState, WlIdx};

/// What happened to one nominated head.
#[derive(Clone, Debug)]
pub enum EntryOutcome {
    /// Admitted: usage added to the snapshot.
    Admitted,
    /// Issued preemptions and waits for the victims (not admitted this cycle).
    Preempting,
    /// Its targets overlapped earlier victims but it fits once those are gone.
    DeferredFit,
    /// Targets overlapped victims already chosen by an earlier entry.
    SkippedOverlap,
    /// Fitted at nomination, no longer after earlier entries of this cycle.
    SkippedNoLongerFits,
    /// Needs preemption but no candidates suffice (capacity may be reserved).
    NoCandidates,
    NoFit,
    /// Not nominated: namespace does not match the ClusterQueue's selector.
    NamespaceMismatch,
    /// Not nominated: a pod template fails Kueue's resource validation
    /// (`workload.ValidateResources`: requests above limits; negative quantities).
    InvalidResources,
}

/// A nominated head and its fate.
#[derive(Clone, Debug)]
pub struct Entry<'a> {
    pub wl: WlIdx,
    pub cq: CqIdx,
    pub assignment: Option<Assignment<'a>>,
    pub targets: Vec<Target>,
    pub outcome: EntryOutcome,
    /// Fair sharing: why another ClusterQueue's head went first, in words.
    pub fair_note: Option<String>,
    /// Fair sharing: why each target was chosen, in words.
    pub victim_notes: Vec<(WlIdx, String)>,
}

/// Internal result of a cycle, turned into public decisions by the caller.
#[derive(Clone, Debug, Default)]
pub struct CycleResult<'a> {
    pub entries: Vec<Entry<'a>>,
    /// Victims in the order they were chosen, with their preemptor.
    pub victims: Vec<(Target, WlIdx)>,
    /// Workloads moved to an inadmissible set this cycle.
    pub parked: usize,
}

impl CycleResult<'_> {
    /// Explanations for every evaluated head that was not admitted. Kept out of
    /// [`run`] so the decision work does not pay for formatting.
    pub fn explanations(&self, st: &EngineState<'_>) -> BTreeMap<WlIdx, Explanation> {
        self.entries
            .iter()
            .filter(|e| !matches!(e.outcome, EntryOutcome::Admitted))
            .map(|e| (e.wl, explain::for_entry(st, e)))
            .collect()
    }
}

/// Flavor assignment, plus preemption targets when the mode is Preempt.
/// `counts`, when given, replaces the pod sets' counts (partial admission).
fn nominate<'a>(
    st: &mut EngineState<'a>,
    cq: CqIdx,
    w: &'a crate::model::Workload,
    counts: Option<&[i32]>,
    base: &PreemptionCtx<'_>,
) -> (Assignment<'a>, Vec<Target>) {
    // classical searches only: fair sharing's also leave notes behind
    if !st.fair.enabled {
        st.search_memo = Some(Vec::new());
    }
    let a = flavor::assign(st, cq, &w.pod_sets, counts, &w.reclaimable_pods, base);
    let targets = if a.mode == Mode::Preempt {
        let ctx = PreemptionCtx {
            usage: a.usage.clone(),
            frs_need: a.frs_need_preemption(),
            ..base.clone()
        };
        get_targets(st, &ctx)
    } else {
        Vec::new()
    };
    st.search_memo = None;
    (a, targets)
}

/// Partial admission (`pkg/scheduler/flavorassigner/podset_reducer.go`, proportional
/// reducer): binary-search the smallest uniform cut of every pod set's
/// `count − minCount` slack whose assignment fits or preempts with targets.
fn partial_admission<'a>(
    st: &mut EngineState<'a>,
    cq: CqIdx,
    w: &'a crate::model::Workload,
    base: &PreemptionCtx<'_>,
    viable: impl Fn(&Assignment, &[Target]) -> bool,
) -> Option<(Assignment<'a>, Vec<Target>)> {
    let deltas: Vec<i64> = w
        .pod_sets
        .iter()
        .map(|p| i64::from(p.count - p.min_count.unwrap_or(p.count).clamp(0, p.count)))
        .collect();
    let total: i64 = deltas.iter().sum();
    if total == 0 {
        return None;
    }
    let mut found = None;
    let (mut lo, mut hi) = (0i64, total);
    // smallest i in [0, total] whose counts are viable (i = 0 is the full count)
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let counts = cut_counts(w, &deltas, mid, total);
        let r = nominate(st, cq, w, Some(&counts), base);
        if viable(&r.0, &r.1) {
            hi = mid;
            found = Some((mid, r));
        } else {
            lo = mid + 1;
        }
    }
    match found {
        Some((i, r)) if i == lo => Some(r),
        _ => {
            let counts = cut_counts(w, &deltas, lo, total);
            let r = nominate(st, cq, w, Some(&counts), base);
            viable(&r.0, &r.1).then_some(r)
        }
    }
}

/// Each pod set's count less its share `cut / total` of its slack `deltas`.
fn cut_counts(w: &crate::model::Workload, deltas: &[i64], cut: i64, total: i64) -> Vec<i32> {
    w.pod_sets
        .iter()
        .zip(deltas)
        .map(|(p, d)| p.count - (d * cut / total) as i32)
        .collect()
}

/// Whether `usage` fits in `cq` with `gone` removed from the snapshot (left unchanged).
/// Only the pairs of `usage` are read, so only those are moved.
fn fits_without(
    st: &mut EngineState<'_>,
    cq: CqIdx,
    usage: &[(usize, i128)],
    gone: &[WlIdx],
) -> bool {
    let frs: Vec<usize> = usage.iter().map(|&(fr, _)| fr).collect();
    for &w in gone {
        st.remove_usage_in(w, &frs);
    }
    let fits = fits_now(st, cq, usage);
    for &w in gone {
        st.add_usage_in(w, &frs);
    }
    fits
}

fn fits_now(st: &EngineState<'_>, cq: CqIdx, usage: &[(usize, i128)]) -> bool {
    st.step();
    let node = st.cqs[cq].node;
    usage
        .iter()
        .all(|&(fr, q)| q <= st.tree.cq_available(node, fr))
}

/// Below this many heads a cycle nominates them on one thread: a worker's start and its
/// copy of the quota tree cost more than it would save.
const PARALLEL_MIN_HEADS: usize = 32;

/// Nominates every head against the cycle's snapshot, in `heads` order.
///
/// Kueue nominates every head against the same snapshot before processing any
/// (`scheduler.go` `nominate`): each nomination reads the snapshot and leaves it as it
/// found it, so heads are independent and, with classical preemption, are shared among
/// [`super::PlanOptions::workers`] threads (each a [`EngineState::fork`]). The entries
/// and the work counter are the same whatever the number of workers. Fair sharing's
/// searches keep notes and caches in the state, so they stay on one thread.
fn nominate_heads<'a>(st: &mut EngineState<'a>, heads: &[(WlIdx, CqIdx)]) -> Vec<Entry<'a>> {
    let workers = st.opts.workers.clamp(1, heads.len().max(1));
    if workers == 1 || st.fair.enabled || heads.len() < PARALLEL_MIN_HEADS {
        let mut ns_cache = BTreeMap::new();
        return heads
            .iter()
            .map(|&(wl, cq)| nominate_head(st, wl, cq, &mut ns_cache))
            .collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    // each worker takes the next head not taken yet: heads differ a lot in cost
    let drain = |st: &mut EngineState<'a>| {
        let mut ns_cache = BTreeMap::new();
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(&(wl, cq)) = heads.get(i) else { break };
            done.push((i, nominate_head(st, wl, cq, &mut ns_cache)));
        }
        done
    };
    let mut forks: Vec<EngineState<'_>> = (1..workers).map(|_| st.fork()).collect();
    let mut slots: Vec<Option<Entry>> = (0..heads.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = forks.iter_mut().map(|f| scope.spawn(|| drain(f))).collect();
        let mine = drain(st);
        let theirs = handles.into_iter().map(|h| {
            h.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
        for (i, e) in std::iter::once(mine).chain(theirs).flatten() {
            slots[i] = Some(e);
        }
    });
    for f in forks {
        st.steps.set(st.steps.get() + f.steps.get());
    }
    st.parallel_heads += heads.len() as u64;
    slots
        .into_iter()
        .map(|e| e.expect("every head nominated"))
        .collect()
}

/// Fair sharing's notes on the last search's victims (none with classical preemption,
/// whose workers must not write the shared fair-sharing state).
fn take_fair_notes(st: &mut EngineState<'_>) -> Vec<(WlIdx, String)> {
    if st.fair.enabled {
        std::mem::take(&mut st.fair.last_notes)
    } else {
        Vec::new()
    }
}

/// Nominates one head (`scheduler.go` `nominate`): namespace selector, resource
/// validation, flavor assignment and, when preempting, its targets.
fn nominate_head<'a>(
    st: &mut EngineState<'a>,
    wl: WlIdx,
    cq: CqIdx,
    ns_cache: &mut BTreeMap<(&'a str, CqIdx), bool>,
) -> Entry<'a> {
    let w = st.wls[wl].wl;
    let ns_ok = match &st.cqs[cq].spec.namespace_selector {
        None => false,
        // `{}` matches every namespace: no need to build its labels
        Some(s) if s.match_labels.is_empty() && s.match_expressions.is_empty() => true,
        Some(s) => *ns_cache
            .entry((w.namespace.as_str(), cq))
            .or_insert_with(|| s.matches(&st.namespace_labels(&w.namespace))),
    };
    if !ns_ok {
        return Entry {
            wl,
            cq,
            assignment: None,
            targets: Vec::new(),
            outcome: EntryOutcome::NamespaceMismatch,
            fair_note: None,
            victim_notes: Vec::new(),
        };
    }
    if w.pod_sets.iter().any(|p| p.invalid.is_some()) {
        return Entry {
            wl,
            cq,
            assignment: None,
            targets: Vec::new(),
            outcome: EntryOutcome::InvalidResources,
            fair_note: None,
            victim_notes: Vec::new(),
        };
    }
    let base = PreemptionCtx::for_workload(st, wl, cq, &st.cqs[cq].spec.preemption);
    st.step();
    let (mut a, mut targets) = nominate(st, cq, w, None, &base);
    let mut victim_notes = take_fair_notes(st);
    let viable = |a: &Assignment, t: &[Target]| {
        a.mode == Mode::Fit || (a.mode == Mode::Preempt && !t.is_empty())
    };
    if !viable(&a, &targets)
        && st.kueue.gate("PartialAdmission")
        && let Some((pa, pt)) = partial_admission(st, cq, w, &base, viable)
    {
        (a, targets) = (pa, pt);
        victim_notes = take_fair_notes(st);
    }
    if targets.is_empty() {
        victim_notes.clear();
    }
    let outcome = match a.mode {
        Mode::NoFit => EntryOutcome::NoFit,
        Mode::Preempt if targets.is_empty() => EntryOutcome::NoCandidates,
        Mode::Preempt => EntryOutcome::Preempting,
        Mode::Fit => EntryOutcome::Admitted,
    };
    if !matches!(outcome, EntryOutcome::Admitted) {
        // only an admission reads the per-pod-set maps (flavors and requests it
        // writes); free the others on the nominating thread, not in the serial part
        a.pod_sets = Vec::new();
    }
    Entry {
        wl,
        cq,
        assignment: Some(a),
        targets,
        outcome,
        fair_note: None,
        victim_notes,
    }
}

/// Runs one cycle on the snapshot. Admissions are applied to `st`; victims are only
/// reported (they keep their quota until the caller releases them).
pub fn run<'a>(st: &mut EngineState<'a>) -> CycleResult<'a> {
    let mut result = CycleResult::default();

    // --- heads: one per active ClusterQueue
    let mut heads: Vec<(WlIdx, CqIdx)> = Vec::new();
    for c in 0..st.cqs.len() {
        if st.cqs[c].inactive.is_some() {
            continue;
        }
        let sticky = st.cqs[c]
            .sticky
            .map(|w| st.wls[w].qkey(w))
            .filter(|k| st.cqs[c].heap.contains(k));
        let key = sticky.or_else(|| st.cqs[c].heap.first().copied());
        if let Some(k) = key {
            st.cqs[c].heap.remove(&k);
            heads.push((k.idx, c));
        }
    }

    // --- nominate
    st.cand_order = Some(super::preemption::candidates::CandOrder::build_for_cycle(
        st,
    ));
    let mut entries = nominate_heads(st, &heads);
    st.cand_order = None;

    // --- order and process. Classical (makeClassicalIterator): borrowing level,
    // priority, timestamp; uid last. Fair sharing: a tournament per pop
    // (fair_sharing_iterator.go), recomputed after every processed entry.
    let mut proc = Processing::default();
    if st.fair.enabled {
        let mut remaining: BTreeSet<usize> = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.assignment.is_some())
            .map(|(i, _)| i)
            .collect();
        let mut order = Vec::with_capacity(entries.len());
        let mut memo = super::fair::Tournament::default();
        while let Some(i) = super::fair::next_entry(st, &mut entries, &mut remaining, &mut memo) {
            process(st, &mut entries[i], &mut proc, &mut result);
            order.push(i);
        }
        // entries without assignment (namespace mismatch) keep their place at the end
        order.extend((0..entries.len()).filter(|i| entries[*i].assignment.is_none()));
        let mut slots: Vec<Option<Entry>> = entries.into_iter().map(Some).collect();
        entries = order
            .into_iter()
            .map(|i| slots[i].take().expect("each once"))
            .collect();
    } else {
        // PrioritySortingWithinCohort off: priority is not a sort key
        let by_priority = st.kueue.gate("PrioritySortingWithinCohort");
        entries.sort_by_key(|e| {
            let w = &st.wls[e.wl];
            (
                e.assignment.as_ref().map_or(0, |a| a.borrowing),
                if by_priority {
                    -i64::from(w.priority)
                } else {
                    0
                },
                w.queue_ts,
                w.tie,
            )
        });
        proc.victims_out = true;
        for e in &mut entries {
            process(st, e, &mut proc, &mut result);
        }
        // the victims keep their quota until the caller releases them
        for (t, _) in &result.victims {
            st.add_usage_of(t.wl);
        }
    }

    // --- remove the cycle's temporary reservations (preemptors, DeferredFit, NoCandidates)
    for (node, usage) in std::mem::take(&mut st.reserved) {
        st.tree.remove_all(node, &usage);
    }

    // --- requeue (§5.5)
    for e in &entries {
        if matches!(e.outcome, EntryOutcome::Admitted) {
            continue;
        }
        let strict = st.cqs[e.cq].spec.queueing_strategy == QueueingStrategy::StrictFifo;
        let park = match e.outcome {
            EntryOutcome::NamespaceMismatch => true,
            EntryOutcome::NoFit | EntryOutcome::NoCandidates | EntryOutcome::InvalidResources => {
                !strict
            }
            _ => false,
        };
        let key = st.wls[e.wl].qkey(e.wl);
        if park {
            st.cqs[e.cq].inadmissible.insert(key);
            result.parked += 1;
            if st.cqs[e.cq].sticky == Some(e.wl) {
                st.cqs[e.cq].sticky = None;
            }
        } else {
            st.cqs[e.cq].heap.insert(key);
        }
    }
    result.entries = entries;
    result
}

/// Victims chosen so far in the cycle, per root of the cohort tree: only those can
/// change whether an entry of that tree fits (keeps the re-check linear in the tree).
#[derive(Default)]
struct Processing {
    preempted_by_root: BTreeMap<usize, Vec<WlIdx>>,
    preempted_set: BTreeSet<WlIdx>,
    /// The victims chosen so far are out of the snapshot while the entries are processed
    /// (classical order), instead of being taken out and put back for each entry's
    /// re-check: the same answers, without moving every earlier victim of the tree for
    /// every later entry. Fair sharing's tournament reads the snapshot between entries
    /// with the victims in, so there they are moved per check as Kueue does.
    victims_out: bool,
}

impl Processing {
    /// Whether `usage` fits in `cq` once this cycle's victims of its tree and `also` are
    /// gone.
    fn fits_after(
        &self,
        st: &mut EngineState<'_>,
        cq: CqIdx,
        usage: &[(usize, i128)],
        preempted: &[WlIdx],
        also: &[WlIdx],
    ) -> bool {
        if self.victims_out {
            return fits_without(st, cq, usage, also);
        }
        if also.is_empty() {
            return fits_without(st, cq, usage, preempted);
        }
        let mut gone = preempted.to_vec();
        gone.extend_from_slice(also);
        fits_without(st, cq, usage, &gone)
    }

    /// `cq`'s usage of `fr` with this cycle's victims still in (as Kueue's snapshot has it).
    fn usage_with_victims(
        &self,
        st: &EngineState<'_>,
        cq: CqIdx,
        fr: usize,
        preempted: &[WlIdx],
    ) -> i128 {
        let node = st.cqs[cq].node;
        let mut used = st.tree.usage(node, fr);
        if self.victims_out {
            for &v in preempted {
                if st.wls[v].cq == Some(cq) {
                    used += st
                        .usage_of(v)
                        .iter()
                        .filter(|&&(f, _)| f == fr)
                        .map(|&(_, q)| q)
                        .sum::<i128>();
                }
            }
        }
        used
    }
}

/// `processEntry`: re-check, then NoFit / reserve / skip / preempt / admit.
fn process(
    st: &mut EngineState<'_>,
    e: &mut Entry,
    proc: &mut Processing,
    result: &mut CycleResult,
) {
    if e.assignment.is_none() {
        return;
    }
    let root = st.tree.root(st.cqs[e.cq].node);
    let mut preempted = std::mem::take(proc.preempted_by_root.entry(root).or_default());
    process_entry(st, e, proc, &mut preempted, result);
    proc.preempted_by_root.insert(root, preempted);
}

/// [`process`] for an entry with an assignment; `preempted` are the cycle's victims in
/// the entry's tree so far.
fn process_entry(
    st: &mut EngineState<'_>,
    e: &mut Entry,
    proc: &mut Processing,
    preempted: &mut Vec<WlIdx>,
    result: &mut CycleResult,
) {
    let Some(a) = e.assignment.as_ref() else {
        return;
    };
    match e.outcome {
        EntryOutcome::NoFit => {}
        EntryOutcome::NoCandidates => {
            // Reserve capacity so lower entries cannot take it, unless the CQ
            // can always reclaim later (reclaimWithinCohort: Any).
            let spec = st.cqs[e.cq].spec;
            if spec.preemption.reclaim_within_cohort != ReclaimWithinCohort::Any {
                let node = st.cqs[e.cq].node;
                let borrowing = a.borrowing > 0;
                let mut reserve = Vec::new();
                for &(fr, req) in &a.usage {
                    let n = &st.tree.nodes[node];
                    let used = proc.usage_with_victims(st, e.cq, fr, preempted);
                    let amount = if borrowing {
                        match n.borrowing_limit[fr] {
                            Some(bl) => req.min(n.nominal[fr] + bl - used),
                            None => req,
                        }
                    } else {
                        req.min(n.nominal[fr] - used).max(0)
                    };
                    if amount > 0 {
                        reserve.push((fr, amount));
                    }
                }
                st.tree.add_all(node, &reserve);
                st.reserved.push((node, reserve));
            }
        }
        EntryOutcome::Preempting => {
            let overlap = e.targets.iter().any(|t| proc.preempted_set.contains(&t.wl));
            if overlap {
                if proc.fits_after(st, e.cq, &a.usage, preempted, &[]) {
                    e.outcome = EntryOutcome::DeferredFit;
                    let node = st.cqs[e.cq].node;
                    st.tree.add_all(node, &a.usage);
                    st.reserved.push((node, a.usage.clone()));
                } else {
                    e.outcome = EntryOutcome::SkippedOverlap;
                }
                return;
            }
            let targets: Vec<WlIdx> = e.targets.iter().map(|t| t.wl).collect();
            if proc.victims_out {
                // the targets leave the snapshot for the check and, when it passes, stay
                // out as victims (rather than out, back in, and out again)
                let frs: Vec<usize> = a.usage.iter().map(|&(fr, _)| fr).collect();
                for &w in &targets {
                    st.remove_usage_in(w, &frs);
                }
                if !fits_now(st, e.cq, &a.usage) {
                    for &w in &targets {
                        st.add_usage_in(w, &frs);
                    }
                    e.outcome = EntryOutcome::SkippedNoLongerFits;
                    return;
                }
                for &w in &targets {
                    st.remove_usage_outside(w, &frs);
                }
            } else if !proc.fits_after(st, e.cq, &a.usage, preempted, &targets) {
                e.outcome = EntryOutcome::SkippedNoLongerFits;
                return;
            }
            for t in &e.targets {
                preempted.push(t.wl);
                proc.preempted_set.insert(t.wl);
                result.victims.push((*t, e.wl));
            }
            let node = st.cqs[e.cq].node;
            st.tree.add_all(node, &a.usage);
            st.reserved.push((node, a.usage.clone()));
            if st.cqs[e.cq].spec.queueing_strategy == QueueingStrategy::BestEffortFifo {
                st.cqs[e.cq].sticky = Some(e.wl);
            }
        }
        EntryOutcome::Admitted => {
            if !proc.fits_after(st, e.cq, &a.usage, preempted, &[]) {
                e.outcome = EntryOutcome::SkippedNoLongerFits;
                return;
            }
            st.admit(e.wl, e.cq, &a.usage);
        }
        _ => {}
    }
}
