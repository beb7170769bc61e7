//! End to end (issue #12) at 80×24, the real binary's `gangplank demo` in tmux: two
//! jobs whose names share a 34-character prefix are told apart, details scroll the
//! text (not the selection), and the approval panel shows both victims.

use crate::tmux_support;

use tmux_support::{Tmux, rows_with};

/// The seed scenario with bert-pretrain and gpt-eval renamed to two names that share
/// their first 34 characters.
fn similar_names_scenario(dir: &std::path::Path) -> std::path::PathBuf {
    let seed = std::fs::read_to_string("docs/scenarios/seed.yaml").expect("seed scenario");
    let renamed = seed
        .replace("bert-pretrain", "speech-recognition-llama-finetune-run-a1")
        .replace("gpt-eval", "speech-recognition-llama-finetune-run-b2");
    let path = dir.join("similar.yaml");
    std::fs::write(&path, renamed).expect("write scenario");
    path
}

#[test]
fn similar_long_names_are_distinguishable_and_details_scroll_at_80x24() {
    let Some(tmux) = Tmux::start(80, 24) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = similar_names_scenario(dir.path());
    let bin = env!("CARGO_BIN_EXE_gangplank");
    tmux.send(&[
        &format!(
            "{bin} demo --speed 120 --scenario {} --history-file {}; echo EXIT=$?",
            scenario.display(),
            dir.path().join("h.jsonl").display()
        ),
        "Enter",
    ]);
    tmux.send(&["2"]);
    // After minute 10 run-b2 (gpt-eval's place) is preempted: its details are then
    // longer than 80×24 shows.
    let s = tmux.wait_for("both similar jobs listed, run-b2 preempted", 90, |s| {
        rows_with(s, "run-a1").len() == 1
            && rows_with(s, "run-b2").len() == 1
            && rows_with(s, "run-b2")[0].contains("Preempted")
    });
    let (a, b) = (rows_with(&s, "run-a1")[0], rows_with(&s, "run-b2")[0]);
    assert_ne!(a, b, "{s}");
    assert!(a.contains("speech") && b.contains("speech"), "{s}");

    // Details of the second one: Enter opens them, PgDn scrolls the text.
    tmux.send(&["/"]);
    tmux.send(&["-l", "run-b2"]);
    tmux.send(&["Enter"]);
    // Table rows only: the tab line shows `filter: run-b2` too.
    tmux.wait_for("the filter", 10, |s| {
        let rows = |needle: &str| {
            s.lines()
                .filter(|l| l.starts_with('│') && l.contains(needle))
                .count()
        };
        rows("run-b2") == 1 && rows("run-a1") == 0
    });
    tmux.send(&["Enter"]);
    let first = tmux.wait_for("the details, scrollable", 10, |s| {
        s.contains("lines 1–") && s.contains("speech-recognition-llama-finetune-run-b2")
    });
    tmux.send(&["PageDown"]);
    let paged = tmux.wait_for("the text scrolled", 10, |s| {
        s.contains("lines ") && !s.contains("lines 1–")
    });
    assert_ne!(first, paged);
    // Esc closes the details; the same (only) row is still selected.
    tmux.send(&["Escape"]);
    tmux.wait_for("the list again", 10, |s| {
        s.contains("1/1") && !s.contains("lines ") && s.contains("STATE")
    });
    tmux.send(&["q"]);
    tmux.wait_for("the demo to exit", 20, |s| s.contains("EXIT=0"));
}

#[test]
fn the_approval_panel_shows_both_victims_at_80x24() {
    let Some(tmux) = Tmux::start(80, 24) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = env!("CARGO_BIN_EXE_gangplank");
    tmux.send(&[
        &format!(
            "{bin} demo --speed 120 --scenario docs/scenarios/seed-approval.yaml --audit-log {} --history-file {}; echo EXIT=$?",
            dir.path().join("audit.jsonl").display(),
            dir.path().join("h.jsonl").display()
        ),
        "Enter",
    ]);
    tmux.send(&["4"]);
    tmux.wait_for("the proposal", 90, |s| {
        rows_with(s, "evict")
            .iter()
            .any(|l| l.contains("boss-urgent") && l.contains("evict"))
    });
    tmux.send(&["a"]);
    let panel = tmux.wait_for("the approval panel with both victims", 20, |s| {
        s.contains("Confirm")
            && s.contains("pytorchjob-gpt-eval")
            && s.contains("pytorchjob-yolo-train")
            && s.contains("preemptor:")
            && s.contains("y confirm")
            && s.contains("n / Esc cancel")
    });
    assert!(panel.contains("quota freed: 16 GPUs"), "{panel}");
    // n cancels: nothing is evicted.
    tmux.send(&["n"]);
    tmux.wait_for("cancelled", 10, |s| s.contains("cancelled"));
    tmux.send(&["q"]);
    tmux.wait_for("the demo to exit", 20, |s| s.contains("EXIT=0"));
}
