//! `d` describe and `y` YAML of the selected object (k9s habits), shown in a scrollable
//! pane over the view. Describe is `kubectl describe`-style text with the conditions and
//! the object's events from the Events view; YAML is the object as the console holds
//! it — rebuilt from the parsed model (the fields gangplank reads), not the raw object
//! the server stores (managed fields and fields gangplank ignores are not there).

use serde_json::{Map, Value, json};

use super::app::App;
use super::data::ConsoleData;
use super::msg::ViewId;
use super::rows::queues::QueueLine;
use super::widgets::{format_age, format_time};
use crate::model::{ConditionStatus, Node, Workload};

/// What `d` and `y` show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaneKind {
    Describe,
    Yaml,
}

/// A text pane over the view (describe, YAML): its title and lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pane {
    pub title: String,
    pub lines: Vec<String>,
}

/// The selected object of the current view.
enum Selected<'a> {
    Workload(&'a Workload),
    Node(&'a Node),
    ClusterQueue(&'a str),
    LocalQueue(&'a str, &'a str),
}

fn selected<'a>(app: &'a App, data: &'a ConsoleData) -> Result<Selected<'a>, String> {
    match app.view {
        ViewId::Workloads => {
            let r = app.selected_workload().ok_or("no workload selected")?;
            data.state
                .workloads
                .get(&(r.namespace.clone(), r.name.clone()))
                .map(|w| Selected::Workload(w))
                .ok_or_else(|| "the workload no longer exists".to_string())
        }
        ViewId::Nodes => {
            let i = app
                .visible(ViewId::Nodes)
                .get(app.list().selected)
                .ok_or("no node selected")?;
            let name = &app.cache.nodes.rows[*i as usize].name;
            data.state
                .nodes
                .get(name)
                .map(|n| Selected::Node(n))
                .ok_or_else(|| "the node no longer exists".to_string())
        }
        ViewId::Queues => match app.selected_queue_line() {
            Some(QueueLine::ClusterQueue { index, .. }) => {
                Ok(Selected::ClusterQueue(&app.cache.queues.cqs[*index].name))
            }
            Some(QueueLine::LocalQueue { index, .. }) => {
                let lq = &app.cache.queues.lqs[*index];
                Ok(Selected::LocalQueue(&lq.namespace, &lq.name))
            }
            _ => Err("select a ClusterQueue or LocalQueue".into()),
        },
        v => Err(format!(
            "works on workloads, queues and nodes, not in the {} view",
            v.name()
        )),
    }
}

/// The pane for `kind` on the current selection, or why there is none.
pub fn pane(app: &App, data: &ConsoleData, kind: PaneKind) -> Result<Pane, String> {
    let sel = selected(app, data)?;
    let (what, value) = match &sel {
        Selected::Workload(w) => (format!("workload {}", w.key()), workload_value(w)),
        Selected::Node(n) => (format!("node {}", n.name), node_value(n)),
        Selected::ClusterQueue(name) => (format!("clusterqueue {name}"), cq_value(data, name)?),
        Selected::LocalQueue(ns, name) => {
            (format!("localqueue {ns}/{name}"), lq_value(data, ns, name)?)
        }
    };
    let lines = match kind {
        PaneKind::Yaml => serde_yaml_ng::to_string(&value)
            .unwrap_or_else(|e| format!("cannot render YAML: {e}"))
            .lines()
            .map(str::to_string)
            .collect(),
        PaneKind::Describe => describe(app, data, &sel, &value),
    };
    let label = match kind {
        PaneKind::Describe => "describe",
        PaneKind::Yaml => "yaml",
    };
    Ok(Pane {
        title: format!(" {label} {what} · Esc back "),
        lines,
    })
}

fn conditions_value(w: &Workload) -> Vec<Value> {
    w.conditions
        .iter()
        .map(|c| {
            json!({
                "type": c.type_,
                "status": status_word(c.status),
                "reason": c.reason,
                "message": c.message,
                "lastTransitionTime": c.last_transition_time.map(rfc3339),
            })
        })
        .collect()
}

fn status_word(s: ConditionStatus) -> &'static str {
    match s {
        ConditionStatus::True => "True",
        ConditionStatus::False => "False",
        ConditionStatus::Unknown => "Unknown",
    }
}

fn rfc3339(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| "—".into())
}

fn workload_value(w: &Workload) -> Value {
    let pod_sets: Vec<Value> = w
        .pod_sets
        .iter()
        .map(|ps| {
            let requests: Map<String, Value> = ps
                .requests
                .iter()
                .map(|(r, q)| (r.clone(), Value::String(q.to_string())))
                .collect();
            json!({"name": ps.name, "count": ps.count, "requests (per pod)": requests})
        })
        .collect();
    let mut spec = json!({
        "queueName": w.queue_name,
        "priority": w.priority,
        "active": w.active,
        "podSets": pod_sets,
    });
    if let Some(pc) = &w.priority_class {
        spec["priorityClassName"] = json!(pc.name);
        spec["priorityClassSource"] = json!(format!("{:?}", pc.kind));
    }
    let admission = w.admission.as_ref().map(|a| {
        json!({
            "clusterQueue": a.cluster_queue,
            "podSetAssignments": a.pod_set_assignments.iter().map(|p| json!({
                "name": p.name,
                "flavors": p.flavors,
                "count": p.count,
                "resourceUsage": p.resource_usage.iter()
                    .map(|(r, q)| (r.clone(), Value::String(q.to_string())))
                    .collect::<Map<String, Value>>(),
            })).collect::<Vec<_>>(),
        })
    });
    let owners: Vec<Value> = w
        .owner
        .iter()
        .map(|o| {
            json!({"apiVersion": o.api_version, "kind": o.kind, "name": o.name,
                   "uid": o.uid, "controller": o.controller})
        })
        .collect();
    json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": w.name,
            "namespace": w.namespace,
            "uid": w.uid,
            "creationTimestamp": rfc3339(w.creation_timestamp),
            "labels": w.labels,
            "annotations": w.annotations,
            "ownerReferences": owners,
        },
        "spec": spec,
        "status": {
            "conditions": conditions_value(w),
            "admission": admission,
        },
    })
}

fn node_value(n: &Node) -> Value {
    let q = |l: &crate::model::ResourceList| -> Map<String, Value> {
        l.iter()
            .map(|(r, q)| (r.clone(), Value::String(q.to_string())))
            .collect()
    };
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": n.name, "labels": n.labels},
        "spec": {
            "unschedulable": n.unschedulable,
            "taints": n.taints.iter().map(|t| json!({
                "key": t.key, "value": t.value, "effect": t.effect})).collect::<Vec<_>>(),
        },
        "status": {
            "allocatable": q(&n.allocatable),
            "capacity": q(&n.capacity),
            "ready": n.ready,
        },
    })
}

fn cq_value(data: &ConsoleData, name: &str) -> Result<Value, String> {
    let cq = data
        .state
        .cluster_queues
        .get(name)
        .ok_or_else(|| format!("ClusterQueue {name} no longer exists"))?;
    let groups: Vec<Value> = cq
        .resource_groups
        .iter()
        .map(|g| {
            json!({
                "coveredResources": g.covered_resources,
                "flavors": g.flavors.iter().map(|f| json!({
                    "name": f.name,
                    "resources": f.resources.iter().map(|r| json!({
                        "name": r.name,
                        "nominalQuota": r.nominal.to_string(),
                        "borrowingLimit": r.borrowing_limit.map(|q| q.to_string()),
                        "lendingLimit": r.lending_limit.map(|q| q.to_string()),
                    })).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    Ok(json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": cq.name},
        "spec": {
            "cohort": cq.cohort,
            "resourceGroups": groups,
            "stopPolicy": format!("{:?}", cq.stop_policy),
            "queueingStrategy": format!("{:?}", cq.queueing_strategy),
            "preemption": format!("{:?}", cq.preemption),
            "admissionChecks": cq.admission_checks,
        },
    }))
}

fn lq_value(data: &ConsoleData, ns: &str, name: &str) -> Result<Value, String> {
    let lq = data
        .state
        .local_queues
        .get(&(ns.to_string(), name.to_string()))
        .ok_or_else(|| format!("LocalQueue {ns}/{name} no longer exists"))?;
    Ok(json!({
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": lq.name, "namespace": lq.namespace},
        "spec": {
            "clusterQueue": lq.cluster_queue,
            "stopPolicy": format!("{:?}", lq.stop_policy),
        },
        "status": {
            "pendingWorkloads": lq.pending_workloads,
            "admittedWorkloads": lq.admitted_workloads,
        },
    }))
}

/// `kubectl describe`-style: the identity first, the conditions as a table, the
/// object's events from the Events view, then every field (`Key: value`, nested).
fn describe(app: &App, data: &ConsoleData, sel: &Selected<'_>, value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let meta = &value["metadata"];
    out.push(format!("Name:         {}", scalar(&meta["name"])));
    if let Some(ns) = meta["namespace"].as_str() {
        out.push(format!("Namespace:    {ns}"));
    }
    out.push(format!("Kind:         {}", scalar(&value["kind"])));
    if let Selected::Workload(w) = sel {
        let row = app
            .cache
            .workloads
            .iter()
            .find(|r| r.namespace == w.namespace && r.name == w.name);
        if let Some(r) = row {
            out.push(format!("Job:          {}", r.job));
            out.push(format!("State:        {}", r.state.label()));
            out.push(format!(
                "Queue:        {} → {}",
                if r.queue.is_empty() { "—" } else { &r.queue },
                if r.cluster_queue.is_empty() {
                    "—"
                } else {
                    &r.cluster_queue
                }
            ));
            if let Some(p) = &r.preempted {
                out.push(format!(
                    "Preempted:    {} ({} time(s))",
                    p.describe(app.now),
                    p.count
                ));
            }
        }
        out.push(format!(
            "Priority:     {}{}",
            w.priority,
            w.priority_class
                .as_ref()
                .map_or(String::new(), |c| format!(" ({})", c.name))
        ));
        out.push(format!(
            "Created:      {} ({} ago)",
            format_time(w.creation_timestamp),
            format_age(app.now - w.creation_timestamp)
        ));
    }
    if let Selected::Workload(w) = sel {
        out.push("Conditions:".into());
        out.push(format!(
            "  {:<14} {:<7} {:<22} {:<8} MESSAGE",
            "TYPE", "STATUS", "REASON", "AGE"
        ));
        for c in &w.conditions {
            let age = c
                .last_transition_time
                .map_or("—".into(), |t| format_age(app.now - t));
            out.push(format!(
                "  {:<14} {:<7} {:<22} {:<8} {}",
                c.type_,
                status_word(c.status),
                c.reason,
                age,
                c.message
            ));
        }
    }
    let key = match sel {
        Selected::Workload(w) => Some(w.key()),
        Selected::LocalQueue(ns, name) => Some(format!("{ns}/{name}")),
        _ => None,
    };
    out.push("Events:".into());
    let events: Vec<_> = data
        .events
        .iter()
        .filter(|e| {
            key.as_deref()
                .is_some_and(|k| e.object == k || e.by.as_deref() == Some(k))
        })
        .collect();
    if events.is_empty() {
        out.push("  <none>".into());
    }
    for e in events {
        let when = if e.time > 0 {
            format!(
                "{} ({} ago)",
                format_time(e.time),
                format_age(app.now - e.time)
            )
        } else {
            "—".into()
        };
        out.push(format!("  {:<10} {when}  {}", e.kind.label(), e.text));
    }
    out.push("Object:".into());
    flatten(value, 1, &mut out, &["conditions"]);
    out
}

/// `Key: value` lines, nested maps indented, lists as `- ` items; skips `skip` keys.
fn flatten(v: &Value, depth: usize, out: &mut Vec<String>, skip: &[&str]) {
    let pad = "  ".repeat(depth);
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                if skip.contains(&k.as_str()) || v.is_null() {
                    continue;
                }
                let key = title(k);
                match v {
                    Value::Object(inner) if inner.is_empty() => {
                        out.push(format!("{pad}{key}: <none>"))
                    }
                    Value::Array(a) if a.is_empty() => out.push(format!("{pad}{key}: <none>")),
                    Value::Object(_) | Value::Array(_) => {
                        out.push(format!("{pad}{key}:"));
                        flatten(v, depth + 1, out, skip);
                    }
                    _ => out.push(format!("{pad}{key}: {}", scalar(v))),
                }
            }
        }
        Value::Array(a) => {
            for item in a {
                match item {
                    Value::Object(_) | Value::Array(_) => {
                        out.push(format!("{pad}-"));
                        flatten(item, depth + 1, out, skip);
                    }
                    _ => out.push(format!("{pad}- {}", scalar(item))),
                }
            }
        }
        _ => out.push(format!("{pad}{}", scalar(v))),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `creationTimestamp` → `Creation Timestamp`; keys with dots or slashes (labels) stay.
fn title(k: &str) -> String {
    if k.contains(['.', '/']) {
        return k.to_string();
    }
    let mut out = String::new();
    for (i, c) in k.chars().enumerate() {
        if i == 0 {
            out.extend(c.to_uppercase());
        } else if c.is_uppercase() {
            out.push(' ');
            out.push(c);
        } else {
            out.push(c);
        }
    }
    out
}
