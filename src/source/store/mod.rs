//! The store: the one task that owns the live view and publishes snapshots.
//!
//! Watch tasks send parsed objects; the store applies them and, at most every
//! `min_interval` (adaptively longer when assembling a snapshot is expensive),
//! assembles an immutable [`Snapshot`] and publishes it on a `watch` channel. Readers
//! never lock, and a slow reader simply skips intermediate snapshots.
//!
//! A (re)list is buffered: objects from `InitApply` go to a side buffer that replaces
//! the resource's objects only at `InitDone`, so a relist never blanks the view and
//! objects deleted while disconnected disappear at the swap.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::history::{self, EvictionRecord, HistoryLog};
use super::objects::{Item, ObjKey, Parsed, Skipped, is_gpu_resource, label};
use super::resources::ResourceKind;
use super::snapshot::{IngestStats, KUEUE_NOT_INSTALLED, KueueStatus, Snapshot};
use super::sync::{ResourceSync, SyncEvent, SyncState};
use super::watch::{SourceEvent, WatchMsg};
use crate::model::parse::finalize;
use crate::model::{ClusterState, PriorityClassKind, Workload};

/// At most this many skipped objects are listed in a snapshot.
const MAX_SKIPPED: usize = 100;

/// One resource's objects.
#[derive(Debug)]
struct KindStore {
    objects: BTreeMap<ObjKey, Item>,
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

/// The store's state (owned by one task; see [`run`]).
#[derive(Debug)]
pub struct Store {
    kinds: BTreeMap<ResourceKind, KindStore>,
    kueue: KueueStatus,
    namespace: Option<String>,
    generation: u64,
    stats: IngestStats,
    history: HistoryLog,
    /// Workload uid → key, to name the preemptor in Kueue's eviction messages.
    workload_uids: HashMap<String, ObjKey>,
}

impl Store {
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
                    objects: BTreeMap::new(),
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
        }
    }

    /// Applies one message from a watch task.
    pub fn apply(&mut self, ev: SourceEvent, now: Timestamp) {
        let started = Instant::now();
        self.stats.events += 1;
        let kind = ev.kind;
        let Some(ks) = self.kinds.get_mut(&kind) else {
            return;
        };
        let mut evictions = Vec::new();
        let mut reindex = false;
        match ev.msg {
            WatchMsg::ListStarted => {
                ks.buffer = Some(Relist::default());
                ks.sync.on(SyncEvent::ListStarted, now);
            }
            WatchMsg::InitApply(p) => {
                ks.sync.on(SyncEvent::Listed, now);
                let buf = ks.buffer.get_or_insert_with(Relist::default);
                // Clone only evicted workloads: this runs for every event.
                if let Some(Item::Workload { workload, .. }) = &p.item
                    && workload.is_evicted()
                {
                    evictions.push(workload.as_ref().clone());
                }
                insert(&mut buf.objects, &mut buf.warnings, p);
            }
            WatchMsg::ListDone => {
                if let Some(buf) = ks.buffer.take() {
                    ks.objects = buf.objects;
                    ks.warnings = buf.warnings;
                    ks.skipped = buf.skipped;
                }
                ks.sync.on(SyncEvent::ListDone, now);
                reindex = kind == ResourceKind::Workload;
            }
            WatchMsg::Apply(p) => {
                ks.sync.on(SyncEvent::Event, now);
                if !ks.skipped.is_empty() {
                    ks.skipped.remove(&label(kind, &p.key));
                }
                if let Some(Item::Workload { workload, .. }) = &p.item {
                    if !workload.uid.is_empty() && !self.workload_uids.contains_key(&workload.uid) {
                        self.workload_uids
                            .insert(workload.uid.clone(), p.key.clone());
                    }
                    if workload.is_evicted() {
                        evictions.push(workload.as_ref().clone());
                    }
                }
                insert(&mut ks.objects, &mut ks.warnings, p);
            }
            WatchMsg::Delete(key) => {
                ks.sync.on(SyncEvent::Event, now);
                if !ks.skipped.is_empty() {
                    ks.skipped.remove(&label(kind, &key));
                }
                ks.objects.remove(&key);
                ks.warnings.remove(&key);
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
        ks.sync.objects = ks.objects.len();
        if reindex {
            self.reindex_workloads();
        }
        for wl in evictions {
            self.record_eviction(&wl);
        }
        self.stats.apply_us += started.elapsed().as_micros() as u64;
    }

    fn reindex_workloads(&mut self) {
        self.workload_uids.clear();
        if let Some(ks) = self.kinds.get(&ResourceKind::Workload) {
            for (key, item) in &ks.objects {
                if let Item::Workload { workload, .. } = item
                    && !workload.uid.is_empty()
                {
                    self.workload_uids.insert(workload.uid.clone(), key.clone());
                }
            }
        }
    }

    fn workload(&self, key: &ObjKey) -> Option<&Workload> {
        match self.kinds.get(&ResourceKind::Workload)?.objects.get(key)? {
            Item::Workload { workload, .. } => Some(workload),
            _ => None,
        }
    }

    fn cluster_queue_of(&self, wl: &Workload) -> Option<String> {
        if let Some(a) = &wl.admission {
            return Some(a.cluster_queue.clone());
        }
        let lq = (wl.namespace.clone(), wl.queue_name.clone()?);
        match self
            .kinds
            .get(&ResourceKind::LocalQueue)?
            .objects
            .get(&lq)?
        {
            Item::LocalQueue(lq) => Some(lq.cluster_queue.clone()),
            _ => None,
        }
    }

    fn record_eviction(&mut self, wl: &Workload) {
        if !wl.is_evicted() {
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

    /// Assembles the snapshot of the current view.
    pub fn snapshot(&mut self, now: Timestamp) -> Snapshot {
        let started = Instant::now();
        let mut st = ClusterState::default();
        let mut priority_missing = Vec::new();
        let mut warning_counts: BTreeMap<String, usize> = BTreeMap::new();
        for (kind, ks) in &self.kinds {
            for lines in ks.warnings.values() {
                for l in lines {
                    *warning_counts.entry(category(l)).or_default() += 1;
                }
            }
            let objects = ks.objects.iter();
            match kind {
                ResourceKind::ResourceFlavor => {
                    st.resource_flavors = collect(objects, |i| match i {
                        Item::ResourceFlavor(x) => Some((x.name.clone(), x.as_ref().clone())),
                        _ => None,
                    })
                }
                ResourceKind::ClusterQueue => {
                    st.cluster_queues = collect(objects, |i| match i {
                        Item::ClusterQueue(x) => Some((x.name.clone(), x.as_ref().clone())),
                        _ => None,
                    })
                }
                ResourceKind::LocalQueue => {
                    st.local_queues = collect(objects, |i| match i {
                        Item::LocalQueue(x) => {
                            Some(((x.namespace.clone(), x.name.clone()), x.as_ref().clone()))
                        }
                        _ => None,
                    })
                }
                ResourceKind::Cohort => {
                    st.cohorts = collect(objects, |i| match i {
                        Item::Cohort(x) => Some((x.name.clone(), x.as_ref().clone())),
                        _ => None,
                    })
                }
                ResourceKind::WorkloadPriorityClass => {
                    st.workload_priority_classes = collect(objects, |i| match i {
                        Item::WorkloadPriorityClass(x) => Some((x.name.clone(), x.clone())),
                        _ => None,
                    })
                }
                ResourceKind::Workload => {
                    st.workloads = collect(objects, |i| match i {
                        Item::Workload {
                            workload,
                            priority_missing: missing,
                        } => {
                            let key = (workload.namespace.clone(), workload.name.clone());
                            if *missing {
                                priority_missing.push(key.clone());
                            }
                            Some((key, workload.as_ref().clone()))
                        }
                        _ => None,
                    })
                }
                ResourceKind::PriorityClass => {
                    st.priority_classes = collect(objects, |i| match i {
                        Item::PriorityClass(x) => Some((x.name.clone(), x.clone())),
                        _ => None,
                    })
                }
                ResourceKind::Namespace => {
                    st.namespaces = collect(objects, |i| match i {
                        Item::Namespace(x) => Some((x.name.clone(), x.clone())),
                        _ => None,
                    })
                }
                ResourceKind::Node => {
                    st.nodes = collect(objects, |i| match i {
                        Item::Node(x) => Some((x.name.clone(), x.as_ref().clone())),
                        _ => None,
                    })
                }
                ResourceKind::Pod => {
                    st.pods = collect(objects, |i| match i {
                        Item::Pod(x) => {
                            Some(((x.namespace.clone(), x.name.clone()), x.as_ref().clone()))
                        }
                        _ => None,
                    })
                }
                ResourceKind::Job | ResourceKind::PyTorchJob => {
                    st.jobs.extend(ks.objects.values().filter_map(|i| match i {
                        Item::Job(j) => Some(j.as_ref().clone()),
                        _ => None,
                    }))
                }
            }
        }
        resolve_priorities(&mut st, &priority_missing);
        drop_pods_off_gpu_nodes(&mut st);
        st.jobs.sort_by(|a, b| {
            (a.creation_timestamp, &a.namespace, &a.name).cmp(&(
                b.creation_timestamp,
                &b.namespace,
                &b.name,
            ))
        });
        finalize(&mut st);
        for (what, n) in warning_counts {
            st.warnings.push(format!("{what}: {n} object(s)"));
        }
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
            st.warnings.push(format!(
                "skipped {} (cannot be read): {}",
                s.object, s.error
            ));
        }
        self.update_kueue_status();
        self.generation += 1;
        self.stats.snapshots += 1;
        self.stats.last_assembly_us = started.elapsed().as_micros() as u64;
        Snapshot {
            generation: self.generation,
            taken_at: now,
            state: st,
            sync: self.kinds.values().map(|k| k.sync.clone()).collect(),
            kueue: self.kueue.clone(),
            skipped,
            namespace: self.namespace.clone(),
            stats: self.stats.clone(),
            evictions: self.history.recent(),
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

fn insert(
    objects: &mut BTreeMap<ObjKey, Item>,
    warnings: &mut BTreeMap<ObjKey, Vec<String>>,
    p: Parsed,
) {
    match p.item {
        Some(item) => {
            objects.insert(p.key.clone(), item);
        }
        // Became irrelevant (a pod that finished or moved off GPU duty).
        None => {
            objects.remove(&p.key);
        }
    }
    if p.warnings.is_empty() {
        warnings.remove(&p.key);
    } else {
        warnings.insert(p.key, p.warnings);
    }
}

/// Collects into a BTreeMap; the input is sorted by key, so the bulk build is linear.
fn collect<'a, K: Ord, V>(
    objects: impl Iterator<Item = (&'a ObjKey, &'a Item)>,
    mut f: impl FnMut(&Item) -> Option<(K, V)>,
) -> BTreeMap<K, V> {
    objects.filter_map(move |(_, i)| f(i)).collect()
}

/// A parser warning's category: the text before its count ("what: 3 (a, b, c)").
fn category(line: &str) -> String {
    match line.rfind(": ") {
        Some(i) if line[i + 2..].starts_with(|c: char| c.is_ascii_digit()) => line[..i].to_string(),
        _ => line.to_string(),
    }
}

/// Workloads without `spec.priority` take their class's value, as the loader does.
fn resolve_priorities(st: &mut ClusterState, keys: &[ObjKey]) {
    for key in keys {
        let Some(wl) = st.workloads.get(key) else {
            continue;
        };
        let Some(class) = &wl.priority_class else {
            continue;
        };
        let value = match class.kind {
            PriorityClassKind::WorkloadPriorityClass => st
                .workload_priority_classes
                .get(&class.name)
                .map(|c| c.value),
            PriorityClassKind::PriorityClass => {
                st.priority_classes.get(&class.name).map(|c| c.value)
            }
        };
        if let (Some(v), Some(wl)) = (value, st.workloads.get_mut(key)) {
            wl.priority = v;
        }
    }
}

/// Bound pods kept only because their node was unknown: drop those on nodes without
/// GPUs unless Kueue manages them or they request GPUs.
fn drop_pods_off_gpu_nodes(st: &mut ClusterState) {
    let nodes = &st.nodes;
    st.pods.retain(|_, p| {
        let kueue = p.labels.keys().any(|k| k.starts_with("kueue.x-k8s.io/"));
        let gpu = p.requests.keys().any(|r| is_gpu_resource(r));
        let on_gpu_node = p.node_name.as_ref().is_none_or(|n| {
            nodes
                .get(n)
                .is_none_or(|node| node.allocatable.keys().any(|r| is_gpu_resource(r)))
        });
        kueue || gpu || on_gpu_node
    });
}

/// Publishing policy.
#[derive(Clone, Debug)]
pub struct PublishOptions {
    /// Minimum time between snapshots (coalescing window).
    pub min_interval: Duration,
}

impl Default for PublishOptions {
    fn default() -> Self {
        PublishOptions {
            min_interval: Duration::from_millis(200),
        }
    }
}

/// The store task: applies events and publishes coalesced snapshots until `cancel`
/// fires or every watch task has gone.
pub async fn run(
    mut store: Store,
    mut rx: mpsc::Receiver<SourceEvent>,
    tx: watch::Sender<Arc<Snapshot>>,
    opts: PublishOptions,
    cancel: CancellationToken,
) {
    let mut interval = opts.min_interval;
    let mut last_publish = Instant::now() - interval;
    let mut dirty = true;
    loop {
        let due = last_publish + interval;
        tokio::select! {
            _ = cancel.cancelled() => return,
            msg = rx.recv() => match msg {
                Some(ev) => {
                    store.apply(ev, Timestamp::now());
                    dirty = true;
                    // Drain what is already queued before considering a publish.
                    while let Ok(ev) = rx.try_recv() {
                        store.apply(ev, Timestamp::now());
                        if Instant::now() >= due {
                            break;
                        }
                    }
                }
                None => return,
            },
            _ = tokio::time::sleep_until(due.into()), if dirty => {}
        }
        if dirty && Instant::now() >= last_publish + interval {
            let snap = store.snapshot(Timestamp::now());
            // Assembling clones the whole model: when that is slow (huge clusters),
            // publish less often so the store keeps up with events.
            let cost = Duration::from_micros(snap.stats.last_assembly_us);
            interval = opts.min_interval.max(cost * 4);
            tx.send_replace(Arc::new(snap));
            last_publish = Instant::now();
            dirty = false;
        }
    }
}
