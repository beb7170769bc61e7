//! The JSONPath subset CRD printer columns use (`.spec.queueName`,
//! `.status.conditions[?(@.type=='Admitted')].status`, `.status.conditions[-1:].type`,
//! `.items[0]`, `[*]`), evaluated as kube-apiserver's table convertor does: the first
//! match is the cell.

use serde_json::Value;

#[derive(Debug, PartialEq)]
enum Step {
    Field(String),
    Index(i64),
    /// `[start:end]` with Python-style negative bounds.
    Slice(Option<i64>, Option<i64>),
    All,
    /// `[?(@.a.b=='x')]` (or `!=`).
    Filter(Vec<String>, bool, String),
}

fn parse(path: &str) -> Option<Vec<Step>> {
    let p = path.trim();
    let p = p
        .strip_prefix('{')
        .and_then(|x| x.strip_suffix('}'))
        .unwrap_or(p);
    let mut rest = p.strip_prefix('$').unwrap_or(p);
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end > 0 {
                steps.push(Step::Field(r[..end].to_string()));
            }
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            // A filter may contain ']' only inside quotes; the subset used never does.
            let inner = r[..end].trim();
            rest = &r[end + 1..];
            steps.push(bracket(inner)?);
        } else {
            return None;
        }
    }
    Some(steps)
}

fn bracket(inner: &str) -> Option<Step> {
    if inner == "*" {
        return Some(Step::All);
    }
    if let Some(f) = inner.strip_prefix("?(").and_then(|x| x.strip_suffix(')')) {
        let (lhs, eq, rhs) = if let Some((l, r)) = f.split_once("!=") {
            (l, false, r)
        } else {
            let (l, r) = f.split_once("==")?;
            (l, true, r)
        };
        let path: Vec<String> = lhs
            .trim()
            .strip_prefix('@')?
            .split('.')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let lit = rhs
            .trim()
            .trim_matches(|c| c == '\'' || c == '"')
            .to_string();
        return Some(Step::Filter(path, eq, lit));
    }
    if let Some((a, b)) = inner.split_once(':') {
        let num = |s: &str| s.trim().parse::<i64>().ok();
        return Some(Step::Slice(num(a), num(b)));
    }
    inner.parse().ok().map(Step::Index)
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// All matches of `path` in `obj`, in order. An unsupported path matches nothing.
pub fn find<'a>(obj: &'a Value, path: &str) -> Vec<&'a Value> {
    let Some(steps) = parse(path) else {
        return Vec::new();
    };
    let mut cur = vec![obj];
    for step in &steps {
        let mut next = Vec::new();
        for v in cur {
            match step {
                Step::Field(f) => next.extend(v.get(f.as_str())),
                Step::Index(i) => {
                    if let Some(a) = v.as_array() {
                        let i = if *i < 0 { a.len() as i64 + i } else { *i };
                        next.extend(usize::try_from(i).ok().and_then(|i| a.get(i)));
                    }
                }
                Step::Slice(s, e) => {
                    if let Some(a) = v.as_array() {
                        let n = a.len() as i64;
                        let norm = |x: i64| if x < 0 { (n + x).max(0) } else { x.min(n) };
                        let (s, e) = (norm(s.unwrap_or(0)), norm(e.unwrap_or(n)));
                        if s < e {
                            next.extend(&a[s as usize..e as usize]);
                        }
                    }
                }
                Step::All => match v {
                    Value::Array(a) => next.extend(a.iter()),
                    Value::Object(m) => next.extend(m.values()),
                    _ => {}
                },
                Step::Filter(path, eq, lit) => {
                    for item in v.as_array().into_iter().flatten() {
                        let got = path.iter().try_fold(item, |x, k| x.get(k.as_str()));
                        let same = got.is_some_and(|g| scalar_text(g) == *lit);
                        if same == *eq && got.is_some() {
                            next.push(item);
                        }
                    }
                }
            }
        }
        cur = next;
    }
    cur
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn printer_column_paths() {
        let wl = json!({"spec": {"queueName": "q"}, "status": {"conditions": [
            {"type": "QuotaReserved", "status": "True"},
            {"type": "Admitted", "status": "False"}]}});
        assert_eq!(find(&wl, ".spec.queueName"), [&json!("q")]);
        assert_eq!(
            find(&wl, ".status.conditions[?(@.type=='Admitted')].status"),
            [&json!("False")]
        );
        assert_eq!(
            find(&wl, ".status.conditions[-1:].type"),
            [&json!("Admitted")]
        );
        assert_eq!(
            find(&wl, ".status.conditions[0].type"),
            [&json!("QuotaReserved")]
        );
        assert_eq!(find(&wl, ".status.conditions[*].type").len(), 2);
        assert!(find(&wl, ".status.admission.clusterQueue").is_empty());
        assert!(find(&wl, "spec[").is_empty());
    }
}
