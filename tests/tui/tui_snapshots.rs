//! Snapshot tests of every view at 80×24 and 160×48 over the seed fixture. The
//! `.snap` files in tests/tui/snapshots are the console as a person sees it: review them.

use crate::tui_fixture;

use crossterm::event::KeyCode;
use gangplank::tui::*;
use tui_fixture::{app, key, screen};

fn snap(name: &str, view: ViewId) {
    for (w, h) in [(80, 24), (160, 48)] {
        let a = app(view, w, h, "dark");
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen(&a, w, h));
    }
}

#[test]
fn queues() {
    snap("queues", ViewId::Queues);
}

#[test]
fn workloads() {
    snap("workloads", ViewId::Workloads);
}

#[test]
fn nodes() {
    snap("nodes", ViewId::Nodes);
}

#[test]
fn plan() {
    snap("plan", ViewId::Plan);
}

#[test]
fn drift() {
    snap("drift", ViewId::Drift);
}

#[test]
fn audit() {
    snap("audit", ViewId::Audit);
}

#[test]
fn health() {
    snap("health", ViewId::Health);
}

#[test]
fn queues_with_cluster_queue_selected() {
    let mut a = app(ViewId::Queues, 80, 24, "dark");
    update(&mut a, key(KeyCode::Char('j')));
    insta::assert_snapshot!(screen(&a, 80, 24));
}

#[test]
fn workload_detail() {
    for (w, h) in [(80, 24), (160, 48)] {
        let mut a = app(ViewId::Workloads, w, h, "dark");
        // The boss job: sort by priority, descending puts it first.
        update(&mut a, key(KeyCode::Char('s')));
        update(&mut a, key(KeyCode::Char('s')));
        update(&mut a, key(KeyCode::Char('S')));
        update(&mut a, key(KeyCode::Enter));
        insta::assert_snapshot!(format!("workload_detail_{w}x{h}"), screen(&a, w, h));
    }
}

#[test]
fn help_overlay() {
    let mut a = app(ViewId::Workloads, 80, 24, "dark");
    update(&mut a, key(KeyCode::Char('?')));
    insta::assert_snapshot!(screen(&a, 80, 24));
}

#[test]
fn readonly_badge_and_refusal() {
    let mut a = app(ViewId::Workloads, 80, 24, "dark");
    a.readonly = true;
    update(&mut a, key(KeyCode::Char('h')));
    let s = screen(&a, 80, 24);
    assert!(s.contains("READ-ONLY"), "{s}");
    assert!(s.contains("read-only: hold is disabled"), "{s}");
    insta::assert_snapshot!(s);
}

#[test]
fn terminal_too_small() {
    let a = app(ViewId::Workloads, 50, 10, "dark");
    // The notice wraps at 50 columns: compare the words.
    let s = screen(&a, 50, 10)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        s.starts_with("terminal too small: need at least 60×15, have 50×10"),
        "{s}"
    );
}

#[test]
fn command_line_shows_candidates() {
    let mut a = app(ViewId::Workloads, 80, 24, "dark");
    update(&mut a, key(KeyCode::Char(':')));
    tui_fixture::type_str(&mut a, "c");
    let s = screen(&a, 80, 24);
    assert!(
        s.contains(":c▏   clusterqueue clusterqueues cohort cohorts context cq"),
        "{s}"
    );
}

#[test]
fn queues_tree_with_cohorts() {
    use gangplank::model::synthetic::{SyntheticSpec, generate};
    let spec = SyntheticSpec {
        cohorts: 2,
        cluster_queues_per_cohort: 2,
        nodes: 16,
        gpus_per_node: 8,
        admitted_workloads: 10,
        pending_workloads: 30,
        seed: 7,
    };
    let data = ConsoleData::from_state(std::sync::Arc::new(generate(&spec)), "synthetic");
    let mut a = App::new(
        Default::default(),
        Theme::preset("dark"),
        false,
        ViewId::Queues,
    );
    update(&mut a, Msg::Resize(80, 24));
    update(&mut a, Msg::Tick(1_767_225_600_000 + 3_600_000));
    update(&mut a, Msg::Data(data));
    update(&mut a, key(KeyCode::Char('j')));
    insta::assert_snapshot!(screen(&a, 80, 24));
}
