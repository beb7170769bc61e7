//! Collected warnings: things skipped or approximated while reading, grouped so that a
//! dump with thousands of objects yields a handful of lines.

use std::collections::BTreeMap;

/// How many example subjects a warning line names.
const EXAMPLES: usize = 5;

/// Warning categories → the objects they apply to, plus unknown-kind counts.
#[derive(Clone, Debug, Default)]
pub(crate) struct Notes {
    items: BTreeMap<&'static str, Vec<String>>,
    unknown_kinds: BTreeMap<String, usize>,
}

impl Notes {
    /// Records that `what` applies to `subject` (e.g. `ClusterQueue/a`).
    pub fn note(&mut self, what: &'static str, subject: impl Into<String>) {
        self.items.entry(what).or_default().push(subject.into());
    }

    /// Counts an object of a kind gangplank does not read.
    pub fn unknown_kind(&mut self, kind: impl Into<String>) {
        *self.unknown_kinds.entry(kind.into()).or_default() += 1;
    }

    /// Adds `later`'s notes after these (as if noted in that order).
    pub fn append(&mut self, later: Notes) {
        for (what, subjects) in later.items {
            self.items.entry(what).or_default().extend(subjects);
        }
        for (kind, n) in later.unknown_kinds {
            *self.unknown_kinds.entry(kind).or_default() += n;
        }
    }

    /// One line per category, deterministic order.
    pub fn render(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if !self.unknown_kinds.is_empty() {
            let total: usize = self.unknown_kinds.values().sum();
            let kinds: Vec<String> = self
                .unknown_kinds
                .iter()
                .map(|(k, n)| format!("{k} ×{n}"))
                .collect();
            lines.push(format!(
                "skipped {total} object(s) of kinds gangplank does not read: {}",
                kinds.join(", ")
            ));
        }
        for (what, subjects) in &self.items {
            let mut shown: Vec<&str> = subjects.iter().take(EXAMPLES).map(String::as_str).collect();
            if subjects.len() > EXAMPLES {
                shown.push("…");
            }
            lines.push(format!("{what}: {} ({})", subjects.len(), shown.join(", ")));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_grouped_lines() {
        let mut n = Notes::default();
        n.unknown_kind("Deployment");
        n.unknown_kind("Deployment");
        n.unknown_kind("Service");
        for i in 0..7 {
            n.note("fair sharing ignored", format!("ClusterQueue/q{i}"));
        }
        let lines = n.render();
        assert_eq!(
            lines[0],
            "skipped 3 object(s) of kinds gangplank does not read: Deployment ×2, Service ×1"
        );
        assert!(lines[1].starts_with("fair sharing ignored: 7 (ClusterQueue/q0,"));
        assert!(lines[1].ends_with(", …)"));
    }
}
