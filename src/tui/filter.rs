//! The `/` filter: whitespace-separated terms, all of which must match (AND).
//!
//! * `text` — case-insensitive substring of the row's text;
//! * `key=value` — case-insensitive equality on a field: `namespace`/`ns`,
//!   `queue`/`lq`, `cq`, `state`, `priority` (class name or numeric value).
//!
//! A field a view's rows do not have (e.g. `ns=` on Nodes) is ignored for that view,
//! so one filter can stay active while switching views.

use std::fmt;

/// A field that `key=value` terms can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FilterKey {
    Namespace,
    Queue,
    ClusterQueue,
    State,
    Priority,
}

impl FilterKey {
    fn parse(key: &str) -> Option<FilterKey> {
        Some(match key.to_ascii_lowercase().as_str() {
            "namespace" | "ns" => FilterKey::Namespace,
            "queue" | "lq" | "localqueue" => FilterKey::Queue,
            "cq" | "clusterqueue" => FilterKey::ClusterQueue,
            "state" | "status" => FilterKey::State,
            "priority" | "prio" => FilterKey::Priority,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Term {
    /// Lower-cased substring.
    Text(String),
    /// Lower-cased value a field must equal.
    Field(FilterKey, String),
}

/// A parsed filter. The empty filter matches everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    pub terms: Vec<Term>,
    /// The text as typed, shown in the title bar.
    pub source: String,
}

/// Why a filter did not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterError(pub String);

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Filter {
    pub fn parse(input: &str) -> Result<Filter, FilterError> {
        let mut terms = Vec::new();
        for word in input.split_whitespace() {
            match word.split_once('=') {
                Some((key, value)) => {
                    let key = FilterKey::parse(key).ok_or_else(|| {
                        FilterError(format!(
                            "unknown filter key {key:?} (use ns, queue, cq, state or priority)"
                        ))
                    })?;
                    if value.is_empty() {
                        return Err(FilterError(format!("empty value in {word:?}")));
                    }
                    terms.push(Term::Field(key, value.to_lowercase()));
                }
                None => terms.push(Term::Text(word.to_lowercase())),
            }
        }
        Ok(Filter {
            terms,
            source: input.trim().to_string(),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Whether a row matches. `text` is the row's searchable text (already lower-case);
    /// `field` returns the row's values for a key (`None`: the row has no such field).
    pub fn matches<'a>(
        &self,
        text: &str,
        field: impl Fn(FilterKey) -> Option<Vec<&'a str>>,
    ) -> bool {
        self.terms.iter().all(|term| match term {
            Term::Text(t) => text.contains(t.as_str()),
            Term::Field(key, value) => match field(*key) {
                Some(values) => values.iter().any(|v| v.eq_ignore_ascii_case(value)),
                None => true,
            },
        })
    }
}
