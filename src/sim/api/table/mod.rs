//! Server-side printing: `meta.k8s.io/v1` (and v1beta1) `Table` answers for clients
//! that ask for them in `Accept` (`application/json;as=Table;v=v1;g=meta.k8s.io`, as
//! `kubectl get` does), for gets, lists and watches.
//!
//! Columns are those kubectl users know: Kueue's and the training operator's CRD
//! `additionalPrinterColumns` evaluated by JSONPath over the object (ages of `date`
//! columns formatted by the server, as kube-apiserver does), and the built-in printers'
//! columns for the core kinds ([`core`]). `priority: 1` columns are the `-o wide` ones.
//! Ages are computed with the server's clock ([`super::ServerOptions::clock`]).

mod core;
pub mod jsonpath;

use axum::http::{HeaderMap, header};
use serde_json::{Value, json};

use super::crds;
use crate::sim::resources::ResourceDef;

/// What a row carries besides its cells (`?includeObject=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Include {
    None,
    Metadata,
    Object,
}

/// A request for tables: the Table's version and what rows include.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TableRequest {
    pub version: &'static str,
    pub include: Include,
}

/// The table the client asked for, if any: the first acceptable media type of `Accept`
/// that names `as=Table` in `meta.k8s.io` (plain JSON otherwise).
pub(crate) fn requested(headers: &HeaderMap, include: Option<&str>) -> Option<TableRequest> {
    let accept = headers.get(header::ACCEPT)?.to_str().ok()?;
    for media in accept.split(',') {
        let mut parts = media.split(';').map(str::trim);
        let mime = parts.next().unwrap_or("");
        if !(mime == "application/json" || mime == "*/*") {
            continue;
        }
        let params: Vec<(&str, &str)> = parts.filter_map(|p| p.split_once('=')).collect();
        let get = |k: &str| params.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        if get("as") != Some("Table") {
            if params.is_empty() {
                return None; // plain JSON preferred before any table
            }
            continue;
        }
        if get("g") != Some("meta.k8s.io") {
            continue;
        }
        let version = match get("v") {
            Some("v1") => "v1",
            Some("v1beta1") => "v1beta1",
            _ => continue,
        };
        let include = match include {
            Some("None") => Include::None,
            Some("Object") => Include::Object,
            _ => Include::Metadata,
        };
        return Some(TableRequest { version, include });
    }
    None
}

/// A column definition.
pub(crate) fn col(name: &str, type_: &str, priority: i64, description: &str) -> Value {
    let mut c = json!({"name": name, "type": type_, "format": "", "description": description, "priority": priority});
    if name == "Name" {
        c["format"] = json!("name");
    }
    c
}

const NAME_DOC: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const AGE_DOC: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.";

/// Columns and a cell function for `def` at `version`.
fn columns(def: &ResourceDef, version: &str) -> Vec<Value> {
    if let Some(cols) = core::columns(def) {
        return cols;
    }
    let mut out = vec![col("Name", "string", 0, NAME_DOC)];
    let printer = crds::printer_columns(def.group, def.plural, version);
    if printer.is_empty() {
        out.push(col("Age", "date", 0, AGE_DOC));
    }
    for c in printer {
        out.push(col(
            c["name"].as_str().unwrap_or(""),
            c["type"].as_str().unwrap_or("string"),
            c["priority"].as_i64().unwrap_or(0),
            c["description"].as_str().unwrap_or(""),
        ));
    }
    out
}

fn cells(def: &ResourceDef, version: &str, obj: &Value, now_ms: i64) -> Vec<Value> {
    if let Some(c) = core::cells(def, obj, now_ms) {
        return c;
    }
    let mut out = vec![json!(name(obj))];
    let printer = crds::printer_columns(def.group, def.plural, version);
    if printer.is_empty() {
        out.push(json!(age(
            obj.pointer("/metadata/creationTimestamp"),
            now_ms
        )));
    }
    for c in printer {
        let path = c["jsonPath"].as_str().unwrap_or("");
        let found = jsonpath::find(obj, path).into_iter().next();
        out.push(match (c["type"].as_str().unwrap_or("string"), found) {
            (_, None) | (_, Some(Value::Null)) => Value::Null,
            ("date", v) => json!(age(v, now_ms)),
            ("string", Some(Value::String(s))) => json!(s),
            ("string", Some(v)) => json!(v.to_string()),
            (_, Some(v)) => v.clone(),
        });
    }
    out
}

pub(crate) fn name(obj: &Value) -> &str {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// One row: cells and the object as `include` asks.
fn row(
    def: &ResourceDef,
    version: &str,
    obj: &Value,
    now_ms: i64,
    include: Include,
    api_version: &str,
) -> Value {
    let mut r = json!({"cells": cells(def, version, obj, now_ms)});
    match include {
        Include::None => {}
        Include::Object => r["object"] = obj.clone(),
        Include::Metadata => {
            r["object"] = json!({
                "kind": "PartialObjectMetadata",
                "apiVersion": api_version,
                "metadata": obj.get("metadata").cloned().unwrap_or(json!({})),
            })
        }
    }
    r
}

/// A Table of `items` (already converted to the client's `version`).
pub(crate) fn table(
    def: &ResourceDef,
    version: &str,
    req: TableRequest,
    items: &[Value],
    metadata: Value,
    now_ms: i64,
) -> Value {
    let meta_av = format!("meta.k8s.io/{}", req.version);
    let rows: Vec<Value> = items
        .iter()
        .map(|o| row(def, version, o, now_ms, req.include, &meta_av))
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": meta_av,
        "metadata": metadata,
        "columnDefinitions": columns(def, version),
        "rows": rows,
    })
}

/// Milliseconds since the epoch of an RFC 3339 timestamp.
pub(crate) fn parse_ms(v: Option<&Value>) -> Option<i64> {
    v?.as_str()?
        .parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_millisecond())
}

/// The age of a timestamp as Kubernetes prints it (`<unknown>` without one).
pub(crate) fn age(ts: Option<&Value>, now_ms: i64) -> String {
    match parse_ms(ts) {
        Some(t) => human_duration(now_ms - t),
        None => "<unknown>".into(),
    }
}

/// `k8s.io/apimachinery/pkg/util/duration.HumanDuration`: `45s`, `3m20s`, `2h5m`,
/// `3d4h`, `2y10d`; more than a second in the future is `<invalid>`.
pub fn human_duration(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    if secs < -1 {
        return "<invalid>".into();
    }
    if secs < 0 {
        return "0s".into();
    }
    if secs < 120 {
        return format!("{secs}s");
    }
    let minutes = secs / 60;
    if minutes < 10 {
        let s = secs % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations_as_kubernetes_prints_them() {
        let s = 1000;
        assert_eq!(human_duration(-5 * s), "<invalid>");
        assert_eq!(human_duration(-500), "0s");
        assert_eq!(human_duration(45 * s), "45s");
        assert_eq!(human_duration(200 * s), "3m20s");
        assert_eq!(human_duration(600 * s), "10m");
        assert_eq!(human_duration(3 * 3600 * s + 300 * s), "3h5m");
        assert_eq!(human_duration(30 * 3600 * s), "30h");
        assert_eq!(human_duration(76 * 3600 * s), "3d4h");
        assert_eq!(human_duration(40 * 86400 * s), "40d");
    }

    #[test]
    fn accept_headers() {
        let mut h = HeaderMap::new();
        h.insert(
            header::ACCEPT,
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
                .parse()
                .unwrap(),
        );
        let t = requested(&h, None).unwrap();
        assert_eq!((t.version, t.include), ("v1", Include::Metadata));
        h.insert(header::ACCEPT, "application/json".parse().unwrap());
        assert!(requested(&h, None).is_none());
    }
}
