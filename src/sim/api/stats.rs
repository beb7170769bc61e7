//! Request counters by verb and resource, readable in-process.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Counts of API requests keyed by `(verb, resource)`, where resource is
/// `plural` for core and `plural.group` otherwise (e.g. `workloads.kueue.x-k8s.io`).
/// Verbs: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
/// `deletecollection`. Dry-run writes are counted too: they reached the server.
#[derive(Clone, Debug, Default)]
pub struct RequestStats {
    inner: Arc<Mutex<BTreeMap<(String, String), u64>>>,
}

/// Verbs that modify state.
pub const WRITE_VERBS: &[&str] = &["create", "update", "patch", "delete", "deletecollection"];

impl RequestStats {
    /// Records one request.
    pub fn record(&self, verb: &str, resource: &str) {
        let mut m = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        *m.entry((verb.to_string(), resource.to_string()))
            .or_default() += 1;
    }

    /// All counters.
    pub fn snapshot(&self) -> BTreeMap<(String, String), u64> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Requests with this verb and resource.
    pub fn count(&self, verb: &str, resource: &str) -> u64 {
        self.snapshot()
            .get(&(verb.to_string(), resource.to_string()))
            .copied()
            .unwrap_or(0)
    }

    /// Requests with this verb, any resource.
    pub fn count_verb(&self, verb: &str) -> u64 {
        self.snapshot()
            .iter()
            .filter(|((v, _), _)| v == verb)
            .map(|(_, n)| n)
            .sum()
    }

    /// All write requests (create/update/patch/delete/deletecollection).
    pub fn write_count(&self) -> u64 {
        WRITE_VERBS.iter().map(|v| self.count_verb(v)).sum()
    }

    /// Resets all counters.
    pub fn reset(&self) {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}
