//! One minimal triggering and one non-triggering input per `doctor` check.

mod api;
mod capacity;
mod gang;
mod jobs;
mod nodes;
mod priority;
mod queues;
mod requests;

use crate::support::*;

#[test]
fn healthy_base_has_no_findings() {
    let report = run(&healthy().build());
    assert!(report.findings.is_empty(), "{}", report.render_table(100));
}

#[test]
fn empty_state_has_no_findings() {
    let report = run(&gangplank::model::ClusterState::default());
    assert!(report.findings.is_empty());
}
