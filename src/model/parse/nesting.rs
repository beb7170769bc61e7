//! A linear-time nesting check that runs *before* the YAML or JSON parser.
//!
//! The YAML parser reaches its recursion limit (128) only after work that grows with
//! the square of the input: 200 KB of `[[[…]]]` took 73 s in `plan -f`, and two such
//! request bodies froze the simulator's API for ~50 s (issue #14, finding 3). This
//! scanner reads the bytes once, keeps no more than [`MAX_NESTING_DEPTH`] levels of
//! state, and refuses the text as soon as it nests deeper than the limit, naming the
//! line.
//!
//! What it counts, as an upper bound of the parser's depth:
//! - flow collections: every `[` and `{` that opens a collection (inside a flow
//!   collection any bracket outside quotes; in block context only one that starts a
//!   value: at the start of a line, after `- `, `? `, `: `), minus the closing ones;
//! - block collections: the distinct indentation levels enclosing a line (a stack,
//!   like Python's INDENT tokens), plus each compact `- ` on the line (`- - - x`).
//!
//! Quoted scalars (`'…'`, `"…"` with escapes, over several lines), comments and block
//! scalars (`|`, `>`) are skipped, so brackets inside strings never count. The count
//! can exceed the parser's real depth a little (a sequence indented under its key
//! counts twice), never fall short of it; the limit leaves room for the deepest real
//! manifests (CRD schemas nest ~40 levels).

use std::fmt;

/// The deepest nesting accepted in a manifest, scenario or API request body.
pub const MAX_NESTING_DEPTH: usize = 100;

/// The text nests deeper than the limit; nothing was parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NestingError {
    /// One-based line where the limit was passed.
    pub line: usize,
    /// The limit in force.
    pub limit: usize,
}

impl fmt::Display for NestingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "nested deeper than {} levels at line {} (the limit for YAML/JSON input; refused before parsing)",
            self.limit, self.line
        )
    }
}

impl std::error::Error for NestingError {}

/// Scanner state carried across lines.
#[derive(Default)]
struct Scan {
    /// Open flow collections.
    flow: usize,
    /// Block depth of the line where the outermost open flow collection started.
    flow_base: usize,
    in_single: bool,
    in_double: bool,
    escape: bool,
    /// Indentation of the line that introduced an open block scalar.
    block_scalar: Option<usize>,
    /// Indentation levels of the enclosing block nodes.
    indents: Vec<usize>,
}

/// Checks that `text` nests at most `limit` levels deep; linear in its length.
pub fn check_nesting(text: &[u8], limit: usize) -> Result<(), NestingError> {
    let mut s = Scan::default();
    for (n, line) in text.split(|&b| b == b'\n').enumerate() {
        s.line(line, limit)
            .map_err(|()| NestingError { line: n + 1, limit })?;
    }
    Ok(())
}

fn is_space(b: Option<&u8>) -> bool {
    matches!(b, None | Some(b' ' | b'\t' | b'\r'))
}

impl Scan {
    fn quoted(&self) -> bool {
        self.in_single || self.in_double
    }

    fn line(&mut self, line: &[u8], limit: usize) -> Result<(), ()> {
        let indent = line.iter().take_while(|&&b| b == b' ').count();
        let rest = &line[indent..];
        let blank = rest.iter().all(|&b| b == b' ' || b == b'\t' || b == b'\r');
        if let Some(parent) = self.block_scalar {
            if blank || indent > parent {
                return Ok(());
            }
            self.block_scalar = None;
        }
        let mut i = indent;
        let mut block = self.flow_base;
        if self.flow == 0 && !self.quoted() {
            if blank || rest.first() == Some(&b'#') {
                return Ok(());
            }
            if indent == 0 && (rest.starts_with(b"---") || rest.starts_with(b"...")) {
                // A new document: nothing encloses what follows.
                self.indents.clear();
                i += 3;
            } else {
                while self.indents.last().is_some_and(|&t| t > indent) {
                    self.indents.pop();
                }
                if self.indents.last() != Some(&indent) {
                    self.indents.push(indent);
                }
            }
            block = self.indents.len();
            // Compact block entries on one line: `- - - x`, `? key`.
            while i < line.len() && matches!(line[i], b'-' | b'?') && is_space(line.get(i + 1)) {
                block += 1;
                i += 1;
                while i < line.len() && matches!(line[i], b' ' | b'\t') {
                    i += 1;
                }
            }
            if block > limit {
                return Err(());
            }
        }
        let mut value_start = true;
        while i < line.len() {
            let b = line[i];
            i += 1;
            if self.in_double {
                if self.escape {
                    self.escape = false;
                } else if b == b'\\' {
                    self.escape = true;
                } else if b == b'"' {
                    self.in_double = false;
                    value_start = false;
                }
                continue;
            }
            if self.in_single {
                if b == b'\'' {
                    if line.get(i) == Some(&b'\'') {
                        i += 1;
                    } else {
                        self.in_single = false;
                        value_start = false;
                    }
                }
                continue;
            }
            match b {
                b'#' if i == 1 || matches!(line[i - 2], b' ' | b'\t') => break,
                b'"' if value_start => self.in_double = true,
                b'\'' if value_start => self.in_single = true,
                b'[' | b'{' if value_start || self.flow > 0 => {
                    if self.flow == 0 {
                        self.flow_base = block;
                    }
                    self.flow += 1;
                    if self.flow_base + self.flow > limit {
                        return Err(());
                    }
                    value_start = true;
                }
                b']' | b'}' if self.flow > 0 => {
                    self.flow -= 1;
                    value_start = false;
                }
                b',' if self.flow > 0 => value_start = true,
                b':' if self.flow > 0 || is_space(line.get(i)) => value_start = true,
                b'|' | b'>' if value_start && self.flow == 0 => {
                    self.block_scalar = Some(indent);
                    break;
                }
                b'&' | b'!' if value_start => {
                    // An anchor or a tag before the value: skip its name.
                    while i < line.len() && !matches!(line[i], b' ' | b'\t') {
                        i += 1;
                    }
                }
                b' ' | b'\t' | b'\r' => {}
                _ => value_start = false,
            }
        }
        if self.flow == 0 {
            self.flow_base = 0;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_ok(text: &str, limit: usize) -> bool {
        check_nesting(text.as_bytes(), limit).is_ok()
    }

    #[test]
    fn flow_nesting_is_counted_and_the_line_named() {
        let deep = format!("a: 1\nb: {}{}\n", "[".repeat(101), "]".repeat(101));
        let e = check_nesting(deep.as_bytes(), MAX_NESTING_DEPTH).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(
            e.to_string().contains("deeper than 100 levels at line 2"),
            "{e}"
        );
        let ok = format!("b: {}{}\n", "[".repeat(90), "]".repeat(90));
        assert!(depth_ok(&ok, MAX_NESTING_DEPTH));
        // JSON is flow YAML.
        let json = format!("{}1{}", "{\"a\":[".repeat(60), "]}".repeat(60));
        assert!(!depth_ok(&json, MAX_NESTING_DEPTH));
        assert!(depth_ok(&json, 121));
    }

    #[test]
    fn brackets_in_strings_comments_and_block_scalars_do_not_count() {
        let text = format!(
            "a: \"{x}\"\nb: '{x}'\nc: x{x} # {x}\nd: |\n  {x}\n  {x}\ne: >-\n  {x}\nf: [\"]]\", '[[', \"\\\"[\"]\n",
            x = "[[[[[[[[[[["
        );
        assert!(depth_ok(&text, 3), "{text}");
    }

    #[test]
    fn block_nesting_counts_indentation_and_compact_entries() {
        let mut text = String::new();
        for d in 0..12 {
            text.push_str(&" ".repeat(d * 2));
            text.push_str("k:\n");
        }
        assert!(depth_ok(&text, 12));
        assert!(!depth_ok(&text, 11));
        let compact = format!("{}x\n", "- ".repeat(20));
        assert!(depth_ok(&compact, 21));
        assert!(!depth_ok(&compact, 19));
        // Dedent closes levels; a new document starts over.
        let docs = "a:\n  b:\n    c: 1\nd: 2\n---\ne:\n  f: 1\n";
        assert!(depth_ok(docs, 3));
    }

    #[test]
    fn a_real_manifest_passes() {
        let text = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: q # the queue\nspec:\n  resourceGroups:\n  - coveredResources: [\"cpu\", \"nvidia.com/gpu\"]\n    flavors:\n    - name: a100\n      resources:\n      - {name: cpu, nominalQuota: 9}\n";
        assert!(depth_ok(text, 8));
    }

    #[test]
    fn linear_time_on_400_kb_of_brackets() {
        let text = "[".repeat(400_000);
        let start = std::time::Instant::now();
        assert!(check_nesting(text.as_bytes(), MAX_NESTING_DEPTH).is_err());
        let text = format!("{}{}", "[]".repeat(200_000), "\n");
        assert!(check_nesting(text.as_bytes(), MAX_NESTING_DEPTH).is_ok());
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }
}
