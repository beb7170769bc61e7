//! The built-in kinds' columns, as kube-apiserver's printers produce them (and kubectl
//! users know them): pods `READY STATUS RESTARTS AGE` (wide: `IP NODE …`), nodes
//! `STATUS ROLES AGE VERSION`, jobs `STATUS COMPLETIONS DURATION AGE`, events, ….

use serde_json::{Value, json};

use super::{AGE_DOC, NAME_DOC, age, col, human_duration, name, parse_ms};
use crate::model::well_known::{LEGACY_NODE_ROLE_LABEL, NODE_ROLE_LABEL_PREFIX};
use crate::sim::resources::ResourceDef;

fn s<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

fn arr<'a>(v: &'a Value, ptr: &str) -> &'a [Value] {
    v.pointer(ptr)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn condition<'a>(v: &'a Value, type_: &str) -> Option<&'a str> {
    arr(v, "/status/conditions")
        .iter()
        .find(|c| c["type"] == type_)
        .and_then(|c| c["status"].as_str())
}

fn or_none(text: String) -> Value {
    json!(if text.is_empty() {
        "<none>".into()
    } else {
        text
    })
}

/// Columns for a built-in kind, `None` for CRD kinds.
pub(super) fn columns(def: &ResourceDef) -> Option<Vec<Value>> {
    let name = col("Name", "string", 0, NAME_DOC);
    let age = col("Age", "string", 0, AGE_DOC);
    let c = |n: &str, p: i64| col(n, "string", p, "");
    Some(match (def.group, def.kind) {
        ("", "Pod") => vec![
            name,
            c("Ready", 0),
            c("Status", 0),
            col("Restarts", "string", 0, ""),
            age,
            c("IP", 1),
            c("Node", 1),
            c("Nominated Node", 1),
            c("Readiness Gates", 1),
        ],
        ("", "Node") => vec![
            name,
            c("Status", 0),
            c("Roles", 0),
            age,
            c("Version", 0),
            c("Internal-IP", 1),
            c("External-IP", 1),
            c("OS-Image", 1),
            c("Kernel-Version", 1),
            c("Container-Runtime", 1),
        ],
        ("", "Namespace") => vec![name, c("Status", 0), age],
        (_, "Event") => vec![
            c("Last Seen", 0),
            c("Type", 0),
            c("Reason", 0),
            c("Object", 0),
            c("Subobject", 1),
            c("Source", 1),
            c("Message", 0),
            c("First Seen", 1),
            col("Count", "integer", 1, ""),
            col("Name", "string", 1, NAME_DOC),
        ],
        ("apps", "Deployment") => vec![
            name,
            c("Ready", 0),
            col("Up-to-date", "integer", 0, ""),
            col("Available", "integer", 0, ""),
            age,
            c("Containers", 1),
            c("Images", 1),
            c("Selector", 1),
        ],
        ("batch", "Job") => vec![
            name,
            c("Status", 0),
            c("Completions", 0),
            c("Duration", 0),
            age,
            c("Containers", 1),
            c("Images", 1),
            c("Selector", 1),
        ],
        ("scheduling.k8s.io", "PriorityClass") => vec![
            name,
            col("Value", "integer", 0, ""),
            col("Global-Default", "boolean", 0, ""),
            age,
            c("PreemptionPolicy", 0),
        ],
        ("apiextensions.k8s.io", _) => vec![name, col("Created At", "date", 0, AGE_DOC)],
        _ => return None,
    })
}

/// Cells for a built-in kind, `None` for CRD kinds.
pub(super) fn cells(def: &ResourceDef, o: &Value, now: i64) -> Option<Vec<Value>> {
    let n = json!(name(o));
    let created = age(o.pointer("/metadata/creationTimestamp"), now);
    Some(match (def.group, def.kind) {
        ("", "Pod") => pod(o, n, created),
        ("", "Node") => node(o, n, created),
        ("", "Namespace") => {
            let phase = s(o, "/status/phase");
            vec![
                n,
                json!(if phase.is_empty() { "Active" } else { phase }),
                json!(created),
            ]
        }
        (group, "Event") => event(o, group, now),
        ("apps", "Deployment") => {
            let st = |k: &str| {
                o.pointer(&format!("/status/{k}"))
                    .and_then(Value::as_i64)
                    .unwrap_or(0)
            };
            let want = o
                .pointer("/spec/replicas")
                .and_then(Value::as_i64)
                .unwrap_or(1);
            let (cs, images) = containers(o);
            vec![
                n,
                json!(format!("{}/{want}", st("readyReplicas"))),
                json!(st("updatedReplicas")),
                json!(st("availableReplicas")),
                json!(created),
                cs,
                images,
                selector(o),
            ]
        }
        ("batch", "Job") => job(o, n, created, now),
        ("scheduling.k8s.io", "PriorityClass") => vec![
            n,
            o.get("value").cloned().unwrap_or(json!(0)),
            json!(
                o.get("globalDefault")
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
            ),
            json!(created),
            json!(
                o.get("preemptionPolicy")
                    .and_then(Value::as_str)
                    .unwrap_or("PreemptLowerPriority")
            ),
        ],
        ("apiextensions.k8s.io", _) => vec![n, json!(s(o, "/metadata/creationTimestamp"))],
        _ => return None,
    })
}

/// `pkg/printers/internalversion.printPod`, for the states the simulator produces.
fn pod(o: &Value, n: Value, created: String) -> Vec<Value> {
    let total = arr(o, "/spec/containers").len();
    let statuses = arr(o, "/status/containerStatuses");
    let ready = statuses.iter().filter(|c| c["ready"] == true).count();
    let restarts: i64 = statuses
        .iter()
        .filter_map(|c| c["restartCount"].as_i64())
        .sum();
    let mut reason = s(o, "/status/phase").to_string();
    if reason.is_empty() {
        reason = "Pending".into();
    }
    let sr = s(o, "/status/reason");
    if !sr.is_empty() {
        reason = sr.to_string();
    }
    for c in statuses {
        if let Some(w) = c.pointer("/state/waiting/reason").and_then(Value::as_str) {
            reason = w.to_string();
        } else if let Some(t) = c
            .pointer("/state/terminated/reason")
            .and_then(Value::as_str)
        {
            reason = t.to_string();
        }
    }
    if o.pointer("/metadata/deletionTimestamp").is_some() {
        reason = "Terminating".into();
    }
    let ip = s(o, "/status/podIP");
    let node = s(o, "/spec/nodeName");
    let nominated = s(o, "/status/nominatedNodeName");
    let gates = arr(o, "/spec/readinessGates").len();
    vec![
        n,
        json!(format!("{ready}/{total}")),
        json!(reason),
        json!(restarts.to_string()),
        json!(created),
        or_none(ip.into()),
        or_none(node.into()),
        or_none(nominated.into()),
        if gates == 0 {
            json!("<none>")
        } else {
            json!(format!("0/{gates}"))
        },
    ]
}

fn node(o: &Value, n: Value, created: String) -> Vec<Value> {
    let mut status = match condition(o, "Ready") {
        Some("True") => "Ready".to_string(),
        Some(_) => "NotReady".to_string(),
        None => "Unknown".to_string(),
    };
    if o.pointer("/spec/unschedulable") == Some(&json!(true)) {
        status.push_str(",SchedulingDisabled");
    }
    let mut roles: Vec<String> = o
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            k.strip_prefix(NODE_ROLE_LABEL_PREFIX)
                .map(str::to_string)
                .or_else(|| {
                    (k == LEGACY_NODE_ROLE_LABEL).then(|| v.as_str().unwrap_or("").to_string())
                })
        })
        .filter(|r| !r.is_empty())
        .collect();
    roles.sort();
    let addr = |t: &str| {
        arr(o, "/status/addresses")
            .iter()
            .find(|a| a["type"] == t)
            .and_then(|a| a["address"].as_str())
            .unwrap_or("<none>")
            .to_string()
    };
    let info = |k: &str| {
        let v = s(o, &format!("/status/nodeInfo/{k}"));
        if v.is_empty() {
            "<unknown>".to_string()
        } else {
            v.to_string()
        }
    };
    vec![
        n,
        json!(status),
        or_none(roles.join(",")),
        json!(created),
        json!(s(o, "/status/nodeInfo/kubeletVersion")),
        json!(addr("InternalIP")),
        json!(addr("ExternalIP")),
        json!(info("osImage")),
        json!(info("kernelVersion")),
        json!(info("containerRuntimeVersion")),
    ]
}

/// An event, core/v1 or events.k8s.io/v1 (the names of its fields differ).
fn event(o: &Value, group: &str, now: i64) -> Vec<Value> {
    let core = group.is_empty();
    let involved = if core {
        "/involvedObject"
    } else {
        "/regarding"
    };
    let kind = s(o, &format!("{involved}/kind")).to_lowercase();
    let obj_name = s(o, &format!("{involved}/name"));
    let sub = s(o, &format!("{involved}/fieldPath"));
    let (first, last, count, message, source) = if core {
        (
            o.get("firstTimestamp").or(o.get("eventTime")),
            o.get("lastTimestamp")
                .filter(|v| !v.is_null())
                .or(o.pointer("/series/lastObservedTime"))
                .or(o.get("eventTime")),
            o.get("count").and_then(Value::as_i64).unwrap_or(1),
            s(o, "/message"),
            {
                let c = s(o, "/source/component");
                let h = s(o, "/source/host");
                let c = if c.is_empty() {
                    s(o, "/reportingComponent")
                } else {
                    c
                };
                if h.is_empty() {
                    c.to_string()
                } else {
                    format!("{c}, {h}")
                }
            },
        )
    } else {
        (
            o.get("deprecatedFirstTimestamp").or(o.get("eventTime")),
            o.pointer("/series/lastObservedTime")
                .or(o.get("deprecatedLastTimestamp"))
                .or(o.get("eventTime")),
            o.pointer("/series/count")
                .or(o.get("deprecatedCount"))
                .and_then(Value::as_i64)
                .unwrap_or(1),
            s(o, "/note"),
            s(o, "/reportingController").to_string(),
        )
    };
    let last_seen = match parse_ms(last) {
        Some(t) => human_duration(now - t),
        None => "<unknown>".into(),
    };
    let first_seen = match parse_ms(first) {
        Some(t) => human_duration(now - t),
        None => "<unknown>".into(),
    };
    let last_seen = if count > 1 {
        format!("{last_seen} (x{count} over {first_seen})")
    } else {
        last_seen
    };
    vec![
        json!(last_seen),
        json!(s(o, "/type")),
        json!(s(o, "/reason")),
        json!(format!("{kind}/{obj_name}")),
        json!(sub),
        json!(source),
        json!(message.trim()),
        json!(first_seen),
        json!(count),
        json!(name(o)),
    ]
}

fn job(o: &Value, n: Value, created: String, now: i64) -> Vec<Value> {
    let succeeded = o
        .pointer("/status/succeeded")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let completions = match o.pointer("/spec/completions").and_then(Value::as_i64) {
        Some(c) => format!("{succeeded}/{c}"),
        None => {
            let p = o
                .pointer("/spec/parallelism")
                .and_then(Value::as_i64)
                .unwrap_or(1);
            format!("{succeeded}/1 of {p}")
        }
    };
    let status = if condition(o, "Complete") == Some("True") {
        "Complete"
    } else if condition(o, "Failed") == Some("True") {
        "Failed"
    } else if o.pointer("/spec/suspend") == Some(&json!(true)) {
        "Suspended"
    } else {
        "Running"
    };
    let start = parse_ms(o.pointer("/status/startTime"));
    let end = parse_ms(o.pointer("/status/completionTime")).unwrap_or(now);
    let duration = start.map_or(String::new(), |s| human_duration(end - s));
    let (cs, images) = containers(o);
    vec![
        n,
        json!(status),
        json!(completions),
        json!(duration),
        json!(created),
        cs,
        images,
        selector(o),
    ]
}

/// Container names and images of a pod template (Deployments, Jobs).
fn containers(o: &Value) -> (Value, Value) {
    let cs = arr(o, "/spec/template/spec/containers");
    let names: Vec<&str> = cs.iter().filter_map(|c| c["name"].as_str()).collect();
    let images: Vec<&str> = cs.iter().filter_map(|c| c["image"].as_str()).collect();
    (json!(names.join(",")), json!(images.join(",")))
}

fn selector(o: &Value) -> Value {
    let labels: Vec<String> = o
        .pointer("/spec/selector/matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect();
    or_none(labels.join(","))
}
