//! Findings and the report: the JSON contract of `gangplank doctor` (issue 7).
//!
//! `{"findings": [{"severity", "check", "objects", "message", "fix"}]}`. Keys may be
//! added later; none may be renamed. Objects are named `Kind/namespace/name`, or
//! `Kind/name` for cluster-scoped objects.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How bad a finding is. Ordered `Info < Warning < Error`; serialised lower-case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing is broken.
    Info,
    /// Something will misbehave or waste capacity under some conditions.
    Warning,
    /// Something is broken now: workloads stay pending forever or bypass quota.
    Error,
}

impl Severity {
    /// The lower-case word used in JSON and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A severity word that is not `info`, `warning` or `error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown severity {0:?}: expected info, warning or error")]
pub struct SeverityParseError(pub String);

impl FromStr for Severity {
    type Err = SeverityParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "info" => Ok(Severity::Info),
            "warning" | "warn" => Ok(Severity::Warning),
            "error" => Ok(Severity::Error),
            _ => Err(SeverityParseError(s.to_string())),
        }
    }
}

/// One problem found in a cluster state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub severity: Severity,
    /// Stable kebab-case check id (see [`super::CHECK_IDS`]).
    pub check: String,
    /// The objects involved, `Kind/namespace/name` or `Kind/name`; the primary one first.
    pub objects: Vec<String>,
    /// What goes wrong, in an operator's words, naming the concrete objects and resources.
    pub message: String,
    /// How to fix it: a YAML snippet or a kubectl command where one fits.
    pub fix: String,
}

impl Finding {
    /// Builds a finding; `objects` keep the given order (the primary object first).
    pub fn new(
        severity: Severity,
        check: &str,
        objects: Vec<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Finding {
            severity,
            check: check.to_string(),
            objects,
            message: message.into(),
            fix: fix.into(),
        }
    }

    /// The deterministic report order: most severe first, then check id, then objects.
    fn sort_key(&self) -> (std::cmp::Reverse<Severity>, &str, &[String], &str, &str) {
        (
            std::cmp::Reverse(self.severity),
            &self.check,
            &self.objects,
            &self.message,
            &self.fix,
        )
    }
}

/// Everything `doctor` found, in a deterministic order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub findings: Vec<Finding>,
}

impl Report {
    /// Sorts (severity descending, check, objects, message, fix) and drops exact duplicates.
    pub fn new(mut findings: Vec<Finding>) -> Self {
        findings.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        findings.dedup();
        Report { findings }
    }

    /// The worst severity present, `None` for a clean report.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }

    /// How many findings of one severity.
    pub fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == severity)
            .count()
    }

    /// Findings of one check id, in report order.
    pub fn by_check<'a>(&'a self, check: &'a str) -> impl Iterator<Item = &'a Finding> + 'a {
        self.findings.iter().filter(move |f| f.check == check)
    }

    /// Process exit code for `--fail-on`: 1 when some finding is at least `fail_on`,
    /// else 0. `None` (no `--fail-on`) always gives 0. (2 is left for usage/input errors.)
    pub fn exit_code(&self, fail_on: Option<Severity>) -> i32 {
        match (fail_on, self.worst()) {
            (Some(threshold), Some(worst)) if worst >= threshold => 1,
            _ => 0,
        }
    }

    /// The JSON contract, pretty-printed.
    pub fn to_json_pretty(&self) -> String {
        // Serialising plain strings and enums cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_else(|_| String::from("{\"findings\":[]}"))
    }

    /// A plain-text table for a terminal `width` columns wide (readable at 80).
    ///
    /// Each finding is a block: a line with the severity word (upper-case, so it reads
    /// without colour) and the check id, the objects, the wrapped message, and the fix
    /// indented below (YAML lines are kept verbatim so they can be copied).
    pub fn render_table(&self, width: usize) -> String {
        super::render::render_table(self, width)
    }
}
