//! Issue #14 finding 6: SIGTERM, SIGINT sent by `kill`, SIGQUIT and SIGHUP left the
//! terminal in raw mode on the alternate screen with the cursor hidden (only `q` and
//! Ctrl-C restored it). The real binary runs in a tmux pane under bash; the test kills
//! it by pid and then checks, as the operator would, that the shell is usable: the pane
//! has left the alternate screen, the cursor shows, `stty -a` reports `icanon` and
//! `echo` on, and the exit status is 128 + the signal number.

use std::time::{Duration, Instant};

use crate::tmux_support::Tmux;

/// Waits for `path` to hold a pid written by the pane's shell.
fn read_pid(path: &std::path::Path) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        assert!(Instant::now() < deadline, "no pid in {}", path.display());
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn kill(pid: i32, signal: &str) {
    let ok = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .expect("run kill")
        .success();
    assert!(ok, "kill -{signal} {pid} failed");
}

/// Runs `command` (gangplank's arguments) in the pane, waits until the console is up,
/// kills it with `signal`, and checks the terminal and the exit status.
fn console_killed_restores_the_terminal(tmux: &Tmux, args: &str, signal: &str, code: i32) {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let bin = env!("CARGO_BIN_EXE_gangplank");
    let root = env!("CARGO_MANIFEST_DIR");
    tmux.send(&["-l", "clear"]);
    tmux.send(&["Enter"]);
    // `exec` keeps the pid: the shell that wrote it becomes gangplank.
    tmux.send(&[
        "-l",
        &format!(
            "cd {root} && bash -c 'echo $$ > {}; exec {bin} {args}'; echo EXIT=$?",
            pidfile.display()
        ),
    ]);
    tmux.send(&["Enter"]);
    let pid = read_pid(&pidfile);
    tmux.wait_for("the console to start", 90, |s| {
        s.contains("Workloads") && s.contains("Queues")
    });
    assert_eq!(
        tmux.display("#{alternate_on}"),
        "1",
        "console on the alternate screen"
    );
    kill(pid, signal);
    let screen = tmux.wait_for(&format!("the shell after SIG{signal}"), 30, |s| {
        s.lines().any(|l| l.starts_with("EXIT="))
    });
    assert!(
        screen.lines().any(|l| l == format!("EXIT={code}")),
        "SIG{signal}: exit status 128 + n = {code} expected:\n{screen}"
    );
    assert_eq!(
        tmux.display("#{alternate_on}"),
        "0",
        "SIG{signal} left the pane on the alternate screen:\n{screen}"
    );
    assert_eq!(
        tmux.display("#{cursor_flag}"),
        "1",
        "SIG{signal} left the cursor hidden"
    );
    // Cooked mode again: the line discipline's icanon and echo are on.
    tmux.send(&[
        "-l",
        "stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(icanon|echo)' | sed 's/^/MODE=/'",
    ]);
    tmux.send(&["Enter"]);
    let screen = tmux.wait_for("stty's answer", 10, |s| {
        s.lines().filter(|l| l.starts_with("MODE=")).count() >= 2
    });
    let modes: Vec<&str> = screen.lines().filter(|l| l.starts_with("MODE=")).collect();
    assert!(
        modes.contains(&"MODE=icanon") && modes.contains(&"MODE=echo"),
        "SIG{signal} left the tty in raw mode: {modes:?}\n{screen}"
    );
}

#[test]
fn term_int_quit_hup_restore_the_terminal_of_the_console() {
    let Some(tmux) = Tmux::start(120, 36) else {
        return;
    };
    for (signal, code) in [("TERM", 143), ("INT", 130), ("QUIT", 131), ("HUP", 129)] {
        console_killed_restores_the_terminal(&tmux, "-f tests/fixtures/seed-story", signal, code);
    }
}

#[test]
fn sigterm_restores_the_terminal_of_the_demo() {
    let Some(tmux) = Tmux::start(120, 36) else {
        return;
    };
    console_killed_restores_the_terminal(&tmux, "demo --speed 60", "TERM", 143);
}

/// `serve-ssh`: a viewer whose ssh client is killed ends alone (the server keeps
/// serving the next viewer); SIGTERM to the server closes every session cleanly (the
/// viewer's ssh ends) and the server exits 143.
#[test]
fn ssh_sessions_end_alone_and_sigterm_stops_the_server_cleanly() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    if !crate::support_tools::require_openssh_and_tmux("the serve-ssh signal test") {
        return;
    }
    let Some(tmux) = Tmux::start(110, 32) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("id");
    assert!(
        Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(&key)
            .status()
            .unwrap()
            .success()
    );
    std::fs::copy(
        dir.path().join("id.pub"),
        dir.path().join("authorized_keys"),
    )
    .unwrap();
    let mut server = Command::new(env!("CARGO_BIN_EXE_gangplank"))
        .args(["serve-ssh", "--demo", "--listen", "127.0.0.1:0"])
        .arg("--authorized-keys")
        .arg(dir.path().join("authorized_keys"))
        .arg("--host-key")
        .arg(dir.path().join("host_key"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    struct Reap(std::process::Child);
    impl Drop for Reap {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let stdout = server.stdout.take().unwrap();
    let server_pid = server.id() as i32;
    let mut server = Reap(server);
    let mut lines = BufReader::new(stdout).lines();
    let port = loop {
        let line = lines.next().expect("serve-ssh exited").unwrap();
        if let Some(addr) = line.strip_prefix("gangplank serve-ssh listening on ") {
            break addr.rsplit(':').next().unwrap().to_string();
        }
    };
    let pidfile = dir.path().join("ssh.pid");
    let viewer = |tag: &str| {
        tmux.send(&["-l", "clear"]);
        tmux.send(&["Enter"]);
        tmux.send(&[
            "-l",
            &format!(
                "bash -c 'echo $$ > {}; exec ssh -tt -i {} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -p {port} viewer@127.0.0.1'; printf '\\n{tag}=%s\\n' $?",
                pidfile.display(),
                key.display()
            ),
        ]);
        tmux.send(&["Enter"]);
        tmux.wait_for("the console over SSH", 60, |s| {
            s.contains("READ-ONLY") && s.contains("Workloads")
        });
        read_pid(&pidfile)
    };
    // 1. The first viewer's ssh client is killed: that session ends, the server stays.
    let first = viewer("FIRST");
    kill(first, "TERM");
    tmux.wait_for("the first viewer's ssh to end", 30, |s| {
        s.lines().any(|l| l.starts_with("FIRST="))
    });
    assert!(
        server.0.try_wait().unwrap().is_none(),
        "the server died with a session"
    );
    std::fs::remove_file(&pidfile).unwrap();
    // A killed ssh client cannot undo what the remote console set up: reset the pane
    // the way a user would, so the check after step 3 sees only the server's doing.
    tmux.send(&["-l", "tput rmcup; tput cnorm; stty sane"]);
    tmux.send(&["Enter"]);
    // 2. The server still serves a second viewer.
    viewer("SECOND");
    // 3. SIGTERM to the server: the session is closed cleanly, the server exits 143.
    kill(server_pid, "TERM");
    tmux.wait_for(
        "the second viewer's session to be closed by the server",
        30,
        |s| s.lines().any(|l| l.starts_with("SECOND=")),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = server.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "serve-ssh ignored SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(
        status.code(),
        Some(143),
        "serve-ssh after SIGTERM: {status}"
    );
    assert_eq!(
        tmux.display("#{alternate_on}"),
        "0",
        "the viewer's terminal is left on the alternate screen:\n{}",
        tmux.screen()
    );
}
