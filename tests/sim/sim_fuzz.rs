//! Issue #14 item 7: a proptest-based byte fuzzer over the simulator's request bodies
//! (the decoder every create, update and patch goes through), JSON, merge, strategic
//! and apply patches, and, over HTTP, the API server itself: whatever a client sends,
//! the answer is a Status (never a 5xx, never a dead server). Case counts are bounded
//! so this runs in seconds in CI; a failing input is kept as a named regression test.

use std::net::SocketAddr;

use gangplank::sim::api::decode_body;
use gangplank::sim::patch::{self, PatchKind};
use gangplank::sim::{ObjectStore, ServerOptions, serve};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const CONTENT_TYPES: [&str; 6] = [
    "application/json",
    "application/yaml",
    "application/merge-patch+json",
    "application/json-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

const SEED_BODY: &str = r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{"a":"b"}},"spec":{"taints":[{"key":"k","effect":"NoSchedule"}]},"status":{"capacity":{"cpu":"8","nvidia.com/gpu":"4"}}}"#;

/// JSON values of every shape, small enough to shrink well.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        "[a-z/~01$.-]{0,6}".prop_map(Value::from),
    ];
    leaf.prop_recursive(5, 48, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "metadata",
                    "spec",
                    "name",
                    "labels",
                    "items",
                    "op",
                    "path",
                    "value",
                    "from",
                    "$patch",
                    "$retainKeys",
                    "$deleteFromPrimitiveList/x",
                    "containers",
                    "a",
                    "b",
                ]),
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

/// JSON-patch operations from the real vocabulary, with odd paths.
fn json_patch_ops() -> impl Strategy<Value = Value> {
    let op = (
        prop::sample::select(vec![
            "add", "remove", "replace", "move", "copy", "test", "bogus",
        ]),
        prop::sample::select(vec![
            "",
            "/",
            "/metadata",
            "/metadata/labels/a",
            "/spec/taints/0",
            "/spec/taints/-",
            "/spec/taints/99999999999999999999",
            "/a~1b",
            "/~2",
            "/status/capacity/cpu",
        ]),
        json_value(),
    )
        .prop_map(
            |(op, path, value)| json!({"op": op, "path": path, "from": path, "value": value}),
        );
    prop::collection::vec(op, 0..5).prop_map(Value::from)
}

/// Bytes: arbitrary, or the seed body with random byte edits.
fn body_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..400),
        prop::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 1..10).prop_map(|edits| {
            let mut v = SEED_BODY.as_bytes().to_vec();
            for (p, b, kind) in edits {
                if v.is_empty() {
                    v.push(b);
                    continue;
                }
                let i = p % v.len();
                match kind {
                    0 => v[i] = b,
                    1 => v.insert(i, b),
                    _ => v.truncate(i),
                }
            }
            v
        }),
        "[\\[\\]{}:, \n-]{0,300}".prop_map(String::into_bytes),
    ]
}

/// `FUZZ_CASES=N` runs N cases per property (longer hunts); CI runs the default.
fn fuzz_cases(default: u32) -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: fuzz_cases(384), .. ProptestConfig::default() })]

    #[test]
    fn request_bodies_decode_or_answer_an_error(bytes in body_bytes(), ct in prop::sample::select(CONTENT_TYPES.to_vec())) {
        let _ = decode_body(ct, &bytes);
    }

    #[test]
    fn every_patch_kind_applies_or_errors(target in json_value(), p in json_value()) {
        for kind in [PatchKind::Merge, PatchKind::Json, PatchKind::Strategic, PatchKind::Apply] {
            let mut t = target.clone();
            let _ = patch::apply(kind, &mut t, &p);
        }
    }

    #[test]
    fn json_patches_apply_or_error(ops in json_patch_ops()) {
        let mut target: Value = serde_json::from_str(SEED_BODY).unwrap();
        let _ = patch::apply(PatchKind::Json, &mut target, &ops);
    }

    #[test]
    fn strategic_merge_never_panics(target in json_value(), p in json_value()) {
        let mut t = target;
        patch::strategic_merge(&mut t, &p);
    }
}

async fn http(addr: SocketAddr, method: &str, path: &str, ct: &str, body: &[u8]) -> (u16, String) {
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: {ct}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    tcp.write_all(head.as_bytes()).await.expect("write");
    tcp.write_all(body).await.expect("write");
    let mut out = Vec::new();
    tcp.read_to_end(&mut out).await.expect("read");
    let text = String::from_utf8_lossy(&out).into_owned();
    let code = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, text)
}

/// Fuzzed bodies through the real server: every answer is a 2xx or a 4xx Status, and
/// the server still answers `/version` at the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_server_answers_every_fuzzed_write_with_a_status() {
    let server = serve(ObjectStore::new(), ServerOptions::default())
        .await
        .expect("serve");
    let addr = server.addr();
    let seed = http(
        addr,
        "POST",
        "/api/v1/nodes",
        "application/json",
        SEED_BODY.as_bytes(),
    )
    .await;
    assert_eq!(seed.0, 201, "{}", seed.1);
    let mut runner = TestRunner::deterministic();
    let cases = (
        body_bytes(),
        prop::sample::select(CONTENT_TYPES.to_vec()),
        0usize..4,
    );
    for _ in 0..fuzz_cases(384) / 4 {
        let (bytes, ct, target) = cases.new_tree(&mut runner).unwrap().current();
        let (method, path) = [
            ("POST", "/api/v1/nodes"),
            ("PUT", "/api/v1/nodes/n1"),
            ("PATCH", "/api/v1/nodes/n1?fieldManager=fuzz"),
            ("DELETE", "/api/v1/nodes/n2"),
        ][target];
        let (code, text) = http(addr, method, path, ct, &bytes).await;
        assert!(
            (200..500).contains(&code),
            "{method} {path} ({ct}) with {:?} answered {code}:\n{text}",
            String::from_utf8_lossy(&bytes)
        );
    }
    let (code, text) = http(addr, "GET", "/version", "application/json", b"").await;
    assert_eq!(code, 200, "{text}");
    let _ = server.shutdown().await;
}

/// Regression: the inputs of issue #14 that hurt the server, kept as named cases.
#[test]
fn regression_deep_bodies_are_refused_by_the_decoder_in_linear_time() {
    for ct in [
        "application/yaml",
        "application/json",
        "application/apply-patch+yaml",
    ] {
        let flow = "[".repeat(400_000);
        let err = decode_body(ct, flow.as_bytes()).unwrap_err();
        assert!(
            err.contains("nested deeper than 100 levels at line 1"),
            "{ct}: {err}"
        );
        let block = (0..2000)
            .map(|d| format!("{}k:\n", " ".repeat(d)))
            .collect::<String>();
        let err = decode_body(ct, block.as_bytes()).unwrap_err();
        assert!(
            err.contains("nested deeper than 100 levels at line 101"),
            "{ct}: {err}"
        );
        let compact = "- ".repeat(200_000);
        assert!(decode_body(ct, compact.as_bytes()).is_err(), "{ct}");
    }
}
