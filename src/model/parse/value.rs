//! A cursor over a decoded document, with typed accessors that report the exact
//! field path on a type mismatch.
//!
//! `null` is treated exactly like an absent field, as the Kubernetes API does.
//!
//! The path is not tracked while reading: a cursor holds its value and the root it was
//! reached from, and the path is found by searching the root for the value's address
//! only when an error is reported. Formatting a path for every field read was most of
//! the parser's cost on the live source's hot path (one Workload per watch event).

use std::fmt::Write as _;

use serde_json::Value;

use super::error::{FieldError, FieldResult};
use crate::model::quantity::Quantity;
use crate::model::types::{ResourceList, Timestamp};

/// A value inside a document; its field path is derived on demand (see the module docs).
#[derive(Clone, Copy, Debug)]
pub(crate) struct At<'v> {
    pub v: &'v Value,
    /// The value this cursor's path is relative to (a document, a `List` item, or a
    /// detached placeholder such as an absent `spec`).
    root: &'v Value,
    /// The path of `root` itself (`""`, `items[3]`, `spec`).
    base: &'v str,
}

/// Words for the JSON type of a value, for error messages.
pub(crate) fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn key_needs_quoting(key: &str) -> bool {
    key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Appends `.key` (or `["key"]`, or `key` at the start) to `path`.
fn push_key(path: &mut String, key: &str) {
    if key_needs_quoting(key) {
        let _ = write!(path, "[{key:?}]");
    } else if path.is_empty() {
        path.push_str(key);
    } else {
        path.push('.');
        path.push_str(key);
    }
}

/// Appends the path from `from` to the value at `target`'s address; false (and `path`
/// unchanged) when `target` is not inside `from`. Each value of a tree has its own
/// address, so the address identifies the field.
fn find_path(from: &Value, target: &Value, path: &mut String) -> bool {
    if std::ptr::eq(from, target) {
        return true;
    }
    let len = path.len();
    match from {
        Value::Object(map) => {
            for (k, v) in map {
                push_key(path, k);
                if find_path(v, target, path) {
                    return true;
                }
                path.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                let _ = write!(path, "[{i}]");
                if find_path(v, target, path) {
                    return true;
                }
                path.truncate(len);
            }
        }
        _ => {}
    }
    false
}

impl<'v> At<'v> {
    /// The root of a document (or of a `List` item, with `path` like `items[3]`).
    pub fn root(v: &'v Value, path: &'v str) -> Self {
        At {
            v,
            root: v,
            base: path,
        }
    }

    /// A cursor on `v`, a value inside this cursor's root.
    fn at(&self, v: &'v Value) -> At<'v> {
        At {
            v,
            root: self.root,
            base: self.base,
        }
    }

    /// This value's field path, e.g. `spec.podSets[0].count`. Only for messages: it
    /// searches the document.
    pub fn path(&self) -> String {
        let mut path = self.base.to_string();
        // Cursors are only made by navigating from `root`, so this always succeeds.
        find_path(self.root, self.v, &mut path);
        path
    }

    fn child_path(&self, key: &str) -> String {
        let mut path = self.path();
        push_key(&mut path, key);
        path
    }

    /// An error at this value's path.
    pub fn err(&self, message: impl Into<String>) -> FieldError {
        FieldError::new(self.path(), message)
    }

    fn type_err(&self, expected: &str) -> FieldError {
        self.err(format!("expected {expected}, found {}", describe(self.v)))
    }

    /// The field `key` of this object; `None` when absent or null. Errors when this
    /// value is not an object.
    pub fn opt(&self, key: &str) -> FieldResult<Option<At<'v>>> {
        match self.v {
            Value::Object(map) => Ok(map.get(key).filter(|v| !v.is_null()).map(|v| self.at(v))),
            Value::Null => Ok(None),
            _ => Err(self.type_err("an object")),
        }
    }

    /// The field `key`, which must be present.
    pub fn req(&self, key: &str) -> FieldResult<At<'v>> {
        self.opt(key)?
            .ok_or_else(|| FieldError::new(self.child_path(key), "missing required field"))
    }

    /// This value as a string.
    pub fn str(&self) -> FieldResult<&'v str> {
        self.v.as_str().ok_or_else(|| self.type_err("a string"))
    }

    pub fn opt_str(&self, key: &str) -> FieldResult<Option<&'v str>> {
        self.opt(key)?.map(|a| a.str()).transpose()
    }

    pub fn opt_string(&self, key: &str) -> FieldResult<Option<String>> {
        Ok(self.opt_str(key)?.map(str::to_string))
    }

    pub fn req_str(&self, key: &str) -> FieldResult<&'v str> {
        self.req(key)?.str()
    }

    /// A string field, empty when absent.
    pub fn str_or_empty(&self, key: &str) -> FieldResult<String> {
        Ok(self.opt_str(key)?.unwrap_or("").to_string())
    }

    pub fn bool(&self) -> FieldResult<bool> {
        self.v.as_bool().ok_or_else(|| self.type_err("a boolean"))
    }

    pub fn opt_bool(&self, key: &str) -> FieldResult<Option<bool>> {
        self.opt(key)?.map(|a| a.bool()).transpose()
    }

    pub fn i64(&self) -> FieldResult<i64> {
        match self.v {
            Value::Number(n) => n
                .as_i64()
                .ok_or_else(|| self.err(format!("expected an integer, found {n}"))),
            _ => Err(self.type_err("an integer")),
        }
    }

    pub fn i32(&self) -> FieldResult<i32> {
        let n = self.i64()?;
        i32::try_from(n).map_err(|_| self.err(format!("integer {n} out of the int32 range")))
    }

    pub fn opt_i32(&self, key: &str) -> FieldResult<Option<i32>> {
        self.opt(key)?.map(|a| a.i32()).transpose()
    }

    /// A pod count or replica number: an int32 that must not be negative.
    pub fn opt_count(&self, key: &str) -> FieldResult<Option<i32>> {
        let Some(a) = self.opt(key)? else {
            return Ok(None);
        };
        let n = a.i32()?;
        if n < 0 {
            return Err(a.err(format!("must not be negative, found {n}")));
        }
        Ok(Some(n))
    }

    /// A quantity that must not be negative (quotas, requests).
    pub fn non_negative_quantity(&self) -> FieldResult<Quantity> {
        let q = self.quantity()?;
        if q < Quantity::ZERO {
            return Err(self.err(format!("must not be negative, found {q}")));
        }
        Ok(q)
    }

    pub fn opt_i64(&self, key: &str) -> FieldResult<Option<i64>> {
        self.opt(key)?.map(|a| a.i64()).transpose()
    }

    pub fn req_i32(&self, key: &str) -> FieldResult<i32> {
        self.req(key)?.i32()
    }

    /// A Kubernetes quantity, written as a string or a bare number.
    pub fn quantity(&self) -> FieldResult<Quantity> {
        let number;
        let text = match self.v {
            Value::String(s) => s.as_str(),
            Value::Number(n) => {
                number = n.to_string();
                number.as_str()
            }
            _ => return Err(self.type_err("a quantity (string or number)")),
        };
        Quantity::parse(text).map_err(|e| self.err(e.to_string()))
    }

    pub fn opt_quantity(&self, key: &str) -> FieldResult<Option<Quantity>> {
        self.opt(key)?.map(|a| a.quantity()).transpose()
    }

    /// This value as a list of cursors.
    pub fn list(&self) -> FieldResult<Vec<At<'v>>> {
        match self.v {
            Value::Array(items) => Ok(items.iter().map(|v| self.at(v)).collect()),
            _ => Err(self.type_err("a list")),
        }
    }

    /// The list field `key`; empty when absent.
    pub fn opt_list(&self, key: &str) -> FieldResult<Vec<At<'v>>> {
        Ok(match self.opt(key)? {
            Some(a) => a.list()?,
            None => Vec::new(),
        })
    }

    /// This object's entries in key order.
    pub fn entries(&self) -> FieldResult<Vec<(&'v str, At<'v>)>> {
        match self.v {
            Value::Object(map) => Ok(map
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.as_str(), self.at(v)))
                .collect()),
            _ => Err(self.type_err("an object")),
        }
    }

    /// The object field `key` as entries; empty when absent.
    pub fn opt_entries(&self, key: &str) -> FieldResult<Vec<(&'v str, At<'v>)>> {
        Ok(match self.opt(key)? {
            Some(a) => a.entries()?,
            None => Vec::new(),
        })
    }

    /// A `map[string]string` field (labels, nodeSelector, ...); empty when absent.
    pub fn string_map(&self, key: &str) -> FieldResult<crate::model::Labels> {
        self.opt_entries(key)?
            .into_iter()
            .map(|(k, a)| Ok((k.to_string(), a.str()?.to_string())))
            .collect()
    }

    /// A `[]string` field; empty when absent.
    pub fn string_list(&self, key: &str) -> FieldResult<Vec<String>> {
        self.opt_list(key)?
            .into_iter()
            .map(|a| Ok(a.str()?.to_string()))
            .collect()
    }

    /// A resource list (`requests`, `allocatable`, ...); empty when absent. Negative
    /// quantities are rejected, as the API server rejects them.
    pub fn resource_list(&self, key: &str) -> FieldResult<ResourceList> {
        self.opt_entries(key)?
            .into_iter()
            .map(|(k, a)| Ok((k.to_string(), a.non_negative_quantity()?)))
            .collect()
    }

    /// An RFC 3339 timestamp field as milliseconds since the epoch.
    pub fn opt_timestamp(&self, key: &str) -> FieldResult<Option<Timestamp>> {
        let Some(a) = self.opt(key)? else {
            return Ok(None);
        };
        let text = a.str()?;
        let ts: jiff::Timestamp = text
            .parse()
            .map_err(|e| a.err(format!("invalid RFC 3339 timestamp {text:?}: {e}")))?;
        Ok(Some(ts.as_millisecond()))
    }

    /// A string field restricted to `allowed` values, mapped through `map`.
    pub fn opt_enum<T: Copy>(&self, key: &str, allowed: &[(&str, T)]) -> FieldResult<Option<T>> {
        let Some(a) = self.opt(key)? else {
            return Ok(None);
        };
        let s = a.str()?;
        allowed
            .iter()
            .find(|(name, _)| *name == s)
            .map(|(_, v)| Some(*v))
            .ok_or_else(|| {
                let names: Vec<&str> = allowed.iter().map(|(n, _)| *n).collect();
                a.err(format!(
                    "unknown value {s:?} (expected one of: {})",
                    names.join(", ")
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_and_type_errors() {
        let v = json!({"spec": {"groups": [{"q": "32x"}], "m": {"a.b/c": 1}}});
        let root = At::root(&v, "");
        let q = root.req("spec").unwrap().opt_list("groups").unwrap()[0]
            .req("q")
            .unwrap()
            .quantity()
            .unwrap_err();
        assert_eq!(q.path, "spec.groups[0].q");
        assert!(q.message.contains("unknown suffix"), "{}", q.message);
        let m = root.req("spec").unwrap().string_map("m").unwrap_err();
        assert_eq!(m.path, "spec.m[\"a.b/c\"]");
        assert_eq!(m.message, "expected a string, found a number");
        let l = root.opt_list("spec").unwrap_err();
        assert_eq!(l.message, "expected a list, found an object");
    }

    #[test]
    fn null_is_absent_and_timestamps_parse() {
        let v = json!({"a": null, "t": "2024-05-01T10:00:00Z", "n": 3000000000i64});
        let root = At::root(&v, "");
        assert!(root.opt("a").unwrap().is_none());
        assert_eq!(root.opt_timestamp("t").unwrap(), Some(1_714_557_600_000));
        assert!(root.opt_i32("n").unwrap_err().message.contains("int32"));
        assert_eq!(root.req("zz").unwrap_err().path, "zz");
    }
}
