//! Read-only end to end: the real `gangplank serve-ssh` binary watches a simulator on
//! loopback through the real source (kube client, watchers, store, feed), a russh client
//! opens a session (pty + shell) and types every key of the console keymap, the action
//! keys with their confirmation, Enter/Esc, `:` commands, arrows, Ctrl, Alt and function
//! keys and pseudo-random bytes (UTF-8 included) in every view. The simulator's API
//! server counts requests by verb: it must have received zero writes.
//!
//! The test can fail: after the key storm the same binary runs `gangplank hold` (the
//! action executor the local console's `h` + `y` uses) against the same server, with the
//! same kubeconfig, and the counter must see that write. Every phase ends with a marker
//! (an unknown `:` command whose error text is unique) that the test waits for on the
//! screen, so keys are known to have been delivered and processed, and frames rendered.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crossterm::event::{KeyCode, KeyModifiers};
use gangplank::sim::{LiveOptions, LiveSim, Scenario, SimCluster, SimOptions};
use gangplank::tui::keymap::{KeyAction, KeyChord, Keymap};
use russh::client;
use tokio::io::{AsyncBufReadExt, BufReader};

use super::client::{Viewer, connect, new_key, write_authorized};

/// Live cluster waits (the simulator has to reach the state first) get longer deadlines.
const LIVE_DEADLINE: Duration = Duration::from_secs(120);

/// The bytes a terminal in raw mode sends for a key chord.
fn chord_bytes(chord: &KeyChord) -> Vec<u8> {
    let ctrl = chord.modifiers.contains(KeyModifiers::CONTROL);
    let mut out = Vec::new();
    if chord.modifiers.contains(KeyModifiers::ALT) {
        out.push(0x1b);
    }
    match chord.code {
        KeyCode::Char(c) if ctrl => out.push((c.to_ascii_lowercase() as u8) & 0x1f),
        KeyCode::Char(c) => out.extend_from_slice(c.to_string().as_bytes()),
        KeyCode::Enter => out.push(b'\r'),
        KeyCode::Esc => out.push(0x1b),
        KeyCode::Tab => out.push(b'\t'),
        KeyCode::BackTab => out.extend_from_slice(b"\x1b[Z"),
        KeyCode::Backspace => out.push(0x7f),
        KeyCode::Up => out.extend_from_slice(b"\x1b[A"),
        KeyCode::Down => out.extend_from_slice(b"\x1b[B"),
        KeyCode::Right => out.extend_from_slice(b"\x1b[C"),
        KeyCode::Left => out.extend_from_slice(b"\x1b[D"),
        KeyCode::Home => out.extend_from_slice(b"\x1b[H"),
        KeyCode::End => out.extend_from_slice(b"\x1b[F"),
        KeyCode::PageUp => out.extend_from_slice(b"\x1b[5~"),
        KeyCode::PageDown => out.extend_from_slice(b"\x1b[6~"),
        KeyCode::Delete => out.extend_from_slice(b"\x1b[3~"),
        other => panic!("no terminal encoding for {other:?} in this test"),
    }
    out
}

/// Every default key except the quit keys, each followed by every action key and its
/// confirmation, so the actions are tried in every state a key leads to (detail pane,
/// drill-in, help overlay, filter and command line).
fn keymap_storm() -> Vec<u8> {
    let keymap = Keymap::default();
    let mut out = Vec::new();
    for action in KeyAction::all().filter(|a| *a != KeyAction::Quit) {
        for chord in keymap.keys_for(action) {
            out.extend(chord_bytes(chord));
            out.extend_from_slice(b"ayhyrypy");
        }
    }
    out
}

/// Rows 0..6 selected in turn, each opened with Enter and hit with every action key.
fn rows_storm() -> Vec<u8> {
    let mut out = b"g".to_vec();
    for _ in 0..6 {
        // ESC ESC ESC [B: Esc, Esc, Down (ESC j would be Alt-j).
        out.extend_from_slice(b"ayhyrypy\rayhyrypy\x1b\x1b\x1b[B");
    }
    out
}

/// Keys outside the keymap: modified arrows, F1-F12, Insert/Delete, Alt and Ctrl keys
/// (not Ctrl-C), commands named after the actions, UTF-8.
fn special_storm() -> Vec<u8> {
    let mut out = Vec::new();
    for s in [
        &b"\x1b[1;5A\x1b[1;2B\x1b[1;3C\x1b[1;6D\x1bOA\x1bOB\x1bOH\x1bOF"[..],
        b"\x1bOP\x1bOQ\x1bOR\x1bOS\x1b[15~\x1b[17~\x1b[18~\x1b[19~\x1b[20~\x1b[21~\x1b[23~\x1b[24~",
        b"\x1b[[A\x1b[[E\x1b[2~\x1b[3~\x1b[1~\x1b[4~\x1b[Z",
        b"\x1ba\x1by\x1bh\x1br\x1bp\x1b\r\x1b\x7f",
        b":approve\r:hold\r:resume\r:reprioritize\r:set-priority\r:wl\r:cq\r:ctx\r:help\r\x1b",
        b"/state=pending\r\rayhyrypy\x1b\x1b",
        "é漢字🚀ß\u{200b}".as_bytes(),
    ] {
        out.extend_from_slice(s);
    }
    for c in 0x01u8..=0x1a {
        if c != 0x03 {
            out.push(c);
            out.extend_from_slice(b"y");
        }
    }
    out
}

/// Pseudo-random bytes (fixed seed per view), minus the three ways to quit: `q`/`Q`
/// (`:q` quits, case-insensitively) and Ctrl-C (0x03, also as ESC 0x03).
fn random_storm(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let b = (x >> 24) as u8;
        if !matches!(b, 0x03 | b'q' | b'Q') {
            out.push(b);
        }
    }
    out
}

/// Sends `keys`, then a phase marker, and waits until the screen shows the marker's
/// error: every key before it has been decoded, handled and a frame rendered since.
async fn phase(v: &mut Viewer, n: &mut u32, keys: &[u8]) {
    *n += 1;
    for chunk in keys.chunks(512) {
        v.channel.data_bytes(chunk.to_vec()).await.unwrap();
    }
    // Esc out of whatever mode the keys left (filter, command, help), then the marker.
    // Each Esc is its own write: a lone ESC at the end of a read is the Esc key, while
    // ESC followed by `:` in the same read would be Alt-:.
    for _ in 0..3 {
        v.channel.data_bytes(&b"\x1b"[..]).await.unwrap();
    }
    let marker = format!("zz{n}zz");
    v.channel
        .data_bytes(format!(":{marker}\r").into_bytes())
        .await
        .unwrap();
    v.wait_for(&format!("unknown command :{marker}")).await;
}

fn rows_with<'a>(screen: &'a str, needle: &str) -> Vec<&'a str> {
    screen.lines().filter(|l| l.contains(needle)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_key_sequence_causes_a_write_request_at_the_simulator() {
    let dir = tempfile::tempdir().unwrap();
    // Kueue never preempts by itself here, so the Plan view holds a proposal for `a`.
    let scenario = Scenario::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/scenarios/seed-approval.yaml"),
    )
    .unwrap();
    let sim = LiveSim::start(
        SimCluster::from_scenario(&scenario, SimOptions::live()),
        LiveOptions {
            // Slow enough that the normal jobs still run (and the proposal stands) for the
            // whole test: the boss arrives after 20 s, the others finish after 6 min.
            speed: 30.0,
            ..LiveOptions::default()
        },
    )
    .await
    .unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig).unwrap();
    let stats = sim.server().stats().clone();

    let key = new_key();
    let authorized = write_authorized(dir.path(), &[&key]);
    let bin = env!("CARGO_BIN_EXE_gangplank");
    let mut server = tokio::process::Command::new(bin)
        .args([
            "serve-ssh",
            "--listen",
            "127.0.0.1:0",
            "--idle-timeout",
            "0",
        ])
        .args(["--context", "gangplank-sim"])
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg("--authorized-keys")
        .arg(&authorized)
        .arg("--host-key")
        .arg(dir.path().join("host_key"))
        .env("XDG_CONFIG_HOME", dir.path())
        .env("XDG_STATE_HOME", dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let addr: std::net::SocketAddr = loop {
        let line = tokio::time::timeout(LIVE_DEADLINE, lines.next_line())
            .await
            .expect("serve-ssh printed no address")
            .unwrap()
            .expect("serve-ssh exited");
        if let Some(a) = line.strip_prefix("gangplank serve-ssh listening on ") {
            break a.trim().parse().unwrap();
        }
    };

    let mut v = connect(addr, &key, client::Config::default(), 150, 45).await;
    v.wait_screen("the workloads from the simulator", LIVE_DEADLINE, |s| {
        // The JOB column names the job (issue #12), not the generated Workload name.
        s.contains("READ-ONLY") && s.contains("bert-pretrain")
    })
    .await;
    // The console watches this server: its watches are counted here.
    assert!(stats.count_verb("watch") > 0, "{:?}", stats.snapshot());

    // Wait for the preemption proposal, so `a` in the Plan view has a target.
    v.channel.data_bytes(&b"4"[..]).await.unwrap();
    v.wait_screen("the proposal in the Plan view", LIVE_DEADLINE, |s| {
        rows_with(s, "evict")
            .iter()
            .any(|l| l.contains("gpt-eval") && l.contains("yolo-train"))
    })
    .await;

    let mut n = 0;
    for (i, view) in (b'1'..=b'7').enumerate() {
        phase(&mut v, &mut n, &[view]).await;
        // Each action key reaches the session in this view and is refused.
        for (k, name) in [
            (b'a', "approve"),
            (b'h', "hold"),
            (b'r', "resume"),
            (b'p', "reprioritize"),
        ] {
            v.channel.data_bytes(vec![b'g', k]).await.unwrap();
            v.wait_for(&format!("read-only: {name} is disabled")).await;
            v.channel.data_bytes(&b"y"[..]).await.unwrap();
        }
        phase(&mut v, &mut n, &[view]).await;
        phase(&mut v, &mut n, &rows_storm()).await;
        phase(&mut v, &mut n, &[view]).await;
        phase(&mut v, &mut n, &keymap_storm()).await;
        phase(&mut v, &mut n, &[view]).await;
        phase(&mut v, &mut n, &special_storm()).await;
        phase(&mut v, &mut n, &[view]).await;
        phase(&mut v, &mut n, &random_storm(i as u64 + 1, 4096)).await;
    }

    // The session is alive and drew a frame for every phase.
    assert!(
        v.frames >= u64::from(n),
        "{} frames for {n} phases",
        v.frames
    );
    let writes = stats.write_count();
    assert_eq!(
        writes,
        0,
        "write requests reached the simulator: {:?}",
        stats.snapshot()
    );

    // The counter does see a write made by this binary through the same kubeconfig and
    // client path: the executor the console's `h` then `y` would use.
    let held = tokio::process::Command::new(bin)
        .args([
            "hold",
            "nlp-team/bert-pretrain",
            "--yes",
            "--context",
            "gangplank-sim",
        ])
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg("--audit-log")
        .arg(dir.path().join("audit.jsonl"))
        .env("XDG_CONFIG_HOME", dir.path())
        .env("XDG_STATE_HOME", dir.path())
        .output()
        .await
        .unwrap();
    assert!(
        held.status.success(),
        "gangplank hold failed: {}",
        String::from_utf8_lossy(&held.stderr)
    );
    assert!(
        stats.write_count() > 0,
        "the hold's write was not counted: {:?}",
        stats.snapshot()
    );

    drop(v);
    let _ = server.kill().await;
    sim.shutdown().await;
}
