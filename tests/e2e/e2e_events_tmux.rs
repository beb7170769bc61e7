//! End to end (issue #12): the real binary's `gangplank demo` in tmux at 80×24. The
//! Events view names who preempted whom after minute 10 of the seed story, and a
//! restarted console still shows it (read back from the history file).

use crate::tmux_support;

use tmux_support::Tmux;

/// A line of the Events view saying the boss job preempted yolo-train (names may be
/// cut in the middle at 80 columns: `nlp-team/boss-ur…-finetune preempted cv-team/yolo-train`).
fn boss_preempted_yolo(screen: &str) -> bool {
    screen.lines().any(|l| {
        let Some((by, victim)) = l.split_once(" preempted ") else {
            return false;
        };
        by.contains("boss") && victim.contains("yolo")
    })
}

#[test]
fn events_name_the_preemptor_and_survive_a_restart_at_80x24() {
    let Some(tmux) = Tmux::start(80, 24) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let history = dir.path().join("demo-history.jsonl");
    let bin = env!("CARGO_BIN_EXE_gangplank");
    let history = history.display();
    tmux.send(&[
        &format!("{bin} demo --speed 120 --history-file {history}; echo EXIT=$?"),
        "Enter",
    ]);
    tmux.wait_for("the console to start", 60, |s| s.contains("8 Events"));
    tmux.send(&["8"]);
    // Minute 10 of the story is 5 s at 120×.
    let screen = tmux.wait_for("boss… preempted …yolo… in the Events view", 90, |s| {
        s.contains("Events (newest first)") && boss_preempted_yolo(s)
    });
    assert!(screen.contains("Preempted"), "{screen}");
    // The filter narrows the timeline to preemptions.
    tmux.send(&["/"]);
    tmux.send(&["-l", "state=preempted"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("only preemptions", 10, |s| {
        s.contains("filter: state=preempted")
            && boss_preempted_yolo(s)
            && !s.lines().any(|l| l.contains(" admitted"))
    });
    tmux.send(&["q"]);
    tmux.wait_for("the demo to exit", 20, |s| s.contains("EXIT=0"));

    // A new console at 1× cannot reach minute 10 for ten minutes: a preemption on
    // screen now comes from the history file.
    tmux.send(&["clear", "Enter"]);
    tmux.send(&[
        &format!("{bin} demo --speed 1 --history-file {history}; echo EXIT2=$?"),
        "Enter",
    ]);
    tmux.wait_for("the second console to start", 60, |s| {
        s.contains("8 Events")
    });
    tmux.send(&["8"]);
    tmux.wait_for("the earlier preemption after the restart", 30, |s| {
        s.contains("Events (newest first)") && boss_preempted_yolo(s)
    });
    tmux.send(&["q"]);
    tmux.wait_for("the second demo to exit", 20, |s| s.contains("EXIT2=0"));
}

/// `-n cv-team` scopes the console: the status bar says so and no nlp-team workload
/// is listed, even after the story has run (issue #12: `-n` was ignored).
#[test]
fn dash_n_scopes_every_view_at_80x24() {
    let Some(tmux) = Tmux::start(80, 24) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let history = dir.path().join("demo-history.jsonl");
    let bin = env!("CARGO_BIN_EXE_gangplank");
    tmux.send(&[
        &format!(
            "{bin} demo --speed 120 -n cv-team --history-file {}; echo EXIT=$?",
            history.display()
        ),
        "Enter",
    ]);
    tmux.send(&["2"]);
    let s = tmux.wait_for("cv-team's workloads, yolo-train preempted", 90, |s| {
        s.contains("ns cv-team")
            && s.lines()
                .any(|l| l.contains("yolo-train") && l.contains("Preempted"))
    });
    assert!(s.contains("resnet-sweep"), "{s}");
    for other in ["bert-pretrain", "gpt-eval", "nlp-team  "] {
        assert!(!s.contains(other), "{other} is not in cv-team:\n{s}");
    }
    // Events: only cv-team's (yolo-train's preemption names the nlp-team preemptor).
    tmux.send(&["8"]);
    let s = tmux.wait_for("cv-team's events", 20, |s| {
        s.contains("Events (newest first)") && s.contains("yolo-train")
    });
    assert!(
        !s.contains("gpt-eval") && !s.contains("bert-pretrain"),
        "{s}"
    );
    tmux.send(&["q"]);
    tmux.wait_for("the demo to exit", 20, |s| s.contains("EXIT=0"));
}
