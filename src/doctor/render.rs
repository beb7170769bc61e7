//! Plain-text rendering of a [`Report`] for `doctor -o table` (no colour needed).

use super::finding::{Report, Severity};

/// Narrowest layout we wrap to; below this lines simply run long.
const MIN_WIDTH: usize = 40;
const INDENT: &str = "    ";

/// See [`Report::render_table`].
pub(crate) fn render_table(report: &Report, width: usize) -> String {
    let width = width.max(MIN_WIDTH);
    let mut out = String::new();
    if report.findings.is_empty() {
        out.push_str("No findings: nothing doctor checks for is wrong.\n");
        return out;
    }
    for (i, f) in report.findings.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let word = f.severity.as_str().to_ascii_uppercase();
        out.push_str(&format!("{word:<8} {}\n", f.check));
        let objects = f.objects.join(", ");
        for line in wrap(&objects, width - INDENT.len()) {
            out.push_str(INDENT);
            out.push_str(&line);
            out.push('\n');
        }
        for line in wrap(&f.message, width - INDENT.len()) {
            out.push_str(INDENT);
            out.push_str(&line);
            out.push('\n');
        }
        if !f.fix.is_empty() {
            out.push_str(INDENT);
            out.push_str("Fix:\n");
            for raw in f.fix.lines() {
                // YAML and commands stay verbatim (wrapping would break copy-paste);
                // prose lines are wrapped.
                if let Some(comment) = raw.strip_prefix("# ") {
                    // A top-level comment is prose: wrap it, continuing with "# ".
                    for line in wrap(comment, width - 2 * INDENT.len() - 2) {
                        out.push_str(INDENT);
                        out.push_str(INDENT);
                        out.push_str("# ");
                        out.push_str(&line);
                        out.push('\n');
                    }
                } else if looks_verbatim(raw) {
                    out.push_str(INDENT);
                    out.push_str(INDENT);
                    out.push_str(raw);
                    out.push('\n');
                } else {
                    for line in wrap(raw, width - 2 * INDENT.len()) {
                        out.push_str(INDENT);
                        out.push_str(INDENT);
                        out.push_str(&line);
                        out.push('\n');
                    }
                }
            }
        }
    }
    out.push('\n');
    out.push_str(&summary(report));
    out.push('\n');
    out
}

/// "2 errors, 1 warning, 0 info".
fn summary(report: &Report) -> String {
    let e = report.count(Severity::Error);
    let w = report.count(Severity::Warning);
    let i = report.count(Severity::Info);
    format!(
        "{e} error{}, {w} warning{}, {i} info",
        if e == 1 { "" } else { "s" },
        if w == 1 { "" } else { "s" },
    )
}

/// Lines that are code rather than prose: indented, commands, YAML keys or list items.
fn looks_verbatim(line: &str) -> bool {
    let t = line.trim_start();
    line.starts_with(' ')
        || t.starts_with("kubectl ")
        || t.starts_with("- ")
        || t.starts_with('#')
        || t.starts_with("apiVersion:")
        || t.ends_with(':')
        || t.split_once(": ").is_some_and(|(k, _)| !k.contains(' '))
}

/// Greedy word wrap; a word longer than `width` gets a line of its own.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for para in text.lines() {
        let mut line = String::new();
        for word in para.split_whitespace() {
            if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        lines.push(line);
    }
    if lines.is_empty() {
        lines.push(String::new());
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_width() {
        let lines = wrap("aaa bbb ccc ddd", 7);
        assert_eq!(lines, vec!["aaa bbb", "ccc ddd"]);
    }

    #[test]
    fn long_word_alone() {
        let lines = wrap("a verylongword b", 5);
        assert_eq!(lines, vec!["a", "verylongword", "b"]);
    }
}
