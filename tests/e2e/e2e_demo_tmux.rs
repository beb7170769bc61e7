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
    // Objects are stamped in wall-clock time (the simulator never dates anything in
    // the future; --speed compresses the scenario's offsets instead), so what the
    // operator sees is real ages: small (this test is minutes old at most), never
    // negative or `<invalid>`, bert (minute 0) at least as old as the boss (minute 10),
    // and no admitted job waited longer than it has existed.
    assert!(!screen.contains("<invalid>"), "no invalid time:\n{screen}");
    let bert = age_and_wait(&screen, "bert-pretrain");
    let boss = age_and_wait(&screen, "boss-urgent");
    for (name, (age, wait)) in [("bert-pretrain", bert), ("boss-urgent", boss)] {
        assert!(
            age < 600,
            "{name} is {age}s old, more than this test has run:\n{screen}"
        );
        if let Some(wait) = wait {
            assert!(
                wait <= age,
                "{name} waited {wait}s but is {age}s old:\n{screen}"
            );
        }
    }
    assert!(
        bert.0 >= boss.0,
        "bert (minute 0) is younger than the boss (minute 10):\n{screen}"
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

/// Seconds of a compact age as the console prints it: `45s`, `12m`, `3h04m`, `2d03h`.
fn parse_age(token: &str) -> Option<u64> {
    let mut total = 0u64;
    let mut num = String::new();
    let mut any = false;
    for c in token.chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return None,
        };
        total += num.parse::<u64>().ok()? * unit;
        num.clear();
        any = true;
    }
    (any && num.is_empty()).then_some(total)
}

/// AGE and WAIT (seconds; WAIT `—` is `None`) of the row naming `name` in its own
/// columns (not in a victim's "preempted by …" verdict): the first age-shaped cell is
/// AGE, the next cell WAIT.
fn age_and_wait(screen: &str, name: &str) -> (u64, Option<u64>) {
    let row = rows_with(screen, name)
        .into_iter()
        .find(|l| l.split("preempted by").next().unwrap_or("").contains(name))
        .unwrap_or_else(|| panic!("no row for {name}:\n{screen}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    let at = cells
        .iter()
        .position(|c| parse_age(c).is_some())
        .unwrap_or_else(|| panic!("no AGE in {row:?}"));
    let age = parse_age(cells[at]).unwrap_or_default();
    let wait = cells.get(at + 1).and_then(|c| parse_age(c));
    (age, wait)
}

#[test]
fn ages_parse_as_printed() {
    assert_eq!(parse_age("45s"), Some(45));
    assert_eq!(parse_age("3h04m"), Some(3 * 3600 + 240));
    assert_eq!(parse_age("2d03h"), Some(2 * 86_400 + 3 * 3600));
    assert_eq!(parse_age("—"), None);
    assert_eq!(parse_age("32/32"), None);
    assert_eq!(parse_age("8"), None);
}
