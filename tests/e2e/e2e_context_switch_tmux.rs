//! `:ctx NAME` (issue #12 item 5) end to end: two simulators (`gangplank sim serve`,
//! the seed and docs/scenarios/cohort-borrowing.yaml), one kubeconfig with a context
//! for each, the console started on the first; `:ctx` to the second replaces the
//! watches without leaving the console: the status bar names the second context and
//! the rows are the second cluster's. An unknown context is refused and the current
//! one keeps running.

use crate::tmux_support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tmux_support::{Tmux, rows_with};

/// A `gangplank sim serve` process, killed when the test ends (also on panic).
struct Sim {
    child: Child,
    server: String,
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts a simulator (the seed, or `scenario`) and reads its server from the
/// kubeconfig it writes.
fn start_sim(dir: &Path, tag: &str, scenario: Option<&str>) -> Sim {
    let kubeconfig = dir.join(format!("{tag}.kubeconfig"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gangplank"));
    cmd.args(["sim", "serve", "--kubeconfig-out"])
        .arg(&kubeconfig);
    if let Some(s) = scenario {
        cmd.args(["--scenario", s]);
    }
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start gangplank sim serve");
    let mut sim = Sim {
        child,
        server: String::new(),
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(&kubeconfig).unwrap_or_default();
        // The file may be seen half-written: wait for the last line we need.
        if text.contains("current-context:")
            && let Some(line) = text.lines().find(|l| l.trim_start().starts_with("server:"))
        {
            sim.server = line.trim_start()["server:".len()..].trim().to_string();
            return sim;
        }
        assert!(
            Instant::now() < deadline,
            "{tag}: no kubeconfig written by sim serve"
        );
        if let Ok(Some(status)) = sim.child.try_wait() {
            panic!("{tag}: sim serve exited: {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One kubeconfig, two contexts (`first` is current).
fn kubeconfig(dir: &Path, contexts: &[(&str, &str)]) -> PathBuf {
    let mut clusters = String::new();
    let mut ctxs = String::new();
    for (name, server) in contexts {
        clusters.push_str(&format!(
            "- name: {name}\n  cluster: {{server: \"{server}\"}}\n"
        ));
        ctxs.push_str(&format!(
            "- name: {name}\n  context: {{cluster: {name}, user: sim}}\n"
        ));
    }
    let path = dir.join("two.kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n{clusters}contexts:\n{ctxs}\
             current-context: {}\nusers:\n- name: sim\n  user: {{}}\n",
            contexts[0].0
        ),
    )
    .expect("write kubeconfig");
    path
}

/// The status bar: the last line that names a context.
fn names_context(screen: &str, ctx: &str) -> bool {
    screen.lines().rev().take(3).any(|l| l.contains(ctx))
}

#[test]
fn ctx_switches_the_live_cluster_without_restarting() {
    let Some(tmux) = Tmux::start(120, 30) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let seed = start_sim(dir.path(), "seed", None);
    let cohort = start_sim(
        dir.path(),
        "cohort",
        Some("docs/scenarios/cohort-borrowing.yaml"),
    );
    let kc = kubeconfig(
        dir.path(),
        &[("sim-seed", &seed.server), ("sim-cohort", &cohort.server)],
    );
    let bin = env!("CARGO_BIN_EXE_gangplank");
    tmux.send(&[
        &format!(
            "{bin} --kubeconfig {} --history-file {} --audit-log {}; echo EXIT=$?",
            kc.display(),
            dir.path().join("h.jsonl").display(),
            dir.path().join("audit.jsonl").display()
        ),
        "Enter",
    ]);
    // The seed's bert-pretrain job, on context sim-seed.
    tmux.wait_for("the seed's workloads on sim-seed", 90, |s| {
        !rows_with(s, "bert-pretrain").is_empty() && names_context(s, "sim-seed")
    });

    // An unknown context: refused, and the seed keeps showing.
    tmux.send(&[":"]);
    tmux.send(&["-l", "ctx nowhere"]);
    tmux.send(&["Enter"]);
    let s = tmux.wait_for("the unknown context refused", 20, |s| {
        s.contains("no context \"nowhere\"")
    });
    assert!(!rows_with(&s, "bert-pretrain").is_empty(), "{s}");
    assert!(names_context(&s, "sim-seed"), "{s}");

    // Switch to the cohort-borrowing cluster.
    tmux.send(&[":"]);
    tmux.send(&["-l", "ctx sim-cohort"]);
    tmux.send(&["Enter"]);
    let s = tmux.wait_for("the cohort cluster's workloads on sim-cohort", 90, |s| {
        names_context(s, "sim-cohort")
            && !rows_with(s, "a-train-1").is_empty()
            && rows_with(s, "bert-pretrain").is_empty()
    });
    // Still the same console: it never left the alternate screen.
    assert_eq!(tmux.display("#{alternate_on}"), "1", "{s}");
    assert!(!names_context(&s, "sim-seed"), "{s}");

    // The queues are the second cluster's too.
    tmux.send(&["1"]);
    tmux.wait_for("team-a-cq in the Queues view", 30, |s| {
        !rows_with(s, "team-a-cq").is_empty() && rows_with(s, "hyperpod-global-queue").is_empty()
    });

    tmux.send(&["q"]);
    tmux.wait_for("the console to exit", 30, |s| s.contains("EXIT=0"));
    drop(seed);
    drop(cohort);
}

#[test]
fn ctx_name_in_the_demo_says_switching_needs_a_live_cluster() {
    let Some(tmux) = Tmux::start(120, 30) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = env!("CARGO_BIN_EXE_gangplank");
    tmux.send(&[
        &format!(
            "{bin} demo --history-file {} --audit-log {}; echo EXIT=$?",
            dir.path().join("h.jsonl").display(),
            dir.path().join("audit.jsonl").display()
        ),
        "Enter",
    ]);
    tmux.wait_for("the demo's workloads", 90, |s| {
        !rows_with(s, "bert-pretrain").is_empty()
    });
    tmux.send(&[":"]);
    tmux.send(&["-l", "ctx prod"]);
    tmux.send(&["Enter"]);
    let s = tmux.wait_for("the refusal", 20, |s| {
        s.contains("switching contexts needs a live cluster")
    });
    // The demo keeps running.
    assert!(!rows_with(&s, "bert-pretrain").is_empty(), "{s}");
    tmux.send(&["q"]);
    tmux.wait_for("the console to exit", 30, |s| s.contains("EXIT=0"));
}
