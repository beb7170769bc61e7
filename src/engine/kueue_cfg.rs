//! Warnings for the parts of Kueue's configuration the engine reads but does not
//! model, so a plan never silently ignores them (issue #11).
//!
//! * `waitForPodsReady.blockAdmission` (`pkg/scheduler/scheduler.go`
//!   `waitForPodsReadyIfNeeded`): Kueue stops admitting until every admitted workload
//!   is `PodsReady=True`; a plan cannot tell when that happens.
//! * `admissionFairSharing` (`pkg/util/admissionfairsharing`): LocalQueue usage
//!   ordering is not modelled.
//! * `manageJobsWithoutQueueName`: jobs without a queue name are managed by Kueue;
//!   gangplank keeps them out of every queue.

use crate::model::{ClusterState, ConditionStatus};

/// One line per configured behaviour that the plan does not model and that matters
/// for this state.
pub fn config_warnings(cluster: &ClusterState) -> Vec<String> {
    let Some(cfg) = cluster.kueue_config.as_ref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if cfg.block_admission() {
        let mut not_ready: Vec<String> = cluster
            .workloads
            .values()
            .filter(|w| w.has_quota_reservation() && !w.is_finished())
            .filter(|w| {
                !w.condition("PodsReady")
                    .is_some_and(|c| c.status == ConditionStatus::True)
            })
            .map(|w| format!("{}/{}", w.namespace, w.name))
            .collect();
        if !not_ready.is_empty() {
            not_ready.sort();
            let n = not_ready.len();
            let shown: Vec<&str> = not_ready.iter().take(3).map(String::as_str).collect();
            out.push(format!(
                "waitForPodsReady.blockAdmission is on and {n} admitted workload{} {} not PodsReady ({}{}): \
                 Kueue admits nothing until they are; the plan's admissions happen after that",
                if n == 1 { "" } else { "s" },
                if n == 1 { "is" } else { "are" },
                shown.join(", "),
                if n > 3 { ", …" } else { "" }
            ));
        }
    }
    if cfg.admission_fair_sharing_enabled() {
        out.push(
            "admissionFairSharing is on: Kueue orders the LocalQueues of a ClusterQueue with \
             admissionScope UsageBasedAdmissionFairSharing by their recent usage; gangplank orders \
             by priority and time only"
                .to_string(),
        );
    }
    if cfg.manage_jobs_without_queue_name {
        out.push(
            "manageJobsWithoutQueueName is on: Kueue also manages jobs without a queue-name label; \
             gangplank lists them as not queued"
                .to_string(),
        );
    }
    out
}
