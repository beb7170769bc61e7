//! Issue #14 finding 3: deeply nested YAML cost quadratic CPU before the parser's
//! recursion-limit error: 200 KB of `[[[…]]]` took 73 s in `plan -f`, and two such
//! server-side-apply bodies froze the whole simulator API for ~50 s (every
//! `GET /version` timed out). Now every input is checked for nesting in linear time
//! before a parser sees it, and API writes run off the async workers with a timeout.
//! The tests assert the refusal and its wording; deadlines only keep them from hanging
//! (before the fix they ran into these deadlines).

use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gangplank::sim::{ObjectStore, ServerOptions, serve};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// 400 KB of flow nesting after an ordinary object header.
fn deep_yaml(kind_header: &str) -> String {
    let mut s = String::from(kind_header);
    s.push_str("  labels: ");
    s.push_str(&"[".repeat(400_000));
    s.push('\n');
    s
}

/// One HTTP/1.1 request over a fresh connection; the status code and the body.
async fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    content_type: &str,
    body: &[u8],
) -> (u16, String) {
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    tcp.write_all(head.as_bytes()).await.expect("write head");
    tcp.write_all(body).await.expect("write body");
    let mut out = Vec::new();
    tcp.read_to_end(&mut out).await.expect("read");
    let text = String::from_utf8_lossy(&out).into_owned();
    let code = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    (code, body.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_apply_bodies_are_refused_and_version_keeps_answering() {
    let server = serve(ObjectStore::new(), ServerOptions::default())
        .await
        .expect("serve");
    let addr = server.addr();
    let body = deep_yaml("apiVersion: v1\nkind: Node\nmetadata:\n  name: deep\n");
    // Two server-side applies at once, as in the finding (one per async worker).
    let patches: Vec<_> = (0..2)
        .map(|_| {
            let body = body.clone();
            tokio::spawn(async move {
                http(
                    addr,
                    "PATCH",
                    "/api/v1/nodes/deep?fieldManager=fuzz",
                    "application/apply-patch+yaml",
                    body.as_bytes(),
                )
                .await
            })
        })
        .collect();
    // Meanwhile /version answers, each within 5 s.
    for _ in 0..5 {
        let (code, body) = tokio::time::timeout(
            Duration::from_secs(5),
            http(addr, "GET", "/version", "application/json", b""),
        )
        .await
        .expect("GET /version did not answer within 5 s while nested bodies were parsed");
        assert_eq!(code, 200, "{body}");
        assert!(body.contains("gitVersion"), "{body}");
    }
    for p in patches {
        let (code, body) = tokio::time::timeout(Duration::from_secs(20), p)
            .await
            .expect("the nested body was not refused within 20 s")
            .expect("join");
        assert_eq!(code, 400, "{body}");
        assert!(
            body.contains("nested deeper than 100 levels at line 5")
                && body.contains("refused before parsing"),
            "{body}"
        );
    }
    // The same through create (POST) as JSON.
    let json = format!(
        "{{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{{\"name\":\"j\",\"labels\":{}}}}}",
        "[".repeat(400_000)
    );
    let (code, body) = tokio::time::timeout(
        Duration::from_secs(20),
        http(
            addr,
            "POST",
            "/api/v1/nodes",
            "application/json",
            json.as_bytes(),
        ),
    )
    .await
    .expect("the nested JSON body was not refused within 20 s");
    assert_eq!(code, 400, "{body}");
    assert!(body.contains("nested deeper than 100 levels"), "{body}");
    let _ = server.shutdown().await;
}

/// Runs gangplank with `args`; panics if it has not ended by the deadline.
fn gangplank_within(args: &[&str], secs: u64) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gangplank"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run gangplank");
    let deadline = Instant::now() + Duration::from_secs(secs);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("gangplank {args:?} still parsing after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

#[test]
fn plan_simulate_and_what_if_refuse_400_kb_of_nesting_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join("deep.yaml");
    std::fs::write(&deep, "[".repeat(400_000) + &"]".repeat(400_000)).unwrap();
    let deep = deep.to_str().unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    let seed = format!("{root}/tests/fixtures/seed-story");
    for (args, code) in [
        (vec!["plan", "-f", deep], 1),
        (vec!["plan", "-f", &seed, "--what-if", deep], 1),
        (vec!["doctor", "-f", deep], 2),
        (vec!["simulate", "--scenario", deep], 1),
    ] {
        let out = gangplank_within(&args, 20);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(
            err.contains(&format!("{deep}: nested deeper than 100 levels at line 1")),
            "{args:?}: {err}"
        );
    }
}
