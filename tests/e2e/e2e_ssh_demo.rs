//! End to end: `gangplank serve-ssh --demo` (the real binary) and the system OpenSSH
//! client in tmux. A viewer sees the live queues, every action key answers read-only,
//! and `q` ends the session. Waits are on conditions with deadlines.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Killed(Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn tmux(socket: &str, args: &[&str]) -> String {
    let out = Command::new("tmux")
        .arg("-L")
        .arg(socket)
        .args(args)
        .output()
        .expect("tmux");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn wait_screen(socket: &str, what: &str, secs: u64, pred: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let screen = tmux(socket, &["capture-pane", "-p", "-t", "v"]);
        if pred(&screen) {
            return screen;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn openssh_viewer_sees_the_live_queues_read_only() {
    if !crate::support_tools::require_openssh_and_tmux("the SSH end-to-end test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("id");
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&key)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    std::fs::copy(
        dir.path().join("id.pub"),
        dir.path().join("authorized_keys"),
    )
    .unwrap();

    let mut server = Killed(
        Command::new(env!("CARGO_BIN_EXE_gangplank"))
            .args([
                "serve-ssh",
                "--demo",
                "--speed",
                "120",
                "--listen",
                "127.0.0.1:0",
            ])
            .arg("--authorized-keys")
            .arg(dir.path().join("authorized_keys"))
            .arg("--host-key")
            .arg(dir.path().join("host_key"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut lines = BufReader::new(server.0.stdout.take().unwrap()).lines();
    let port = loop {
        let line = lines.next().expect("serve-ssh exited").unwrap();
        if let Some(addr) = line.strip_prefix("gangplank serve-ssh listening on ") {
            break addr.rsplit(':').next().unwrap().to_string();
        }
    };

    let socket = format!("gangplank-ssh-e2e-{}", std::process::id());
    let ssh = format!(
        "ssh -tt -i {} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -p {port} viewer@127.0.0.1; echo SSH_EXIT=$?; sleep 30",
        key.display()
    );
    tmux(
        &socket,
        &[
            "new-session",
            "-d",
            "-s",
            "v",
            "-x",
            "110",
            "-y",
            "32",
            &ssh,
        ],
    );
    let _cleanup = scopeguard(socket.clone());

    wait_screen(&socket, "the console over SSH", 60, |s| {
        s.contains("READ-ONLY") && s.contains("Workloads")
    });
    tmux(&socket, &["send-keys", "-t", "v", "1"]);
    wait_screen(&socket, "hyperpod-global-queue at 32/32", 60, |s| {
        s.lines()
            .any(|l| l.contains("hyperpod-global-queue") && l.contains("32/32"))
    });
    tmux(&socket, &["send-keys", "-t", "v", "2"]);
    tmux(&socket, &["send-keys", "-t", "v", "h"]);
    wait_screen(&socket, "the read-only answer", 10, |s| {
        s.contains("read-only: hold is disabled")
    });
    tmux(&socket, &["send-keys", "-t", "v", "q"]);
    wait_screen(&socket, "the session to end", 20, |s| {
        s.contains("SSH_EXIT=0")
    });
}

/// Kills the tmux server when the test ends, whatever happens.
fn scopeguard(socket: String) -> impl Drop {
    struct Guard(String);
    impl Drop for Guard {
        fn drop(&mut self) {
            let _ = Command::new("tmux")
                .arg("-L")
                .arg(&self.0)
                .arg("kill-server")
                .output();
        }
    }
    Guard(socket)
}
