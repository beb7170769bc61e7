//! `serve-ssh` idle cost: resident memory per connected session and CPU while nothing
//! changes, beside a baseline from the same run (the same process with 0 sessions).
//!
//! The real binary (`gangplank serve-ssh`) watches a simulator API server that runs in
//! this process on loopback with the seed scenario loaded and NO driver: nothing in the
//! cluster changes. 20 russh clients (in this process, so they do not count) open a pty
//! and a shell, receive their first frame and then stay idle. The figures are read from
//! the server process's /proc/PID/status (VmRSS) and /proc/PID/stat (utime+stime).
//! Run: `cargo bench --bench ssh_idle`

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use gangplank::sim::api::{ServerOptions, serve};
use gangplank::sim::{Scenario, SimCluster, SimOptions};
use russh::keys::{Algorithm, PrivateKey, PrivateKeyWithHashAlg};
use russh::{ChannelMsg, client};

const SESSIONS: usize = 20;
const IDLE_WINDOW: Duration = Duration::from_secs(10);
/// Time for the server to settle after the watches synced / the sessions drew.
const SETTLE: Duration = Duration::from_secs(3);
const COLS: u32 = 120;
const ROWS: u32 = 40;

struct Killed(Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// VmRSS of a process, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// utime + stime of a process, in clock ticks (USER_HZ = 100 on Linux).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let Some((_, after)) = stat.rsplit_once(')') else {
        return 0;
    };
    let f: Vec<&str> = after.split_whitespace().collect();
    let field = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    field(11) + field(12)
}

/// CPU use of `pid` over `window`, in percent of one core.
fn cpu_over(pid: u32, window: Duration) -> f64 {
    let before = cpu_ticks(pid);
    let t = Instant::now();
    std::thread::sleep(window);
    let ticks = cpu_ticks(pid) - before;
    ticks as f64 / 100.0 / t.elapsed().as_secs_f64() * 100.0
}

struct AcceptAll;
impl client::Handler for AcceptAll {
    type Error = russh::Error;
    async fn check_server_key(
        &mut self,
        _key: &russh::keys::PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        Ok(true)
    }
}

/// One idle viewer: connects, opens pty + shell, then counts every byte it receives.
async fn viewer(addr: SocketAddr, key: Arc<PrivateKey>, received: Arc<AtomicU64>) {
    let mut session = client::connect(Arc::new(client::Config::default()), addr, AcceptAll)
        .await
        .expect("connect");
    let auth = session
        .authenticate_publickey("bench", PrivateKeyWithHashAlg::new(key, None))
        .await
        .expect("auth");
    assert!(auth.success(), "the bench key was refused");
    let mut channel = session.channel_open_session().await.expect("channel");
    channel
        .request_pty(false, "xterm-256color", COLS, ROWS, 0, 0, &[])
        .await
        .expect("pty");
    channel.request_shell(false).await.expect("shell");
    while let Some(msg) = channel.wait().await {
        if let ChannelMsg::Data { data } = msg {
            received.fetch_add(data.len() as u64, Ordering::SeqCst);
        }
    }
    drop(session);
}

fn wait_until(what: &str, secs: u64, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();

    // A static cluster: the seed scenario settled at its start, served without a driver.
    let mut cluster = SimCluster::from_scenario(&Scenario::seed(), SimOptions::live());
    cluster.advance_by(5 * 60_000);
    let sim = rt
        .block_on(serve(cluster.store().clone(), ServerOptions::default()))
        .expect("start the simulator API server");
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig).unwrap();

    let key = Arc::new(PrivateKey::random(&mut rand::rng(), Algorithm::Ed25519).unwrap());
    let authorized = dir.path().join("authorized_keys");
    std::fs::write(
        &authorized,
        format!("{}\n", key.public_key().to_openssh().unwrap()),
    )
    .unwrap();

    let mut server = Killed(
        Command::new(env!("CARGO_BIN_EXE_gangplank"))
            .arg("serve-ssh")
            .args(["--listen", "127.0.0.1:0", "--max-sessions", "32"])
            .args(["--idle-timeout", "0", "--context", "gangplank-sim"])
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .arg("--authorized-keys")
            .arg(&authorized)
            .arg("--host-key")
            .arg(dir.path().join("host_key"))
            .arg("--config")
            .arg(dir.path().join("no-config.toml"))
            .env("XDG_CONFIG_HOME", dir.path())
            .env("XDG_STATE_HOME", dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start gangplank serve-ssh"),
    );
    let pid = server.0.id();
    let mut lines = BufReader::new(server.0.stdout.take().unwrap()).lines();
    let addr: SocketAddr = loop {
        let line = lines.next().expect("serve-ssh exited").unwrap();
        if let Some(a) = line.strip_prefix("gangplank serve-ssh listening on ") {
            break a.trim().parse().unwrap();
        }
    };

    // Baseline: the watches are open (every watched resource listed and watching),
    // then let the first plan and the feed settle.
    let stats = sim.stats().clone();
    wait_until("the source's watches", 60, || {
        stats.count_verb("watch") >= 5
    });
    std::thread::sleep(SETTLE);
    let rss0 = rss_kib(pid);
    let cpu0 = cpu_over(pid, IDLE_WINDOW);

    // 20 sessions, each with its first frame.
    let received: Vec<Arc<AtomicU64>> =
        (0..SESSIONS).map(|_| Arc::new(AtomicU64::new(0))).collect();
    // One at a time: the server admits at most 16 unauthenticated connections at once.
    for r in &received {
        rt.spawn(viewer(addr, key.clone(), r.clone()));
        wait_until("a session's first frame", 60, || {
            r.load(Ordering::SeqCst) > 1000
        });
    }
    std::thread::sleep(SETTLE);
    let first_frames: u64 = received.iter().map(|r| r.load(Ordering::SeqCst)).sum();
    let rss20 = rss_kib(pid);
    let bytes_before = first_frames;
    let cpu20 = cpu_over(pid, IDLE_WINDOW);
    let idle_bytes: u64 = received
        .iter()
        .map(|r| r.load(Ordering::SeqCst))
        .sum::<u64>()
        - bytes_before;
    let writes = stats.write_count();

    drop(server);
    rt.block_on(async {
        let _ = sim.shutdown().await;
    });
    rt.shutdown_background();

    let per_session_kib = (rss20 as f64 - rss0 as f64) / SESSIONS as f64;
    println!(
        "baseline: serve-ssh with 0 sessions: RSS {:>8.1} MiB",
        rss0 as f64 / 1024.0
    );
    println!(
        "baseline: CPU with 0 sessions over {:.0} s:   {cpu0:>8.2} %",
        IDLE_WINDOW.as_secs_f64()
    );
    println!(
        "{SESSIONS} idle sessions at {COLS}x{ROWS}:         RSS {:>8.1} MiB",
        rss20 as f64 / 1024.0
    );
    println!(
        "RSS per session:                       {:>8.0} KiB  (goal <= 2048 KiB)",
        per_session_kib
    );
    println!(
        "CPU with {SESSIONS} idle sessions over {:.0} s:  {cpu20:>8.2} %  (goal ~0)",
        IDLE_WINDOW.as_secs_f64()
    );
    println!(
        "bytes sent in the idle window:         {idle_bytes:>8}      (first frames: {} bytes/session)",
        first_frames / SESSIONS as u64
    );
    println!("write requests at the simulator:       {writes:>8}");
}
