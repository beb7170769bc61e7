//! Plain-text tables for people: aligned columns, long text wrapped under the row,
//! readable at 80 columns. No colour: status is always a word.

/// Word-wraps `text` to `width` columns, every line prefixed with `indent`.
pub fn wrap(text: &str, indent: &str, width: usize) -> Vec<String> {
    let avail = width.saturating_sub(indent.chars().count()).max(20);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let needed = if line.is_empty() {
            word.chars().count()
        } else {
            line.chars().count() + 1 + word.chars().count()
        };
        if needed > avail && !line.is_empty() {
            lines.push(format!("{indent}{line}"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(format!("{indent}{line}"));
    }
    lines
}

/// A table with a header row; columns are padded to the widest cell.
#[derive(Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Self {
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Renders with two spaces between columns; the last column is not padded.
    pub fn render(&self, indent: &str) -> String {
        let cols = self.header.len();
        let mut widths = vec![0usize; cols];
        for row in std::iter::once(&self.header).chain(&self.rows) {
            for (i, cell) in row.iter().enumerate().take(cols) {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::from(indent);
            for (i, cell) in row.iter().enumerate().take(cols) {
                line.push_str(cell);
                if i + 1 < cols {
                    let pad = widths[i] - cell.chars().count() + 2;
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_long_text_under_indent() {
        let lines = wrap(
            "needs 16 nvidia.com/gpu in flavor p4d-flavor, 0 free of 32 nominal",
            "      ",
            40,
        );
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| l.chars().count() <= 40));
        assert!(lines.iter().all(|l| l.starts_with("      ")));
    }

    #[test]
    fn aligns_columns() {
        let mut t = Table::new(&["NAME", "USED"]);
        t.row(vec!["hyperpod-global-queue".into(), "32".into()]);
        t.row(vec!["a".into(), "0".into()]);
        let out = t.render("");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0].find("USED"), lines[1].find("32"));
        assert_eq!(lines[1].find("32"), lines[2].find('0'));
    }
}
