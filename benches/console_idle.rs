//! Console idle cost through a real pty: bytes written per idle minute and CPU while
//! nothing changes, beside a baseline from the same run (the first full frame).
//!
//! Runs the real binary on a static dump (`gangplank -f docs/scenarios/seed.yaml`)
//! under `script(1)`, which gives it a pty, then watches an idle window.
//! Run: `cargo bench --bench console_idle`

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const IDLE_WINDOW: Duration = Duration::from_secs(20);

/// utime + stime of a process, in clock ticks.
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// The gangplank process that `script` started (a descendant with our binary).
fn find_console_pid(bin: &str) -> Option<u32> {
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.starts_with(bin) && cmdline.contains(" -f ") {
            return Some(pid);
        }
    }
    None
}

fn main() {
    if Command::new("script").arg("--version").output().is_err() {
        println!("script(1) is not installed: cannot measure through a pty");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_gangplank");
    let inner = format!("stty cols 120 rows 40; exec {bin} -f docs/scenarios/seed.yaml");
    let mut child = Command::new("script")
        .args(["-qfec", &inner, "/dev/null"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("TERM", "xterm-256color")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start script(1)");
    let bytes = Arc::new(AtomicUsize::new(0));
    let mut stdout = child.stdout.take().unwrap();
    let counter = bytes.clone();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            counter.fetch_add(n, Ordering::Relaxed);
        }
    });

    // The first frame: the first output, plus two seconds for the first plan to land.
    let deadline = Instant::now() + Duration::from_secs(30);
    while bytes.load(Ordering::Relaxed) == 0 {
        assert!(
            Instant::now() < deadline,
            "the console drew nothing in 30 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(2));
    let first_frame = bytes.load(Ordering::Relaxed);
    let pid = find_console_pid(bin).expect("find the console process");
    let ticks_per_sec = 100.0; // USER_HZ on Linux
    let cpu_before = cpu_ticks(pid).unwrap_or(0);
    let t = Instant::now();
    std::thread::sleep(IDLE_WINDOW);
    let idle_bytes = bytes.load(Ordering::Relaxed) - first_frame;
    let cpu_after = cpu_ticks(pid).unwrap_or(cpu_before);
    let secs = t.elapsed().as_secs_f64();

    if let Some(stdin) = child.stdin.as_mut() {
        let _ = stdin.write_all(b"q");
    }
    let _ = child.wait();
    let _ = reader.join();

    let cpu_pct = (cpu_after - cpu_before) as f64 / ticks_per_sec / secs * 100.0;
    println!("baseline: first full frame at 120x40       {first_frame:>8} bytes");
    println!(
        "idle: bytes written per minute             {:>8.0} bytes  (goal ~0; a tick draws only when a visible age changed)",
        idle_bytes as f64 * 60.0 / secs
    );
    println!("idle: CPU over {secs:.0} s                       {cpu_pct:>8.2} %  (goal ~0)");
}
