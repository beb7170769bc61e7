//! End to end: approving a preemption in the console. The seed scenario with the
//! ClusterQueue at `withinClusterQueue: Never`: Kueue leaves the boss job pending, the
//! Plan view proposes the two newest normal jobs, `a` then `y` evicts them, the boss
//! job runs, and after it finishes the two run again. Waits are on screen conditions.

use crate::tmux_support;

use tmux_support::{Tmux, rows_with};

#[test]
fn approving_the_proposal_runs_the_boss_job_then_the_victims_again() {
    let Some(tmux) = Tmux::start(150, 40) else {
        return;
    };
    let audit = tempfile::NamedTempFile::new().unwrap();
    let bin = env!("CARGO_BIN_EXE_gangplank");
    tmux.send(&[
        &format!(
            "{bin} demo --speed 120 --scenario docs/scenarios/seed-approval.yaml --audit-log {}; echo EXIT=$?",
            audit.path().display()
        ),
        "Enter",
    ]);
    tmux.wait_for("the console", 60, |s| {
        s.contains("Workloads") && s.contains("Queues")
    });

    // Kueue's own policy never preempts: the boss job waits behind a full pool.
    tmux.send(&["2"]);
    tmux.wait_for("the boss job pending", 90, |s| {
        rows_with(s, "boss-urgent")
            .iter()
            .any(|l| l.contains("Pending"))
            && rows_with(s, "Admitted").len() == 4
    });

    // The Plan view proposes evicting the two most recently admitted jobs.
    tmux.send(&["4"]);
    tmux.wait_for("the proposal", 30, |s| {
        rows_with(s, "evict")
            .iter()
            .any(|l| l.contains("gpt-eval") && l.contains("yolo-train"))
    });
    tmux.send(&["a"]);
    tmux.wait_for("the confirmation prompt", 10, |s| {
        s.contains("press y to confirm")
    });
    tmux.send(&["y"]);
    tmux.wait_for("the approval's outcome", 60, |s| s.contains("approved"));

    // The boss job runs; the two victims wait; after the boss finishes they run again.
    tmux.send(&["2"]);
    tmux.wait_for("the boss job admitted", 60, |s| {
        rows_with(s, "boss-urgent")
            .iter()
            .any(|l| l.contains("Admitted"))
    });
    tmux.wait_for(
        "the boss job finished and the victims admitted again",
        120,
        |s| {
            rows_with(s, "boss-urgent")
                .iter()
                .any(|l| l.contains("Finished"))
                && rows_with(s, "gpt-eval")
                    .iter()
                    .any(|l| l.contains("Admitted"))
                && rows_with(s, "yolo-train")
                    .iter()
                    .any(|l| l.contains("Admitted"))
        },
    );

    tmux.send(&["q"]);
    tmux.wait_for("the demo to exit", 20, |s| s.contains("EXIT=0"));
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(audit.path())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per audit line"))
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "one audit line for the one attempt: {lines:?}"
    );
    assert_eq!(lines[0]["action"], "approve");
    let victims = lines[0]["victims"].to_string();
    assert!(
        victims.contains("gpt-eval") && victims.contains("yolo-train"),
        "{victims}"
    );
}
