//! Kueue's own `Configuration` (`config.kueue.x-k8s.io/v1beta1` and `v1beta2`), as the
//! install creates it: ConfigMap `kueue-system/kueue-manager-config`, key
//! `controller_manager_config.yaml`. Only the fields that change scheduling are kept.
//!
//! Kueue sources: `apis/config/v1beta2/configuration_types.go` (and `v1beta1`),
//! `apis/config/v1beta2/defaults.go`, `pkg/features/kube_features.go` (gate defaults).
//!
//! Differences between the two versions that matter here: in v1beta1 fair sharing is on
//! when `fairSharing.enable: true` and waitForPodsReady when `waitForPodsReady.enable:
//! true`; v1beta2 has no `enable` fields, the section's presence turns them on
//! (`pkg/scheduler/preemption/fairsharing/strategy.go` `Enabled(pfs) = pfs != nil`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::Quantity;
use super::types::{LabelSelector, SelectorRequirement};

/// Namespace and name of the ConfigMap Kueue's install creates.
pub const CONFIG_MAP_NAMESPACE: &str = "kueue-system";
pub const CONFIG_MAP_NAME: &str = "kueue-manager-config";
/// The ConfigMap key holding the Configuration.
pub const CONFIG_MAP_KEY: &str = "controller_manager_config.yaml";

/// A fair-sharing preemption strategy (`config.PreemptionStrategy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreemptionStrategy {
    /// Rule S2-a: preempt when the preemptor's share with its workload is ≤ the
    /// target's share without the victim.
    LessThanOrEqualToFinalShare,
    /// Rule S2-b: preempt when the preemptor's share with its workload is < the
    /// target's share before the preemption.
    LessThanInitialShare,
}

impl PreemptionStrategy {
    pub fn as_str(self) -> &'static str {
        match self {
            PreemptionStrategy::LessThanOrEqualToFinalShare => "LessThanOrEqualToFinalShare",
            PreemptionStrategy::LessThanInitialShare => "LessThanInitialShare",
        }
    }
}

/// `fairSharing` when enabled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FairSharingConfig {
    /// Never empty: Kueue's default is both strategies, S2-a first
    /// (`pkg/scheduler/preemption/preemption.go` `parseStrategies`).
    pub preemption_strategies: Vec<PreemptionStrategy>,
}

/// `admissionFairSharing` (usage-based ordering of LocalQueues).
#[derive(Clone, Debug, PartialEq)]
pub struct AdmissionFairSharingConfig {
    pub usage_half_life_time: String,
    pub usage_sampling_interval: String,
    pub resource_weights: BTreeMap<String, f64>,
}

/// `waitForPodsReady` when enabled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitForPodsReadyConfig {
    pub timeout: String,
    /// Admission waits until every admitted workload has `PodsReady=True`.
    pub block_admission: bool,
}

/// `resources.transformations[]` (`config.ResourceTransformation`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceTransformation {
    pub input: String,
    /// `Replace` drops the input; `Retain` (default) keeps it.
    pub replace: bool,
    pub multiply_by: Option<String>,
    pub outputs: BTreeMap<String, Quantity>,
}

/// The parts of Kueue's Configuration that change scheduling.
#[derive(Clone, Debug, PartialEq)]
pub struct KueueConfig {
    /// Where it was read from ("ConfigMap kueue-system/kueue-manager-config", a file).
    pub source: String,
    /// `config.kueue.x-k8s.io/v1beta1` or `…/v1beta2`.
    pub api_version: String,
    pub fair_sharing: Option<FairSharingConfig>,
    pub admission_fair_sharing: Option<AdmissionFairSharingConfig>,
    pub wait_for_pods_ready: Option<WaitForPodsReadyConfig>,
    pub manage_jobs_without_queue_name: bool,
    pub managed_jobs_namespace_selector: Option<LabelSelector>,
    pub exclude_resource_prefixes: Vec<String>,
    pub transformations: Vec<ResourceTransformation>,
    /// Gates set explicitly; [`KueueConfig::gate`] adds Kueue's defaults.
    pub feature_gates: BTreeMap<String, bool>,
}

/// Feature gates that change what the engine computes, with Kueue's defaults
/// (`pkg/features/kube_features.go` at the Kueue revision docs/engine.md names).
pub const SCHEDULING_GATES: &[(&str, bool)] = &[
    ("PartialAdmission", true),
    ("PrioritySortingWithinCohort", true),
    ("FairSharingPrioritizeNonBorrowing", true),
    ("FairSharingPreemptWithinNominal", true),
    ("AdmissionFairSharing", true),
    ("PrioritizePreemptorWorkloads", false),
];

impl Default for KueueConfig {
    /// What Kueue runs with when the ConfigMap is absent or empty.
    fn default() -> Self {
        KueueConfig {
            source: "Kueue's defaults".to_string(),
            api_version: "config.kueue.x-k8s.io/v1beta2".to_string(),
            fair_sharing: None,
            admission_fair_sharing: None,
            wait_for_pods_ready: None,
            manage_jobs_without_queue_name: false,
            managed_jobs_namespace_selector: None,
            exclude_resource_prefixes: Vec::new(),
            transformations: Vec::new(),
            feature_gates: BTreeMap::new(),
        }
    }
}

/// A Configuration that cannot be read: names the source and the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: {field}: {message}")]
pub struct KueueConfigError {
    /// The file or object the configuration came from.
    pub origin: String,
    pub field: String,
    pub message: String,
}

impl KueueConfig {
    /// A feature gate's value: set in the configuration, else Kueue's default
    /// (unknown gates default to off).
    pub fn gate(&self, name: &str) -> bool {
        if let Some(&v) = self.feature_gates.get(name) {
            return v;
        }
        SCHEDULING_GATES
            .iter()
            .find(|(n, _)| *n == name)
            .is_some_and(|&(_, d)| d)
    }

    pub fn fair_sharing_enabled(&self) -> bool {
        self.fair_sharing.is_some()
    }

    /// Admission fair sharing is on when configured and its gate is on
    /// (`pkg/util/admissionfairsharing` `Enabled`).
    pub fn admission_fair_sharing_enabled(&self) -> bool {
        self.admission_fair_sharing.is_some() && self.gate("AdmissionFairSharing")
    }

    pub fn block_admission(&self) -> bool {
        self.wait_for_pods_ready
            .as_ref()
            .is_some_and(|w| w.block_admission)
    }

    /// Whether requests need rewriting at all (keeps the common path allocation-free).
    pub fn rewrites_requests(&self) -> bool {
        !self.exclude_resource_prefixes.is_empty() || !self.transformations.is_empty()
    }

    /// Applies `resources.excludeResourcePrefixes` then `resources.transformations` to
    /// per-pod requests in milli-units, as Kueue does when it computes a workload's
    /// requests (`pkg/workload/workload.go` `dropExcludedResources`,
    /// `applyResourceTransformations`; negative generated totals become 0).
    pub fn rewrite_requests(&self, input: &BTreeMap<String, i128>) -> BTreeMap<String, i128> {
        let kept: BTreeMap<String, i128> = input
            .iter()
            .filter(|(r, _)| {
                !self
                    .exclude_resource_prefixes
                    .iter()
                    .any(|p| r.starts_with(p.as_str()))
            })
            .map(|(r, q)| (r.clone(), *q))
            .collect();
        if !kept
            .keys()
            .any(|r| self.transformations.iter().any(|t| &t.input == r))
        {
            return kept;
        }
        let mut retained = BTreeMap::new();
        let mut generated: BTreeMap<String, i128> = BTreeMap::new();
        for (name, &q) in &kept {
            let Some(t) = self.transformations.iter().find(|t| &t.input == name) else {
                retained.insert(name.clone(), q);
                continue;
            };
            let mut base = q;
            if let Some(m) = &t.multiply_by
                && let Some(&mq) = kept.get(m)
            {
                base = base * mq / 1000;
            }
            for (out, factor) in &t.outputs {
                *generated.entry(out.clone()).or_default() += base * factor.milli() / 1000;
            }
            if !t.replace {
                retained.insert(name.clone(), q);
            }
        }
        for (name, q) in generated {
            *retained.entry(name).or_default() += q.max(0);
        }
        retained
    }

    /// One line per setting, for `gangplank config --cluster`, doctor and the plan.
    pub fn summary_lines(&self) -> Vec<String> {
        let mut out = vec![format!("source: {} ({})", self.source, self.api_version)];
        out.push(match &self.fair_sharing {
            Some(fs) => format!(
                "fairSharing: on, preemptionStrategies [{}]",
                fs.preemption_strategies
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => "fairSharing: off (classical preemption)".to_string(),
        });
        out.push(match &self.admission_fair_sharing {
            Some(a) if self.admission_fair_sharing_enabled() => format!(
                "admissionFairSharing: on (usageHalfLifeTime {}, usageSamplingInterval {})",
                a.usage_half_life_time, a.usage_sampling_interval
            ),
            Some(_) => "admissionFairSharing: configured, but the AdmissionFairSharing gate is off"
                .to_string(),
            None => "admissionFairSharing: off".to_string(),
        });
        out.push(match &self.wait_for_pods_ready {
            Some(w) => format!(
                "waitForPodsReady: on (timeout {}, blockAdmission {})",
                w.timeout, w.block_admission
            ),
            None => "waitForPodsReady: off".to_string(),
        });
        out.push(format!(
            "manageJobsWithoutQueueName: {}{}",
            self.manage_jobs_without_queue_name,
            match &self.managed_jobs_namespace_selector {
                Some(s) => format!(" (managedJobsNamespaceSelector: {})", selector_text(s)),
                None => String::new(),
            }
        ));
        if !self.exclude_resource_prefixes.is_empty() {
            out.push(format!(
                "resources.excludeResourcePrefixes: {}",
                self.exclude_resource_prefixes.join(", ")
            ));
        }
        for t in &self.transformations {
            let outs: Vec<String> = t.outputs.iter().map(|(r, q)| format!("{q} {r}")).collect();
            out.push(format!(
                "resources.transformations: {} → {} ({})",
                t.input,
                outs.join(" + "),
                if t.replace { "Replace" } else { "Retain" }
            ));
        }
        let gates: Vec<String> = SCHEDULING_GATES
            .iter()
            .map(|(g, _)| {
                let set = if self.feature_gates.contains_key(*g) {
                    ""
                } else {
                    " (default)"
                };
                format!("{g}={}{set}", self.gate(g))
            })
            .collect();
        out.push(format!("featureGates: {}", gates.join(", ")));
        out
    }
}

fn selector_text(s: &LabelSelector) -> String {
    let mut parts: Vec<String> = s
        .match_labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for r in &s.match_expressions {
        parts.push(format!("{} {} ({})", r.key, r.operator, r.values.join(",")));
    }
    if parts.is_empty() {
        "{} (everything)".to_string()
    } else {
        parts.join(", ")
    }
}

/// Reads the Configuration from the text of `controller_manager_config.yaml`.
pub fn parse_configuration(text: &str, source: &str) -> Result<KueueConfig, KueueConfigError> {
    let err = |field: &str, message: String| KueueConfigError {
        origin: source.to_string(),
        field: field.to_string(),
        message,
    };
    crate::model::parse::check_nesting(text.as_bytes(), crate::model::parse::MAX_NESTING_DEPTH)
        .map_err(|e| err("(document)", e.to_string()))?;
    let value: Value =
        serde_yaml_ng::from_str(text).map_err(|e| err("(document)", format!("not YAML: {e}")))?;
    if value.is_null() {
        return Ok(KueueConfig {
            source: source.to_string(),
            ..KueueConfig::default()
        });
    }
    from_value(&value, source)
}

/// Reads the Configuration from a ConfigMap object (`data.controller_manager_config.yaml`).
pub fn from_config_map(cm: &Value, source: &str) -> Result<KueueConfig, KueueConfigError> {
    let text = cm
        .get("data")
        .and_then(|d| d.get(CONFIG_MAP_KEY))
        .ok_or_else(|| KueueConfigError {
            origin: source.to_string(),
            field: format!("data.{CONFIG_MAP_KEY}"),
            message: "missing".to_string(),
        })?;
    let text = text.as_str().ok_or_else(|| KueueConfigError {
        origin: source.to_string(),
        field: format!("data.{CONFIG_MAP_KEY}"),
        message: "expected a string".to_string(),
    })?;
    parse_configuration(text, source)
}

/// Reads the text of a file given as `--kueue-config`: either a Configuration
/// document or the ConfigMap holding one (`kind: ConfigMap`, key
/// `controller_manager_config.yaml`). `source` names the file in errors.
pub fn from_file_text(text: &str, source: &str) -> Result<KueueConfig, KueueConfigError> {
    let value: Value = serde_yaml_ng::from_str(text).map_err(|e| KueueConfigError {
        origin: source.to_string(),
        field: "(document)".to_string(),
        message: format!("not YAML: {e}"),
    })?;
    if value.get("kind").and_then(Value::as_str) == Some("ConfigMap") {
        return from_config_map(&value, source);
    }
    if value.is_null() {
        return Ok(KueueConfig {
            source: source.to_string(),
            ..KueueConfig::default()
        });
    }
    from_value(&value, source)
}

/// The line a plan prints when no configuration was given or found: which of
/// Kueue's defaults the engine assumed.
pub fn assumed_defaults_notice() -> String {
    format!(
        "no Kueue configuration (ConfigMap {CONFIG_MAP_NAMESPACE}/{CONFIG_MAP_NAME} or --kueue-config) found; \
         assumed Kueue's defaults: fairSharing off (classical preemption), admissionFairSharing off, \
         waitForPodsReady off, manageJobsWithoutQueueName false, feature gates at their defaults"
    )
}

/// Whether a Kubernetes object is Kueue's configuration ConfigMap.
pub fn is_kueue_config_map(obj: &Value) -> bool {
    let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
    s(obj.get("kind")) == "ConfigMap"
        && s(obj.get("metadata").and_then(|m| m.get("name"))) == CONFIG_MAP_NAME
        && s(obj.get("metadata").and_then(|m| m.get("namespace"))) == CONFIG_MAP_NAMESPACE
}

/// Reads the Configuration from its parsed document.
pub fn from_value(v: &Value, source: &str) -> Result<KueueConfig, KueueConfigError> {
    let err = |field: &str, message: String| KueueConfigError {
        origin: source.to_string(),
        field: field.to_string(),
        message,
    };
    if !v.is_object() {
        return Err(err("(document)", "expected a mapping".to_string()));
    }
    let kind = v
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("Configuration");
    if kind != "Configuration" {
        return Err(err("kind", format!("expected Configuration, found {kind}")));
    }
    let api_version = v
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("config.kueue.x-k8s.io/v1beta2")
        .to_string();
    let v1beta1 = match api_version.as_str() {
        "config.kueue.x-k8s.io/v1beta1" => true,
        "config.kueue.x-k8s.io/v1beta2" => false,
        other => {
            return Err(err(
                "apiVersion",
                format!(
                    "{other} is not config.kueue.x-k8s.io/v1beta1 or config.kueue.x-k8s.io/v1beta2"
                ),
            ));
        }
    };
    let obj = |field: &str| -> Result<Option<&serde_json::Map<String, Value>>, KueueConfigError> {
        match v.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(m)) => Ok(Some(m)),
            Some(_) => Err(err(field, "expected a mapping".to_string())),
        }
    };
    let boolean = |m: &serde_json::Map<String, Value>, path: &str, key: &str| match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(err(
            &format!("{path}.{key}"),
            "expected true or false".to_string(),
        )),
    };
    let string = |m: &serde_json::Map<String, Value>, path: &str, key: &str| match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(err(
            &format!("{path}.{key}"),
            "expected a string".to_string(),
        )),
    };

    // --- fairSharing
    let fair_sharing = match obj("fairSharing")? {
        None => None,
        Some(m) => {
            let enabled = if v1beta1 {
                boolean(m, "fairSharing", "enable")?.unwrap_or(false)
            } else {
                true
            };
            let mut strategies = Vec::new();
            match m.get("preemptionStrategies") {
                None | Some(Value::Null) => {}
                Some(Value::Array(items)) => {
                    for (i, s) in items.iter().enumerate() {
                        let field = format!("fairSharing.preemptionStrategies[{i}]");
                        strategies.push(match s.as_str() {
                            Some("LessThanOrEqualToFinalShare") => {
                                PreemptionStrategy::LessThanOrEqualToFinalShare
                            }
                            Some("LessThanInitialShare") => PreemptionStrategy::LessThanInitialShare,
                            _ => {
                                return Err(err(
                                    &field,
                                    format!(
                                        "{s} is not LessThanOrEqualToFinalShare or LessThanInitialShare"
                                    ),
                                ));
                            }
                        });
                    }
                }
                Some(_) => {
                    return Err(err(
                        "fairSharing.preemptionStrategies",
                        "expected a list".to_string(),
                    ));
                }
            }
            use PreemptionStrategy::*;
            // the only lists Kueue's validation accepts (configuration_types.go)
            let allowed: [&[PreemptionStrategy]; 3] = [
                &[LessThanOrEqualToFinalShare],
                &[LessThanInitialShare],
                &[LessThanOrEqualToFinalShare, LessThanInitialShare],
            ];
            if strategies.is_empty() {
                strategies = vec![LessThanOrEqualToFinalShare, LessThanInitialShare];
            } else if !allowed.contains(&strategies.as_slice()) {
                return Err(err(
                    "fairSharing.preemptionStrategies",
                    "Kueue accepts only [LessThanOrEqualToFinalShare], [LessThanInitialShare] or \
                     [LessThanOrEqualToFinalShare, LessThanInitialShare]"
                        .to_string(),
                ));
            }
            enabled.then_some(FairSharingConfig {
                preemption_strategies: strategies,
            })
        }
    };

    // --- admissionFairSharing
    let admission_fair_sharing = match obj("admissionFairSharing")? {
        None => None,
        Some(m) => {
            let mut resource_weights = BTreeMap::new();
            if let Some(w) = m.get("resourceWeights") {
                let Some(w) = w.as_object() else {
                    return Err(err(
                        "admissionFairSharing.resourceWeights",
                        "expected a mapping".to_string(),
                    ));
                };
                for (r, x) in w {
                    let Some(f) = x.as_f64() else {
                        return Err(err(
                            &format!("admissionFairSharing.resourceWeights.{r}"),
                            "expected a number".to_string(),
                        ));
                    };
                    resource_weights.insert(r.clone(), f);
                }
            }
            Some(AdmissionFairSharingConfig {
                usage_half_life_time: string(m, "admissionFairSharing", "usageHalfLifeTime")?
                    .unwrap_or_else(|| "0s".to_string()),
                usage_sampling_interval: string(
                    m,
                    "admissionFairSharing",
                    "usageSamplingInterval",
                )?
                .unwrap_or_else(|| "5m".to_string()),
                resource_weights,
            })
        }
    };

    // --- waitForPodsReady
    let wait_for_pods_ready = match obj("waitForPodsReady")? {
        None => None,
        Some(m) => {
            let enabled = if v1beta1 {
                boolean(m, "waitForPodsReady", "enable")?.unwrap_or(false)
            } else {
                true
            };
            let block = boolean(m, "waitForPodsReady", "blockAdmission")?;
            enabled
                .then(|| -> Result<_, KueueConfigError> {
                    Ok(WaitForPodsReadyConfig {
                        timeout: string(m, "waitForPodsReady", "timeout")?
                            .unwrap_or_else(|| "5m".to_string()),
                        // v1beta1 defaulted blockAdmission to enable; v1beta2 to false
                        block_admission: block.unwrap_or(v1beta1),
                    })
                })
                .transpose()?
        }
    };

    // --- manageJobsWithoutQueueName + managedJobsNamespaceSelector
    let manage_jobs_without_queue_name = match v.get("manageJobsWithoutQueueName") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(err(
                "manageJobsWithoutQueueName",
                "expected true or false".to_string(),
            ));
        }
    };
    let managed_jobs_namespace_selector = match obj("managedJobsNamespaceSelector")? {
        None => None,
        Some(m) => Some(label_selector(m, "managedJobsNamespaceSelector", &err)?),
    };

    // --- resources
    let mut exclude_resource_prefixes = Vec::new();
    let mut transformations = Vec::new();
    if let Some(m) = obj("resources")? {
        if let Some(p) = m.get("excludeResourcePrefixes") {
            let Some(items) = p.as_array() else {
                return Err(err(
                    "resources.excludeResourcePrefixes",
                    "expected a list".to_string(),
                ));
            };
            for (i, s) in items.iter().enumerate() {
                let Some(s) = s.as_str() else {
                    return Err(err(
                        &format!("resources.excludeResourcePrefixes[{i}]"),
                        "expected a string".to_string(),
                    ));
                };
                exclude_resource_prefixes.push(s.to_string());
            }
        }
        if let Some(t) = m.get("transformations") {
            let Some(items) = t.as_array() else {
                return Err(err(
                    "resources.transformations",
                    "expected a list".to_string(),
                ));
            };
            for (i, t) in items.iter().enumerate() {
                let path = format!("resources.transformations[{i}]");
                let Some(tm) = t.as_object() else {
                    return Err(err(&path, "expected a mapping".to_string()));
                };
                let Some(input) = string(tm, &path, "input")? else {
                    return Err(err(&format!("{path}.input"), "missing".to_string()));
                };
                let replace = match string(tm, &path, "strategy")?.as_deref() {
                    None | Some("Retain") => false,
                    Some("Replace") => true,
                    Some(o) => {
                        return Err(err(
                            &format!("{path}.strategy"),
                            format!("{o} is not Retain or Replace"),
                        ));
                    }
                };
                let mut outputs = BTreeMap::new();
                if let Some(o) = tm.get("outputs") {
                    let Some(o) = o.as_object() else {
                        return Err(err(
                            &format!("{path}.outputs"),
                            "expected a mapping".to_string(),
                        ));
                    };
                    for (r, q) in o {
                        let text = match q {
                            Value::String(s) => s.clone(),
                            Value::Number(n) => n.to_string(),
                            _ => {
                                return Err(err(
                                    &format!("{path}.outputs.{r}"),
                                    "expected a quantity".to_string(),
                                ));
                            }
                        };
                        let q = Quantity::parse(&text).map_err(|e| {
                            err(&format!("{path}.outputs.{r}"), format!("{text:?}: {e}"))
                        })?;
                        outputs.insert(r.clone(), q);
                    }
                }
                transformations.push(ResourceTransformation {
                    input,
                    replace,
                    multiply_by: string(tm, &path, "multiplyBy")?.filter(|s| !s.is_empty()),
                    outputs,
                });
            }
        }
    }

    // --- featureGates
    let mut feature_gates = BTreeMap::new();
    if let Some(m) = obj("featureGates")? {
        for (g, b) in m {
            let Some(b) = b.as_bool() else {
                return Err(err(
                    &format!("featureGates.{g}"),
                    "expected true or false".to_string(),
                ));
            };
            feature_gates.insert(g.clone(), b);
        }
    }

    Ok(KueueConfig {
        source: source.to_string(),
        api_version,
        fair_sharing,
        admission_fair_sharing,
        wait_for_pods_ready,
        manage_jobs_without_queue_name,
        managed_jobs_namespace_selector,
        exclude_resource_prefixes,
        transformations,
        feature_gates,
    })
}

fn label_selector(
    m: &serde_json::Map<String, Value>,
    path: &str,
    err: &dyn Fn(&str, String) -> KueueConfigError,
) -> Result<LabelSelector, KueueConfigError> {
    let mut s = LabelSelector::default();
    if let Some(ml) = m.get("matchLabels") {
        let Some(ml) = ml.as_object() else {
            return Err(err(
                &format!("{path}.matchLabels"),
                "expected a mapping".to_string(),
            ));
        };
        for (k, v) in ml {
            let Some(v) = v.as_str() else {
                return Err(err(
                    &format!("{path}.matchLabels.{k}"),
                    "expected a string".to_string(),
                ));
            };
            s.match_labels.insert(k.clone(), v.to_string());
        }
    }
    if let Some(me) = m.get("matchExpressions") {
        let Some(items) = me.as_array() else {
            return Err(err(
                &format!("{path}.matchExpressions"),
                "expected a list".to_string(),
            ));
        };
        for (i, r) in items.iter().enumerate() {
            let p = format!("{path}.matchExpressions[{i}]");
            let key = r.get("key").and_then(Value::as_str);
            let op = r.get("operator").and_then(Value::as_str);
            let (Some(key), Some(op)) = (key, op) else {
                return Err(err(&p, "needs key and operator".to_string()));
            };
            if !matches!(op, "In" | "NotIn" | "Exists" | "DoesNotExist") {
                return Err(err(
                    &format!("{p}.operator"),
                    format!("{op} is not In, NotIn, Exists or DoesNotExist"),
                ));
            }
            let values = r
                .get("values")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            s.match_expressions.push(SelectorRequirement {
                key: key.to_string(),
                operator: op.to_string(),
                values,
            });
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1BETA2: &str = r#"
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
fairSharing:
  preemptionStrategies: [LessThanInitialShare]
admissionFairSharing:
  usageHalfLifeTime: 168h
  usageSamplingInterval: 5m
waitForPodsReady:
  timeout: 10m
  blockAdmission: true
manageJobsWithoutQueueName: true
managedJobsNamespaceSelector:
  matchLabels: {team: ml}
resources:
  excludeResourcePrefixes: [example.com/]
  transformations:
  - input: nvidia.com/mig-1g.5gb
    strategy: Replace
    outputs: {example.com/accelerator-memory: 5Gi}
featureGates:
  PartialAdmission: false
"#;

    #[test]
    fn v1beta2_sections_enable_by_presence() {
        let c = parse_configuration(V1BETA2, "f.yaml").unwrap();
        assert_eq!(
            c.fair_sharing.as_ref().unwrap().preemption_strategies,
            vec![PreemptionStrategy::LessThanInitialShare]
        );
        assert!(c.admission_fair_sharing.is_some());
        assert!(c.block_admission());
        assert!(c.manage_jobs_without_queue_name);
        assert_eq!(
            c.managed_jobs_namespace_selector
                .as_ref()
                .unwrap()
                .match_labels["team"],
            "ml"
        );
        assert!(!c.gate("PartialAdmission"));
        assert!(c.gate("PrioritySortingWithinCohort"));
        assert!(!c.gate("PrioritizePreemptorWorkloads"));
    }

    #[test]
    fn v1beta1_needs_enable_and_defaults_both_strategies() {
        let on = "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nfairSharing:\n  enable: true\n";
        let c = parse_configuration(on, "cm").unwrap();
        assert_eq!(
            c.fair_sharing.as_ref().unwrap().preemption_strategies,
            vec![
                PreemptionStrategy::LessThanOrEqualToFinalShare,
                PreemptionStrategy::LessThanInitialShare
            ]
        );
        let off = "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nfairSharing:\n  enable: false\n";
        assert!(
            parse_configuration(off, "cm")
                .unwrap()
                .fair_sharing
                .is_none()
        );
    }

    #[test]
    fn bad_input_names_source_and_field() {
        let bad = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing:\n  preemptionStrategies: [LessThanInitialShare, LessThanOrEqualToFinalShare]\n";
        let e = parse_configuration(bad, "cfg.yaml").unwrap_err();
        assert_eq!(e.field, "fairSharing.preemptionStrategies");
        assert!(
            e.to_string()
                .starts_with("cfg.yaml: fairSharing.preemptionStrategies")
        );
        let e = parse_configuration("apiVersion: v1\nkind: Configuration\n", "x").unwrap_err();
        assert_eq!(e.field, "apiVersion");
        let e = parse_configuration(
            "kind: Configuration\nresources:\n  transformations:\n  - input: a\n    outputs: {b: lots}\n",
            "x",
        )
        .unwrap_err();
        assert_eq!(e.field, "resources.transformations[0].outputs.b");
        let e = parse_configuration("featureGates: {PartialAdmission: maybe}\n", "x").unwrap_err();
        assert_eq!(e.field, "featureGates.PartialAdmission");
    }

    #[test]
    fn transformations_and_exclusions_rewrite_requests() {
        let c = parse_configuration(V1BETA2, "f").unwrap();
        let req: BTreeMap<String, i128> = [
            ("cpu".to_string(), 2000),
            ("example.com/ignored".to_string(), 1000),
            ("nvidia.com/mig-1g.5gb".to_string(), 2000),
        ]
        .into();
        let out = c.rewrite_requests(&req);
        let gi5 = 5 * 1024 * 1024 * 1024 * 1000i128;
        assert_eq!(
            out,
            [
                ("cpu".to_string(), 2000),
                ("example.com/accelerator-memory".to_string(), 2 * gi5),
            ]
            .into()
        );
    }

    #[test]
    fn config_map_is_recognised_and_read() {
        let cm: Value = serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": CONFIG_MAP_NAME, "namespace": CONFIG_MAP_NAMESPACE},
            "data": {CONFIG_MAP_KEY: "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing: {}\n"}
        });
        assert!(is_kueue_config_map(&cm));
        assert!(from_config_map(&cm, "dump").unwrap().fair_sharing_enabled());
        let other = serde_json::json!({"kind": "ConfigMap", "metadata": {"name": "x", "namespace": "kueue-system"}});
        assert!(!is_kueue_config_map(&other));
    }
}
