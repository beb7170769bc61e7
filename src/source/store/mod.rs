//! The store: the one task that owns the live view and publishes snapshots.
//!
//! Watch tasks send parsed objects; the store records them as changes (one map
//! insert per event) and, at most every `min_interval` (adaptively longer when
//! assembling is expensive), hands the batch of changes to an assembler on a blocking
//! thread that folds it into a copy of the previous state. The result is published
//! as an immutable [`Snapshot`] on a `watch` channel. Readers never lock, a slow
//! reader simply skips intermediate snapshots, and the store keeps applying events
//! while a snapshot is assembled. The model objects exist once in the store (in the
//! last assembled state, shared with the published snapshot) plus the pending batch.
//!
//! A (re)list is buffered: objects from `InitApply` go to a side buffer that replaces
//! the resource's objects only at `InitDone`, so a relist never blanks the view and
//! objects deleted while disconnected disappear at the swap.

mod assemble;
mod changes;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::history::{self, EvictionRecord, HistoryLog};
use super::objects::{Item, ObjKey, Skipped, label};
use super::resources::ResourceKind;
use super::snapshot::{IngestStats, KUEUE_NOT_INSTALLED, KueueStatus, Snapshot};
use super::sync::{ResourceSync, SyncEvent, SyncState};
use super::watch::{SourceEvent, WatchMsg};
use crate::model::{ClusterState, LocalQueue, Workload};
use assemble::{Assembled, Assembler};
use changes::{Changes, Known};

/// At most this many skipped objects are listed in a snapshot.
const MAX_SKIPPED: usize = 100;

/// One resource's bookkeeping (its objects live in the state and the changes).
#[derive(Debug)]
struct KindStore {
    warnings: BTreeMap<ObjKey, Vec<String>>,
    skipped: BTreeMap<String, String>,
    /// During a (re)list: the objects, warnings and skips of the new list.
    buffer: Option<Relist>,
    sync: ResourceSync,
}

#[derive(Debug, Default)]
struct Relist {
    objects: BTreeMap<ObjKey, Item>,
    warnings: BTreeMap<ObjKey, Vec<String>>,
    skipped: BTreeMap<String, String>,
}

/// The status a batch handed to the assembler is published with.
struct Frozen {
    sync: Vec<ResourceSync>,
    skipped: Vec<Skipped>,
    warnings: Vec<String>,
}

/// The store's state (owned by one task; see [`run`]).
pub struct Store {
    kinds: BTreeMap<ResourceKind, KindStore>,
    kueue: KueueStatus,
    namespace: Option<String>,
    generation: u64,
    stats: IngestStats,
    history: HistoryLog,
    /// Workload uid → key, to name the preemptor in Kueue's eviction messages.
    workload_uids: HashMap<String, ObjKey>,
    /// Changes since the batch being assembled (or the last state).
    pending: Changes,
    /// A batch is being assembled: its objects have moved to the assembler.
    assembling: bool,
    /// Evictions seen meanwhile, recorded once the batch's state is out (their
    /// preemptor may be in that batch).
    deferred: Vec<Workload>,
    /// The last assembled state.
    base: Arc<ClusterState>,
    /// Owned by the store between assemblies; lent to the blocking thread meanwhile.
    assembler: Option<Assembler>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("generation", &self.generation)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Kueue's configuration, carried into every snapshot's state (read once at start).
    pub fn set_kueue_config(&mut self, cfg: Option<crate::model::kueue_config::KueueConfig>) {
        if let Some(a) = self.assembler.as_mut() {
            let mut base = crate::model::ClusterState::clone(&a.base);
            base.kueue_config = cfg;
            a.base = Arc::new(base);
        }
    }

    /// A store for `kinds`; kinds not watched (Kueue absent) are marked not served.
    pub fn new(
        kinds: &[ResourceKind],
        kueue: KueueStatus,
        namespace: Option<String>,
        history: HistoryLog,
    ) -> Self {
        let now = Timestamp::now();
        let kinds = ResourceKind::ALL
            .iter()
            .map(|&k| {
                let mut sync = ResourceSync::new(k);
                if !kinds.contains(&k) {
                    let message = match &kueue {
                        KueueStatus::NotInstalled { .. } if k.is_kueue() => {
                            "Kueue is not installed".to_string()
                        }
                        _ => super::watch::not_served_text(k),
                    };
                    sync.on(SyncEvent::NotServed(message), now);
                }
                let ks = KindStore {
                    warnings: BTreeMap::new(),
                    skipped: BTreeMap::new(),
                    buffer: None,
                    sync,
                };
                (k, ks)
            })
            .collect();
        Store {
            kinds,
            kueue,
            namespace,
            generation: 0,
            stats: IngestStats::default(),
            history,
            workload_uids: HashMap::new(),
            pending: Changes::default(),
            assembling: false,
            deferred: Vec::new(),
            base: Arc::new(ClusterState::default()),
            assembler: Some(Assembler::default()),
        }
    }

    /// Applies one message from a watch task.
    pub fn apply(&mut self, ev: SourceEvent, now: Timestamp) {
        let started = Instant::now();
        self.stats.events += 1;
        let kind = ev.kind;
        let mut msg = ev.msg;
        // The version a workload update replaces: priority and spec.active changes are
        // timeline events (holds, resumes, reprioritizations), and the new version takes
        // its pod sets.
        let mut previous = None;
        let update = matches!(msg, WatchMsg::Apply(_));
        if kind == ResourceKind::Workload
            && let WatchMsg::Apply(p) | WatchMsg::InitApply(p) = &mut msg
            && let Some((old, priority_missing)) = self.current_workload(&p.key)
        {
            share_pod_sets(old, &mut p.item);
            if update {
                previous = Some((light_copy(old), priority_missing));
            }
        }
        let Some(ks) = self.kinds.get_mut(&kind) else {
            return;
        };
        let mut evictions = Vec::new();
        let mut timeline = Vec::new();
        let mut reindex = None;
        match msg {
            WatchMsg::ListStarted => {
                ks.buffer = Some(Relist::default());
                ks.sync.on(SyncEvent::ListStarted, now);
            }
            WatchMsg::InitApply(p) => {
                ks.sync.on(SyncEvent::Listed, now);
                ks.sync.saw_version(p.resource_version.as_deref());
                let buf = ks.buffer.get_or_insert_with(Relist::default);
                // Clone only evicted workloads: this runs for every event.
                if let Some(Item::Workload { workload, .. }) = &p.item
                    && workload.is_evicted()
                {
                    evictions.push(workload.as_ref().clone());
                }
                set_warnings(&mut buf.warnings, &p.key, p.warnings);
                match p.item {
                    Some(item) => buf.objects.insert(p.key, item),
                    None => buf.objects.remove(&p.key),
                };
            }
            WatchMsg::ListDone => {
                let buf = ks.buffer.take().unwrap_or_default();
                ks.warnings = buf.warnings;
                ks.skipped = buf.skipped;
                if kind == ResourceKind::Workload {
                    reindex = Some(uid_index(&buf.objects));
                }
                self.pending.replace(kind, buf.objects);
                ks.sync.on(SyncEvent::ListDone, now);
            }
            WatchMsg::Apply(p) => {
                ks.sync.on(SyncEvent::Event, now);
                ks.sync.saw_version(p.resource_version.as_deref());
                if !ks.skipped.is_empty() {
                    ks.skipped.remove(&label(kind, &p.key));
                }
                if let Some(Item::Workload {
                    workload,
                    priority_missing,
                }) = &p.item
                {
                    // A priority still to be resolved from its class is no change.
                    let prev = previous
                        .as_ref()
                        .filter(|(_, missing)| !missing && !priority_missing);
                    let history = &self.history;
                    timeline.extend(history::timeline_unseen(
                        workload,
                        prev.map(|(w, _)| w),
                        now.as_millisecond(),
                        |id| history.knows(id),
                    ));
                    if !workload.uid.is_empty() && !self.workload_uids.contains_key(&workload.uid) {
                        self.workload_uids
                            .insert(workload.uid.clone(), p.key.clone());
                    }
                    if workload.is_evicted() {
                        evictions.push(workload.as_ref().clone());
                    }
                }
                set_warnings(&mut ks.warnings, &p.key, p.warnings);
                self.pending.set(kind, p.key, p.item);
            }
            WatchMsg::Delete(key) => {
                ks.sync.on(SyncEvent::Event, now);
                if !ks.skipped.is_empty() {
                    ks.skipped.remove(&label(kind, &key));
                }
                ks.warnings.remove(&key);
                self.pending.set(kind, key, None);
            }
            WatchMsg::Skipped(Skipped { object, error }) => {
                ks.sync.on(SyncEvent::Event, now);
                let skipped = match &mut ks.buffer {
                    Some(b) => &mut b.skipped,
                    None => &mut ks.skipped,
                };
                if !skipped.contains_key(&object) {
                    tracing::warn!(%object, %error, "skipped an object gangplank cannot read");
                }
                skipped.insert(object, error);
            }
            WatchMsg::Forbidden(m) => ks.sync.on(SyncEvent::Forbidden(m), now),
            WatchMsg::NotServed(m) => ks.sync.on(SyncEvent::NotServed(m), now),
            WatchMsg::Failed(m) => {
                tracing::info!(resource = %kind, message = %m, "watch trouble");
                ks.sync.on(SyncEvent::Failed(m), now);
            }
        }
        if let Some(index) = reindex {
            self.workload_uids = index;
        }
        for wl in evictions {
            self.record_eviction(&wl);
        }
        for rec in timeline {
            self.history.record_event(rec);
        }
        self.stats.apply_us += started.elapsed().as_micros() as u64;
    }

    /// The current version of an object: the pending changes, then the last state
    /// (callers wait while a batch is being assembled).
    fn lookup<'a, T>(
        &'a self,
        kind: ResourceKind,
        key: &ObjKey,
        pick: impl Fn(&'a Item) -> Option<&'a T>,
        in_state: impl FnOnce(&'a ClusterState) -> Option<&'a T>,
    ) -> Option<&'a T> {
        match self.pending.get(kind, key) {
            Known::Is(item) => pick(item),
            Known::Gone => None,
            Known::Unknown => in_state(&self.base),
        }
    }

    /// The current version of a Workload, and whether its priority is unresolved.
    fn current_workload(&self, key: &ObjKey) -> Option<(&Workload, bool)> {
        match self.pending.get(ResourceKind::Workload, key) {
            Known::Is(Item::Workload {
                workload,
                priority_missing,
            }) => Some((workload, *priority_missing)),
            Known::Is(_) | Known::Gone => None,
            Known::Unknown => self.base.workloads.get(key).map(|w| (&**w, false)),
        }
    }

    fn workload(&self, key: &ObjKey) -> Option<&Workload> {
        self.lookup(
            ResourceKind::Workload,
            key,
            |i| match i {
                Item::Workload { workload, .. } => Some(workload.as_ref()),
                _ => None,
            },
            |st| st.workloads.get(key).map(|v| &**v),
        )
    }

    fn cluster_queue_of(&self, wl: &Workload) -> Option<String> {
        if let Some(a) = &wl.admission {
            return Some(a.cluster_queue.clone());
        }
        let key = (wl.namespace.clone(), wl.queue_name.clone()?);
        let lq: &LocalQueue = self.lookup(
            ResourceKind::LocalQueue,
            &key,
            |i| match i {
                Item::LocalQueue(lq) => Some(lq.as_ref()),
                _ => None,
            },
            |st| st.local_queues.get(&key),
        )?;
        Some(lq.cluster_queue.clone())
    }

    fn record_eviction(&mut self, wl: &Workload) {
        if !wl.is_evicted() {
            return;
        }
        if self.assembling {
            self.deferred.push(wl.clone());
            return;
        }
        let rec: Option<EvictionRecord> = history::eviction_of(
            wl,
            |uid| self.workload_uids.get(uid).and_then(|k| self.workload(k)),
            |w| self.cluster_queue_of(w),
        );
        if let Some(rec) = rec
            && self.history.record(rec.clone())
        {
            tracing::info!(victim = %rec.victim, preemptor = ?rec.preemptor, reason = %rec.reason, "eviction");
        }
    }

    /// Takes the pending changes and the status to publish them with.
    fn freeze(&mut self) -> (Changes, Frozen) {
        let mut warning_counts: BTreeMap<String, usize> = BTreeMap::new();
        for ks in self.kinds.values() {
            for lines in ks.warnings.values() {
                for l in lines {
                    *warning_counts.entry(category(l)).or_default() += 1;
                }
            }
        }
        let mut warnings: Vec<String> = warning_counts
            .into_iter()
            .map(|(what, n)| format!("{what}: {n} object(s)"))
            .collect();
        let skipped: Vec<Skipped> = self
            .kinds
            .values()
            .flat_map(|ks| ks.skipped.iter())
            .take(MAX_SKIPPED)
            .map(|(object, error)| Skipped {
                object: object.clone(),
                error: error.clone(),
            })
            .collect();
        for s in skipped.iter().take(10) {
            warnings.push(format!(
                "skipped {} (cannot be read): {}",
                s.object, s.error
            ));
        }
        self.update_kueue_status();
        self.assembling = true;
        let frozen = Frozen {
            sync: self.kinds.values().map(|k| k.sync.clone()).collect(),
            skipped,
            warnings,
        };
        (std::mem::take(&mut self.pending), frozen)
    }

    /// Publishes an assembled batch.
    fn publish(&mut self, frozen: Frozen, done: Assembled, now: Timestamp) -> Snapshot {
        self.assembling = false;
        self.base = done.state.clone();
        for wl in std::mem::take(&mut self.deferred) {
            self.record_eviction(&wl);
        }
        let mut sync = frozen.sync;
        for s in &mut sync {
            let kind = self
                .kinds
                .iter()
                .find(|(_, ks)| ks.sync.resource == s.resource)
                .map(|(k, _)| *k);
            if let Some(n) = kind.and_then(|k| done.counts.get(&k)) {
                s.objects = *n;
            }
        }
        for (kind, ks) in &mut self.kinds {
            if let Some(n) = done.counts.get(kind) {
                ks.sync.objects = *n;
            }
        }
        self.generation += 1;
        self.stats.snapshots += 1;
        self.stats.last_assembly_us = done.took.as_micros() as u64;
        Snapshot {
            generation: self.generation,
            taken_at: now,
            state: done.state,
            sync,
            kueue: self.kueue.clone(),
            skipped: frozen.skipped,
            namespace: self.namespace.clone(),
            stats: self.stats.clone(),
            evictions: self.history.recent(),
            events: self.history.recent_events(),
        }
    }

    /// Kueue counts as not installed when neither ClusterQueues nor Workloads are served.
    fn update_kueue_status(&mut self) {
        let not_served = |k: ResourceKind| {
            self.kinds
                .get(&k)
                .is_some_and(|ks| matches!(ks.sync.state, SyncState::NotServed { .. }))
        };
        if not_served(ResourceKind::ClusterQueue) && not_served(ResourceKind::Workload) {
            self.kueue = KueueStatus::NotInstalled {
                message: KUEUE_NOT_INSTALLED.to_string(),
            };
        }
    }
}

fn set_warnings(map: &mut BTreeMap<ObjKey, Vec<String>>, key: &ObjKey, warnings: Vec<String>) {
    if warnings.is_empty() {
        if !map.is_empty() {
            map.remove(key);
        }
    } else {
        map.insert(key.clone(), warnings);
    }
}

/// What the timeline compares of a Workload's version: priority, class and
/// `spec.active` (a light copy).
fn light_copy(w: &Workload) -> Workload {
    Workload {
        priority: w.priority,
        priority_class: w.priority_class.clone(),
        active: w.active,
        ..Workload::default()
    }
}

/// Kueue's podSets never change once a Workload exists: a new version of a Workload
/// takes the pod sets of the version it replaces, so the two share one copy (a re-plan
/// holds the old version while events bring the new one).
fn share_pod_sets(old: &Workload, item: &mut Option<Item>) {
    if let Some(Item::Workload { workload, .. }) = item
        && !Arc::ptr_eq(&old.pod_sets, &workload.pod_sets)
        && old.pod_sets == workload.pod_sets
        && let Some(new) = Arc::get_mut(workload)
    {
        new.pod_sets = old.pod_sets.clone();
    }
}

fn uid_index(objects: &BTreeMap<ObjKey, Item>) -> HashMap<String, ObjKey> {
    objects
        .iter()
        .filter_map(|(key, item)| match item {
            Item::Workload { workload, .. } if !workload.uid.is_empty() => {
                Some((workload.uid.clone(), key.clone()))
            }
            _ => None,
        })
        .collect()
}

/// A parser warning's category: the text before its count ("what: 3 (a, b, c)").
fn category(line: &str) -> String {
    match line.rfind(": ") {
        Some(i) if line[i + 2..].starts_with(|c: char| c.is_ascii_digit()) => line[..i].to_string(),
        _ => line.to_string(),
    }
}

/// Publishing policy.
#[derive(Clone, Debug)]
pub struct PublishOptions {
    /// Minimum time between snapshots (coalescing window).
    pub min_interval: Duration,
    /// "Now" of events and snapshots.
    pub clock: crate::clock::Clock,
}

impl Default for PublishOptions {
    fn default() -> Self {
        PublishOptions {
            min_interval: Duration::from_millis(200),
            clock: crate::clock::Clock::wall(),
        }
    }
}

type Job = tokio::task::JoinHandle<(Assembler, Assembled)>;

/// The store task: applies events and publishes coalesced snapshots until `cancel`
/// fires or every watch task has gone.
pub async fn run(
    mut store: Store,
    mut rx: mpsc::Receiver<Vec<SourceEvent>>,
    tx: watch::Sender<Arc<Snapshot>>,
    opts: PublishOptions,
    cancel: CancellationToken,
) {
    let mut interval = opts.min_interval;
    let mut last_publish = Instant::now() - interval;
    // Something changed since the last batch was frozen (the first snapshot is due
    // even with no event: it carries the initial sync states).
    let mut dirty = true;
    let mut assembling: Option<(Job, Frozen)> = None;
    let mut open = true;
    loop {
        let due = last_publish + interval;
        let idle = assembling.is_none();
        tokio::select! {
            _ = cancel.cancelled() => return,
            msg = rx.recv(), if open => match msg {
                Some(batch) => {
                    let now = opts.clock.now();
                    for ev in batch {
                        store.apply(ev, now);
                    }
                    dirty = true;
                    // Drain what is already queued before considering a publish.
                    while let Ok(batch) = rx.try_recv() {
                        let now = opts.clock.now();
                        for ev in batch {
                            store.apply(ev, now);
                        }
                        if idle && Instant::now() >= due {
                            break;
                        }
                    }
                }
                None => open = false,
            },
            res = async { (&mut assembling.as_mut().expect("guarded").0).await }, if !idle => {
                let (_, frozen) = assembling.take().expect("guarded");
                let Ok((assembler, done)) = res else {
                    tracing::error!("snapshot assembly panicked; the view stops updating");
                    return;
                };
                store.assembler = Some(assembler);
                // Assembling copies the whole model: when that is slow (huge
                // clusters), publish less often so copies do not eat the CPU.
                interval = opts.min_interval.max(done.took * 4);
                let snap = store.publish(frozen, done, opts.clock.now());
                tx.send_replace(Arc::new(snap));
            },
            _ = tokio::time::sleep_until(due.into()), if dirty && idle => {}
        }
        if !open && !dirty && assembling.is_none() {
            return;
        }
        if dirty
            && assembling.is_none()
            && Instant::now() >= last_publish + interval
            && let Some(mut assembler) = store.assembler.take()
        {
            let (changes, frozen) = store.freeze();
            let warnings = frozen.warnings.clone();
            let job = tokio::task::spawn_blocking(move || {
                let done = assembler.assemble(changes, warnings);
                (assembler, done)
            });
            assembling = Some((job, frozen));
            last_publish = Instant::now();
            dirty = false;
        }
    }
}
