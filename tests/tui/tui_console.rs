//! The on-call console (issue #12): readable rows, scrollable details, the approval
//! panel, the Events view. Rendered with ratatui's TestBackend, read as a person would.

use std::sync::Arc;

use crate::tui_fixture;

use crossterm::event::KeyCode;
use gangplank::tui::*;
use tui_fixture::{app, key, screen, type_str};

/// Adds a workload to the fixture's data, named as Kueue names a PyTorchJob's
/// Workload (`pytorchjob-<job>-<hash>`), owned by the job `job`.
fn add_job(data: &mut ConsoleData, ns: &str, job: &str, hash: &str) {
    let mut state = (*data.state).clone();
    let base = state
        .workloads
        .get(&("cv-team".to_string(), "yolo-train".to_string()))
        .expect("fixture workload")
        .as_ref()
        .clone();
    let name = format!("pytorchjob-{job}-{hash}");
    let mut wl = base;
    wl.namespace = ns.into();
    wl.name = name.clone();
    wl.uid = format!("uid-{name}");
    if let Some(o) = wl.owner.as_mut() {
        o.name = job.into();
    }
    state.workloads.insert((ns.into(), name), Arc::new(wl));
    data.state = Arc::new(state);
    data.generation += 1;
}

#[test]
fn two_names_with_a_30_character_common_prefix_are_distinguishable_at_80x24() {
    let mut a = app(ViewId::Workloads, 80, 24, "dark");
    let mut data = a.cache.data.clone();
    let prefix = "speech-recognition-llama-finetune-"; // 34 characters
    assert!(prefix.len() >= 30);
    add_job(
        &mut data,
        "hyperpod-ns-speech",
        &format!("{prefix}run-a1"),
        "1d9fd",
    );
    add_job(
        &mut data,
        "hyperpod-ns-speech",
        &format!("{prefix}run-b2"),
        "7c3e0",
    );
    update(&mut a, Msg::Data(data));
    let s = screen(&a, 80, 24);
    let lines: Vec<&str> = s
        .lines()
        .filter(|l| l.contains("hyperpod") || l.contains("speech"))
        .collect();
    assert_eq!(lines.len(), 2, "{s}");
    assert_ne!(lines[0], lines[1], "{s}");
    // The distinguishing tail survives the truncation, and the verdict column shows.
    assert!(
        lines[0].contains("run-a1") || lines[1].contains("run-a1"),
        "{s}"
    );
    assert!(
        lines[0].contains("run-b2") || lines[1].contains("run-b2"),
        "{s}"
    );
    assert!(s.contains("VERDICT"), "{s}");
    // The full Workload name is in the details.
    type_str(&mut a, "/run-b2");
    update(&mut a, key(KeyCode::Enter));
    update(&mut a, key(KeyCode::Enter));
    let d = screen(&a, 80, 24);
    assert!(
        d.contains(&format!("pytorchjob-{prefix}run-b2-7c3e0")),
        "details show the whole name:\n{d}"
    );
}

#[test]
fn the_verdict_column_gets_the_remaining_width_at_80x24() {
    let a = app(ViewId::Workloads, 80, 24, "dark");
    let s = screen(&a, 80, 24);
    let boss = s
        .lines()
        .find(|l| l.contains("boss-urgent-llama-finetune"))
        .unwrap_or_else(|| panic!("boss row whole:\n{s}"));
    assert!(boss.contains("preempts 2"), "{s}");
}
