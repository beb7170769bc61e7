//! `serve-ssh` without `--log-file` still writes its audit log: every authentication
//! attempt goes to stderr (it was silently dropped before).

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use russh::client;
use russh::keys::PrivateKeyWithHashAlg;
use tokio::io::{AsyncBufReadExt, BufReader};

use super::client::{AcceptAll, connect, new_key, write_authorized};

const DEADLINE: Duration = Duration::from_secs(120);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authentication_is_logged_to_stderr_without_a_log_file() {
    let dir = tempfile::tempdir().unwrap();
    let key = new_key();
    let authorized = write_authorized(dir.path(), &[&key]);
    let mut server = tokio::process::Command::new(env!("CARGO_BIN_EXE_gangplank"))
        .args(["serve-ssh", "--demo", "--listen", "127.0.0.1:0"])
        .arg("--authorized-keys")
        .arg(&authorized)
        .arg("--host-key")
        .arg(dir.path().join("host_key"))
        .env("XDG_CONFIG_HOME", dir.path())
        .env("XDG_STATE_HOME", dir.path())
        .env_remove("GANGPLANK_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut out = BufReader::new(server.stdout.take().unwrap()).lines();
    let addr: std::net::SocketAddr = loop {
        let line = tokio::time::timeout(DEADLINE, out.next_line())
            .await
            .expect("serve-ssh printed no address")
            .unwrap()
            .expect("serve-ssh exited");
        if let Some(a) = line.strip_prefix("gangplank serve-ssh listening on ") {
            break a.trim().parse().unwrap();
        }
    };

    // A stranger's key is refused…
    let stranger = new_key();
    let mut session = client::connect(Arc::new(client::Config::default()), addr, AcceptAll)
        .await
        .unwrap();
    let auth = session
        .authenticate_publickey(
            "mallory",
            PrivateKeyWithHashAlg::new(Arc::new(stranger), None),
        )
        .await
        .unwrap();
    assert!(!auth.success());
    // …the listed one gets in.
    let _viewer = connect(addr, &key, client::Config::default(), 80, 24).await;

    let mut err = BufReader::new(server.stderr.take().unwrap()).lines();
    let (mut rejected, mut accepted) = (false, false);
    let mut seen = Vec::new();
    while !(rejected && accepted) {
        let line = tokio::time::timeout(DEADLINE, err.next_line())
            .await
            .unwrap_or_else(|_| panic!("no auth lines on stderr; saw:\n{}", seen.join("\n")))
            .unwrap()
            .unwrap_or_else(|| panic!("stderr closed; saw:\n{}", seen.join("\n")));
        if line.contains("gangplank::ssh::auth") {
            rejected |= line.contains("mallory") && line.contains("rejected");
            accepted |= line.contains("viewer") && line.contains("accepted");
        }
        seen.push(line);
    }
    let _ = server.start_kill();
}
