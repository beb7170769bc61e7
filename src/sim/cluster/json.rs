//! Small JSON helpers for controllers: nested maps, conditions, names.

use serde_json::{Map, Value, json};

/// The map at `path` inside `v`, created (replacing non-objects) as needed.
pub(crate) fn map_at<'a>(v: &'a mut Value, path: &[&str]) -> &'a mut Map<String, Value> {
    let mut cur = v;
    for key in path {
        if !cur.is_object() {
            *cur = Value::Object(Map::new());
        }
        let m = cur.as_object_mut().expect("just made an object");
        cur = m
            .entry(key.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if !cur.is_object() {
        *cur = Value::Object(Map::new());
    }
    cur.as_object_mut().expect("just made an object")
}

/// A string at a JSON pointer.
pub(crate) fn str_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str)
}

/// `metadata.name`, `metadata.namespace`, `metadata.uid`.
pub(crate) fn name(v: &Value) -> &str {
    str_at(v, "/metadata/name").unwrap_or_default()
}

pub(crate) fn namespace(v: &Value) -> &str {
    str_at(v, "/metadata/namespace").unwrap_or_default()
}

pub(crate) fn uid(v: &Value) -> &str {
    str_at(v, "/metadata/uid").unwrap_or_default()
}

/// A label value.
pub(crate) fn label<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.pointer("/metadata/labels")
        .and_then(|l| l.get(key))
        .and_then(Value::as_str)
}

/// An annotation value.
pub(crate) fn annotation<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.pointer("/metadata/annotations")
        .and_then(|l| l.get(key))
        .and_then(Value::as_str)
}

/// One condition of `status.conditions`: `(status, reason, message)`.
pub(crate) fn condition<'a>(v: &'a Value, type_: &str) -> Option<(&'a str, &'a str, &'a str)> {
    v.pointer("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
        .map(|c| {
            (
                c.get("status").and_then(Value::as_str).unwrap_or_default(),
                c.get("reason").and_then(Value::as_str).unwrap_or_default(),
                c.get("message").and_then(Value::as_str).unwrap_or_default(),
            )
        })
}

/// Whether condition `type_` is `True`.
pub(crate) fn condition_true(v: &Value, type_: &str) -> bool {
    condition(v, type_).is_some_and(|(s, _, _)| s == "True")
}

/// Sets a condition as `meta.SetStatusCondition` does: `lastTransitionTime` changes
/// only when the status changes.
pub(crate) fn set_condition(
    obj: &mut Value,
    type_: &str,
    status: bool,
    reason: &str,
    message: &str,
    now: &str,
) {
    let st = map_at(obj, &["status"]);
    let list = st
        .entry("conditions")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !list.is_array() {
        *list = Value::Array(Vec::new());
    }
    let list = list.as_array_mut().expect("array");
    let status_s = if status { "True" } else { "False" };
    if let Some(c) = list
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
    {
        let m = map_at(c, &[]);
        if m.get("status").and_then(Value::as_str) != Some(status_s) {
            m.insert("status".into(), json!(status_s));
            m.insert("lastTransitionTime".into(), json!(now));
        }
        m.insert("reason".into(), json!(reason));
        m.insert("message".into(), json!(message));
    } else {
        list.push(json!({
            "type": type_,
            "status": status_s,
            "reason": reason,
            "message": message,
            "lastTransitionTime": now,
        }));
    }
}

/// A short, stable hex hash (FNV-1a) of `text`, `len` hex digits (≤ 16).
pub(crate) fn short_hash(text: &str, len: usize) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    // Final avalanche, so that inputs differing only at the end (uids) differ everywhere.
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    let s = format!("{h:016x}");
    s[..len.min(16)].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_keep_transition_time() {
        let mut o = json!({});
        set_condition(&mut o, "A", true, "R", "m", "t1");
        set_condition(&mut o, "A", true, "R2", "m2", "t2");
        assert_eq!(o["status"]["conditions"][0]["lastTransitionTime"], "t1");
        assert_eq!(condition(&o, "A"), Some(("True", "R2", "m2")));
        set_condition(&mut o, "A", false, "R3", "", "t3");
        assert_eq!(o["status"]["conditions"][0]["lastTransitionTime"], "t3");
        assert_eq!(short_hash("abc", 5).len(), 5);
    }
}
