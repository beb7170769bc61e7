//! Label selectors: how a requirement matches a label value, and the string syntax of
//! `kubectl -l` and `?labelSelector=` (`k=v`, `k==v`, `k!=v`, `k in (a,b)`,
//! `k notin (a,b)`, `k`, `!k`), read into the one [`LabelSelector`] type that
//! namespace selectors, node affinity and the simulator's API all use.

use super::types::{LabelSelector, NodeAffinity, SelectorRequirement};

impl SelectorRequirement {
    /// Whether a label's value (`None`: the label is absent) satisfies the requirement.
    /// `Gt`/`Lt` (node selectors) compare integers.
    pub fn matches_value(&self, value: Option<&str>) -> bool {
        let listed = |v: &str| self.values.iter().any(|x| x == v);
        match self.operator.as_str() {
            "In" => value.is_some_and(listed),
            "NotIn" => value.is_none_or(|v| !listed(v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            "Gt" | "Lt" => {
                let (Some(v), Some(bound)) = (value, self.values.first()) else {
                    return false;
                };
                match (v.parse::<i64>(), bound.parse::<i64>()) {
                    (Ok(v), Ok(b)) if self.operator == "Gt" => v > b,
                    (Ok(v), Ok(b)) => v < b,
                    _ => false,
                }
            }
            _ => false,
        }
    }
}

impl LabelSelector {
    /// Whether the labels `get` looks up satisfy every requirement (an empty selector
    /// matches everything).
    pub fn matches_with<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.match_labels
            .iter()
            .all(|(k, v)| get(k) == Some(v.as_str()))
            && self
                .match_expressions
                .iter()
                .all(|r| r.matches_value(get(&r.key)))
    }

    /// Parses the string form (`app=a,tier in (gpu,cpu),!legacy`); empty means
    /// "everything". `k=v` reads as `k In (v)` and `k!=v` as `k NotIn (v)` (which an
    /// absent label satisfies, as in Kubernetes).
    pub fn parse(text: &str) -> Result<LabelSelector, String> {
        let mut selector = LabelSelector::default();
        for part in split_top(text) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let (key, operator, values) = if let Some(k) = part.strip_prefix('!') {
                (k.trim(), "DoesNotExist", Vec::new())
            } else if let Some((k, v)) = part.split_once("!=") {
                (k.trim(), "NotIn", vec![v.trim().to_string()])
            } else if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
                (k.trim(), "In", vec![v.trim().to_string()])
            } else if let Some((k, rest)) = part.split_once(" notin ") {
                (k.trim(), "NotIn", parse_set(rest)?)
            } else if let Some((k, rest)) = part.split_once(" in ") {
                (k.trim(), "In", parse_set(rest)?)
            } else {
                (part, "Exists", Vec::new())
            };
            if !valid_key(key) {
                return Err(format!(
                    "unable to parse requirement: invalid label key {key:?}"
                ));
            }
            selector.match_expressions.push(SelectorRequirement {
                key: key.to_string(),
                operator: operator.to_string(),
                values,
            });
        }
        Ok(selector)
    }
}

impl NodeAffinity {
    /// Whether a node's labels satisfy the required affinity: some term whose
    /// requirements all hold (an empty term matches no node, as in Kubernetes).
    pub fn matches(&self, labels: &crate::model::Labels) -> bool {
        self.terms
            .iter()
            .any(|term| !term.is_empty() && term.iter().all(|r| r.matches(labels)))
    }
}

/// Splits on commas that are not inside parentheses.
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

fn parse_set(s: &str) -> Result<Vec<String>, String> {
    let s = s.trim();
    let inner = s
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| format!("expected a parenthesised set, got {s:?}"))?;
    Ok(inner
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect())
}

fn valid_key(k: &str) -> bool {
    !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_selectors() {
        let labels = crate::model::Labels::from([
            ("app".to_string(), "a".to_string()),
            ("tier".to_string(), "gpu".to_string()),
        ]);
        for (s, want) in [
            ("app=a", true),
            ("app==a", true),
            ("app!=a", false),
            ("app in (a, b)", true),
            ("app notin (a,b)", false),
            ("tier,app", true),
            ("!tier", false),
            ("!missing,app=a", true),
            ("missing", false),
            ("missing notin (x)", true),
            ("missing!=x", true),
            ("", true),
        ] {
            assert_eq!(
                LabelSelector::parse(s).unwrap().matches(&labels),
                want,
                "{s}"
            );
        }
        assert!(LabelSelector::parse("a in b").is_err());
        assert!(LabelSelector::parse("a b c").is_err());
    }

    #[test]
    fn requirements_on_values() {
        let gt = SelectorRequirement {
            key: "gen".into(),
            operator: "Gt".into(),
            values: vec!["3".into()],
        };
        assert!(gt.matches_value(Some("4")));
        assert!(!gt.matches_value(Some("3")));
        assert!(!gt.matches_value(None));
    }
}
