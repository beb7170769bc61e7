//! What happened, for `gangplank simulate`: the event timeline and per-ClusterQueue
//! and per-priority-class figures (GPU utilisation, waits, preemptions, lost work).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::{ResourceList, well_known};
use crate::sim::clock::format_offset;

use super::{Run, SimCluster};

/// One line of the timeline.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct TimelineEvent {
    /// Simulated offset from the start, `+HH:MM:SS`.
    pub at: String,
    /// The same offset in seconds.
    pub seconds: i64,
    /// `created`, `admitted`, `preempted`, `evicted`, `requeued` or `finished`.
    pub event: String,
    /// `namespace/name` of the Workload.
    pub workload: String,
    /// The ClusterQueue involved, when known.
    pub cluster_queue: Option<String>,
    /// For `preempted`: the preemptor.
    pub by: Option<String>,
    /// Kueue's reason (`InClusterQueue`, `Preempted`, `Deactivated`, …).
    pub reason: Option<String>,
}

/// Figures for one ClusterQueue or priority class.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct GroupSummary {
    /// ClusterQueue or priority class name (`(none)` for no class).
    pub name: String,
    /// Workloads submitted.
    pub workloads: u64,
    /// Workloads admitted at least once.
    pub admitted: u64,
    /// Workloads finished.
    pub finished: u64,
    /// GPU-hours run (including runs later discarded by preemption).
    pub gpu_hours_used: f64,
    /// GPU-hours of nominal quota over the simulated span (all ClusterQueues for a
    /// priority class).
    pub gpu_hours_nominal: f64,
    /// `gpuHoursUsed / gpuHoursNominal` (null without GPU quota).
    pub gpu_utilisation: Option<f64>,
    /// Median wait from submission to first admission, seconds (admitted ones).
    pub wait_p50_seconds: Option<f64>,
    /// 95th percentile of that wait, seconds.
    pub wait_p95_seconds: Option<f64>,
    /// Times its workloads were preempted.
    pub preemptions: u64,
    /// Run time discarded by preemption × GPUs, in hours.
    pub gpu_hours_lost_to_preemption: f64,
}

/// The summary of a run.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SimSummary {
    /// Simulated span, `+HH:MM:SS`.
    pub until: String,
    /// Simulated span in seconds.
    pub seconds: i64,
    /// One entry per ClusterQueue, by name.
    pub cluster_queues: Vec<GroupSummary>,
    /// One entry per priority class, by name.
    pub priority_classes: Vec<GroupSummary>,
}

#[derive(Clone, Debug, Default)]
struct WlStat {
    submitted_ms: i64,
    first_admitted_ms: Option<i64>,
    cq: Option<String>,
    class: String,
    gpu_ms_used: i128,
    gpu_ms_lost: i128,
    preemptions: u64,
    finished: bool,
}

/// Accumulators kept by the controllers.
#[derive(Debug, Default)]
pub(crate) struct Stats {
    record: bool,
    timeline: Vec<TimelineEvent>,
    wls: BTreeMap<(String, String), WlStat>,
}

const MS_PER_HOUR: f64 = 3_600_000.0;

fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    // Nearest rank.
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    Some(sorted[rank.min(sorted.len()) - 1])
}

impl Stats {
    pub fn new(record: bool) -> Self {
        Stats {
            record,
            ..Default::default()
        }
    }

    pub fn timeline(&self) -> &[TimelineEvent] {
        &self.timeline
    }

    pub fn event(
        &mut self,
        elapsed_ms: i64,
        event: &str,
        workload: &str,
        cq: Option<&str>,
        by: Option<&str>,
        reason: Option<&str>,
    ) {
        if !self.record {
            return;
        }
        self.timeline.push(TimelineEvent {
            at: format_offset(elapsed_ms),
            seconds: elapsed_ms / 1000,
            event: event.to_string(),
            workload: workload.to_string(),
            cluster_queue: cq.map(str::to_string),
            by: by.map(str::to_string),
            reason: reason.map(str::to_string),
        });
    }

    fn entry(&mut self, ns: &str, name: &str, now: i64) -> &mut WlStat {
        self.wls
            .entry((ns.to_string(), name.to_string()))
            .or_insert_with(|| WlStat {
                submitted_ms: now,
                class: "(none)".into(),
                ..Default::default()
            })
    }

    pub fn on_created(
        &mut self,
        ns: &str,
        name: &str,
        now: i64,
        cq: Option<String>,
        class: String,
        elapsed: i64,
    ) {
        let e = self.entry(ns, name, now);
        e.submitted_ms = now;
        e.cq = cq.clone();
        e.class = class;
        self.event(
            elapsed,
            "created",
            &format!("{ns}/{name}"),
            cq.as_deref(),
            None,
            None,
        );
    }

    pub fn on_admitted(&mut self, ns: &str, name: &str, now: i64, cq: &str) {
        let e = self.entry(ns, name, now);
        e.first_admitted_ms.get_or_insert(now);
        e.cq = Some(cq.to_string());
    }

    pub fn on_preempted(&mut self, ns: &str, name: &str) {
        if let Some(e) = self.wls.get_mut(&(ns.to_string(), name.to_string())) {
            e.preemptions += 1;
        }
    }

    pub fn on_finished(&mut self, ns: &str, name: &str) {
        if let Some(e) = self.wls.get_mut(&(ns.to_string(), name.to_string())) {
            e.finished = true;
        }
    }

    pub fn on_run_end(&mut self, run: &Run, now: i64, lost: bool) {
        if let Some(e) = self.wls.get_mut(&run.workload) {
            let gpu_ms = run.gpus * i128::from((now - run.started_ms).max(0));
            e.gpu_ms_used += gpu_ms;
            if lost {
                e.gpu_ms_lost += gpu_ms;
            }
        }
    }

    pub fn summary(&self, c: &SimCluster) -> SimSummary {
        let now = c.clock.now_ms();
        let span_ms = c.clock.elapsed_ms().max(0);
        // Runs still going count up to now.
        let mut running: BTreeMap<&(String, String), i128> = BTreeMap::new();
        for r in c.runs.values() {
            *running.entry(&r.workload).or_default() +=
                r.gpus * i128::from((now - r.started_ms).max(0));
        }
        let mut nominal: BTreeMap<String, f64> = BTreeMap::new();
        for (name, cq) in &c.mirror.state.cluster_queues {
            let mut quota = ResourceList::new();
            for r in cq
                .resource_groups
                .iter()
                .flat_map(|rg| &rg.flavors)
                .flat_map(|f| &f.resources)
            {
                *quota.entry(r.name.clone()).or_default() += r.nominal;
            }
            let gpus = well_known::accelerator_units(&quota);
            nominal.insert(name.clone(), gpus as f64 * span_ms as f64 / MS_PER_HOUR);
        }
        let total_nominal: f64 = nominal.values().sum();
        #[derive(Default)]
        struct Acc {
            workloads: u64,
            admitted: u64,
            finished: u64,
            used: i128,
            lost: i128,
            preemptions: u64,
            waits: Vec<f64>,
        }
        let mut by_cq: BTreeMap<String, Acc> = nominal
            .keys()
            .map(|k| (k.clone(), Acc::default()))
            .collect();
        let mut by_class: BTreeMap<String, Acc> = BTreeMap::new();
        for (key, s) in &self.wls {
            let used = s.gpu_ms_used + running.get(key).copied().unwrap_or(0);
            let add = |a: &mut Acc| {
                a.workloads += 1;
                a.finished += u64::from(s.finished);
                a.used += used;
                a.lost += s.gpu_ms_lost;
                a.preemptions += s.preemptions;
                if let Some(t) = s.first_admitted_ms {
                    a.admitted += 1;
                    a.waits.push((t - s.submitted_ms) as f64 / 1000.0);
                }
            };
            add(by_cq
                .entry(s.cq.clone().unwrap_or_else(|| "(none)".into()))
                .or_default());
            add(by_class.entry(s.class.clone()).or_default());
        }
        let render = |name: String, mut a: Acc, nominal_h: f64| {
            a.waits.sort_by(f64::total_cmp);
            let used_h = a.used as f64 / MS_PER_HOUR;
            GroupSummary {
                name,
                workloads: a.workloads,
                admitted: a.admitted,
                finished: a.finished,
                gpu_hours_used: used_h,
                gpu_hours_nominal: nominal_h,
                gpu_utilisation: (nominal_h > 0.0).then(|| used_h / nominal_h),
                wait_p50_seconds: percentile(&a.waits, 50.0),
                wait_p95_seconds: percentile(&a.waits, 95.0),
                preemptions: a.preemptions,
                gpu_hours_lost_to_preemption: a.lost as f64 / MS_PER_HOUR,
            }
        };
        SimSummary {
            until: format_offset(span_ms),
            seconds: span_ms / 1000,
            cluster_queues: by_cq
                .into_iter()
                .map(|(n, a)| {
                    let nom = nominal.get(&n).copied().unwrap_or(0.0);
                    render(n, a, nom)
                })
                .collect(),
            priority_classes: by_class
                .into_iter()
                .map(|(n, a)| render(n, a, total_nominal))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::percentile;

    #[test]
    fn nearest_rank() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 50.0), Some(2.0));
        assert_eq!(percentile(&v, 95.0), Some(4.0));
        assert_eq!(percentile(&[], 50.0), None);
    }
}
