//! Fault injection, settable in-process ([`Faults`]) and over HTTP at
//! `/_sim/faults` (`GET` shows the config, `PUT`/`POST` replaces it, `DELETE` clears).
//!
//! JSON shape (every field optional):
//!
//! ```json
//! {
//!   "watchCloseAfterSeconds": 5,
//!   "rules": [
//!     {"resource": "nodes", "verbs": ["list", "watch"], "status": 403},
//!     {"resource": "workloads.kueue.x-k8s.io", "verbs": ["watch"], "status": 410, "inStream": true, "times": 1},
//!     {"resource": "*", "verbs": ["patch"], "delayMs": 2000},
//!     {"resource": "pods", "status": 500},
//!     {"resource": "workloads", "verbs": ["watch"], "hang": true, "times": 1}
//!   ],
//!   "malformed": [
//!     {"resource": "workloads", "object": null}
//!   ]
//! }
//! ```
//!
//! * `watchCloseAfterSeconds`: every watch stream ends cleanly after N seconds.
//! * `rules`: the first rule matching the request's resource (`plural`,
//!   `plural.group` or `*`) and verb (empty/absent = all verbs) applies: wait
//!   `delayMs`, then answer `status` (403, 404, 410, 429, 500, 503, …) as a `Status`
//!   error. With `inStream: true` (watch only) the watch is accepted (200) and the
//!   error is sent as an in-stream `ERROR` event, as the real server does for an
//!   expired resourceVersion. `times` limits how often the rule fires (then it is
//!   removed); absent = forever. With `hang: true` (watch only) the watch is
//!   accepted (200, headers sent) and then nothing is ever written, not even at
//!   `timeoutSeconds`: a silent, hung connection, held until the client gives up.
//! * `malformed`: lists and watch streams of the resource get one extra object that
//!   does not match the schema (default: a Workload whose `spec.podSets` is a
//!   string and `spec.priority` is `"high"`; or the given `object`).

use std::sync::{Arc, RwLock};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::errors::ApiError;
use crate::sim::resources::ResourceDef;

/// The whole fault configuration.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FaultConfig {
    /// Close every watch after this many seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_close_after_seconds: Option<u64>,
    /// Error/delay rules, first match wins.
    #[serde(default)]
    pub rules: Vec<FaultRule>,
    /// Malformed objects injected into lists and watches.
    #[serde(default)]
    pub malformed: Vec<MalformedInjection>,
}

/// One error/delay rule.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FaultRule {
    /// `plural`, `plural.group`, or `*`.
    pub resource: String,
    /// Verbs this rule applies to; empty = all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verbs: Vec<String>,
    /// HTTP status to answer with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Delay before answering (or before proceeding normally when no status).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// For watches: send the error as an in-stream `ERROR` event.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_stream: bool,
    /// Fire at most this many times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
    /// For watches: accept, then send nothing (not even the close at timeoutSeconds).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hang: bool,
}

/// A malformed object to inject.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MalformedInjection {
    /// `plural` or `plural.group`.
    pub resource: String,
    /// The object; default is kind-specific garbage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<Value>,
}

/// Shared, mutable fault configuration.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    inner: Arc<RwLock<FaultConfig>>,
}

/// What a matching rule asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultAction {
    /// Error to answer with.
    pub status: Option<u16>,
    /// Delay first.
    pub delay_ms: Option<u64>,
    /// Watch only: error in the stream.
    pub in_stream: bool,
    /// Watch only: a silent, hung stream.
    pub hang: bool,
}

fn matches_resource(pattern: &str, def: &ResourceDef) -> bool {
    pattern == "*" || pattern == def.plural || pattern == def.key().qualified()
}

impl Faults {
    /// The current config.
    pub fn get(&self) -> FaultConfig {
        self.inner.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Replaces the config.
    pub fn set(&self, cfg: FaultConfig) {
        *self.inner.write().unwrap_or_else(|e| e.into_inner()) = cfg;
    }

    /// Clears all faults.
    pub fn clear(&self) {
        self.set(FaultConfig::default());
    }

    /// Adds one rule at the end.
    pub fn add_rule(&self, rule: FaultRule) {
        self.inner
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .rules
            .push(rule);
    }

    /// The first rule matching, consuming one of its `times`.
    pub fn take(&self, verb: &str, def: &ResourceDef) -> Option<FaultAction> {
        let mut cfg = self.inner.write().unwrap_or_else(|e| e.into_inner());
        let idx = cfg.rules.iter().position(|r| {
            matches_resource(&r.resource, def)
                && (r.verbs.is_empty() || r.verbs.iter().any(|v| v == verb))
        })?;
        let rule = cfg.rules[idx].clone();
        if let Some(t) = rule.times {
            if t <= 1 {
                cfg.rules.remove(idx);
            } else {
                cfg.rules[idx].times = Some(t - 1);
            }
        }
        Some(FaultAction {
            status: rule.status,
            delay_ms: rule.delay_ms,
            in_stream: rule.in_stream,
            hang: rule.hang,
        })
    }

    /// Whether a rule answering 403 covers `verb` on `resource` of `group` (looked at,
    /// not consumed): the simulator's stand-in for RBAC in access reviews. Returns the
    /// rule's resource pattern.
    pub fn denies(&self, verb: &str, group: &str, resource: &str) -> Option<String> {
        let qualified = if group.is_empty() {
            resource.to_string()
        } else {
            format!("{resource}.{group}")
        };
        let def = crate::sim::resources::find(group, resource);
        self.get()
            .rules
            .iter()
            .find(|r| {
                r.status == Some(403)
                    && (r.verbs.is_empty() || r.verbs.iter().any(|v| v == verb || v == "*"))
                    && match def {
                        Some(def) => matches_resource(&r.resource, def),
                        None => {
                            r.resource == "*" || r.resource == resource || r.resource == qualified
                        }
                    }
            })
            .map(|r| r.resource.clone())
    }

    /// Malformed objects to inject for this resource.
    pub fn malformed_for(&self, def: &ResourceDef) -> Vec<Value> {
        self.get()
            .malformed
            .iter()
            .filter(|m| matches_resource(&m.resource, def))
            .map(|m| m.object.clone().unwrap_or_else(|| default_malformed(def)))
            .collect()
    }

    /// Seconds after which watches are closed, if set.
    pub fn watch_close_after(&self) -> Option<u64> {
        self.get().watch_close_after_seconds
    }
}

/// The default malformed object for a resource.
pub fn default_malformed(def: &ResourceDef) -> Value {
    let mut meta = json!({"name": "malformed-injected", "uid": "00000000-0000-0000-0000-00000000bad0", "resourceVersion": "1"});
    if def.namespaced {
        meta["namespace"] = json!("default");
    }
    let spec = if def.kind == "Workload" {
        json!({"podSets": "not-a-list", "priority": "high", "queueName": 7})
    } else {
        json!("not-an-object")
    };
    json!({"metadata": meta, "spec": spec})
}

/// The error for an injected status code.
pub fn fault_error(code: u16, verb: &str, def: &ResourceDef) -> ApiError {
    let (reason, message) = match code {
        400 => ("BadRequest", "injected bad request".to_string()),
        401 => ("Unauthorized", "Unauthorized".to_string()),
        403 => (
            "Forbidden",
            format!(
                "{} is forbidden: User \"system:anonymous\" cannot {verb} resource \"{}\" in API group \"{}\"",
                def.plural, def.plural, def.group
            ),
        ),
        404 => (
            "NotFound",
            "the server could not find the requested resource".to_string(),
        ),
        409 => ("Conflict", "injected conflict".to_string()),
        410 => ("Expired", "too old resource version: 1 (2)".to_string()),
        422 => ("Invalid", "injected validation failure".to_string()),
        429 => (
            "TooManyRequests",
            "injected: too many requests, please try again later".to_string(),
        ),
        503 => (
            "ServiceUnavailable",
            "injected: the server is currently unable to handle the request".to_string(),
        ),
        504 => (
            "Timeout",
            "injected: the server was unable to return a response in the time allotted".to_string(),
        ),
        _ => (
            "InternalError",
            format!("Internal error occurred: injected fault ({code})"),
        ),
    };
    ApiError::new(code, reason, message).with_details("", def.group, def.plural)
}
