//! A tmux session for end-to-end tests: send keys, read the screen, wait on a screen
//! condition with a deadline.

#![allow(dead_code)]

use std::process::Command;
use std::time::{Duration, Instant};

pub struct Tmux {
    socket: String,
}

impl Tmux {
    pub fn start(width: u16, height: u16) -> Option<Tmux> {
        if !crate::support_tools::require_tool("tmux", &["-V"], "the end-to-end console tests") {
            return None;
        }
        // One tmux server per test: tests of one binary run in parallel in one process.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmux = Tmux {
            socket: format!("gangplank-e2e-{}-{n}", std::process::id()),
        };
        let ok = tmux
            .cmd(&[
                "new-session",
                "-d",
                "-s",
                "e2e",
                "-x",
                &width.to_string(),
                "-y",
                &height.to_string(),
                "bash --norc --noprofile",
            ])
            .status
            .success();
        assert!(ok, "tmux new-session failed");
        Some(tmux)
    }

    fn cmd(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run tmux")
    }

    pub fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "e2e"];
        args.extend_from_slice(keys);
        assert!(self.cmd(&args).status.success());
    }

    /// `tmux display -p FORMAT` for the test's pane, e.g. `#{alternate_on}` (1 while
    /// the pane shows the alternate screen) or `#{cursor_flag}` (1 while the cursor is
    /// visible).
    pub fn display(&self, format: &str) -> String {
        let out = self.cmd(&["display", "-p", "-t", "e2e", format]);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", "e2e"]).stdout).into_owned()
    }

    /// Polls the screen until `pred` holds; panics with the last screen at the deadline.
    pub fn wait_for(&self, what: &str, secs: u64, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let screen = self.screen();
            if pred(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

pub fn rows_with<'a>(screen: &'a str, needle: &str) -> Vec<&'a str> {
    screen.lines().filter(|l| l.contains(needle)).collect()
}
