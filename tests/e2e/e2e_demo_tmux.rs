//! End to end: the real binary's `gangplank demo` driven in tmux, read with
//! capture-pane, as an operator would see it. Every wait is on a screen condition
//! with a deadline.

use crate::tmux_support;

use tmux_support::{Tmux, rows_with};

#[test]
fn demo_tells_the_seed_story_and_restores_the_terminal() {
    let Some(tmux) = Tmux::start(120, 36) else {
        return;
    };
    let bin = env!("CARGO_BIN_EXE_gangplank");
    tmux.send(&[&format!("{bin} demo --speed 120; echo EXIT=$?"), "Enter"]);

    // Queues view: the pool is full once the four normal jobs run.
    tmux.wait_for("the console to start", 60, |s| {
        s.contains("Workloads") && s.contains("Queues")
    });
    tmux.send(&["1"]);
    tmux.wait_for("hyperpod-global-queue at 32/32 GPUs", 60, |s| {
        rows_with(s, "hyperpod-global-queue")
            .iter()
            .any(|l| l.contains("32/32"))
    });

    // Workloads view: at 10 simulated minutes (5 s at 120x) the boss job arrives,
    // Kueue preempts the two newest normal jobs and admits it.
    tmux.send(&["2"]);
    let screen = tmux.wait_for("the boss job admitted and two jobs preempted", 90, |s| {
        let boss_admitted = rows_with(s, "boss-urgent")
            .iter()
            .any(|l| l.contains("Admitted"));
        let preempted = s.lines().filter(|l| l.contains("Preempted")).count();
        boss_admitted && preempted == 2
    });
    let preempted: Vec<&str> = rows_with(&screen, "Preempted");
    assert!(preempted.iter().any(|l| l.contains("gpt-eval")), "{screen}");
    assert!(
        preempted.iter().any(|l| l.contains("yolo-train")),
        "{screen}"
    );
    // Ages are in the simulator's time, the time its objects are stamped with: bert
    // was submitted at minute 0 and the boss job arrived at minute 10, so bert is at
    // least ten minutes old (on the wall clock it would be a few seconds).
    let bert = rows_with(&screen, "bert-pretrain").join(" ");
    let minutes_old = bert
        .split_whitespace()
        .filter_map(|t| t.strip_suffix('m')?.parse::<u32>().ok())
        .max();
    assert!(
        minutes_old.is_some_and(|m| m >= 10),
        "bert's age should be >= 10m in simulated time: {bert:?}\n{screen}"
    );

    // `/boss` narrows the workloads view to it.
    tmux.send(&["/"]);
    tmux.send(&["-l", "boss"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("the filter to narrow the list to the boss job", 10, |s| {
        s.contains("filter: boss")
            && rows_with(s, "boss-urgent").len() == 1
            && !s.contains("bert-pretrain")
            && !s.contains("resnet-sweep")
    });

    // `?` shows the key help, generated from the keymap.
    tmux.send(&["?"]);
    tmux.wait_for("the key help", 10, |s| {
        s.contains("quit") && s.contains("filter")
    });
    tmux.send(&["?"]);
    tmux.wait_for("the help to close", 10, |s| {
        !s.contains("show or hide this help")
    });

    // `q` exits and the shell gets its terminal back.
    tmux.send(&["q"]);
    let screen = tmux.wait_for("the demo to exit", 20, |s| s.contains("EXIT=0"));
    assert!(
        !screen.contains("Workloads ·"),
        "the console's screen is gone:\n{screen}"
    );
}
