//! Issue #14 item 7: a proptest-based byte fuzzer over the model's parsers (manifests,
//! the nesting check, quantities, label selectors). Bytes are arbitrary or mutations
//! (flips, insertions, deletions, truncations) of real inputs, so the fuzzer reaches
//! past the syntax layer. Case counts are bounded (a few seconds in a debug build), so
//! it runs in CI with the rest of `cargo test`. A failing input is shrunk by proptest
//! and then kept below as a named regression test.

use gangplank::model::LabelSelector;
use gangplank::model::parse::{MAX_NESTING_DEPTH, check_nesting, parse_str, split_documents};
use gangplank::model::{ClusterState, Quantity};
use proptest::prelude::*;
use serde_json::Value;

const SEED_MANIFEST: &str = include_str!("../fixtures/seed-story/cluster-queue.yaml");

/// One edit of a byte string.
#[derive(Debug, Clone)]
enum Edit {
    Flip(usize, u8),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let chunk = prop_oneof![
        prop::collection::vec(any::<u8>(), 1..8),
        prop::sample::select(vec![
            b"[".to_vec(),
            b"{".to_vec(),
            b"]".to_vec(),
            b"- ".to_vec(),
            b": ".to_vec(),
            b"\n  ".to_vec(),
            b"'".to_vec(),
            b"\"".to_vec(),
            b"|\n".to_vec(),
            b"&a ".to_vec(),
            b"*a".to_vec(),
            b"!!binary ".to_vec(),
            b"---\n".to_vec(),
            b"\xff\xfe".to_vec(),
            b"1e999999".to_vec(),
            b"-9223372036854775809".to_vec(),
        ]),
    ];
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Edit::Flip(p, b)),
        (any::<usize>(), chunk).prop_map(|(p, c)| Edit::Insert(p, c)),
        (any::<usize>(), 1usize..64).prop_map(|(p, n)| Edit::Delete(p, n)),
        any::<usize>().prop_map(Edit::Truncate),
    ]
}

fn apply_edits(seed: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for e in edits {
        let at = |p: usize, len: usize| if len == 0 { 0 } else { p % (len + 1) };
        match e {
            Edit::Flip(p, b) if !v.is_empty() => {
                let i = p % v.len();
                v[i] ^= b | 1;
            }
            Edit::Flip(..) => {}
            Edit::Insert(p, c) => {
                let i = at(*p, v.len());
                v.splice(i..i, c.iter().copied());
            }
            Edit::Delete(p, n) => {
                let i = at(*p, v.len());
                let j = (i + n).min(v.len());
                v.drain(i..j);
            }
            Edit::Truncate(p) => {
                let i = at(*p, v.len());
                v.truncate(i);
            }
        }
    }
    v
}

/// A real manifest with up to 8 random edits.
fn mutated_manifest() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(edit(), 1..8).prop_map(|es| apply_edits(SEED_MANIFEST.as_bytes(), &es))
}

/// YAML built from the tokens that change nesting, to test the check's soundness.
fn nesting_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "[", "]", "{", "}", ", ", "- ", "? ", "a: ", "b:", "\n", "  ", "    ", "'", "\"", "\\",
            "#", " #", "|", ">", "x", "1", "&a ", "*a", "!t ", "---\n",
        ]),
        0..120,
    )
    .prop_map(|ts| ts.concat())
}

/// A random tree of mappings, sequences and scalars (scalars may hold brackets).
fn tree() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<i32>().prop_map(Value::from),
        "[a-z\\[\\]{}#:,'\" -]{0,6}".prop_map(Value::from),
    ];
    leaf.prop_recursive(10, 64, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..3).prop_map(Value::from),
            prop::collection::btree_map("[a-z]{1,3}", inner, 1..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Renders `v` as YAML, each collection in block or flow style as `styles` says.
fn render(v: &Value, indent: usize, styles: &mut impl Iterator<Item = bool>, out: &mut String) {
    let flow = styles.next().unwrap_or(true);
    let pad = " ".repeat(indent);
    match v {
        Value::Array(a) if !flow => {
            for item in a {
                out.push_str(&pad);
                out.push('-');
                render_child(item, indent + 2, styles, out);
            }
        }
        Value::Object(o) if !flow => {
            for (k, item) in o {
                out.push_str(&pad);
                out.push_str(k);
                out.push(':');
                render_child(item, indent + 2, styles, out);
            }
        }
        _ => {
            out.push_str(&pad);
            out.push_str(&serde_json::to_string(v).unwrap());
            out.push('\n');
        }
    }
}

fn render_child(
    v: &Value,
    indent: usize,
    styles: &mut impl Iterator<Item = bool>,
    out: &mut String,
) {
    match v {
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            render(v, indent, styles, out);
        }
        Value::Object(o) if !o.is_empty() => {
            out.push('\n');
            render(v, indent, styles, out);
        }
        _ => {
            out.push(' ');
            out.push_str(&serde_json::to_string(v).unwrap());
            out.push_str(" # [[[\n");
        }
    }
}

fn rendered_tree() -> impl Strategy<Value = (Value, String)> {
    (tree(), prop::collection::vec(any::<bool>(), 64)).prop_map(|(v, styles)| {
        let mut out = String::new();
        render(&v, 0, &mut styles.into_iter(), &mut out);
        (v, out)
    })
}

fn value_depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(value_depth).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(value_depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// `FUZZ_CASES=N` runs N cases per property (longer hunts); CI runs the default.
fn fuzz_cases(default: u32) -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: fuzz_cases(512), .. ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic_any_parser(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let text = String::from_utf8_lossy(&bytes);
        let mut state = ClusterState::default();
        let _ = parse_str("fuzz.yaml", &text, &mut state);
        let _ = parse_str("fuzz.json", &text, &mut state);
        let _ = check_nesting(&bytes, MAX_NESTING_DEPTH);
        let _ = Quantity::parse(&text);
        let _ = LabelSelector::parse(&text);
    }

    #[test]
    fn mutated_manifests_never_panic(bytes in mutated_manifest()) {
        let text = String::from_utf8_lossy(&bytes);
        let mut state = ClusterState::default();
        let _ = parse_str("cluster-queue.yaml", &text, &mut state);
    }

    /// Soundness of the linear check: text it lets through never nests deeper than
    /// the limit once parsed (so the parser's quadratic path is never reached).
    #[test]
    fn the_nesting_check_bounds_the_parsed_depth(text in nesting_soup(), limit in 1usize..12) {
        if check_nesting(text.as_bytes(), limit).is_ok()
            && let Ok(docs) = split_documents("soup.yaml", &text)
        {
            for d in &docs {
                prop_assert!(value_depth(d) <= limit, "depth {} > {limit}: {text:?}", value_depth(d));
            }
        }
    }

    /// The same on well-formed YAML of known depth in mixed block and flow styles:
    /// never more than the limit gets through, and a document is never refused at
    /// twice its real depth (a false positive would refuse real manifests).
    #[test]
    fn the_nesting_check_is_sound_and_tight_on_rendered_trees((v, text) in rendered_tree()) {
        let parsed = split_documents("tree.yaml", &text).expect("rendered YAML parses");
        prop_assert_eq!(parsed.len(), 1, "{}", text);
        let depth = value_depth(&parsed[0]);
        prop_assert_eq!(depth, value_depth(&v));
        for limit in 1..=depth.saturating_sub(1) {
            prop_assert!(check_nesting(text.as_bytes(), limit).is_err(), "depth {depth} passed limit {limit}:\n{text}");
        }
        prop_assert!(check_nesting(text.as_bytes(), 2 * depth + 1).is_ok(), "depth {depth} refused at {}:\n{text}", 2 * depth + 1);
    }

    #[test]
    fn quantity_bytes_never_panic(s in "[-+0-9.eEKMGTPimnu \\x00-\\x7f]{0,40}") {
        if let Ok(q) = Quantity::parse(&s) {
            let _ = q.units_ceil();
        }
    }

    #[test]
    fn selector_text_never_panics(s in "[a-z!=(), ]{0,12}( in | notin )?[a-z!=(), ]{0,12}") {
        if let Ok(sel) = LabelSelector::parse(&s) {
            let labels = std::collections::BTreeMap::from([("a".to_string(), "b".to_string())]);
            let _ = sel.matches_with(|k| labels.get(k).map(String::as_str));
        }
    }
}
