//! Events, as Kueue, the scheduler, the kubelet and the job controllers record them:
//! core/v1 `Event` objects in the store (served as core/v1 and events.k8s.io/v1), so
//! `kubectl get events` and `kubectl describe` tell the story (QuotaReserved, Admitted,
//! Pending with the reason, Preempted naming the preemptor, Evicted, Started, …).
//!
//! Like client-go's recorder, a repeat of the same event (same object, type, reason
//! and message) bumps `count` and `lastTimestamp` instead of adding an object. Events
//! are bounded as the API server bounds them: each lives [`EVENT_TTL_MS`] of clock time
//! (kube-apiserver's `--event-ttl` default) and at most [`MAX_EVENTS`] are kept (the
//! oldest go first), so a long `simulate` does not grow without bound.

use std::collections::{HashMap, VecDeque};

use serde_json::{Value, json};

use crate::sim::clock::rfc3339;
use crate::sim::resources::ResourceKey;
use crate::sim::store::UpdateScope;

use super::SimCluster;
use super::json;

/// How long an event is kept (clock time), as kube-apiserver's default `--event-ttl`.
pub(crate) const EVENT_TTL_MS: i64 = 3_600_000;
/// Events kept at most.
pub(crate) const MAX_EVENTS: usize = 10_000;
/// Kubernetes truncates event messages to this many bytes.
const MAX_MESSAGE: usize = 1024;

/// Who records an event: `reportingComponent` (and `source.component`) and, for the
/// kubelet, the node as `source.host`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Reporter<'a> {
    /// Kueue's scheduler (`kueue-admission`).
    KueueAdmission,
    /// Kueue's job reconciler for a job kind (`kubeflow.org/pytorchjob-kueue-controller`).
    KueueJob(&'a str),
    /// kube-scheduler.
    Scheduler,
    /// The kubelet of a node.
    Kubelet(&'a str),
    /// Any other controller, by name (`job-controller`, `deployment-controller`, …).
    Controller(&'static str),
}

impl Reporter<'_> {
    fn component(&self) -> String {
        match self {
            Reporter::KueueAdmission => "kueue-admission".into(),
            Reporter::KueueJob(kind) => format!("{kind}-kueue-controller"),
            Reporter::Scheduler => "default-scheduler".into(),
            Reporter::Kubelet(_) => "kubelet".into(),
            Reporter::Controller(c) => (*c).into(),
        }
    }
}

/// What the recorder remembers of one stored event.
#[derive(Debug)]
struct Recorded {
    namespace: String,
    name: String,
    count: u64,
}

/// The recorder's memory: events by correlation key, and their creation order.
#[derive(Debug, Default)]
pub(crate) struct Events {
    by_key: HashMap<String, Recorded>,
    /// (created at, correlation key), oldest first.
    order: VecDeque<(i64, String)>,
    seq: u64,
}

/// `apiVersion`, `kind`, name, namespace, uid, resourceVersion of an object.
fn reference(obj: &Value) -> Value {
    let mut r = json!({
        "apiVersion": obj.get("apiVersion").cloned().unwrap_or(Value::Null),
        "kind": obj.get("kind").cloned().unwrap_or(Value::Null),
        "name": json::name(obj),
        "uid": json::uid(obj),
    });
    let ns = json::namespace(obj);
    if !ns.is_empty() {
        r["namespace"] = json!(ns);
    }
    if let Some(rv) = json::str_at(obj, "/metadata/resourceVersion") {
        r["resourceVersion"] = json!(rv);
    }
    r
}

fn truncate(message: &str) -> String {
    if message.len() <= MAX_MESSAGE {
        return message.to_string();
    }
    let mut end = MAX_MESSAGE - 3;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &message[..end])
}

impl SimCluster {
    /// Records an event about `obj` (the object as stored: kind and apiVersion set).
    pub(crate) fn record_event(
        &mut self,
        obj: &Value,
        warning: bool,
        reason: &str,
        message: &str,
        by: Reporter<'_>,
    ) {
        let now_ms = self.now_ms();
        self.expire_events(now_ms);
        let message = truncate(message);
        let type_ = if warning { "Warning" } else { "Normal" };
        let component = by.component();
        let key = format!(
            "{}\u{0}{}\u{0}{type_}\u{0}{reason}\u{0}{message}\u{0}{component}",
            json::uid(obj),
            json::name(obj)
        );
        let now = rfc3339(now_ms);
        if let Some(r) = self.events.by_key.get(&key) {
            let (ns, name, count) = (r.namespace.clone(), r.name.clone(), r.count + 1);
            let micro = micro_time(now_ms);
            let updated = self.write_event(&ns, &name, |e| {
                e["count"] = json!(count);
                e["lastTimestamp"] = json!(now);
                e["series"] = json!({"count": count, "lastObservedTime": micro});
            });
            if updated {
                if let Some(r) = self.events.by_key.get_mut(&key) {
                    r.count = count;
                }
                return;
            }
            self.events.by_key.remove(&key);
        }
        let involved_ns = json::namespace(obj);
        let namespace = if involved_ns.is_empty() {
            "default".to_string()
        } else {
            involved_ns.to_string()
        };
        self.events.seq += 1;
        // Unique and sortable like client-go's `<object>.<unix nanos in hex>`.
        let name = format!(
            "{}.{:016x}",
            json::name(obj),
            (now_ms as u64).wrapping_mul(1_000_000) + self.events.seq % 1_000_000
        );
        let mut source = json!({"component": component});
        let mut instance = component.clone();
        if let Reporter::Kubelet(node) = by {
            source["host"] = json!(node);
            instance = node.to_string();
        }
        let event = json!({
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": reference(obj),
            "reason": reason,
            "message": message,
            "type": type_,
            "action": reason,
            "source": source,
            "reportingComponent": component,
            "reportingInstance": instance,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "eventTime": micro_time(now_ms),
            "count": 1,
        });
        if self.create(&ResourceKey::EVENTS, event).is_some() {
            self.events.by_key.insert(
                key.clone(),
                Recorded {
                    namespace,
                    name,
                    count: 1,
                },
            );
            self.events.order.push_back((now_ms, key));
        }
    }

    /// Records an event about the object at `(res, ns, name)`, if it exists.
    pub(crate) fn record_event_for(
        &mut self,
        res: &ResourceKey,
        (ns, name): (&str, &str),
        warning: bool,
        (reason, message): (&str, &str),
        by: Reporter<'_>,
    ) {
        if let Some(obj) = self.get(res, ns, name) {
            self.record_event(&obj, warning, reason, message, by);
        }
    }

    fn write_event(&mut self, ns: &str, name: &str, f: impl FnOnce(&mut Value)) -> bool {
        self.write(&ResourceKey::EVENTS, ns, name, UpdateScope::All, f)
            .is_some()
    }

    /// Deletes events older than the TTL, and the oldest beyond [`MAX_EVENTS`].
    pub(crate) fn expire_events(&mut self, now_ms: i64) {
        while let Some((at, _)) = self.events.order.front() {
            let expired = *at <= now_ms - EVENT_TTL_MS;
            if !expired && self.events.order.len() < MAX_EVENTS {
                return;
            }
            let Some((_, key)) = self.events.order.pop_front() else {
                return;
            };
            if let Some(r) = self.events.by_key.remove(&key) {
                self.delete(&ResourceKey::EVENTS, &r.namespace, &r.name);
            }
        }
    }
}

/// A MicroTime (`2026-01-01T00:10:00.000000Z`).
fn micro_time(ms: i64) -> String {
    crate::sim::clock::ms_to_timestamp(ms)
        .strftime("%Y-%m-%dT%H:%M:%S.%6fZ")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_messages_are_truncated_on_a_char_boundary() {
        let m = "é".repeat(600);
        let t = truncate(&m);
        assert!(t.len() <= MAX_MESSAGE && t.ends_with("..."));
        assert_eq!(truncate("short"), "short");
        assert_eq!(micro_time(1_000), "1970-01-01T00:00:01.000000Z");
    }
}
