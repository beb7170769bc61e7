//! The pending list of a plan cycle: every queued workload in Kueue's order with its
//! reason, then the workloads Kueue keeps in no queue.
//!
//! With `pending_in_every_cycle` this runs after every cycle for every pending
//! workload, so it is the plan's hot loop: intermediate cycles only need the one-line
//! reason, which is either the workload's last evaluation or one of three lines shared
//! by its whole ClusterQueue (formatted once per ClusterQueue, not once per workload).
//! Full explanations are built for the last cycle only.

use std::collections::BTreeMap;
use std::iter::Peekable;
use std::sync::Arc;

use crate::model::QueueingStrategy;

use super::explain::{self, Explanation};
use super::output::{PendingList, PlanPending, SharedStr};
use super::state::{CqIdx, EngineState, NotQueued, QKey, WlIdx, WlState};

/// A workload's latest explanation with its one-line reason as shared text.
pub struct Last {
    pub ex: Explanation,
    pub reason: SharedStr,
}

impl Last {
    pub fn new(ex: Explanation) -> Box<Last> {
        let reason = ex.reason.clone();
        Box::new(Last { ex, reason })
    }
}

/// The latest explanation of each workload (evaluated heads, requeued victims), by index.
pub type LastExplanations = Vec<Option<Box<Last>>>;

/// Merges two sorted key sets into one sorted sequence.
struct Merge<A: Iterator<Item = QKey>, B: Iterator<Item = QKey>> {
    a: Peekable<A>,
    b: Peekable<B>,
}

impl<A: Iterator<Item = QKey>, B: Iterator<Item = QKey>> Iterator for Merge<A, B> {
    type Item = QKey;
    fn next(&mut self) -> Option<QKey> {
        match (self.a.peek(), self.b.peek()) {
            (Some(x), Some(y)) if y < x => self.b.next(),
            (Some(_), _) => self.a.next(),
            _ => self.b.next(),
        }
    }
}

/// Every queued workload of `cq` in Kueue's order (sticky preemptor first, then the
/// heap and the inadmissible set merged by the heap comparator).
pub fn queue_order(st: &EngineState<'_>, cq: CqIdx) -> Vec<WlIdx> {
    let c = &st.cqs[cq];
    let sticky = c.sticky.filter(|&w| c.heap.contains(&st.wls[w].qkey(w)));
    let mut out: Vec<WlIdx> = Vec::with_capacity(c.heap.len() + c.inadmissible.len());
    out.extend(sticky);
    let merged = Merge {
        a: c.heap.iter().copied().peekable(),
        b: c.inadmissible.iter().copied().peekable(),
    };
    out.extend(merged.map(|k| k.idx).filter(|&w| Some(w) != sticky));
    out
}

/// The head that blocks a StrictFIFO ClusterQueue, if any.
pub fn strict_head(st: &EngineState<'_>, cq: CqIdx) -> Option<WlIdx> {
    (st.cqs[cq].spec.queueing_strategy == QueueingStrategy::StrictFifo)
        .then(|| st.cqs[cq].heap.first().map(|k| k.idx))
        .flatten()
}

/// Which explanation a queued workload gets (see [`pending_list`]).
enum Source<'e> {
    /// `explain::for_queued`: inactive ClusterQueue, blocked by StrictFIFO, or queued.
    Queued,
    /// Its last evaluation or requeue.
    Last(&'e Last),
}

fn source<'e>(
    st: &EngineState<'_>,
    last: &'e LastExplanations,
    w: WlIdx,
    cq: CqIdx,
    strict_head: Option<WlIdx>,
) -> Source<'e> {
    if st.cqs[cq].inactive.is_some() || strict_head.is_some_and(|h| h != w) {
        return Source::Queued;
    }
    match &last[w] {
        Some(e) => Source::Last(e),
        None => Source::Queued,
    }
}

/// `explain::for_queued` depends on the workload only through whether it is the
/// StrictFIFO head and through its LocalQueue label, so a ClusterQueue needs at most
/// two of them: [for the head, for the others], built on first use.
pub type Templates = [Option<Explanation>; 2];

pub fn template<'t>(
    templates: &'t mut Templates,
    st: &EngineState<'_>,
    w: WlIdx,
    cq: CqIdx,
    strict_head: Option<WlIdx>,
) -> &'t Explanation {
    templates[usize::from(Some(w) != strict_head)]
        .get_or_insert_with(|| explain::for_queued(st, w, cq, strict_head))
}

/// What a plan's pending lists share across cycles: workload keys and ClusterQueue
/// names (formatted once per plan), the reasons of workloads Kueue keeps in no queue
/// (which depend only on the workload and its LocalQueue), each ClusterQueue's shared
/// "queued" / "blocked behind" lines (reformatted only when its StrictFIFO head
/// changes), and each ClusterQueue's previous rows: when its queue order and every
/// reason are the same as in the previous cycle, the new cycle shares that segment
/// instead of building one (comparing a row is an index and a pointer comparison).
#[derive(Default)]
pub struct PendingRows {
    keys: Vec<Option<SharedStr>>,
    cq_names: Vec<SharedStr>,
    /// By workload: the cached not-queued reason, valid for (why, ClusterQueue).
    not_queued: Vec<Option<NotQueuedText>>,
    /// By ClusterQueue: [for the head, for the others], valid for the StrictFIFO head.
    queued: Vec<QueuedText>,
    /// By ClusterQueue: the previous cycle's queue order and rows.
    prev: Vec<Option<Segment>>,
    prev_not_queued: Option<Arc<[PlanPending]>>,
}

/// A ClusterQueue's queue order and the rows built for it.
type Segment = (Vec<WlIdx>, Arc<[PlanPending]>);

type QueuedText = [Option<(Option<WlIdx>, SharedStr)>; 2];

struct NotQueuedText {
    why: NotQueued,
    cq: Option<CqIdx>,
    cluster_queue: Option<SharedStr>,
    reason: SharedStr,
}

fn key(keys: &mut [Option<SharedStr>], st: &EngineState<'_>, w: WlIdx) -> SharedStr {
    keys[w]
        .get_or_insert_with(|| SharedStr::from(st.wls[w].key()))
        .clone()
}

/// `explain::for_queued(..).reason`, shared by the ClusterQueue's rows: it depends on
/// the workload only through whether it is the StrictFIFO head.
fn queued_reason<'q>(
    slots: &'q mut QueuedText,
    st: &EngineState<'_>,
    w: WlIdx,
    cq: CqIdx,
    strict_head: Option<WlIdx>,
) -> &'q SharedStr {
    let slot = &mut slots[usize::from(Some(w) != strict_head)];
    if !matches!(slot, Some((h, _)) if *h == strict_head) {
        let reason = explain::for_queued(st, w, cq, strict_head).reason;
        *slot = Some((strict_head, reason));
    }
    &slot.as_ref().expect("filled above").1
}

impl PendingRows {
    pub fn new(st: &EngineState<'_>) -> Self {
        PendingRows {
            keys: vec![None; st.wls.len()],
            cq_names: st.cqs.iter().map(|c| SharedStr::from(c.name())).collect(),
            not_queued: std::iter::repeat_with(|| None).take(st.wls.len()).collect(),
            queued: vec![[None, None]; st.cqs.len()],
            prev: vec![None; st.cqs.len()],
            prev_not_queued: None,
        }
    }

    /// The pending list after a cycle, with positions and reasons; with explanations
    /// on the last cycle.
    pub fn list(
        &mut self,
        st: &EngineState<'_>,
        last: &LastExplanations,
        with_explanations: bool,
    ) -> PendingList {
        let mut segments: Vec<Arc<[PlanPending]>> = Vec::with_capacity(st.cqs.len() + 1);
        for cq in 0..st.cqs.len() {
            let order = queue_order(st, cq);
            if order.is_empty() {
                continue;
            }
            let strict_head = strict_head(st, cq);
            if with_explanations {
                segments.push(self.explained(st, last, cq, &order, strict_head).into());
                continue;
            }
            let queued = &mut self.queued[cq];
            let reason_of = |queued: &mut QueuedText, w: WlIdx| -> SharedStr {
                match source(st, last, w, cq, strict_head) {
                    Source::Last(l) => l.reason.clone(),
                    Source::Queued => queued_reason(queued, st, w, cq, strict_head).clone(),
                }
            };
            let reusable = match &self.prev[cq] {
                Some((o, rows)) if *o == order => order.iter().zip(rows.iter()).all(|(&w, row)| {
                    match source(st, last, w, cq, strict_head) {
                        Source::Last(l) => l.reason == row.reason,
                        Source::Queued => {
                            *queued_reason(queued, st, w, cq, strict_head) == row.reason
                        }
                    }
                }),
                _ => false,
            };
            if reusable {
                let (_, rows) = self.prev[cq].as_ref().expect("matched above");
                segments.push(rows.clone());
                continue;
            }
            let cq_name = &self.cq_names[cq];
            let rows: Arc<[PlanPending]> = order
                .iter()
                .enumerate()
                .map(|(i, &w)| PlanPending {
                    workload: key(&mut self.keys, st, w),
                    cluster_queue: Some(cq_name.clone()),
                    position: Some(i + 1),
                    reason: reason_of(queued, w),
                    explanation: None,
                })
                .collect();
            self.prev[cq] = Some((order, rows.clone()));
            segments.push(rows);
        }
        let not_queued = self.not_queued_rows(st, with_explanations);
        match &self.prev_not_queued {
            Some(p) if !with_explanations && **p == *not_queued => segments.push(p.clone()),
            _ => {
                let rows: Arc<[PlanPending]> = not_queued.into();
                if !with_explanations {
                    self.prev_not_queued = Some(rows.clone());
                }
                segments.push(rows);
            }
        }
        PendingList::from_segments(segments)
    }

    /// A ClusterQueue's rows with full explanations (the last cycle).
    fn explained(
        &mut self,
        st: &EngineState<'_>,
        last: &LastExplanations,
        cq: CqIdx,
        order: &[WlIdx],
        strict_head: Option<WlIdx>,
    ) -> Vec<PlanPending> {
        let cq_name = self.cq_names[cq].clone();
        let mut templates: Templates = [None, None];
        // per LocalQueue, i.e. per (namespace, name) as Kueue's visibility API counts
        // (`utilqueue.KeyFromWorkload`, `pkg/visibility/storage/pending_workloads_cq.go`):
        // its rows so far and its label, shared by those rows
        type LqRows = (usize, Option<SharedStr>);
        let mut lq_pos: BTreeMap<(&str, Option<&String>), LqRows> = BTreeMap::new();
        let mut out = Vec::with_capacity(order.len());
        for (i, &w) in order.iter().enumerate() {
            let (reason, mut ex) = match source(st, last, w, cq, strict_head) {
                Source::Last(l) => (l.reason.clone(), l.ex.clone()),
                Source::Queued => {
                    let ex = template(&mut templates, st, w, cq, strict_head).clone();
                    (ex.reason.clone(), ex)
                }
            };
            let wl = st.wls[w].wl;
            let (p, label) = lq_pos
                .entry((wl.namespace.as_str(), wl.queue_name.as_ref()))
                .or_insert_with(|| (0, explain::local_queue_label(wl)));
            *p += 1;
            ex.local_queue = label.clone();
            ex.position_in_cluster_queue = Some(i + 1);
            ex.position_in_local_queue = Some(*p);
            out.push(PlanPending {
                workload: key(&mut self.keys, st, w),
                cluster_queue: Some(cq_name.clone()),
                position: Some(i + 1),
                reason,
                explanation: Some(Box::new(ex)),
            });
        }
        out
    }

    /// The workloads Kueue keeps in no queue, by key.
    fn not_queued_rows(
        &mut self,
        st: &EngineState<'_>,
        with_explanations: bool,
    ) -> Vec<PlanPending> {
        let mut not_queued = Vec::new();
        for (w, info) in st.wls.iter().enumerate() {
            let WlState::NotQueued(why) = info.state else {
                continue;
            };
            let workload = key(&mut self.keys, st, w);
            if with_explanations {
                let ex = explain::for_not_queued(st, w, why);
                not_queued.push(PlanPending {
                    workload,
                    cluster_queue: ex.cluster_queue.clone(),
                    position: None,
                    reason: ex.reason.clone(),
                    explanation: Some(Box::new(ex)),
                });
                continue;
            }
            let cached = self.not_queued[w]
                .as_ref()
                .is_some_and(|t| t.why == why && t.cq == info.cq);
            if !cached {
                let ex = explain::for_not_queued(st, w, why);
                self.not_queued[w] = Some(NotQueuedText {
                    why,
                    cq: info.cq,
                    cluster_queue: ex.cluster_queue,
                    reason: ex.reason,
                });
            }
            let t = self.not_queued[w].as_ref().expect("cached above");
            not_queued.push(PlanPending {
                workload,
                cluster_queue: t.cluster_queue.clone(),
                position: None,
                reason: t.reason.clone(),
                explanation: None,
            });
        }
        not_queued.sort_by(|a, b| a.workload.cmp(&b.workload));
        not_queued
    }
}
