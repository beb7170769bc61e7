use gangplank::doctor::{DoctorOptions, Severity, ids};
use gangplank::model::KueueApiVersion;

use crate::support::*;

fn served(v: Option<KueueApiVersion>) -> DoctorOptions {
    DoctorOptions {
        served_kueue_version: v,
        ..DoctorOptions::at(NOW)
    }
}

#[test]
fn deprecated_fungibility_value() {
    let mut c = cq("cq", vec![group(&[GPU, "cpu"], &[("gpu", &["8", "96"])])]);
    c.flavor_fungibility.deprecated_values = vec!["Borrow".into()];
    let report = run(&healthy().cq(c).build());
    let f = one(&report, ids::DEPRECATED_FUNGIBILITY_VALUE);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(objs(f), ["ClusterQueue/cq"]);
    mentions(
        f,
        &["Borrow", "MayStopSearch"],
        &[
            "whenCanBorrow: MayStopSearch",
            "kubectl edit clusterqueue cq",
        ],
    );
}

#[test]
fn current_fungibility_values_are_fine() {
    none(&run(&healthy().build()), ids::DEPRECATED_FUNGIBILITY_VALUE);
}

fn v1beta1_state() -> gangplank::model::ClusterState {
    let mut c = cq("cq", vec![group(&[GPU, "cpu"], &[("gpu", &["8", "96"])])]);
    c.api_version = KueueApiVersion::V1beta1;
    c.cohort = Some("pool".into());
    let mut l = lq("team", "lq", "cq");
    l.api_version = KueueApiVersion::V1beta1;
    healthy().cq(c).lq(l).build()
}

#[test]
fn v1beta1_objects_on_a_v1beta2_cluster() {
    let report = run_with(&v1beta1_state(), &served(Some(KueueApiVersion::V1beta2)));
    let found = only(&report, ids::DEPRECATED_API_FIELD);
    assert_eq!(found.len(), 2, "{}", report.render_table(100));
    let cqf = found
        .iter()
        .find(|f| f.severity == Severity::Warning)
        .expect("warning");
    assert_eq!(objs(cqf), ["ClusterQueue/cq"]);
    mentions(
        cqf,
        &["spec.cohort → spec.cohortName", "ClusterQueue/cq"],
        &["apiVersion: kueue.x-k8s.io/v1beta2", "spec.cohortName"],
    );
    let lqf = found
        .iter()
        .find(|f| f.severity == Severity::Info)
        .expect("info");
    assert_eq!(objs(lqf), ["LocalQueue/team/lq"]);
}

#[test]
fn v1beta1_objects_without_served_version_or_v1beta2_objects_are_fine() {
    none(&run(&v1beta1_state()), ids::DEPRECATED_API_FIELD);
    let report = run_with(&healthy().build(), &served(Some(KueueApiVersion::V1beta2)));
    none(&report, ids::DEPRECATED_API_FIELD);
    none(&report, ids::API_VERSION_NOT_SERVED);
}

#[test]
fn v1beta2_objects_on_a_v1beta1_only_cluster() {
    let report = run_with(&v1beta1_state(), &served(Some(KueueApiVersion::V1beta1)));
    let f = one(&report, ids::API_VERSION_NOT_SERVED);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(objs(f), ["ResourceFlavor/gpu"]);
    mentions(
        f,
        &["v1beta2", "0.15"],
        &["apiVersion: kueue.x-k8s.io/v1beta1"],
    );
    none(&report, ids::DEPRECATED_API_FIELD);
}
