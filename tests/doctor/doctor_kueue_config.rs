//! Doctor findings about Kueue's own configuration (issue #11): the effective
//! configuration as an info finding, and fair-sharing weights that Kueue ignores.

use std::path::PathBuf;

use gangplank::doctor::{self, DoctorOptions, Severity, ids};
use gangplank::model::kueue_config::{FairSharingConfig, KueueConfig, PreemptionStrategy};
use gangplank::model::*;

fn fixture(p: &str) -> ClusterState {
    load_paths(&[PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(p)]).expect("fixture")
}

fn findings(s: &ClusterState, id: &str) -> Vec<doctor::Finding> {
    doctor::run(s, &DoctorOptions::at(0))
        .findings
        .into_iter()
        .filter(|f| f.check == id)
        .collect()
}

#[test]
fn the_effective_configuration_is_an_info_finding() {
    let s = fixture("tests/fixtures/fair-sharing");
    let f = findings(&s, ids::KUEUE_CONFIGURATION);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Info);
    assert_eq!(
        f[0].objects,
        ["ConfigMap/kueue-system/kueue-manager-config"]
    );
    assert!(
        f[0].message
            .contains("fairSharing: on, preemptionStrategies [LessThanOrEqualToFinalShare, LessThanInitialShare]"),
        "{}",
        f[0].message
    );
    // no ConfigMap in the input: nothing to say (the defaults are assumed)
    let s = fixture("tests/fixtures/fair-sharing/cluster.yaml");
    assert!(findings(&s, ids::KUEUE_CONFIGURATION).is_empty());
}

#[test]
fn weights_without_fair_sharing_are_a_warning() {
    let mut s = fixture("tests/fixtures/fair-sharing/cluster.yaml");
    s.cluster_queues
        .get_mut("cv-team")
        .unwrap()
        .fair_sharing_weight = Some(Quantity::parse("2").unwrap());
    s.kueue_config = Some(KueueConfig::default());
    let f = findings(&s, ids::FAIR_SHARING_WEIGHT_UNUSED);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].severity, Severity::Warning);
    assert_eq!(
        f[0].objects,
        [
            "ClusterQueue/cv-team",
            "ConfigMap/kueue-system/kueue-manager-config"
        ]
    );
    assert!(
        f[0].message.contains("the weight is ignored"),
        "{}",
        f[0].message
    );
    // with fair sharing on, the weight is used
    s.kueue_config = Some(KueueConfig {
        fair_sharing: Some(FairSharingConfig {
            preemption_strategies: vec![PreemptionStrategy::LessThanInitialShare],
        }),
        ..Default::default()
    });
    assert!(findings(&s, ids::FAIR_SHARING_WEIGHT_UNUSED).is_empty());
}
