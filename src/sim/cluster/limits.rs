//! Bounds on what one object can make the simulator allocate.
//!
//! Replica counts are plain integers in a manifest: `replicas: 2147483647` would make
//! the controllers build two billion pods and abort the process. Every count that turns
//! into pods (Deployment and ReplicaSet `spec.replicas`, Job `spec.parallelism` and
//! `spec.completions`, Kubeflow `*ReplicaSpecs.*.replicas`, Workload
//! `spec.podSets[*].count`) is checked against [`SimLimits::max_pods_per_object`]:
//! the API server answers a Kubernetes-style 422 naming the field, `gangplank simulate`
//! refuses the scenario naming the object and field, and the controllers (which may
//! still meet such an object written through the store's Rust API) create nothing for
//! it and say so in the warnings. [`SimLimits::max_pods`] bounds the pods of the whole
//! cluster: beyond it, creating a pod is refused (403 over the API, a warning and a
//! `FailedCreate` event in the controllers).

use serde_json::Value;

use crate::model::parse::kubeflow_replicas;

/// The caps (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimLimits {
    /// Pods one object may ask for (per count field and in total).
    pub max_pods_per_object: i64,
    /// Pods in the whole simulated cluster.
    pub max_pods: usize,
}

impl Default for SimLimits {
    fn default() -> Self {
        Self {
            max_pods_per_object: 10_000,
            max_pods: 100_000,
        }
    }
}

/// An object over a cap, or with a count that is not a count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitViolation {
    /// The field, as Kubernetes names it (`spec.replicas`).
    pub field: String,
    /// The offending value as written.
    pub value: String,
    /// What is wrong (`must be less than or equal to 10000 …`).
    pub detail: String,
}

impl std::fmt::Display for LimitViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: Invalid value: {}: {}",
            self.field, self.value, self.detail
        )
    }
}

/// The count fields of `kind` in `obj`: (field path for messages, value).
fn counts<'a>(kind: &str, obj: &'a Value) -> Vec<(String, &'a Value)> {
    let spec = obj.get("spec");
    let at = |k: &str| spec.and_then(|s| s.get(k));
    let mut out = Vec::new();
    match kind {
        "Deployment" | "ReplicaSet" | "StatefulSet" => {
            out.extend(at("replicas").map(|v| ("spec.replicas".to_string(), v)));
        }
        "Job" => {
            out.extend(at("parallelism").map(|v| ("spec.parallelism".to_string(), v)));
            out.extend(at("completions").map(|v| ("spec.completions".to_string(), v)));
        }
        "Workload" => {
            for (i, ps) in at("podSets")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                if let Some(v) = ps.get("count") {
                    out.push((format!("spec.podSets[{i}].count"), v));
                }
            }
        }
        _ => {
            // Kubeflow jobs: every replica type's count (the model's replica tables).
            let field = kubeflow_replicas(kind).map_or("", |(field, _)| field);
            for (t, r) in at(field).and_then(Value::as_object).into_iter().flatten() {
                if let Some(v) = r.get("replicas") {
                    out.push((format!("spec.{field}.{t}.replicas"), v));
                }
            }
        }
    }
    out
}

impl SimLimits {
    /// Checks the pod counts of an object of `kind`.
    pub fn check(&self, kind: &str, obj: &Value) -> Result<(), LimitViolation> {
        let cap = self.max_pods_per_object;
        let mut total: i64 = 0;
        let mut last_field = None;
        for (field, v) in counts(kind, obj) {
            if v.is_null() {
                continue;
            }
            let Some(n) = v.as_i64() else {
                return Err(LimitViolation {
                    field,
                    value: v.to_string(),
                    detail: "must be an integer".into(),
                });
            };
            if n < 0 {
                return Err(LimitViolation {
                    field,
                    value: n.to_string(),
                    detail: "must be greater than or equal to 0".into(),
                });
            }
            if n > cap {
                return Err(self.over_cap(field, n));
            }
            // Job completions beyond parallelism run one after another: only the
            // pods that run at once count towards the object's total.
            if field != "spec.completions" {
                total = total.saturating_add(n);
                last_field = Some(field);
            }
        }
        match last_field {
            Some(field) if total > cap => Err(self.over_cap(field, total)),
            _ => Ok(()),
        }
    }

    fn over_cap(&self, field: String, n: i64) -> LimitViolation {
        LimitViolation {
            field,
            value: n.to_string(),
            detail: format!(
                "must be less than or equal to {} (the simulator's limit of pods per object, \
                 --max-pods-per-object)",
                self.max_pods_per_object
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_over_the_cap_are_named_by_field() {
        let l = SimLimits::default();
        let d = json!({"spec": {"replicas": 2147483647}});
        let e = l.check("Deployment", &d).unwrap_err();
        assert_eq!(e.field, "spec.replicas");
        assert!(e.to_string().starts_with(
            "spec.replicas: Invalid value: 2147483647: must be less than or equal to 10000"
        ));
        let j = json!({"spec": {"parallelism": 2, "completions": 2147483647}});
        assert_eq!(l.check("Job", &j).unwrap_err().field, "spec.completions");
        let p = json!({"spec": {"pytorchReplicaSpecs": {
            "Master": {"replicas": 1}, "Worker": {"replicas": 10000}}}});
        let e = l.check("PyTorchJob", &p).unwrap_err();
        assert!(e.field.ends_with(".replicas") && e.value == "10001", "{e}");
        let neg = json!({"spec": {"replicas": -1}});
        assert!(
            l.check("Deployment", &neg)
                .unwrap_err()
                .detail
                .contains(">= 0")
                || l.check("Deployment", &neg)
                    .unwrap_err()
                    .detail
                    .contains("greater than")
        );
        assert!(
            l.check("Deployment", &json!({"spec": {"replicas": 3}}))
                .is_ok()
        );
        assert!(l.check("Pod", &d).is_ok());
        let w = json!({"spec": {"podSets": [{"count": "x"}]}});
        assert_eq!(
            l.check("Workload", &w).unwrap_err().detail,
            "must be an integer"
        );
    }
}
