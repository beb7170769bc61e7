//! SSH server tests with the russh client on 127.0.0.1: many sessions with one stalled
//! client, limits, read-only seam, panic isolation, host key and authorized_keys files.
//! No sleeps as synchronisation: everything waits on conditions with deadlines.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use gangplank::ssh::demo::{DemoData, DemoFactory, DemoFeed};
use gangplank::ssh::keys::KeySet;
use gangplank::ssh::{
    KeyOutcome, ServerHandle, SessionApp, SessionAppFactory, SessionInfo, SshServerOptions, serve,
};
use ratatui::Frame;
use ratatui::widgets::Paragraph;
use russh::client;
use russh::keys::{PrivateKey, PrivateKeyWithHashAlg};
use tokio::sync::watch;
use tokio::time::{Instant, timeout};

use super::client::{AcceptAll, DEADLINE, Screen, Viewer, connect, new_key, write_authorized};

fn options(dir: &Path, authorized: std::path::PathBuf) -> SshServerOptions {
    SshServerOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        authorized_keys: authorized,
        host_key: Some(dir.join("host_key")),
        auth_rejection_delay: Duration::from_millis(200),
        ..Default::default()
    }
}

async fn start<F: SessionAppFactory>(opts: SshServerOptions, factory: Arc<F>) -> ServerHandle {
    serve(opts, factory, std::future::pending()).await.unwrap()
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

async fn wait_until(mut cond: impl FnMut() -> bool, what: &str) {
    let deadline = Instant::now() + DEADLINE;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

// --- a test app that repaints the whole screen on every update, to fill windows fast ---

struct FloodFactory(watch::Receiver<DemoData>);
struct FloodApp;

impl SessionAppFactory for FloodFactory {
    type Data = DemoData;
    fn subscribe(&self) -> watch::Receiver<DemoData> {
        self.0.clone()
    }
    fn new_session(&self, _info: &SessionInfo) -> Box<dyn SessionApp<DemoData>> {
        Box::new(FloodApp)
    }
}

impl SessionApp<DemoData> for FloodApp {
    fn on_key(&mut self, _key: crossterm::event::KeyEvent) -> KeyOutcome {
        KeyOutcome::Continue
    }
    fn render(&mut self, data: &DemoData, frame: &mut Frame<'_>) {
        let area = frame.area();
        let fill = char::from(b'a' + (data.updates % 26) as u8);
        let mut text = format!("updates: {} end\n", data.updates);
        for _ in 1..area.height {
            text.extend(std::iter::repeat_n(fill, area.width as usize));
            text.push('\n');
        }
        frame.render_widget(Paragraph::new(text), area);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_sessions_keep_receiving_while_one_client_stalls() {
    let _ = tracing_subscriber::fmt().with_test_writer().try_init();
    let dir = tempfile::tempdir().unwrap();
    let key = new_key();
    let mut opts = options(dir.path(), write_authorized(dir.path(), &[&key]));
    opts.max_sessions = 32;
    opts.max_unauthenticated = 32;
    let (tx, rx) = watch::channel(DemoData::default());
    let server = start(opts, Arc::new(FloodFactory(rx))).await;
    let addr = server.local_addr();

    // The stalled client: a tiny window and a 1-message channel buffer, and we never
    // read it, so its connection stops draining and the server's send window fills.
    let stalled_cfg = client::Config {
        window_size: 8 * 1024,
        channel_buffer_size: 1,
        ..Default::default()
    };
    let mut stalled = connect(addr, &key, stalled_cfg, 120, 40).await;

    let mut viewers = Vec::new();
    for _ in 0..19 {
        viewers.push(connect(addr, &key, client::Config::default(), 80, 24).await);
    }
    for v in &mut viewers {
        v.wait_for("updates: 0 end").await;
    }
    wait_until(|| server.active_sessions() == 20, "20 sessions").await;

    // Enough full-screen updates to exhaust the stalled client's window many times.
    for round in 1..=40u64 {
        tx.send_modify(|d| d.updates = round);
        // Every round is a real frame for every reading viewer.
        for v in &mut viewers {
            v.wait_for(&format!("updates: {round} end")).await;
        }
    }
    // The stalled client now resumes reading: it catches up with the LATEST frame
    // (intermediate ones were skipped, a full repaint is sent).
    tx.send_modify(|d| d.updates = 41);
    for v in &mut viewers {
        v.wait_for("updates: 41 end").await;
    }
    stalled.wait_for("updates: 41 end").await;
    server.shutdown();
    wait_until(|| server.active_sessions() == 0, "sessions ended").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_screen_keys_and_quit() {
    let dir = tempfile::tempdir().unwrap();
    let key = new_key();
    let opts = options(dir.path(), write_authorized(dir.path(), &[&key]));
    let (factory, feed) = DemoFactory::new();
    let server = start(opts, factory.clone()).await;
    let mut v = connect(
        server.local_addr(),
        &key,
        client::Config::default(),
        100,
        30,
    )
    .await;
    v.wait_for("gangplank").await;
    feed.bump();
    v.wait_for("updates: 1").await;
    v.channel.data_bytes(&b"\x1b[A"[..]).await.unwrap();
    v.wait_for("Up").await;
    v.channel.data_bytes(&b"q"[..]).await.unwrap();
    let (_, exit) = v.wait_closed().await;
    assert_eq!(exit, Some(0));
    wait_until(|| server.active_sessions() == 0, "session slot released").await;
}

/// The seam gives sessions keys in and `&Data` out; there is no write path. Hammer a
/// session with every kind of key and check the shared data was never modified.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_key_sequence_writes() {
    let dir = tempfile::tempdir().unwrap();
    let key = new_key();
    let opts = options(dir.path(), write_authorized(dir.path(), &[&key]));
    let (factory, feed): (Arc<DemoFactory>, DemoFeed) = DemoFactory::new();
    let server = start(opts, factory.clone()).await;
    let mut v = connect(
        server.local_addr(),
        &key,
        client::Config::default(),
        100,
        30,
    )
    .await;
    v.wait_for("gangplank").await;
    let mut all: Vec<u8> = Vec::new();
    for b in 0u8..=255 {
        if b != b'q' && b != 0x03 && b != 0x11 {
            all.push(b);
        }
    }
    for s in [
        &b"\x1b[A\x1b[B\x1b[5~\x1b[6~\x1b[3~\x1b[2~\x1bOP\x1b[24~\x1b[Z\r\t\x7f"[..],
        b"dDeEsSyYpPrR!:/",
        &all,
    ] {
        v.channel.data_bytes(s.to_vec()).await.unwrap();
    }
    v.channel.data_bytes(&b"\x1b[H"[..]).await.unwrap();
    v.wait_for("Home").await;
    assert_eq!(feed.get(), DemoData { updates: 0 });
    // Compile-time half of the guarantee: a session app only ever sees `&Data`.
    fn _seam_is_read_only(app: &mut dyn SessionApp<DemoData>, d: &DemoData, f: &mut Frame<'_>) {
        app.render(d, f);
    }
    server.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extra_sessions_are_refused_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let key = new_key();
    let mut opts = options(dir.path(), write_authorized(dir.path(), &[&key]));
    opts.max_sessions = 1;
    let (factory, _feed) = DemoFactory::new();
    let server = start(opts, factory).await;
    let mut first = connect(server.local_addr(), &key, client::Config::default(), 80, 24).await;
    first.wait_for("gangplank").await;
    let mut second = connect(server.local_addr(), &key, client::Config::default(), 80, 24).await;
    let (bytes, exit) = second.wait_closed().await;
    assert!(
        contains(&bytes, b"server full (1 sessions)"),
        "{:?}",
        String::from_utf8_lossy(&bytes)
    );
    assert_eq!(exit, Some(1));
    // The first session is unaffected.
    first.channel.data_bytes(&b"x"[..]).await.unwrap();
    first.wait_for("Char('x')").await;
    server.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_session_ends_alone() {
    let dir = tempfile::tempdir().unwrap();
    let key = new_key();
    let opts = options(dir.path(), write_authorized(dir.path(), &[&key]));
    let (factory, feed) = DemoFactory::with_panic_user("boom");
    let server = start(opts, factory).await;
    let addr = server.local_addr();
    let mut good = connect(addr, &key, client::Config::default(), 80, 24).await;
    good.wait_for("gangplank").await;

    let mut session = client::connect(Arc::new(client::Config::default()), addr, AcceptAll)
        .await
        .unwrap();
    let auth = session
        .authenticate_publickey(
            "boom",
            PrivateKeyWithHashAlg::new(Arc::new(key.clone()), None),
        )
        .await
        .unwrap();
    assert!(auth.success());
    let ch = session.channel_open_session().await.unwrap();
    ch.request_pty(false, "xterm", 80, 24, 0, 0, &[])
        .await
        .unwrap();
    ch.request_shell(false).await.unwrap();
    let mut bad = Viewer {
        _session: session,
        channel: ch,
        screen: Vec::new(),
        term: Screen::new(80, 24),
        frames: 0,
    };
    let (bytes, exit) = bad.wait_closed().await;
    assert!(contains(&bytes, b"internal error"));
    assert_eq!(exit, Some(1));

    feed.bump();
    good.wait_for("updates: 1").await;
    good.channel.data_bytes(&b"z"[..]).await.unwrap();
    good.wait_for("Char('z')").await;
    server.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_key_is_refused_and_file_reload_admits_it() {
    let dir = tempfile::tempdir().unwrap();
    let good = new_key();
    let other = new_key();
    let authorized = write_authorized(dir.path(), &[&good]);
    let opts = options(dir.path(), authorized.clone());
    let (factory, _feed) = DemoFactory::new();
    let server = start(opts, factory).await;
    let addr = server.local_addr();

    let try_login = |k: PrivateKey| async move {
        let mut s = client::connect(Arc::new(client::Config::default()), addr, AcceptAll)
            .await
            .unwrap();
        s.authenticate_publickey("anyone", PrivateKeyWithHashAlg::new(Arc::new(k), None))
            .await
            .unwrap()
            .success()
    };
    let started = Instant::now();
    assert!(!try_login(other.clone()).await);
    // The rejection is padded to the configured delay.
    assert!(started.elapsed() >= Duration::from_millis(200));

    // Re-written file (size changes) is picked up on the next attempt.
    write_authorized(dir.path(), &[&good, &other]);
    assert!(try_login(other.clone()).await);
    server.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_grace_disconnects_idle_unauthenticated_connections() {
    let dir = tempfile::tempdir().unwrap();
    let key = new_key();
    let mut opts = options(dir.path(), write_authorized(dir.path(), &[&key]));
    opts.login_grace = Duration::from_millis(300);
    opts.max_unauthenticated = 1;
    let (factory, _feed) = DemoFactory::new();
    let server = start(opts, factory).await;
    // A raw TCP connection that never speaks SSH holds the only pre-auth slot…
    let mut idle = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    // …until the grace time closes it (read returns EOF / error).
    let mut buf = [0u8; 256];
    let closed = timeout(DEADLINE, async {
        loop {
            use tokio::io::AsyncReadExt;
            match idle.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "connection not closed after login grace");
    // The slot is free again: a real client gets in.
    let mut v = connect(server.local_addr(), &key, client::Config::default(), 80, 24).await;
    v.wait_for("gangplank").await;
    server.shutdown();
}

#[tokio::test]
async fn host_key_is_created_0600_and_reused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state").join("host_key");
    let first = gangplank::ssh::host_key::load_or_generate(&path).unwrap();
    assert!(first.generated);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let second = gangplank::ssh::host_key::load_or_generate(&path).unwrap();
    assert!(!second.generated);
    assert_eq!(first.fingerprint, second.fingerprint);
    assert!(first.fingerprint.starts_with("SHA256:"));

    // Through serve(): the server reports the same fingerprint after a restart.
    let key = new_key();
    let mut opts = options(dir.path(), write_authorized(dir.path(), &[&key]));
    opts.host_key = Some(path.clone());
    let (factory, _feed) = DemoFactory::new();
    let s1 = start(opts.clone(), factory.clone()).await;
    assert_eq!(s1.host_key_fingerprint(), first.fingerprint);
    s1.shutdown();
    s1.wait().await;
    let s2 = start(opts, factory).await;
    assert_eq!(s2.host_key_fingerprint(), first.fingerprint);
    s2.shutdown();
}

#[test]
fn authorized_keys_errors_carry_line_numbers() {
    let a = new_key().public_key().to_openssh().unwrap();
    let b = new_key().public_key().to_openssh().unwrap();
    let text = format!("# team keys\n{a}\nssh-ed25519 !!!notbase64\n\nno-pty {b} carol\n{b}\n");
    let set = KeySet::parse(&text);
    assert_eq!(
        set.keys.iter().map(|k| k.line).collect::<Vec<_>>(),
        vec![2, 6]
    );
    let errs: Vec<String> = set.errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(errs[0].starts_with("line 3:"), "{errs:?}");
    assert!(
        errs[1].starts_with("line 5:") && errs[1].contains("no-pty"),
        "{errs:?}"
    );
}

// --- a test app whose picture changes with every draw, like the console's ages ---

struct CountingFactory(watch::Receiver<DemoData>);
struct CountingApp(u64);

impl SessionAppFactory for CountingFactory {
    type Data = DemoData;
    fn subscribe(&self) -> watch::Receiver<DemoData> {
        self.0.clone()
    }
    fn new_session(&self, _info: &SessionInfo) -> Box<dyn SessionApp<DemoData>> {
        Box::new(CountingApp(0))
    }
}

impl SessionApp<DemoData> for CountingApp {
    fn on_key(&mut self, _key: crossterm::event::KeyEvent) -> KeyOutcome {
        KeyOutcome::Continue
    }
    fn render(&mut self, _data: &DemoData, frame: &mut Frame<'_>) {
        self.0 += 1;
        frame.render_widget(Paragraph::new(format!("draw #{}", self.0)), frame.area());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_is_redrawn_by_the_age_refresh_alone() {
    let dir = tempfile::tempdir().unwrap();
    let key = new_key();
    let mut opts = options(dir.path(), write_authorized(dir.path(), &[&key]));
    opts.age_refresh = Some(Duration::from_millis(100));
    // The feed never changes and no key is sent: only the refresh can redraw.
    let (_tx, rx) = watch::channel(DemoData::default());
    let server = start(opts, Arc::new(CountingFactory(rx))).await;
    let mut viewer = connect(server.local_addr(), &key, client::Config::default(), 40, 5).await;
    viewer.wait_for("draw #1").await;
    viewer.wait_for("draw #3").await;
    server.shutdown();
}
