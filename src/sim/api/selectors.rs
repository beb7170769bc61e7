//! Label and field selectors as in `?labelSelector=` / `?fieldSelector=`.
//!
//! Label selectors support `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`,
//! `k` (exists) and `!k` (does not exist). Field selectors support `=`, `==` and
//! `!=` on any dotted path into the object (a simplification: the real server
//! allows only a per-resource set such as `metadata.name`, `metadata.namespace`,
//! `spec.nodeName`, `status.phase`, `involvedObject.*`); a missing field compares
//! as the empty string.

use serde_json::Value;

pub use crate::model::LabelSelector;

/// A parsed field selector (all requirements must hold).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

/// Whether `obj`'s `metadata.labels` satisfy `selector` (the model's [`LabelSelector`],
/// parsed from `?labelSelector=` by [`LabelSelector::parse`]).
pub fn labels_match(selector: &LabelSelector, obj: &Value) -> bool {
    let labels = obj.pointer("/metadata/labels").and_then(Value::as_object);
    selector.matches_with(|k| labels.and_then(|l| l.get(k)).and_then(Value::as_str))
}

impl FieldSelector {
    /// Parses a selector string; empty means "everything".
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut reqs = Vec::new();
        for part in s.split(',') {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let (k, eq, v) = if let Some((k, v)) = part.split_once("!=") {
                (k, false, v)
            } else if let Some((k, v)) = part.split_once("==") {
                (k, true, v)
            } else if let Some((k, v)) = part.split_once('=') {
                (k, true, v)
            } else {
                return Err(format!("invalid field selector: {part:?}"));
            };
            if k.trim().is_empty() {
                return Err(format!("invalid field selector: {part:?}"));
            }
            reqs.push((k.trim().to_string(), eq, v.trim().to_string()));
        }
        Ok(Self(reqs))
    }

    /// Whether the selector is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Renames field paths (a version whose fields differ from the stored object's).
    pub fn map_paths(mut self, f: impl Fn(&str) -> String) -> Self {
        for r in &mut self.0 {
            r.0 = f(&r.0);
        }
        self
    }

    /// Whether `obj` satisfies the selector.
    pub fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(path, eq, want)| {
            let mut cur = Some(obj);
            for seg in path.split('.') {
                cur = cur.and_then(|c| c.get(seg));
            }
            let have = match cur {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            (have == *want) == *eq
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_selectors_read_metadata_labels() {
        let o = json!({"metadata":{"labels":{"app":"a","tier":"gpu"}}});
        for (s, want) in [("app=a,tier", true), ("app!=a", false), ("!missing", true)] {
            assert_eq!(
                labels_match(&LabelSelector::parse(s).unwrap(), &o),
                want,
                "{s}"
            );
        }
        let unlabelled = json!({"metadata":{"name":"x"}});
        assert!(labels_match(
            &LabelSelector::parse("app!=a").unwrap(),
            &unlabelled
        ));
        assert!(!labels_match(
            &LabelSelector::parse("app").unwrap(),
            &unlabelled
        ));
    }

    #[test]
    fn field_selectors() {
        let o = json!({"metadata":{"name":"p","namespace":"ns"},"spec":{"nodeName":"n1"},"status":{"phase":"Running"}});
        for (s, want) in [
            ("metadata.name=p", true),
            ("metadata.namespace!=ns", false),
            ("spec.nodeName=n1,status.phase==Running", true),
            ("spec.nodeName=", false),
            ("spec.missing=", true),
        ] {
            assert_eq!(FieldSelector::parse(s).unwrap().matches(&o), want, "{s}");
        }
        assert!(FieldSelector::parse("nonsense").is_err());
    }
}
