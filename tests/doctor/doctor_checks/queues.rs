use gangplank::doctor::{Severity, ids};
use gangplank::model::LabelSelector;

use crate::support::*;

#[test]
fn local_queue_pointing_at_missing_cluster_queue() {
    let report = run(&healthy().lq(lq("team", "lq2", "ghost")).build());
    let f = one(&report, ids::LOCALQUEUE_MISSING_CLUSTERQUEUE);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(objs(f), ["LocalQueue/team/lq2", "ClusterQueue/ghost"]);
    mentions(
        f,
        &["team/lq2", "ghost", "cq"],
        &["name: ghost", "clusterQueue: cq"],
    );
}

#[test]
fn wired_local_queue_is_fine() {
    none(
        &run(&healthy().build()),
        ids::LOCALQUEUE_MISSING_CLUSTERQUEUE,
    );
}

#[test]
fn cluster_queue_naming_missing_flavor() {
    let report = run(&healthy()
        .cq(cq("cq2", vec![group(&[GPU], &[("a100", &["4"])])]))
        .build());
    let f = one(&report, ids::CLUSTERQUEUE_MISSING_FLAVOR);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(objs(f), ["ClusterQueue/cq2", "ResourceFlavor/a100"]);
    mentions(
        f,
        &["cq2", "a100", GPU],
        &["kind: ResourceFlavor", "name: a100"],
    );
}

#[test]
fn cohort_naming_missing_flavor() {
    let c = gangplank::model::Cohort {
        name: "pool".into(),
        resource_groups: vec![group(&[GPU], &[("h100", &["4"])])],
        ..Default::default()
    };
    let report = run(&healthy().cohort(c).build());
    let f = one(&report, ids::CLUSTERQUEUE_MISSING_FLAVOR);
    assert_eq!(objs(f), ["Cohort/pool", "ResourceFlavor/h100"]);
}

#[test]
fn existing_flavors_are_fine() {
    none(&run(&healthy().build()), ids::CLUSTERQUEUE_MISSING_FLAVOR);
}

fn selective_cq() -> gangplank::model::ClusterQueue {
    let mut c = cq("cq", vec![group(&[GPU, "cpu"], &[("gpu", &["8", "96"])])]);
    let mut sel = LabelSelector::default();
    sel.match_labels.insert("team".into(), "ml".into());
    c.namespace_selector = Some(sel);
    c
}

#[test]
fn namespace_excluded_by_selector() {
    let report = run(&healthy()
        .cq(selective_cq())
        .ns("team", &[("env", "dev")])
        .build());
    let f = one(&report, ids::NAMESPACE_EXCLUDED_BY_SELECTOR);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(
        objs(f),
        ["ClusterQueue/cq", "LocalQueue/team/lq", "Namespace/team"]
    );
    mentions(
        f,
        &["team=ml", "env=dev", "team/lq"],
        &["kubectl label namespace team team=ml"],
    );
}

#[test]
fn namespace_matching_selector_is_fine() {
    let report = run(&healthy()
        .cq(selective_cq())
        .ns("team", &[("team", "ml")])
        .build());
    none(&report, ids::NAMESPACE_EXCLUDED_BY_SELECTOR);
}

#[test]
fn unknown_namespace_is_not_judged_on_other_labels() {
    let mut s = healthy().cq(selective_cq()).build();
    s.namespaces.clear();
    none(&run(&s), ids::NAMESPACE_EXCLUDED_BY_SELECTOR);
}

#[test]
fn unknown_namespace_is_judged_on_its_name_label() {
    let mut c = cq("cq", vec![group(&[GPU, "cpu"], &[("gpu", &["8", "96"])])]);
    let mut sel = LabelSelector::default();
    sel.match_labels
        .insert("kubernetes.io/metadata.name".into(), "other".into());
    c.namespace_selector = Some(sel);
    let mut s = healthy().cq(c).build();
    s.namespaces.clear();
    one(&run(&s), ids::NAMESPACE_EXCLUDED_BY_SELECTOR);
}

#[test]
fn absent_namespace_selector() {
    let mut c = cq("cq", vec![group(&[GPU, "cpu"], &[("gpu", &["8", "96"])])]);
    c.namespace_selector = None;
    let report = run(&healthy().cq(c).build());
    let f = one(&report, ids::NAMESPACE_SELECTOR_ABSENT);
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(objs(f), ["ClusterQueue/cq", "LocalQueue/team/lq"]);
    mentions(
        f,
        &["ClusterQueue/cq", "namespaceSelector"],
        &["kubectl edit clusterqueue cq", "namespaceSelector: {}"],
    );
    none(&report, ids::NAMESPACE_EXCLUDED_BY_SELECTOR);
}

#[test]
fn empty_namespace_selector_is_fine() {
    none(&run(&healthy().build()), ids::NAMESPACE_SELECTOR_ABSENT);
}
