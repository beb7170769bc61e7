//! Reading real manifests into a [`ClusterState`].
//!
//! Input is what `kubectl get -o yaml|json` prints, or what users `kubectl apply`:
//! multi-document YAML, JSON, `kind: List` (or `XList`) with `items`, in any mix. Empty
//! documents are skipped; unknown fields are ignored; unknown kinds are counted into one
//! warning. Wrong types, bad quantities and a missing `metadata.name` are errors naming
//! the file, the document, the object and the field. References to objects that do not
//! exist (a LocalQueue's ClusterQueue, a job's PriorityClass) are not parse errors.
//!
//! Jobs become pending workloads (as Kueue's job integration would create them) only
//! when the whole input has been read, because priority classes may follow the jobs:
//! use [`Loader`] (or [`load_paths`]) and call [`Loader::finish`].
//!
//! **Timestamps of hand-written files.** A Workload or job without
//! `metadata.creationTimestamp` gets `FALLBACK_EPOCH_MS + n × 1000`, where `n` counts the
//! Workloads and jobs read before it. Document order is submission order, so FIFO among
//! such objects is stable and deterministic. Real timestamps are kept as they are.

mod core;
mod derive;
mod documents;
mod error;
mod jobs;
mod kueue;
mod meta;
mod nesting;
mod notes;
mod podspec;
mod stream;
mod value;
mod workload;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

pub use derive::{
    DEFAULT_WORKLOAD_PRIORITY_CLASS, DerivedPriority, JOB_UID_LABEL, PRIORITY_CLASS_LABEL,
    QUEUE_NAME_LABEL, finalize, job_priority, job_queue_name, workload_from_job,
};
pub use documents::split_documents;
pub use error::ParseError;
pub use jobs::{job_pod_templates, kubeflow_replicas};
pub use nesting::{MAX_NESTING_DEPTH, NestingError, check_nesting};
pub use podspec::pod_scheduling;

use crate::model::types::*;
use error::FieldError;
use notes::Notes;
use value::At;

/// 2000-01-01T00:00:00Z: base of the timestamps given to objects without one.
pub const FALLBACK_EPOCH_MS: Timestamp = 946_684_800_000;

/// How deeply `List`s may nest inside `List`s.
const MAX_LIST_DEPTH: usize = 4;

/// Note for objects that appear twice (the later document wins, as with `kubectl apply`).
const DUPLICATE: &str = "duplicate objects (the later document wins)";
/// Note for plain Pods that Kueue's pod integration would manage.
const PLAIN_POD: &str = "Pods with a queue-name label and no owner (Kueue pod integration) \
     are not turned into workloads";
/// Note for Workloads whose priority was filled in from their class.
const PRIORITY_FROM_CLASS: &str =
    "Workloads without spec.priority given the value of their priority class";
/// Note for Workloads naming a class that does not exist and have no spec.priority.
const PRIORITY_CLASS_MISSING: &str =
    "Workloads without spec.priority whose priority class does not exist (priority 0)";

/// Builds a [`ClusterState`] from any number of sources.
///
/// ```no_run
/// # use gangplank::model::parse::Loader;
/// let mut loader = Loader::new();
/// loader.add_str("cq.yaml", "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\n")?;
/// let state = loader.finish();
/// # Ok::<(), gangplank::model::parse::ParseError>(())
/// ```
#[derive(Debug, Default)]
pub struct Loader {
    state: ClusterState,
    notes: Notes,
    /// Workloads whose `spec.priority` was absent (resolved from their class on finish).
    priority_missing: BTreeSet<(String, String)>,
    /// Workloads and jobs read so far (the fallback timestamp sequence).
    sequence: i64,
    /// In a loader that reads the second half of a List on its own thread
    /// ([`stream`]): the objects given a fallback timestamp, with the sequence number
    /// used, so that [`Loader::merge_chunk`] can renumber them after the first half.
    fallback_stamps: Option<Vec<FallbackStamp>>,
}

/// An object stamped with `FALLBACK_EPOCH_MS + seq × 1000` (no creationTimestamp).
#[derive(Debug)]
enum FallbackStamp {
    Workload((String, String), i64),
    Job(usize, i64),
}

impl Loader {
    /// An empty loader.
    pub fn new() -> Self {
        Self::default()
    }

    /// Continues from an existing state (its derived workloads are rebuilt on finish).
    pub fn from_state(state: ClusterState) -> Self {
        let sequence = (state.workloads.len() + state.jobs.len()) as i64;
        Loader {
            state,
            sequence,
            ..Self::default()
        }
    }

    /// Reads every `.yaml`, `.yml` and `.json` file under each path (recursively, sorted);
    /// a path naming a file is read whatever its extension.
    pub fn add_paths(&mut self, paths: &[PathBuf]) -> Result<(), ParseError> {
        for path in paths {
            let mut files = Vec::new();
            collect_files(path, &mut files, 0)?;
            for file in files {
                self.add_file(&file)?;
            }
        }
        Ok(())
    }

    /// Reads one file.
    pub fn add_file(&mut self, path: &Path) -> Result<(), ParseError> {
        let source = path.display().to_string();
        let bytes = std::fs::read(path)
            .map_err(|e| ParseError::source_error(&source, format!("cannot read: {e}")))?;
        let text = String::from_utf8(bytes)
            .map_err(|e| ParseError::source_error(&source, format!("not UTF-8: {e}")))?;
        self.add_str(&source, &text)
    }

    /// Reads the text of one source (`source` names it in errors and origins).
    pub fn add_str(&mut self, source: &str, text: &str) -> Result<(), ParseError> {
        if stream::add_json_list(self, source, text)? {
            return Ok(());
        }
        if !documents::looks_json(source, text) {
            // Multi-document YAML: each document is read as soon as it is decoded. After
            // an object's error the rest is still decoded, so that a syntax error anywhere
            // in the file is the error reported, as when all documents were decoded first.
            let mut first_error = None;
            documents::for_each_yaml_document(source, text, |document, value| {
                if first_error.is_none() {
                    let origin = Origin {
                        source: source.to_string(),
                        document,
                    };
                    first_error = self.add_value(origin, &value).err();
                }
                Ok(())
            })?;
            return first_error.map_or(Ok(()), Err);
        }
        let docs = documents::split_documents(source, text)?;
        for (document, value) in docs.iter().enumerate() {
            let origin = Origin {
                source: source.to_string(),
                document,
            };
            self.add_value(origin, value)?;
        }
        Ok(())
    }

    /// Reads one decoded document (an object or a `List`); `null` is skipped.
    /// Live sources can feed API objects here as JSON values.
    pub fn add_value(&mut self, origin: Origin, value: &Value) -> Result<(), ParseError> {
        self.add_object(&origin, value, String::new(), 0)
    }

    /// A copy of the state as [`Loader::finish`] would return it, leaving the loader usable.
    pub fn snapshot(&self) -> ClusterState {
        let mut copy = Loader {
            state: self.state.clone(),
            notes: self.notes.clone(),
            priority_missing: self.priority_missing.clone(),
            sequence: self.sequence,
            fallback_stamps: None,
        };
        copy.complete();
        copy.state
    }

    /// Resolves priorities, derives the pending workloads of jobs, and appends warnings.
    pub fn finish(mut self) -> ClusterState {
        self.complete();
        self.state
    }

    fn complete(&mut self) {
        for key in std::mem::take(&mut self.priority_missing) {
            let Some(wl) = self.state.workloads.get_mut(&key) else {
                continue;
            };
            let Some(class) = &wl.priority_class else {
                continue;
            };
            let value = match class.kind {
                PriorityClassKind::WorkloadPriorityClass => self
                    .state
                    .workload_priority_classes
                    .get(&class.name)
                    .map(|c| c.value),
                PriorityClassKind::PriorityClass => self
                    .state
                    .priority_classes
                    .get(&class.name)
                    .map(|c| c.value),
            };
            let subject = format!("Workload/{}/{}", key.0, key.1);
            match value {
                Some(v) => {
                    Arc::make_mut(wl).priority = v;
                    self.notes.note(PRIORITY_FROM_CLASS, subject);
                }
                None => self.notes.note(PRIORITY_CLASS_MISSING, subject),
            }
        }
        finalize(&mut self.state);
        for line in self.notes.render() {
            if !self.state.warnings.contains(&line) {
                self.state.warnings.push(line);
            }
        }
        self.notes = Notes::default();
    }

    /// A loader for the second half of a List read on another thread: it renumbers its
    /// fallback timestamps when merged ([`Self::merge_chunk`]).
    pub(super) fn for_chunk() -> Loader {
        Loader {
            fallback_stamps: Some(Vec::new()),
            ..Loader::default()
        }
    }

    /// Appends what `chunk` ([`Self::for_chunk`]) read after what this loader holds, as
    /// if this loader had read it: its objects, jobs and notes follow this loader's, its
    /// fallback timestamps continue this loader's sequence. Where that cannot be exact
    /// without replaying the order of the reads (an object of `chunk` replaces one this
    /// loader holds, which is a duplicate note in the middle of `chunk`'s notes), nothing
    /// is changed and `false` is returned: the caller reads the chunk here instead.
    pub(super) fn merge_chunk(&mut self, chunk: Loader) -> bool {
        let Loader {
            state: b,
            notes,
            priority_missing,
            sequence,
            fallback_stamps,
        } = chunk;
        let a = &self.state;
        fn any_shared<K: Ord, V, W>(
            a: &std::collections::BTreeMap<K, V>,
            b: &std::collections::BTreeMap<K, W>,
        ) -> bool {
            b.keys().any(|k| a.contains_key(k))
        }
        // every field named: a new one must be merged here too
        let ClusterState {
            resource_flavors,
            cluster_queues,
            cohorts,
            local_queues,
            priority_classes,
            workload_priority_classes,
            namespaces,
            nodes,
            pods,
            mut workloads,
            mut jobs,
            kueue_config,
            warnings,
        } = b;
        let shared_key = any_shared(&a.resource_flavors, &resource_flavors)
            || any_shared(&a.cluster_queues, &cluster_queues)
            || any_shared(&a.cohorts, &cohorts)
            || any_shared(&a.local_queues, &local_queues)
            || any_shared(&a.priority_classes, &priority_classes)
            || any_shared(&a.workload_priority_classes, &workload_priority_classes)
            || any_shared(&a.namespaces, &namespaces)
            || any_shared(&a.nodes, &nodes)
            || any_shared(&a.pods, &pods)
            || any_shared(&a.workloads, &workloads);
        if shared_key || !warnings.is_empty() {
            return false;
        }
        // an object stamped FALLBACK + seq (its count in the chunk) reads as if this
        // loader's `sequence` objects had come before it
        let offset = self.sequence;
        let stamp_of = |seq: i64| FALLBACK_EPOCH_MS + seq * 1000;
        for stamp in fallback_stamps.unwrap_or_default() {
            match stamp {
                FallbackStamp::Workload(key, seq) => {
                    // a later duplicate in the chunk may have replaced the stamped one
                    if let Some(wl) = workloads.get_mut(&key)
                        && wl.creation_timestamp == stamp_of(seq)
                    {
                        Arc::make_mut(wl).creation_timestamp = stamp_of(offset + seq);
                    }
                }
                FallbackStamp::Job(i, seq) => {
                    Arc::make_mut(&mut jobs[i]).creation_timestamp = Some(stamp_of(offset + seq));
                }
            }
        }
        let st = &mut self.state;
        st.resource_flavors.extend(resource_flavors);
        st.cluster_queues.extend(cluster_queues);
        st.cohorts.extend(cohorts);
        st.local_queues.extend(local_queues);
        st.priority_classes.extend(priority_classes);
        st.workload_priority_classes
            .extend(workload_priority_classes);
        st.namespaces.extend(namespaces);
        st.nodes.extend(nodes);
        st.pods.extend(pods);
        st.workloads.append(&mut workloads);
        st.jobs.extend(jobs);
        if kueue_config.is_some() {
            st.kueue_config = kueue_config;
        }
        self.notes.append(notes);
        self.priority_missing.extend(priority_missing);
        self.sequence += sequence;
        true
    }

    fn add_object(
        &mut self,
        origin: &Origin,
        value: &Value,
        path: String,
        depth: usize,
    ) -> Result<(), ParseError> {
        if value.is_null() {
            return Ok(());
        }
        let root = At::root(value, &path);
        let fail = |object: Option<String>| {
            let origin = origin.clone();
            move |e: FieldError| ParseError {
                source: origin.source.clone(),
                document: Some(origin.document),
                object,
                path: Some(e.path),
                message: e.message,
            }
        };
        let Value::Object(map) = value else {
            return Err(fail(None)(root.err(format!(
                "expected an object (a Kubernetes manifest), found {}",
                value::describe(value)
            ))));
        };
        let kind = root.req_str("kind").map_err(fail(None))?.to_string();
        // A lenient read of the name, only to label errors.
        let name = map
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str);
        let object = Some(match name {
            Some(n) => format!("{kind}/{n}"),
            None => kind.clone(),
        });
        if kind == "List" || (kind.ends_with("List") && map.contains_key("items")) {
            if depth >= MAX_LIST_DEPTH {
                return Err(fail(object)(root.err("Lists nested too deeply")));
            }
            let list_api_version = root.opt_str("apiVersion").map_err(fail(object.clone()))?;
            let items = root.opt_list("items").map_err(fail(object.clone()))?;
            for (i, item) in items.iter().enumerate() {
                self.add_list_item(origin, &kind, list_api_version, item.v, i, &path, depth)?;
            }
            return Ok(());
        }
        let api_version = root
            .req_str("apiVersion")
            .map_err(fail(object.clone()))?
            .to_string();
        self.dispatch(&root, origin, &api_version, &kind)
            .map_err(fail(object))
    }

    /// Item `i` of a List of `kind` read from `path`.
    #[allow(clippy::too_many_arguments)] // the List's context, spelled out once
    fn add_list_item(
        &mut self,
        origin: &Origin,
        kind: &str,
        list_api_version: Option<&str>,
        item: &Value,
        i: usize,
        path: &str,
        depth: usize,
    ) -> Result<(), ParseError> {
        // The item's path is built from its index: `At::path` would search the
        // whole List for it (quadratic in the List's length).
        let item_path = if path.is_empty() {
            format!("items[{i}]")
        } else {
            format!("{path}.items[{i}]")
        };
        // Items of a typed list (`PodList` from the API) may omit kind/apiVersion;
        // only those are copied to fill them in.
        let needs_fill = kind != "List"
            && item.as_object().is_some_and(|m| {
                !m.contains_key("kind")
                    || (list_api_version.is_some() && !m.contains_key("apiVersion"))
            });
        if !needs_fill {
            return self.add_object(origin, item, item_path, depth + 1);
        }
        let mut owned = item.clone();
        if let Value::Object(m) = &mut owned {
            if !m.contains_key("kind") {
                let item_kind = kind.trim_end_matches("List").to_string();
                m.insert("kind".into(), Value::String(item_kind));
            }
            if let (false, Some(av)) = (m.contains_key("apiVersion"), list_api_version) {
                m.insert("apiVersion".into(), Value::String(av.to_string()));
            }
        }
        self.add_object(origin, &owned, item_path, depth + 1)
    }

    /// Kueue's configuration ConfigMap (`model::kueue_config`); a bad one is an error
    /// naming the field inside `controller_manager_config.yaml`.
    fn kueue_config(&mut self, root: &At, origin: &Origin) -> Result<(), FieldError> {
        let source = format!(
            "ConfigMap {}/{} in {}",
            crate::model::kueue_config::CONFIG_MAP_NAMESPACE,
            crate::model::kueue_config::CONFIG_MAP_NAME,
            origin.source
        );
        let cfg = crate::model::kueue_config::from_config_map(root.v, &source)
            .map_err(|e| root.err(format!("{}: {}", e.field, e.message)))?;
        self.state.kueue_config = Some(cfg);
        Ok(())
    }

    fn dispatch(
        &mut self,
        root: &At,
        origin: &Origin,
        api_version: &str,
        kind: &str,
    ) -> Result<(), FieldError> {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        if kind == "ConfigMap" && crate::model::kueue_config::is_kueue_config_map(root.v) {
            return self.kueue_config(root, origin);
        }
        let known = matches!(
            (group, kind),
            (
                "kueue.x-k8s.io",
                "ResourceFlavor"
                    | "ClusterQueue"
                    | "LocalQueue"
                    | "Cohort"
                    | "WorkloadPriorityClass"
                    | "Workload"
            ) | ("scheduling.k8s.io", "PriorityClass")
                | ("", "Namespace" | "Node" | "Pod")
                | ("batch", "Job")
                | ("jobset.x-k8s.io", "JobSet")
        ) || (group == "kubeflow.org" && jobs::kubeflow_replicas(kind).is_some());
        if !known {
            self.notes.unknown_kind(format!("{kind} ({api_version})"));
            return Ok(());
        }
        let meta = meta::read_meta(root)?;
        let kv = if version == "v1beta2" {
            KueueApiVersion::V1beta2
        } else if version.starts_with("v1alpha") || version == "v1beta1" {
            KueueApiVersion::V1beta1
        } else {
            KueueApiVersion::V1beta2
        };
        let origin = origin.clone();
        let notes = &mut self.notes;
        let st = &mut self.state;
        let dup = |notes: &mut Notes, present: bool, subject: String| {
            if present {
                notes.note(DUPLICATE, subject);
            }
        };
        match kind {
            "ResourceFlavor" => {
                let rf = kueue::resource_flavor(root, &meta, kv, origin, notes)?;
                dup(
                    notes,
                    st.resource_flavors.contains_key(&rf.name),
                    format!("{kind}/{}", rf.name),
                );
                st.resource_flavors.insert(rf.name.clone(), rf);
            }
            "ClusterQueue" => {
                let cq = kueue::cluster_queue(root, &meta, kv, origin, notes)?;
                dup(
                    notes,
                    st.cluster_queues.contains_key(&cq.name),
                    format!("{kind}/{}", cq.name),
                );
                st.cluster_queues.insert(cq.name.clone(), cq);
            }
            "Cohort" => {
                let c = kueue::cohort(root, &meta, kv, origin, notes)?;
                dup(
                    notes,
                    st.cohorts.contains_key(&c.name),
                    format!("{kind}/{}", c.name),
                );
                st.cohorts.insert(c.name.clone(), c);
            }
            "LocalQueue" => {
                let lq = kueue::local_queue(root, &meta, kv, origin, notes)?;
                let key = (lq.namespace.clone(), lq.name.clone());
                dup(
                    notes,
                    st.local_queues.contains_key(&key),
                    format!("{kind}/{}/{}", key.0, key.1),
                );
                st.local_queues.insert(key, lq);
            }
            "WorkloadPriorityClass" => {
                let c = kueue::workload_priority_class(root, &meta, origin)?;
                dup(
                    notes,
                    st.workload_priority_classes.contains_key(&c.name),
                    format!("{kind}/{}", c.name),
                );
                st.workload_priority_classes.insert(c.name.clone(), c);
            }
            "Workload" => {
                let seq = self.sequence;
                let ts = FALLBACK_EPOCH_MS + seq * 1000;
                self.sequence += 1;
                let parsed = workload::workload(root, &meta, kv, origin, ts, notes)?;
                let wl = parsed.workload;
                let key = (wl.namespace.clone(), wl.name.clone());
                if let (None, Some(stamps)) = (meta.creation_timestamp, &mut self.fallback_stamps) {
                    stamps.push(FallbackStamp::Workload(key.clone(), seq));
                }
                dup(
                    notes,
                    st.workloads.contains_key(&key),
                    format!("{kind}/{}/{}", key.0, key.1),
                );
                if parsed.priority_missing {
                    self.priority_missing.insert(key.clone());
                } else {
                    self.priority_missing.remove(&key);
                }
                st.workloads.insert(key, Arc::new(wl));
            }
            "PriorityClass" => {
                let c = core::priority_class(root, &meta, origin)?;
                dup(
                    notes,
                    st.priority_classes.contains_key(&c.name),
                    format!("{kind}/{}", c.name),
                );
                st.priority_classes.insert(c.name.clone(), c);
            }
            "Namespace" => {
                let ns = core::namespace(&meta);
                st.namespaces.insert(ns.name.clone(), ns);
            }
            "Node" => {
                let n = core::node(root, &meta, origin)?;
                dup(
                    notes,
                    st.nodes.contains_key(&n.name),
                    format!("{kind}/{}", n.name),
                );
                st.nodes.insert(n.name.clone(), Arc::new(n));
            }
            "Pod" => {
                let p = core::pod(root, &meta, origin)?;
                if p.owner_references.is_empty() && p.labels.contains_key(QUEUE_NAME_LABEL) {
                    notes.note(PLAIN_POD, format!("Pod/{}/{}", p.namespace, p.name));
                }
                st.pods
                    .insert((p.namespace.clone(), p.name.clone()), Arc::new(p));
            }
            _ => {
                let seq = self.sequence;
                let ts = FALLBACK_EPOCH_MS + seq * 1000;
                self.sequence += 1;
                let job = jobs::job(root, &meta, api_version, kind, origin, ts, notes)?;
                if let (None, Some(stamps)) = (meta.creation_timestamp, &mut self.fallback_stamps) {
                    stamps.push(FallbackStamp::Job(st.jobs.len(), seq));
                }
                st.jobs.push(Arc::new(job));
            }
        }
        Ok(())
    }
}

/// Collects the manifest files under `path` (`.yaml`, `.yml`, `.json`, recursively),
/// sorted for determinism. A file named directly is taken whatever its extension.
pub fn collect_files(path: &Path, out: &mut Vec<PathBuf>, depth: usize) -> Result<(), ParseError> {
    let source = path.display().to_string();
    let meta = std::fs::metadata(path)
        .map_err(|e| ParseError::source_error(&source, format!("cannot read: {e}")))?;
    if !meta.is_dir() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    if depth > 32 {
        return Err(ParseError::source_error(
            &source,
            "directories nested too deeply",
        ));
    }
    let mut entries = std::fs::read_dir(path)
        .map_err(|e| ParseError::source_error(&source, format!("cannot list: {e}")))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ParseError::source_error(&source, format!("cannot list: {e}")))?;
    entries.sort();
    for entry in entries {
        if entry.is_dir() {
            collect_files(&entry, out, depth + 1)?;
        } else if entry
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
        {
            out.push(entry);
        }
    }
    Ok(())
}

/// Reads files and directories (recursively: `.yaml`, `.yml`, `.json`, sorted) into a
/// finished [`ClusterState`].
pub fn load_paths(paths: &[PathBuf]) -> Result<ClusterState, ParseError> {
    let mut loader = Loader::new();
    loader.add_paths(paths)?;
    Ok(loader.finish())
}

/// Reads one source's text into `state` and finishes it (derived workloads are rebuilt
/// from all of `state.jobs`). For several sources prefer one [`Loader`], so that Workloads
/// without `spec.priority` can resolve classes defined in a later source. On error,
/// `state` holds what was read before the failing document, unfinished.
pub fn parse_str(
    source_name: &str,
    text: &str,
    state: &mut ClusterState,
) -> Result<(), ParseError> {
    let mut loader = Loader::from_state(std::mem::take(state));
    let result = loader.add_str(source_name, text);
    *state = match result {
        Ok(()) => loader.finish(),
        Err(_) => loader.state,
    };
    result
}
