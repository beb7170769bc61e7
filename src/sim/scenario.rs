//! Scenarios: plain Kubernetes manifests (multi-document YAML or JSON, `v1` Nodes
//! included) plus two annotations the simulator reads:
//!
//! * [`AT_ANNOTATION`] (`sim.gangplank.io/at: "10m"`): the object appears at that
//!   simulated time after the start (absent ⇒ at the start). Only scenario loading
//!   reads it; objects applied through the API appear when they are applied.
//! * [`DURATION_ANNOTATION`] (`sim.gangplank.io/duration: "2h"`): a job runs that
//!   long from its latest admission (absent ⇒ forever). Read whenever a job starts,
//!   however it was created.
//!
//! Every object is checked with the model's parser, so errors name the file, the
//! document, the object and the field, like `gangplank plan` does.

use std::path::Path;

use serde_json::Value;

use super::clock::parse_duration;
use super::convert;
use super::resources::{self, ResourceDef, ResourceKey};
use crate::model::Origin;
use crate::model::parse::{Loader, ParseError, split_documents};

/// Annotation: when (after the start) a scenario object appears.
pub const AT_ANNOTATION: &str = "sim.gangplank.io/at";
/// Annotation: how long a job runs once admitted.
pub const DURATION_ANNOTATION: &str = "sim.gangplank.io/duration";

/// The bundled seed scenario (`docs/scenarios/seed.yaml`), the default of
/// `gangplank sim serve` and `gangplank simulate`.
pub const SEED_SCENARIO: &str = include_str!("../../docs/scenarios/seed.yaml");
/// The bundled scenarios by name, for tests and demos.
pub const BUNDLED: &[(&str, &str)] = &[
    ("seed", SEED_SCENARIO),
    (
        "cohort-borrowing",
        include_str!("../../docs/scenarios/cohort-borrowing.yaml"),
    ),
    (
        "mixed-large",
        include_str!("../../docs/scenarios/mixed-large.yaml"),
    ),
    (
        "nodes-only",
        include_str!("../../docs/scenarios/nodes-only.yaml"),
    ),
];

/// One object of a scenario, in its storage version.
#[derive(Clone, Debug)]
pub struct ScenarioObject {
    /// Offset from the simulation start (ms) at which it appears.
    pub at_ms: i64,
    /// Which resource it is.
    pub resource: ResourceKey,
    /// The object (storage version).
    pub object: Value,
    /// File and document it came from.
    pub origin: Origin,
}

/// A loaded scenario: objects in document order.
#[derive(Clone, Debug, Default)]
pub struct Scenario {
    /// What it was loaded from.
    pub name: String,
    /// Objects in document order (the order they are created at the same instant).
    pub objects: Vec<ScenarioObject>,
}

impl Scenario {
    /// The bundled seed scenario.
    pub fn seed() -> Self {
        // The embedded file is covered by tests; an error here is a build defect.
        Self::from_str("seed.yaml (bundled)", SEED_SCENARIO)
            .unwrap_or_else(|e| panic!("bundled seed scenario is invalid: {e}"))
    }

    /// A bundled scenario by name (`seed`, `cohort-borrowing`, `mixed-large`, `nodes-only`).
    pub fn bundled(name: &str) -> Option<Self> {
        let (_, text) = BUNDLED.iter().find(|(n, _)| *n == name)?;
        Self::from_str(&format!("{name}.yaml (bundled)"), text).ok()
    }

    /// Parses the text of one source.
    pub fn from_str(source: &str, text: &str) -> Result<Self, ParseError> {
        let mut s = Scenario {
            name: source.to_string(),
            objects: Vec::new(),
        };
        s.add_str(source, text)?;
        Ok(s)
    }

    /// Builds a scenario from decoded objects (e.g. generated in memory).
    pub fn from_values(source: &str, values: Vec<Value>) -> Result<Self, ParseError> {
        let mut s = Scenario {
            name: source.to_string(),
            objects: Vec::new(),
        };
        for (document, v) in values.into_iter().enumerate() {
            s.add_value(source, document, v, 0)?;
        }
        Ok(s)
    }

    /// Adds every document of `text` (multi-document YAML or JSON, split by the
    /// model's splitter as `gangplank plan -f` reads files).
    pub fn add_str(&mut self, source: &str, text: &str) -> Result<(), ParseError> {
        for (document, value) in split_documents(source, text)?.into_iter().enumerate() {
            self.add_value(source, document, value, 0)?;
        }
        Ok(())
    }

    fn add_value(
        &mut self,
        source: &str,
        document: usize,
        value: Value,
        depth: usize,
    ) -> Result<(), ParseError> {
        if value.is_null() {
            return Ok(());
        }
        let origin = Origin {
            source: source.to_string(),
            document,
        };
        // The model's parser checks kinds, types, quantities and names and produces
        // errors that name file, document, object and field.
        Loader::new().add_value(origin.clone(), &value)?;
        let kind = value
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let name = value
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .map(str::to_string);
        let err = |path: Option<&str>, message: String| ParseError {
            source: source.to_string(),
            document: Some(document),
            object: Some(match &name {
                Some(n) => format!("{kind}/{n}"),
                None => kind.clone(),
            }),
            path: path.map(str::to_string),
            message,
        };
        if kind == "List" || (kind.ends_with("List") && value.get("items").is_some()) {
            if depth > 4 {
                return Err(err(None, "Lists nested too deeply".into()));
            }
            let items = value
                .get("items")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for item in items {
                self.add_value(source, document, item, depth + 1)?;
            }
            return Ok(());
        }
        let api_version = value
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let Some((def, version)) = find_kind(&api_version, &kind) else {
            return Err(err(
                Some("kind"),
                format!(
                    "{kind} ({api_version}) is not served by the simulator; served kinds: {}",
                    served_kinds()
                ),
            ));
        };
        if name.as_deref().is_none_or(str::is_empty) {
            return Err(err(
                Some("metadata.name"),
                "required (generateName is not supported in scenarios)".into(),
            ));
        }
        let annotation = |key: &str| {
            value
                .pointer("/metadata/annotations")
                .and_then(|a| a.get(key))
                .map(|v| {
                    v.as_str().map(str::to_string).ok_or_else(|| {
                        err(
                            Some(&format!("metadata.annotations[{key:?}]")),
                            "must be a string such as \"10m\"".into(),
                        )
                    })
                })
                .transpose()
        };
        let at_ms = match annotation(AT_ANNOTATION)? {
            Some(text) => parse_duration(&text)
                .map_err(|m| err(Some(&format!("metadata.annotations[{AT_ANNOTATION:?}]")), m))?,
            None => 0,
        };
        if let Some(text) = annotation(DURATION_ANNOTATION)? {
            parse_duration(&text).map_err(|m| {
                err(
                    Some(&format!("metadata.annotations[{DURATION_ANNOTATION:?}]")),
                    m,
                )
            })?;
        }
        let mut object = convert::to_storage(def, version, value);
        if def.namespaced
            && object
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            && let Some(m) = object.get_mut("metadata").and_then(Value::as_object_mut)
        {
            // As kubectl does with its context's namespace.
            m.insert("namespace".into(), Value::String("default".into()));
        }
        self.objects.push(ScenarioObject {
            at_ms,
            resource: def.key(),
            object,
            origin,
        });
        Ok(())
    }

    /// Reads a file, or every `.yaml`/`.yml`/`.json` file under a directory
    /// (recursively, sorted by path).
    pub fn load(path: &Path) -> Result<Self, ParseError> {
        let mut files = Vec::new();
        crate::model::parse::collect_files(path, &mut files, 0)?;
        let mut s = Scenario {
            name: path.display().to_string(),
            objects: Vec::new(),
        };
        for file in files {
            let source = file.display().to_string();
            let text = std::fs::read_to_string(&file)
                .map_err(|e| ParseError::source_error(&source, format!("cannot read: {e}")))?;
            s.add_str(&source, &text)?;
        }
        Ok(s)
    }

    /// The latest `at` of any object (ms after the start).
    pub fn last_arrival_ms(&self) -> i64 {
        self.objects.iter().map(|o| o.at_ms).max().unwrap_or(0)
    }
}

/// Loads a scenario from a file or directory (see [`Scenario::load`]).
pub fn load_scenario(path: &Path) -> Result<Scenario, ParseError> {
    Scenario::load(path)
}

/// The served resource and version of `apiVersion` + `kind`.
pub fn find_kind(api_version: &str, kind: &str) -> Option<(&'static ResourceDef, &'static str)> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    resources::all()
        .iter()
        .find(|d| d.group == group && d.kind == kind)
        .and_then(|d| d.versions.iter().find(|v| **v == version).map(|v| (d, *v)))
}

fn served_kinds() -> String {
    let mut kinds: Vec<&str> = resources::all().iter().map(|d| d.kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    kinds.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_scenarios_load() {
        for (name, _) in BUNDLED {
            let s = Scenario::bundled(name).unwrap_or_else(|| panic!("{name}"));
            assert!(!s.objects.is_empty(), "{name}");
        }
        let seed = Scenario::seed();
        let boss = seed
            .objects
            .iter()
            .find(|o| o.object["metadata"]["name"] == "boss-urgent-llama-finetune")
            .unwrap();
        assert_eq!(boss.at_ms, 600_000);
        // v1beta1 objects are stored in v1beta2.
        let cq = seed
            .objects
            .iter()
            .find(|o| o.resource == ResourceKey::CLUSTER_QUEUES)
            .unwrap();
        assert_eq!(cq.object["apiVersion"], "kueue.x-k8s.io/v1beta2");
    }

    #[test]
    fn errors_name_the_place() {
        let text = "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  annotations: {sim.gangplank.io/at: soon}\nspec: {template: {spec: {containers: []}}}\n";
        let e = Scenario::from_str("s.yaml", text).unwrap_err().to_string();
        assert!(e.contains("s.yaml: document 2 (Job/j)"), "{e}");
        assert!(e.contains("sim.gangplank.io/at"), "{e}");
        let e = Scenario::from_str(
            "s.yaml",
            "apiVersion: v9\nkind: Gizmo\nmetadata: {name: g}\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("Gizmo"), "{e}");
        let e = Scenario::from_str("s.yaml", "a: [")
            .unwrap_err()
            .to_string();
        assert!(e.contains("invalid YAML"), "{e}");
    }
}
