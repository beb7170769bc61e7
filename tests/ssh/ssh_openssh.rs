//! The real OpenSSH client against the server (demo app), on 127.0.0.1 only.
//! Interactive runs happen inside tmux; the pane is polled with a deadline.
//! Skipped (with a message) when `ssh`, `ssh-keygen` or `tmux` is missing; failed
//! under `CI=true`.

use crate::support_tools::require_openssh_and_tmux;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::sync::Arc;
use std::time::Duration;

use gangplank::ssh::demo::DemoFactory;
use gangplank::ssh::{ServerHandle, SshServerOptions, serve};
use tokio::process::Command;
use tokio::time::Instant;

const DEADLINE: Duration = Duration::from_secs(30);

fn keygen(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let st = StdCommand::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&path)
        .status()
        .unwrap();
    assert!(st.success());
    path
}

async fn start(
    dir: &Path,
    authorized_pub: &Path,
) -> (ServerHandle, gangplank::ssh::demo::DemoFeed) {
    let authorized = dir.join("authorized_keys");
    std::fs::copy(authorized_pub, &authorized).unwrap();
    let opts = SshServerOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        authorized_keys: authorized,
        host_key: Some(dir.join("host_key")),
        auth_rejection_delay: Duration::from_millis(100),
        ..Default::default()
    };
    let (factory, feed) = DemoFactory::new();
    let server = serve(opts, Arc::clone(&factory), std::future::pending())
        .await
        .unwrap();
    (server, feed)
}

fn ssh_args(key: &Path, port: u16) -> Vec<String> {
    vec![
        "-F".into(),
        "/dev/null".into(),
        "-i".into(),
        key.display().to_string(),
        "-o".into(),
        "IdentitiesOnly=yes".into(),
        "-o".into(),
        "StrictHostKeyChecking=no".into(),
        "-o".into(),
        "UserKnownHostsFile=/dev/null".into(),
        "-o".into(),
        "BatchMode=yes".into(),
        "-o".into(),
        "LogLevel=ERROR".into(),
        "-p".into(),
        port.to_string(),
    ]
}

struct Tmux {
    socket: String,
}

impl Tmux {
    fn cmd(&self) -> StdCommand {
        let mut c = StdCommand::new("tmux");
        c.args(["-L", &self.socket]);
        c
    }
    fn capture(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-t", "t"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    }
    async fn wait_for(&self, needle: &str) -> String {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let pane = self.capture();
            if pane.contains(needle) {
                return pane;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {needle:?}; pane:\n{pane}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    fn send(&self, keys: &str) {
        let st = self
            .cmd()
            .args(["send-keys", "-t", "t", "-l", keys])
            .status()
            .unwrap();
        assert!(st.success());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        // Our own tmux server (private socket), not anyone else's.
        let _ = self.cmd().arg("kill-server").status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openssh_client_sees_demo_screen_and_q_quits() {
    if !require_openssh_and_tmux("the OpenSSH client tests") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let key = keygen(dir.path(), "viewer");
    let (server, feed) = start(dir.path(), &key.with_extension("pub")).await;
    let port = server.local_addr().port();

    let ssh = format!(
        "ssh -tt {} viewer@127.0.0.1; echo SSH-EXIT=$?; sleep 60",
        ssh_args(&key, port).join(" ")
    );
    let tmux = Tmux {
        socket: format!("gangplank-ssh-test-{}-{}", std::process::id(), line!()),
    };
    let st = tmux
        .cmd()
        .args(["new-session", "-d", "-x", "100", "-y", "30", "-s", "t"])
        .arg(ssh)
        .status()
        .unwrap();
    assert!(st.success());

    let pane = tmux.wait_for("gangplank").await;
    assert!(pane.contains("updates: 0"), "{pane}");
    assert!(pane.contains("size: 100x30"), "{pane}");
    feed.bump();
    tmux.wait_for("updates: 1").await;
    tmux.send("x");
    tmux.wait_for("last: Char('x')").await;
    tmux.send("q");
    let pane = tmux.wait_for("SSH-EXIT=0").await;
    assert!(!pane.contains("updates:"), "alternate screen left: {pane}");
    server.shutdown();
}

async fn ssh_batch(args: Vec<String>) -> std::process::Output {
    let fut = Command::new("ssh").args(args).arg("true").output();
    tokio::time::timeout(DEADLINE, fut)
        .await
        .expect("ssh did not finish")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openssh_wrong_key_and_password_are_refused() {
    if !require_openssh_and_tmux("the OpenSSH client tests") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let good = keygen(dir.path(), "good");
    let bad = keygen(dir.path(), "bad");
    let (server, _feed) = start(dir.path(), &good.with_extension("pub")).await;
    let port = server.local_addr().port();

    // Wrong key.
    let mut args = ssh_args(&bad, port);
    args.push("viewer@127.0.0.1".into());
    let out = ssh_batch(args).await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Permission denied (publickey)"), "{err}");

    // Password only: the server advertises publickey alone, so the client has no method.
    let mut args = ssh_args(&good, port);
    args.extend(
        [
            "-o",
            "PreferredAuthentications=password,keyboard-interactive",
            "-o",
            "PubkeyAuthentication=no",
            "viewer@127.0.0.1",
        ]
        .map(String::from),
    );
    let out = ssh_batch(args).await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Permission denied (publickey)"), "{err}");

    // Any user name with an authorized key is accepted (documented in docs/ssh.md);
    // `ssh host true` asks for exec, which is refused with a message.
    let mut args = ssh_args(&good, port);
    args.push("someone-else@127.0.0.1".into());
    let out = ssh_batch(args).await;
    assert!(!out.status.success());
    assert_eq!(server.active_sessions(), 0);
    server.shutdown();
}
