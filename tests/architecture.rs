//! Layering, checked by reading the sources: a violation fails with file and line.
//!
//! * `model/` and `engine/` are pure: they name none of tokio, kube, ratatui,
//!   crossterm, axum, russh, hyper or tower (no runtime, no cluster, no terminal, no
//!   network).
//! * `actions/` does not import the console (`tui/`).
//! * `sim/` imports neither the console (`tui/`) nor `actions/`.
//!
//! Comments and string literals are ignored. A path counts wherever it appears (a
//! `use`, an attribute such as `#[tokio::test]`, or a qualified call), including the
//! `crate::{tui, …}` form and `super::` chains that climb to the crate root.

use std::path::{Path, PathBuf};

/// External crates the pure layers must not name.
const IMPURE_CRATES: &[&str] = &[
    "tokio",
    "kube",
    "ratatui",
    "crossterm",
    "axum",
    "russh",
    "hyper",
    "tower",
];

/// A layer (directory under `src/`) and what it must not reach.
struct Rule {
    layer: &'static str,
    crates: &'static [&'static str],
    modules: &'static [&'static str],
}

const RULES: &[Rule] = &[
    Rule {
        layer: "model",
        crates: IMPURE_CRATES,
        modules: &["tui", "actions", "source", "sim", "ssh", "cli"],
    },
    Rule {
        layer: "engine",
        crates: IMPURE_CRATES,
        modules: &["tui", "actions", "source", "sim", "ssh", "cli"],
    },
    Rule {
        layer: "actions",
        crates: &[],
        modules: &["tui"],
    },
    Rule {
        layer: "sim",
        crates: &[],
        modules: &["tui", "actions"],
    },
];

/// Known violations, as (file, the offending line trimmed). Empty since #15 item 2 moved
/// the console's action vocabulary into `actions::protocol`; kept so a future exception
/// has to be written down here (an entry that no longer matches fails the test, and so
/// does any violation not listed).
const KNOWN_VIOLATIONS: &[(&str, &str)] = &[];

#[derive(Debug, PartialEq, Eq)]
struct Violation {
    file: String,
    line: usize,
    text: String,
    what: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: {}: `{}`",
            self.file, self.line, self.what, self.text
        )
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source with comments and the contents of string and char literals blanked
/// (newlines kept, so line numbers stay right).
fn code_only(src: &str) -> String {
    let b: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !ident_char_before(&b, i)
        {
            // raw string r"…" / r#"…"#
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            for _ in i..=j {
                out.push(' ');
            }
            i = j + 1;
            while i < b.len() {
                if b[i] == '"' && (1..=hashes).all(|k| b.get(i + k) == Some(&'#')) {
                    for _ in 0..=hashes {
                        out.push(' ');
                    }
                    i += hashes + 1;
                    break;
                }
                out.push(blank(b[i]));
                i += 1;
            }
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < b.len() {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' {
            // a char literal ('x', '\n', '\u{..}'), or a lifetime ('a) left as it is
            let close = if next == Some('\\') {
                (i + 2..b.len().min(i + 12)).find(|&k| b[k] == '\'')
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match close {
                Some(end) => {
                    for _ in i..=end {
                        out.push(' ');
                    }
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_char_before(b: &[char], i: usize) -> bool {
    i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_')
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The identifier starting at byte `at` of `line`.
fn ident_at(line: &str, at: usize) -> &str {
    let rest = &line[at..];
    let end = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
    &rest[..end]
}

/// First path segments named inside a `{ … }` group starting at `open` (the `{`).
fn group_heads(code: &str, open: usize) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut expect_head = true;
    for (k, c) in code[open..].char_indices() {
        match c {
            '{' => {
                depth += 1;
                expect_head = depth == 1;
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => expect_head = true,
            c if expect_head && depth == 1 && is_ident(c) => {
                heads.push(ident_at(code, open + k).to_string());
                expect_head = false;
            }
            _ => {}
        }
    }
    heads
}

/// The crate-root modules a file's code names: `crate::m`, `crate::{m, …}`,
/// `gangplank::m`, and `super::…::m` chains that climb to the crate root (`depth` is
/// the file's module depth below the root: `src/sim/mod.rs` 1, `src/sim/live.rs` 2).
/// Returns (byte offset, module).
fn root_modules(code: &str, depth: usize) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        if !code.is_char_boundary(i) || (i > 0 && is_ident(bytes[i - 1] as char)) {
            i += 1;
            continue;
        }
        let rest = &code[i..];
        let after = if let Some(r) = rest.strip_prefix("crate::") {
            Some(r)
        } else if let Some(r) = rest.strip_prefix("gangplank::") {
            Some(r)
        } else if rest.starts_with("super::") {
            let mut r = rest;
            let mut ups = 0;
            while let Some(x) = r.strip_prefix("super::") {
                ups += 1;
                r = x;
            }
            (ups >= depth).then_some(r)
        } else {
            None
        };
        if let Some(r) = after {
            let at = code.len() - r.len();
            if r.starts_with('{') {
                for head in group_heads(code, at) {
                    found.push((i, head));
                }
            } else {
                found.push((i, ident_at(code, at).to_string()));
            }
        }
        i += 1;
    }
    found
}

/// External crates named as paths (`tokio::…`, `use kube;`, `extern crate axum`).
fn crate_paths(code: &str, crates: &[&str]) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    for name in crates {
        let mut from = 0;
        while let Some(pos) = code[from..].find(name) {
            let at = from + pos;
            from = at + name.len();
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| is_ident(c) || c == ':') {
                continue;
            }
            let tail = code[at + name.len()..].trim_start();
            let path = tail.starts_with("::");
            let used_alone = {
                let head = code[..at].trim_end();
                (head.ends_with("use") || head.ends_with("extern crate"))
                    && (tail.starts_with(';') || tail.starts_with(" as"))
            };
            if (path || used_alone)
                && !bytes
                    .get(at + name.len())
                    .is_some_and(|b| is_ident(*b as char))
            {
                found.push((at, name.to_string()));
            }
        }
    }
    found
}

fn line_of(code: &str, offset: usize) -> usize {
    code[..offset].matches('\n').count() + 1
}

fn violations() -> Vec<Violation> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for rule in RULES {
        let mut files = Vec::new();
        rust_files(&root.join("src").join(rule.layer), &mut files);
        assert!(!files.is_empty(), "no sources under src/{}", rule.layer);
        for file in files {
            let rel = file
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let src = std::fs::read_to_string(&file).unwrap();
            let code = code_only(&src);
            let lines: Vec<&str> = src.lines().collect();
            // module depth: src/sim/mod.rs → 1, src/sim/live.rs → 2, src/sim/api/mod.rs → 2
            let parts = rel.trim_start_matches("src/").split('/').count();
            let depth = if rel.ends_with("/mod.rs") {
                parts - 1
            } else {
                parts
            };
            let mut hits: Vec<(usize, String)> = crate_paths(&code, rule.crates)
                .into_iter()
                .map(|(at, name)| (at, format!("{} names the crate `{name}`", rule.layer)))
                .collect();
            hits.extend(
                root_modules(&code, depth)
                    .into_iter()
                    .filter(|(_, m)| rule.modules.contains(&m.as_str()))
                    .map(|(at, m)| (at, format!("{} imports {m}/", rule.layer))),
            );
            hits.sort();
            for (at, what) in hits {
                let line = line_of(&code, at);
                out.push(Violation {
                    file: rel.clone(),
                    line,
                    text: lines.get(line - 1).unwrap_or(&"").trim().to_string(),
                    what,
                });
            }
        }
    }
    out
}

#[test]
fn layers_import_only_what_they_may() {
    let found = violations();
    let new: Vec<&Violation> = found
        .iter()
        .filter(|v| {
            !KNOWN_VIOLATIONS
                .iter()
                .any(|(file, text)| v.file == *file && v.text == *text)
        })
        .collect();
    let stale: Vec<&(&str, &str)> = KNOWN_VIOLATIONS
        .iter()
        .filter(|(file, text)| !found.iter().any(|v| v.file == *file && v.text == *text))
        .collect();
    let mut msg = String::new();
    for v in &new {
        msg.push_str(&format!("\n  {v}"));
    }
    for (file, text) in &stale {
        msg.push_str(&format!(
            "\n  {file}: `{text}` is in KNOWN_VIOLATIONS but no longer found: remove it"
        ));
    }
    assert!(msg.is_empty(), "layering violations:{msg}");
}

#[test]
fn the_scanner_sees_through_comments_strings_and_groups() {
    let code = code_only(
        "// use tokio::x;\nlet s = \"tokio::spawn\";\n/* kube::Api */\nlet c = '\\'';\nuse tokio::sync;\n#[tokio::test]\nlet r = r#\"axum::x\"#;\n",
    );
    let hits: Vec<usize> = crate_paths(&code, IMPURE_CRATES)
        .into_iter()
        .map(|(at, _)| line_of(&code, at))
        .collect();
    assert_eq!(hits, [5, 6]);
    assert!(crate_paths("let tokio_handle = my::tokio::x;", IMPURE_CRATES).is_empty());
    assert_eq!(crate_paths("use kube;", IMPURE_CRATES).len(), 1);

    let code =
        "use crate::{model::X, tui::{A, B}};\nuse super::super::actions::Y;\nuse super::tui;\n";
    let mods: Vec<String> = root_modules(code, 2).into_iter().map(|(_, m)| m).collect();
    // `super::tui` from depth 2 is a sibling module, not the crate's tui
    assert_eq!(mods, ["model", "tui", "actions"]);
}
