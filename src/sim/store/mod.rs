//! The simulator's in-memory object store.
//!
//! Objects are JSON values in their storage version, keyed by resource
//! `(group, plural)`, namespace and name. Every write takes the next value of one
//! global, monotonically increasing resourceVersion and appends an event to a
//! bounded history; [`Subscription`]s read that history, so a watcher that starts
//! from resourceVersion `R` sees every event after `R`, or [`StoreError::Expired`]
//! if `R` has already been compacted away.
//!
//! The API is synchronous and cheap: one `std::sync::Mutex` guards the state and is
//! never held across an `.await`. Simulated controllers call it directly; the HTTP
//! server in [`super::api`] is a thin layer on top.

use crate::clock::Clock;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Map, Value, json};
use tokio::sync::watch;

use super::convert;
use super::patch::{self, PatchKind};

mod subscription;
#[cfg(test)]
mod tests;

use super::resources::{ResourceKey, find_key};
pub use subscription::Subscription;

/// A stored object (JSON, storage version).
pub type Object = Value;

/// Default number of events kept for watch replay.
pub const DEFAULT_HISTORY: usize = 10_000;

/// What happened to an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    /// Created.
    Added,
    /// Updated (spec, metadata or status).
    Modified,
    /// Deleted; the object is the last state, with the deletion's resourceVersion.
    Deleted,
}

impl EventType {
    /// The watch wire name (`ADDED`, `MODIFIED`, `DELETED`).
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change, as recorded in the history.
#[derive(Clone, Debug)]
pub struct StoreEvent {
    /// The resourceVersion this write produced.
    pub resource_version: u64,
    /// Kind of change.
    pub event_type: EventType,
    /// Which resource.
    pub resource: ResourceKey,
    /// The object after the change (before it, for deletions).
    pub object: Arc<Object>,
    /// The object before the change (`None` for `Added`).
    pub old: Option<Arc<Object>>,
}

/// Errors of store operations; the API layer maps them to `Status` bodies.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum StoreError {
    /// The object does not exist.
    #[error("{resource} \"{name}\" not found")]
    NotFound {
        /// Qualified resource (`plural.group`).
        resource: String,
        /// Object name.
        name: String,
    },
    /// Create of an existing name.
    #[error("{resource} \"{name}\" already exists")]
    AlreadyExists {
        /// Qualified resource.
        resource: String,
        /// Object name.
        name: String,
    },
    /// A resourceVersion (or uid) precondition failed.
    #[error(
        "Operation cannot be fulfilled on {resource} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
    )]
    Conflict {
        /// Qualified resource.
        resource: String,
        /// Object name.
        name: String,
    },
    /// The object is not acceptable (HTTP 422).
    #[error("{0}")]
    Invalid(String),
    /// The request itself is malformed (HTTP 400).
    #[error("{0}")]
    BadRequest(String),
    /// A watch asked for history that has been compacted (HTTP 410).
    #[error("too old resource version: {requested} ({oldest})")]
    Expired {
        /// The requested resourceVersion.
        requested: u64,
        /// The oldest resourceVersion a watch may start from.
        oldest: u64,
    },
}

/// Options for every write.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteOptions {
    /// Validate and compute the result, but store nothing and emit no event.
    pub dry_run: bool,
}

impl WriteOptions {
    /// A dry-run write.
    pub fn dry_run() -> Self {
        Self { dry_run: true }
    }
}

/// Which part of an object an update may change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateScope {
    /// The main resource: status changes are ignored when the resource has a
    /// status subresource.
    Main,
    /// The status subresource: only `status` changes are kept.
    Status,
    /// Everything (for controllers seeding state; not reachable over HTTP).
    All,
}

/// Options for deletion.
#[derive(Clone, Debug, Default)]
pub struct DeleteOptions {
    /// Dry run.
    pub dry_run: bool,
    /// Precondition on the live resourceVersion.
    pub resource_version: Option<String>,
    /// Precondition on the live uid.
    pub uid: Option<String>,
}

/// A consistent list result.
#[derive(Clone, Debug)]
pub struct ListSnapshot {
    /// Objects sorted by namespace, then name.
    pub items: Vec<Object>,
    /// The store's resourceVersion at the time of the list.
    pub resource_version: u64,
}

/// Store tuning.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    /// Events kept for watch replay.
    pub history_capacity: usize,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            history_capacity: DEFAULT_HISTORY,
        }
    }
}

/// The shared, cloneable object store.
#[derive(Clone)]
pub struct ObjectStore {
    inner: Arc<Inner>,
}

struct Inner {
    state: Mutex<State>,
    /// Latest resourceVersion; subscribers wait on it.
    notify: watch::Sender<u64>,
    clock: Mutex<Clock>,
    millis: std::sync::atomic::AtomicBool,
}

type ObjKey = (String, String);

struct State {
    rv: u64,
    objects: HashMap<ResourceKey, BTreeMap<ObjKey, Arc<Object>>>,
    history: VecDeque<StoreEvent>,
    /// Events with a resourceVersion `<= compacted_rv` are no longer in `history`.
    compacted_rv: u64,
    capacity: usize,
    uid_counter: u64,
    uid_seed: u64,
}

impl Default for ObjectStore {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ObjectStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectStore")
            .field("resource_version", &self.resource_version())
            .finish()
    }
}

fn meta(obj: &Value) -> Option<&Map<String, Value>> {
    obj.get("metadata").and_then(Value::as_object)
}

fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    meta(obj).and_then(|m| m.get(field)).and_then(Value::as_str)
}

fn meta_mut(obj: &mut Value) -> Result<&mut Map<String, Value>, StoreError> {
    let map = obj
        .as_object_mut()
        .ok_or_else(|| StoreError::BadRequest("object must be a JSON object".into()))?;
    let m = map
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if m.is_null() {
        *m = Value::Object(Map::new());
    }
    m.as_object_mut()
        .ok_or_else(|| StoreError::Invalid("metadata: Invalid value: must be an object".into()))
}

/// Everything except metadata and status: a change here bumps `generation`.
fn spec_part(obj: &Value) -> Vec<(&String, &Value)> {
    obj.as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| {
                    !matches!(k.as_str(), "metadata" | "status" | "apiVersion" | "kind")
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Compares two objects ignoring `metadata.resourceVersion` (without copying them:
/// this runs on every write).
fn same_ignoring_rv(a: &Value, b: &Value) -> bool {
    let (Some(ma), Some(mb)) = (a.as_object(), b.as_object()) else {
        return a == b;
    };
    fn without_rv(m: &Map<String, Value>) -> Vec<(&String, &Value)> {
        m.iter()
            .filter(|(k, _)| k.as_str() != "resourceVersion")
            .collect()
    }
    ma.len() == mb.len()
        && ma.iter().all(|(k, va)| match (k.as_str(), mb.get(k)) {
            (_, None) => false,
            ("metadata", Some(vb)) => match (va.as_object(), vb.as_object()) {
                (Some(x), Some(y)) => without_rv(x) == without_rv(y),
                _ => va == vb,
            },
            (_, Some(vb)) => va == vb,
        })
}

fn has_status_subresource(res: &ResourceKey) -> bool {
    find_key(res).is_some_and(|d| d.has_status)
}

/// Object name from metadata.
pub fn object_name(obj: &Value) -> Option<&str> {
    meta_str(obj, "name")
}

/// Object namespace from metadata (`None` when absent or empty).
pub fn object_namespace(obj: &Value) -> Option<&str> {
    meta_str(obj, "namespace").filter(|s| !s.is_empty())
}

/// Parses a resourceVersion string.
pub fn parse_rv(s: &str) -> Option<u64> {
    s.parse().ok()
}

impl ObjectStore {
    /// An empty store with default options.
    pub fn new() -> Self {
        Self::with_options(StoreOptions::default())
    }

    /// An empty store.
    pub fn with_options(opts: StoreOptions) -> Self {
        let seed = jiff::Timestamp::now().as_nanosecond() as u64;
        let (notify, _) = watch::channel(0);
        Self {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    rv: 0,
                    objects: HashMap::new(),
                    history: VecDeque::new(),
                    compacted_rv: 0,
                    capacity: opts.history_capacity.max(1),
                    uid_counter: 0,
                    uid_seed: seed,
                }),
                notify,
                clock: Mutex::new(Clock::wall()),
                millis: std::sync::atomic::AtomicBool::new(false),
            }),
        }
    }

    /// Replaces the clock used for `creationTimestamp` (e.g. simulated time).
    pub fn set_clock(&self, clock: Clock) {
        *lock(&self.inner.clock) = clock;
    }

    /// Makes generated uids and `generateName` suffixes a function of `seed` and the
    /// order of creation (the simulator uses this to be deterministic). Call before
    /// creating objects.
    pub fn set_uid_seed(&self, seed: u64) {
        self.state().uid_seed = seed;
    }

    /// Stamps `creationTimestamp` with milliseconds (see `SimClock::set_millis`).
    pub fn set_millis(&self, on: bool) {
        self.inner
            .millis
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    fn now_string(&self) -> String {
        let clock = lock(&self.inner.clock).clone();
        let format = if self.inner.millis.load(std::sync::atomic::Ordering::Relaxed) {
            "%Y-%m-%dT%H:%M:%S%.3fZ"
        } else {
            "%Y-%m-%dT%H:%M:%SZ"
        };
        clock.now().strftime(format).to_string()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.inner.state)
    }

    /// The latest resourceVersion (0 for an empty, never-written store).
    pub fn resource_version(&self) -> u64 {
        self.state().rv
    }

    /// The oldest resourceVersion a watch may still start from.
    pub fn oldest_watchable_rv(&self) -> u64 {
        self.state().compacted_rv
    }

    /// Number of stored objects of `res` (all namespaces).
    pub fn count(&self, res: &ResourceKey) -> usize {
        self.state().objects.get(res).map_or(0, BTreeMap::len)
    }

    /// One object.
    pub fn get(&self, res: &ResourceKey, namespace: Option<&str>, name: &str) -> Option<Object> {
        let key = (namespace.unwrap_or("").to_string(), name.to_string());
        self.state()
            .objects
            .get(res)
            .and_then(|m| m.get(&key))
            .map(|o| (**o).clone())
    }

    /// All objects of `res`, optionally restricted to one namespace.
    pub fn list(&self, res: &ResourceKey, namespace: Option<&str>) -> ListSnapshot {
        let st = self.state();
        let items = st
            .objects
            .get(res)
            .map(|m| {
                m.iter()
                    .filter(|((ns, _), _)| namespace.is_none_or(|n| n == ns))
                    .map(|(_, o)| (**o).clone())
                    .collect()
            })
            .unwrap_or_default();
        ListSnapshot {
            items,
            resource_version: st.rv,
        }
    }

    /// All objects of `res` (optionally of one namespace) as shared pointers, sorted by
    /// namespace then name, and the resourceVersion they are current at. Costs one
    /// pointer per object: paged lists snapshot collections with it.
    pub fn list_shared(
        &self,
        res: &ResourceKey,
        namespace: Option<&str>,
    ) -> (Vec<Arc<Object>>, u64) {
        let st = self.state();
        let items = match (st.objects.get(res), namespace) {
            (None, _) => Vec::new(),
            (Some(m), None) => m.values().cloned().collect(),
            // Keys sort by namespace first: one namespace is a contiguous range.
            (Some(m), Some(ns)) => m
                .range((ns.to_string(), String::new())..)
                .take_while(|((n, _), _)| n == ns)
                .map(|(_, o)| o.clone())
                .collect(),
        };
        (items, st.rv)
    }

    /// Creates an object. `metadata.name` (or `generateName`) is required; the
    /// namespace is taken from `metadata.namespace`. Assigns uid,
    /// creationTimestamp, generation 1 and a new resourceVersion.
    pub fn create(
        &self,
        res: &ResourceKey,
        mut obj: Object,
        opts: WriteOptions,
    ) -> Result<Object, StoreError> {
        let now = self.now_string();
        let mut st = self.state();
        let m = meta_mut(&mut obj)?;
        let name = match m
            .get("name")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            Some(n) => n.to_string(),
            None => match m
                .get("generateName")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                Some(prefix) => {
                    st.uid_counter += 1;
                    let suffix = mix(st.uid_seed ^ st.uid_counter) % 36u64.pow(5);
                    let name = format!("{prefix}{}", base36(suffix, 5));
                    m.insert("name".into(), Value::String(name.clone()));
                    name
                }
                None => {
                    return Err(StoreError::Invalid(
                        "metadata.name: Required value: name or generateName is required".into(),
                    ));
                }
            },
        };
        let def = find_key(res);
        if def.is_some_and(|d| !d.namespaced) {
            m.remove("namespace");
        }
        let ns = m
            .get("namespace")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if ns.is_empty() && def.is_some_and(|d| d.namespaced) {
            return Err(StoreError::Invalid(
                "metadata.namespace: Required value: the resource is namespaced".into(),
            ));
        }
        let key = (ns, name.clone());
        if st.objects.get(res).is_some_and(|o| o.contains_key(&key)) {
            return Err(StoreError::AlreadyExists {
                resource: res.qualified(),
                name,
            });
        }
        st.uid_counter += 1;
        let uid = format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            (st.uid_seed >> 32) as u32,
            (st.uid_seed >> 16) as u16,
            (st.uid_seed & 0xfff) as u16,
            (st.uid_counter >> 48) as u16 & 0xfff,
            st.uid_counter & 0xffff_ffff_ffff
        );
        m.insert("uid".into(), Value::String(uid));
        m.insert("creationTimestamp".into(), Value::String(now));
        m.insert("generation".into(), json!(1));
        m.remove("deletionTimestamp");
        if let Some(d) = def {
            convert::set_type_meta(d, d.storage_version, &mut obj);
        }
        if opts.dry_run {
            meta_mut(&mut obj)?.remove("resourceVersion");
            return Ok(obj);
        }
        let rv = st.rv + 1;
        meta_mut(&mut obj)?.insert("resourceVersion".into(), Value::String(rv.to_string()));
        let obj = Arc::new(obj);
        st.objects
            .entry(res.clone())
            .or_default()
            .insert(key, obj.clone());
        self.commit(&mut st, rv, EventType::Added, res, obj.clone(), None);
        Ok((*obj).clone())
    }

    /// Replaces an object's main resource (status changes are ignored when the
    /// resource has a status subresource). A non-empty `metadata.resourceVersion`
    /// is a precondition (409 Conflict when stale).
    pub fn update(
        &self,
        res: &ResourceKey,
        obj: Object,
        opts: WriteOptions,
    ) -> Result<Object, StoreError> {
        self.replace(res, obj, UpdateScope::Main, opts)
    }

    /// Replaces an object's status (everything else is ignored).
    pub fn update_status(
        &self,
        res: &ResourceKey,
        obj: Object,
        opts: WriteOptions,
    ) -> Result<Object, StoreError> {
        self.replace(res, obj, UpdateScope::Status, opts)
    }

    /// Replaces an object with the given scope.
    pub fn replace(
        &self,
        res: &ResourceKey,
        obj: Object,
        scope: UpdateScope,
        opts: WriteOptions,
    ) -> Result<Object, StoreError> {
        let name = object_name(&obj)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                StoreError::Invalid("metadata.name: Required value: name is required".into())
            })?
            .to_string();
        let ns = object_namespace(&obj).map(str::to_string);
        let precondition = meta_str(&obj, "resourceVersion")
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        self.modify(res, ns.as_deref(), &name, scope, opts, move |live| {
            if let Some(rv) = &precondition
                && meta_str(live, "resourceVersion") != Some(rv.as_str())
            {
                return Err(StoreError::Conflict {
                    resource: String::new(),
                    name: String::new(),
                });
            }
            *live = obj;
            Ok(())
        })
    }

    /// Patches one object's main resource (see [`PatchKind`]; status changes are
    /// ignored when the resource has a status subresource). A
    /// `metadata.resourceVersion` inside a merge/strategic patch is a
    /// precondition, as on a real server.
    pub fn patch(
        &self,
        res: &ResourceKey,
        namespace: Option<&str>,
        name: &str,
        kind: PatchKind,
        body: &Value,
        opts: WriteOptions,
    ) -> Result<Object, StoreError> {
        self.patch_scoped(res, (namespace, name), kind, body, UpdateScope::Main, opts)
    }

    /// Patches one object's status (everything else in the patch is ignored).
    pub fn patch_status(
        &self,
        res: &ResourceKey,
        namespace: Option<&str>,
        name: &str,
        kind: PatchKind,
        body: &Value,
        opts: WriteOptions,
    ) -> Result<Object, StoreError> {
        self.patch_scoped(
            res,
            (namespace, name),
            kind,
            body,
            UpdateScope::Status,
            opts,
        )
    }

    fn patch_scoped(
        &self,
        res: &ResourceKey,
        (namespace, name): (Option<&str>, &str),
        kind: PatchKind,
        body: &Value,
        scope: UpdateScope,
        opts: WriteOptions,
    ) -> Result<Object, StoreError> {
        let precondition = match kind {
            PatchKind::Json => None,
            _ => meta_str(body, "resourceVersion").map(str::to_string),
        };
        self.modify(res, namespace, name, scope, opts, |live| {
            if let Some(rv) = &precondition
                && meta_str(live, "resourceVersion") != Some(rv.as_str())
            {
                return Err(StoreError::Conflict {
                    resource: String::new(),
                    name: String::new(),
                });
            }
            patch::apply(kind, live, body).map_err(StoreError::Invalid)
        })
    }

    /// Atomic read-modify-write: `f` receives a copy of the live object and may
    /// change it or fail; the result is stored with the rules of `scope`
    /// (server-owned metadata is preserved, generation bumped on spec changes, no
    /// event when nothing changed). Runs under the store lock: keep `f` short.
    pub fn modify<F>(
        &self,
        res: &ResourceKey,
        namespace: Option<&str>,
        name: &str,
        scope: UpdateScope,
        opts: WriteOptions,
        f: F,
    ) -> Result<Object, StoreError>
    where
        F: FnOnce(&mut Object) -> Result<(), StoreError>,
    {
        let mut st = self.state();
        let key = (namespace.unwrap_or("").to_string(), name.to_string());
        let not_found = || StoreError::NotFound {
            resource: res.qualified(),
            name: name.to_string(),
        };
        let old = st
            .objects
            .get(res)
            .and_then(|m| m.get(&key))
            .cloned()
            .ok_or_else(not_found)?;
        let mut new = (*old).clone();
        f(&mut new).map_err(|e| match e {
            StoreError::Conflict { .. } => StoreError::Conflict {
                resource: res.qualified(),
                name: name.to_string(),
            },
            other => other,
        })?;
        if !new.is_object() {
            return Err(StoreError::BadRequest(
                "object must be a JSON object".into(),
            ));
        }
        if object_name(&new).is_some_and(|n| n != name) {
            return Err(StoreError::BadRequest(format!(
                "the name of the object ({}) does not match the name on the URL ({name})",
                object_name(&new).unwrap_or_default()
            )));
        }
        let mut merged = match scope {
            UpdateScope::All => new,
            UpdateScope::Main => {
                if has_status_subresource(res) {
                    set_or_remove(&mut new, "status", old.get("status").cloned());
                }
                new
            }
            UpdateScope::Status => {
                let mut m = (*old).clone();
                set_or_remove(&mut m, "status", new.get("status").cloned());
                m
            }
        };
        if let Some(d) = find_key(res) {
            convert::set_type_meta(d, d.storage_version, &mut merged);
        }
        // Server-owned metadata always comes from the live object.
        {
            let old_meta = meta(&old).cloned().unwrap_or_default();
            let m = meta_mut(&mut merged)?;
            for f in [
                "uid",
                "creationTimestamp",
                "name",
                "namespace",
                "generation",
                "resourceVersion",
            ] {
                match old_meta.get(f) {
                    Some(v) => {
                        m.insert(f.into(), v.clone());
                    }
                    None => {
                        m.remove(f);
                    }
                }
            }
        }
        if spec_part(&merged) != spec_part(&old) {
            let g = meta(&old)
                .and_then(|m| m.get("generation"))
                .and_then(Value::as_i64)
                .unwrap_or(0);
            meta_mut(&mut merged)?.insert("generation".into(), json!(g + 1));
        }
        if same_ignoring_rv(&merged, &old) || opts.dry_run {
            return Ok(merged);
        }
        let rv = st.rv + 1;
        meta_mut(&mut merged)?.insert("resourceVersion".into(), Value::String(rv.to_string()));
        let merged = Arc::new(merged);
        st.objects
            .entry(res.clone())
            .or_default()
            .insert(key, merged.clone());
        self.commit(
            &mut st,
            rv,
            EventType::Modified,
            res,
            merged.clone(),
            Some(old),
        );
        Ok((*merged).clone())
    }

    /// Deletes an object immediately (finalizers are not modelled) and returns
    /// its last state with the deletion's resourceVersion. Deleting a namespace
    /// also deletes every object in it.
    pub fn delete(
        &self,
        res: &ResourceKey,
        namespace: Option<&str>,
        name: &str,
        opts: &DeleteOptions,
    ) -> Result<Object, StoreError> {
        let mut st = self.state();
        let key = (namespace.unwrap_or("").to_string(), name.to_string());
        let old = st
            .objects
            .get(res)
            .and_then(|m| m.get(&key))
            .cloned()
            .ok_or_else(|| StoreError::NotFound {
                resource: res.qualified(),
                name: name.to_string(),
            })?;
        let conflict = || StoreError::Conflict {
            resource: res.qualified(),
            name: name.to_string(),
        };
        if let Some(rv) = &opts.resource_version
            && meta_str(&old, "resourceVersion") != Some(rv.as_str())
        {
            return Err(conflict());
        }
        if let Some(uid) = &opts.uid
            && meta_str(&old, "uid") != Some(uid.as_str())
        {
            return Err(conflict());
        }
        if opts.dry_run {
            return Ok((*old).clone());
        }
        let last = self.remove_locked(&mut st, res, key, old);
        if *res == ResourceKey::NAMESPACES {
            let victims: Vec<(ResourceKey, ObjKey, Arc<Object>)> = st
                .objects
                .iter()
                .flat_map(|(r, m)| {
                    m.iter()
                        .filter(|((ns, _), _)| ns == name)
                        .map(|(k, o)| (r.clone(), k.clone(), o.clone()))
                })
                .collect();
            for (r, k, o) in victims {
                self.remove_locked(&mut st, &r, k, o);
            }
        }
        Ok(last)
    }

    fn remove_locked(
        &self,
        st: &mut State,
        res: &ResourceKey,
        key: ObjKey,
        old: Arc<Object>,
    ) -> Object {
        if let Some(m) = st.objects.get_mut(res) {
            m.remove(&key);
        }
        let rv = st.rv + 1;
        let mut last = (*old).clone();
        if let Some(m) = last.get_mut("metadata").and_then(Value::as_object_mut) {
            m.insert("resourceVersion".into(), Value::String(rv.to_string()));
        }
        let last = Arc::new(last);
        self.commit(st, rv, EventType::Deleted, res, last.clone(), Some(old));
        (*last).clone()
    }

    fn commit(
        &self,
        st: &mut State,
        rv: u64,
        event_type: EventType,
        res: &ResourceKey,
        object: Arc<Object>,
        old: Option<Arc<Object>>,
    ) {
        st.rv = rv;
        st.history.push_back(StoreEvent {
            resource_version: rv,
            event_type,
            resource: res.clone(),
            object,
            old,
        });
        while st.history.len() > st.capacity {
            if let Some(e) = st.history.pop_front() {
                st.compacted_rv = e.resource_version;
            }
        }
        self.inner.notify.send_replace(rv);
    }

    /// Drops all history: afterwards a watch can only start from the current
    /// resourceVersion (older ones get [`StoreError::Expired`]). For tests.
    pub fn compact_history(&self) {
        let mut st = self.state();
        st.history.clear();
        st.compacted_rv = st.rv;
    }

    /// Subscribes to changes of `resource` (all resources when `None`).
    ///
    /// With `from = Some(R)` the subscription first yields every retained event
    /// after `R` (or fails with `Expired` when `R` predates the history); with
    /// `None` it starts at the current resourceVersion.
    pub fn subscribe(
        &self,
        resource: Option<ResourceKey>,
        from: Option<u64>,
    ) -> Result<Subscription, StoreError> {
        let st = self.state();
        let cursor = match from {
            None => st.rv,
            Some(r) if r < st.compacted_rv => {
                return Err(StoreError::Expired {
                    requested: r,
                    oldest: st.compacted_rv,
                });
            }
            Some(r) => r,
        };
        let rx = self.inner.notify.subscribe();
        drop(st);
        Ok(Subscription {
            store: self.clone(),
            resource,
            cursor,
            rx,
        })
    }

    /// A list snapshot plus a subscription starting exactly after it, taken
    /// atomically (the usual list-then-watch for controllers).
    pub fn list_and_subscribe(
        &self,
        res: &ResourceKey,
        namespace: Option<&str>,
    ) -> (ListSnapshot, Subscription) {
        let snap;
        let rx;
        {
            let st = self.state();
            let items = st
                .objects
                .get(res)
                .map(|m| {
                    m.iter()
                        .filter(|((ns, _), _)| namespace.is_none_or(|n| n == ns))
                        .map(|(_, o)| (**o).clone())
                        .collect()
                })
                .unwrap_or_default();
            snap = ListSnapshot {
                items,
                resource_version: st.rv,
            };
            rx = self.inner.notify.subscribe();
        }
        let sub = Subscription {
            store: self.clone(),
            resource: Some(res.clone()),
            cursor: snap.resource_version,
            rx,
        };
        (snap, sub)
    }
}

fn set_or_remove(obj: &mut Value, field: &str, v: Option<Value>) {
    if let Some(map) = obj.as_object_mut() {
        match v {
            Some(v) => {
                map.insert(field.into(), v);
            }
            None => {
                map.remove(field);
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock cannot leave the maps half-updated in a way
    // that matters more than losing the whole simulator, so keep going.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

fn base36(mut n: u64, width: usize) -> String {
    const DIGITS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789abcdefghi";
    let mut out = Vec::with_capacity(width);
    for _ in 0..width {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
    }
    String::from_utf8_lossy(&out).into_owned()
}
