//! Kueue's own configuration (issue #11), when the input has it (the ConfigMap
//! `kueue-system/kueue-manager-config`):
//!
//! * `kueue-configuration` (info): the effective configuration, one setting per line,
//!   so the Health view shows which Kueue features the cluster runs with.
//! * `fair-sharing-weight-unused` (warning): ClusterQueues or Cohorts set
//!   `spec.fairSharing.weight` while the configuration does not enable fair sharing;
//!   Kueue ignores the weights and preempts classically.
//!
//! Without a configuration in the input nothing is reported: the defaults are assumed
//! (see `gangplank config --cluster`).

use super::context::{Context, cluster_ref, ns_ref};
use super::{Finding, Severity, ids};
use crate::model::kueue_config::{CONFIG_MAP_NAME, CONFIG_MAP_NAMESPACE};

pub fn check(ctx: &Context, out: &mut Vec<Finding>) {
    let Some(cfg) = ctx.state.kueue_config.as_ref() else {
        return;
    };
    let cm = ns_ref("ConfigMap", CONFIG_MAP_NAMESPACE, CONFIG_MAP_NAME);
    out.push(Finding::new(
        Severity::Info,
        ids::KUEUE_CONFIGURATION,
        vec![cm.clone()],
        format!(
            "Kueue's effective configuration: {}",
            cfg.summary_lines().join("; ")
        ),
        "Nothing to fix: this is what the shadow plan assumes. Change it in the ConfigMap's \
         controller_manager_config.yaml and restart kueue-controller-manager.",
    ));
    if cfg.fair_sharing_enabled() {
        return;
    }
    let mut weighted: Vec<String> = ctx
        .state
        .cluster_queues
        .values()
        .filter(|c| c.fair_sharing_weight.is_some())
        .map(|c| cluster_ref("ClusterQueue", &c.name))
        .collect();
    weighted.extend(
        ctx.state
            .cohorts
            .values()
            .filter(|c| c.fair_sharing_weight.is_some())
            .map(|c| cluster_ref("Cohort", &c.name)),
    );
    if weighted.is_empty() {
        return;
    }
    let n = weighted.len();
    let mut objects = weighted.clone();
    objects.push(cm);
    out.push(Finding::new(
        Severity::Warning,
        ids::FAIR_SHARING_WEIGHT_UNUSED,
        objects,
        format!(
            "{} set{} spec.fairSharing.weight, but Kueue's configuration does not enable fair sharing: \
             the weight{} {} ignored and preemption is classical ({})",
            weighted.join(", "),
            if n == 1 { "s" } else { "" },
            if n == 1 { "" } else { "s" },
            if n == 1 { "is" } else { "are" },
            "no DRS ordering, no fair preemption"
        ),
        "Enable it in controller_manager_config.yaml (v1beta2):\n\
         fairSharing:\n  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]\n\
         (v1beta1: fairSharing: {enable: true}), or remove the weights.",
    ));
}
