//! Pure: what a priority change would do, shown before the operator confirms it.
//!
//! The engine is run twice on the same snapshot — as it is, and with the workload's
//! priority changed — and the workload's standing in both plans is compared: its
//! position in its ClusterQueue, when the plan admits it, whom it preempts and who
//! preempts it. No I/O: the console's action task calls this off the async workers.

use crate::engine::pending::queue_order;
use crate::engine::state::{EngineState, WlState};
use crate::engine::{PlanOptions, plan};
use crate::model::{ClusterState, PriorityClassKind, PriorityClassRef, Timestamp, Workload};

use super::plan::PriorityTarget;

/// A workload's place in one plan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Standing {
    pub priority: i32,
    /// Holds a quota reservation in the snapshot.
    pub running: bool,
    /// 1-based position in its ClusterQueue's queue before the next cycle, and the
    /// queue's length; `None` when it is running or Kueue holds it in no queue.
    pub position: Option<(usize, usize)>,
    /// The plan cycle that admits it (1 = the next cycle).
    pub admitted_in_cycle: Option<usize>,
    /// Workloads the plan evicts for it, sorted.
    pub preempts: Vec<String>,
    /// Who the plan evicts it for, and in which cycle.
    pub preempted_by: Option<(String, usize)>,
}

/// The consequence of changing one workload's priority.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Consequence {
    /// `namespace/name` of the Workload.
    pub workload: String,
    pub cluster_queue: Option<String>,
    /// The current priority, described ("100 (WorkloadPriorityClass low)").
    pub from: String,
    /// The new priority, described.
    pub to: String,
    pub before: Standing,
    pub after: Standing,
}

/// The workload `key` names: a Workload, or the job that owns one.
fn find<'a>(state: &'a ClusterState, key: &str) -> Option<&'a Workload> {
    let (ns, name) = key.split_once('/')?;
    state
        .workloads
        .get(&(ns.to_string(), name.to_string()))
        .map(|w| &**w)
        .or_else(|| {
            state
                .workloads
                .values()
                .find(|w| {
                    w.namespace == ns
                        && w.owner
                            .as_ref()
                            .is_some_and(|o| o.controller && o.name == name)
                })
                .map(|w| &**w)
        })
}

fn describe(value: i32, class: Option<&PriorityClassRef>) -> String {
    match class {
        Some(c) => {
            let kind = match c.kind {
                PriorityClassKind::WorkloadPriorityClass => "WorkloadPriorityClass",
                PriorityClassKind::PriorityClass => "PriorityClass",
            };
            format!("{value} ({kind} {})", c.name)
        }
        None => value.to_string(),
    }
}

/// The value and class `to` stands for, checked as `set-priority` checks it: a
/// WorkloadPriorityClass wins over a PriorityClass of the same name, and a workload on
/// a WorkloadPriorityClass cannot move to a PriorityClass (Kueue re-derives its
/// priority from the job's label).
pub fn resolve_target(
    state: &ClusterState,
    wl: &Workload,
    to: &PriorityTarget,
) -> Result<(i32, Option<PriorityClassRef>), String> {
    let class = match to {
        PriorityTarget::Value(v) => return Ok((*v, None)),
        PriorityTarget::Class(c) => c,
    };
    if let Some(w) = state.workload_priority_classes.get(class) {
        return Ok((
            w.value,
            Some(PriorityClassRef {
                kind: PriorityClassKind::WorkloadPriorityClass,
                name: class.clone(),
            }),
        ));
    }
    let on_wpc = wl
        .priority_class
        .as_ref()
        .is_some_and(|c| c.kind == PriorityClassKind::WorkloadPriorityClass);
    match state.priority_classes.get(class) {
        Some(_) if on_wpc => Err(format!(
            "{} uses WorkloadPriorityClasses and there is no WorkloadPriorityClass {class:?}",
            wl.key()
        )),
        Some(p) => Ok((
            p.value,
            Some(PriorityClassRef {
                kind: PriorityClassKind::PriorityClass,
                name: class.clone(),
            }),
        )),
        None => Err(format!(
            "no WorkloadPriorityClass or PriorityClass {class:?}"
        )),
    }
}

fn standing(state: &ClusterState, key: &str, now: Timestamp) -> Standing {
    let opts = PlanOptions {
        now,
        // Only the last cycle's pending list is needed; positions come from the queue.
        pending_in_every_cycle: false,
        ..PlanOptions::default()
    };
    let mut out = Standing::default();
    {
        let st = EngineState::new(state, &opts);
        if let Some(w) = st.wl_index(key) {
            let info = &st.wls[w];
            out.priority = info.priority;
            out.running = info.state == WlState::Admitted;
            if let (WlState::Queued, Some(cq)) = (&info.state, info.cq) {
                let order = queue_order(&st, cq);
                out.position = order
                    .iter()
                    .position(|&i| i == w)
                    .map(|p| (p + 1, order.len()));
            }
        }
    }
    let p = plan(state, &opts);
    for (i, cycle) in p.cycles.iter().enumerate() {
        if out.admitted_in_cycle.is_none() && cycle.admitted.iter().any(|a| a.workload == key) {
            out.admitted_in_cycle = Some(i + 1);
        }
        for v in &cycle.preempted {
            if v.by == key {
                out.preempts.push(v.workload.clone());
            }
            if v.workload == key && out.preempted_by.is_none() {
                out.preempted_by = Some((v.by.clone(), i + 1));
            }
        }
    }
    out.preempts.sort();
    out.preempts.dedup();
    out
}

/// What setting `key`'s priority to `to` would change, by planning the snapshot as it
/// is and with the new priority. `now` is the snapshot's time.
pub fn consequence(
    state: &ClusterState,
    key: &str,
    to: &PriorityTarget,
    now: Timestamp,
) -> Result<Consequence, String> {
    let wl = find(state, key).ok_or_else(|| format!("no workload {key} in the snapshot"))?;
    let (value, class) = resolve_target(state, wl, to)?;
    let wl_key = wl.key();
    let from = describe(wl.priority, wl.priority_class.as_ref());
    let cluster_queue = wl
        .admission
        .as_ref()
        .map(|a| a.cluster_queue.clone())
        .or_else(|| {
            let lq = wl.queue_name.as_ref()?;
            let lq = state
                .local_queues
                .get(&(wl.namespace.clone(), lq.clone()))?;
            Some(lq.cluster_queue.clone())
        });
    let before = standing(state, &wl_key, now);
    let mut changed = state.clone();
    let target = changed
        .workloads
        .get_mut(&(wl.namespace.clone(), wl.name.clone()))
        .expect("found above");
    let target = std::sync::Arc::make_mut(target);
    target.priority = value;
    if class.is_some() {
        target.priority_class = class.clone();
    }
    let after = standing(&changed, &wl_key, now);
    Ok(Consequence {
        workload: wl_key,
        cluster_queue,
        from,
        to: describe(value, class.as_ref()),
        before,
        after,
    })
}

fn position_text(s: &Standing) -> String {
    match s.position {
        Some((p, n)) => format!("{p} of {n}"),
        None if s.running => "running".into(),
        None => "not queued".into(),
    }
}

fn admission_text(s: &Standing) -> String {
    match s.admitted_in_cycle {
        _ if s.running => "running".into(),
        Some(1) => "next cycle".into(),
        Some(n) => format!("in cycle {n}"),
        None => "not within the plan".into(),
    }
}

fn list_text(v: &[String]) -> String {
    if v.is_empty() {
        "nobody".into()
    } else {
        v.join(", ")
    }
}

fn by_text(s: &Standing) -> String {
    match &s.preempted_by {
        Some((by, 1)) => format!("{by} (next cycle)"),
        Some((by, n)) => format!("{by} (cycle {n})"),
        None => "nobody".into(),
    }
}

/// "label: now → after", or "label: x (unchanged)".
fn compare(label: &str, before: String, after: String) -> String {
    if before == after {
        format!("{label}: {after} (unchanged)")
    } else {
        format!("{label}: {before} → {after}")
    }
}

impl Consequence {
    /// The comparison, one line each, as the operator reads it before confirming: the
    /// priority, then the workload's standing now → with the new priority.
    pub fn lines(&self) -> Vec<String> {
        let (b, a) = (&self.before, &self.after);
        let queue = match &self.cluster_queue {
            Some(cq) => format!("position in ClusterQueue {cq}"),
            None => "position".into(),
        };
        vec![
            format!("priority of {}: {} → {}", self.workload, self.from, self.to),
            compare(&queue, position_text(b), position_text(a)),
            compare("admitted", admission_text(b), admission_text(a)),
            compare(
                "would preempt",
                list_text(&b.preempts),
                list_text(&a.preempts),
            ),
            compare("preempted by", by_text(b), by_text(a)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::testing::*;
    use crate::model::{ReclaimWithinCohort, WithinClusterQueue, WorkloadPriorityClass};

    const GPU: &str = "nvidia.com/gpu";

    /// One ClusterQueue of 8 GPUs (withinClusterQueue `within`), `running` holding all
    /// of it, and the given pending workloads (name, priority, creation).
    fn cluster(within: WithinClusterQueue, pending: &[(&str, i32, i64)]) -> ClusterState {
        let mut b = ClusterBuilder::new()
            .flavor("a100")
            .cq(CqBuilder::new("cq")
                .quota("a100", GPU, "8")
                .preemption(within, ReclaimWithinCohort::Never))
            .lq("team", "q", "cq")
            .wl(WlBuilder::new("team", "running")
                .queue("q")
                .priority(100)
                .pod_set("main", 1, &[(GPU, "8")])
                .admitted("cq", "a100", 0));
        for (name, prio, created) in pending {
            b = b.wl(WlBuilder::new("team", name)
                .queue("q")
                .priority(*prio)
                .created(*created)
                .pod_set("main", 1, &[(GPU, "8")]));
        }
        let mut s = b.build();
        for (name, value) in [("low", 100), ("high", 10_000)] {
            s.workload_priority_classes.insert(
                name.into(),
                WorkloadPriorityClass {
                    name: name.into(),
                    value,
                    description: None,
                    origin: Default::default(),
                },
            );
        }
        s
    }

    #[test]
    fn raised_above_a_running_lower_priority_job_preempts_it() {
        let s = cluster(WithinClusterQueue::LowerPriority, &[("waiting", 100, 10)]);
        let c = consequence(
            &s,
            "team/waiting",
            &PriorityTarget::Class("high".into()),
            20,
        )
        .unwrap();
        assert_eq!(c.before.preempts, Vec::<String>::new());
        assert_eq!(c.before.admitted_in_cycle, None);
        assert_eq!(c.after.preempts, ["team/running"]);
        assert!(c.after.admitted_in_cycle.is_some());
        assert_eq!(c.to, "10000 (WorkloadPriorityClass high)");
        let lines = c.lines().join("\n");
        assert!(
            lines.contains("would preempt: nobody → team/running"),
            "{lines}"
        );
        assert!(
            lines.contains("admitted: not within the plan → "),
            "{lines}"
        );
        // The other way round: the running job lowered below the waiting one is its
        // victim.
        let r = consequence(&s, "team/running", &PriorityTarget::Value(50), 20).unwrap();
        assert!(r.before.running);
        assert_eq!(r.before.preempted_by, None);
        assert_eq!(r.after.preempted_by, Some(("team/waiting".into(), 1)));
        assert!(
            r.lines()
                .contains(&"preempted by: nobody → team/waiting (next cycle)".to_string()),
            "{:?}",
            r.lines()
        );
    }

    #[test]
    fn lowered_below_its_peer_moves_back_in_the_queue() {
        let s = cluster(
            WithinClusterQueue::Never,
            &[("first", 500, 10), ("second", 500, 20)],
        );
        let c = consequence(&s, "team/first", &PriorityTarget::Value(100), 30).unwrap();
        assert_eq!(c.before.position, Some((1, 2)));
        assert_eq!(c.after.position, Some((2, 2)));
        assert_eq!(
            c.lines()[..4],
            [
                "priority of team/first: 500 → 100",
                "position in ClusterQueue cq: 1 of 2 → 2 of 2",
                "admitted: not within the plan (unchanged)",
                "would preempt: nobody (unchanged)",
            ]
        );
    }

    #[test]
    fn unknown_classes_and_workloads_are_errors() {
        let s = cluster(WithinClusterQueue::Never, &[("first", 500, 10)]);
        let e = consequence(&s, "team/first", &PriorityTarget::Class("nope".into()), 0);
        assert_eq!(
            e.unwrap_err(),
            "no WorkloadPriorityClass or PriorityClass \"nope\""
        );
        assert!(consequence(&s, "team/ghost", &PriorityTarget::Value(1), 0).is_err());
    }
}
