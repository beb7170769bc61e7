//! The simulated cluster: the [`ObjectStore`], a simulated clock and the controllers
//! that play Kueue, its job integration, the Kubernetes scheduler (first-fit), the
//! Deployment controller and the jobs' runtime.
//!
//! Controllers act only through the store's Rust API, so every change is a watch
//! event that API clients (kubectl, gangplank) see. The cluster is deterministic for
//! a given scenario and sequence of [`SimCluster::advance_to`] calls: controllers
//! react level-triggered to the objects marked dirty by store events, in name order.
//!
//! Stepping is event-driven: [`SimCluster::advance_to`] processes every due
//! [scheduled event](SimCluster::next_event_time) (scenario arrivals, job
//! completions) in time order and, after each instant, runs the controllers to
//! quiescence ([`SimCluster::settle`]); Kueue's scheduling cycle runs whenever a
//! Workload or queue changed, and again until a cycle changes nothing.

mod events;
mod jobs;
mod json;
mod kueue;
mod limits;
mod mirror;
mod nodes;
mod pods;
mod queue_status;
mod stats;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::Value;

use crate::engine::SchedulerMemory;
use crate::sim::clock::SimClock;
use crate::sim::resources::ResourceKey;
use crate::sim::scenario::Scenario;
use crate::sim::store::{
    DeleteOptions, EventType, ObjectStore, StoreError, StoreEvent, StoreOptions, Subscription,
    UpdateScope, WriteOptions,
};

pub use limits::SimLimits;
pub use stats::{GroupSummary, SimSummary, TimelineEvent};

use mirror::Mirror;
use nodes::NodeIndex;

/// 2026-01-01T00:00:00Z: the default start of simulated time (headless runs).
pub const DEFAULT_START_MS: i64 = 1_767_225_600_000;

/// Controller rounds per instant before the simulator gives up settling (a guard
/// against controllers that keep changing each other's objects).
const MAX_ROUNDS: usize = 200_000;
/// Scheduling cycles per instant before giving up.
const MAX_CYCLES_PER_INSTANT: usize = 5_000;
/// Times one workload may be preempted at one instant before the simulator calls it
/// a preemption loop and stops scheduling until the next event. With zero-latency
/// controllers, two workloads that keep reclaiming quota from each other would
/// otherwise loop forever without time passing (a real cluster spreads the same loop
/// over pod-termination delays).
const MAX_PREEMPTIONS_PER_INSTANT: u32 = 3;

/// How to build a [`SimCluster`].
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// Simulated time at the start, ms since the epoch.
    pub start_ms: i64,
    /// Keep the event timeline (admitted, preempted, …) for reports.
    pub record_timeline: bool,
    /// Store events kept for watch replay.
    pub history_capacity: usize,
    /// How many times faster than the clock the scenario's story runs: its
    /// `sim.gangplank.io/at` offsets and jobs' `sim.gangplank.io/duration`s are divided by
    /// it (1 for headless runs; `sim serve --speed N` sets N, see [`SimCluster::set_speed`]).
    pub speed: f64,
    /// Bounds on what objects can make the controllers allocate.
    pub limits: SimLimits,
}

impl Default for SimOptions {
    fn default() -> Self {
        Self {
            start_ms: DEFAULT_START_MS,
            record_timeline: true,
            history_capacity: 50_000,
            speed: 1.0,
            limits: SimLimits::default(),
        }
    }
}

/// Work counters (for benchmarks and diagnostics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimCounters {
    /// Scheduled events processed (arrivals, completions).
    pub scheduled_events: u64,
    /// Store events the controllers consumed.
    pub store_events: u64,
    /// Kueue scheduling cycles run.
    pub cycles: u64,
    /// Writes the controllers made.
    pub writes: u64,
}

/// A job-like object (Job, PyTorchJob, …) or other namespaced object reference.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct ObjRef {
    pub res: ResourceKey,
    pub ns: String,
    pub name: String,
}

/// Something due at a simulated instant.
#[derive(Clone, Debug)]
enum Scheduled {
    /// A scenario object appears.
    Arrival {
        resource: ResourceKey,
        object: Value,
    },
    /// A job's run ends (ignored when `run_id` is no longer the job's current run).
    Completion { job: ObjRef, run_id: u64 },
}

/// A job that is running: admitted, unsuspended, pods created.
#[derive(Clone, Debug)]
pub(crate) struct Run {
    pub id: u64,
    pub started_ms: i64,
    pub workload: (String, String),
    pub gpus: i128,
}

/// Objects the controllers must look at.
#[derive(Debug, Default)]
struct Dirty {
    jobs: BTreeSet<ObjRef>,
    deleted_jobs: BTreeSet<ObjRef>,
    workloads: BTreeSet<(String, String)>,
    deployments: BTreeSet<(String, String)>,
    deployment_status: BTreeSet<(String, String)>,
    /// Nodes without a `Ready` condition: their (simulated) kubelet reports in.
    node_status: BTreeSet<String>,
    all_jobs: bool,
    bind: bool,
    cycle: bool,
    queue_status: bool,
}

impl Dirty {
    fn controller_work(&self) -> bool {
        !self.jobs.is_empty()
            || !self.deleted_jobs.is_empty()
            || !self.workloads.is_empty()
            || !self.deployments.is_empty()
            || !self.deployment_status.is_empty()
            || !self.node_status.is_empty()
            || self.all_jobs
            || self.bind
    }
}

/// The simulated cluster. See the module documentation.
pub struct SimCluster {
    store: ObjectStore,
    clock: SimClock,
    sub: Subscription,
    history_capacity: usize,
    mirror: Mirror,
    memory: SchedulerMemory,
    queue: BTreeMap<(i64, u64), Scheduled>,
    seq: u64,
    dirty: Dirty,
    /// resourceVersions of our own writes that need no reaction (see `write_quiet`).
    quiet_rvs: HashSet<u64>,
    /// ClusterQueues whose quota was released (Kueue's requeuer is notified).
    notify_cqs: BTreeSet<String>,
    wl_of_job: BTreeMap<ObjRef, String>,
    job_of_wl: BTreeMap<(String, String), ObjRef>,
    runs: BTreeMap<ObjRef, Run>,
    run_seq: u64,
    nodes: NodeIndex,
    /// (owner kind, namespace, owner name) → pod names.
    pods_of_owner: BTreeMap<(String, String, String), BTreeSet<String>>,
    stats: stats::Stats,
    counters: SimCounters,
    warnings: Vec<String>,
    cycles_this_instant: usize,
    /// Preemptions per workload at the current instant (loop detection).
    preempted_this_instant: HashMap<String, u32>,
    /// Scheduling is paused until the next instant (a loop was detected).
    paused: bool,
    /// Queue status last written, per (resource, namespace, name): unchanged status
    /// is not written again.
    written_status: HashMap<(ResourceKey, String, String), u64>,
    totals: queue_status::QueueTotals,
    /// Story seconds per clock second (see [`SimOptions::speed`]).
    speed: f64,
    limits: SimLimits,
    events: events::Events,
    /// The total pod cap was reached and said so once.
    pod_cap_warned: bool,
}

impl std::fmt::Debug for SimCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimCluster")
            .field("now_ms", &self.clock.now_ms())
            .field("counters", &self.counters)
            .finish()
    }
}

impl SimCluster {
    /// An empty cluster at `options.start_ms`.
    pub fn new(options: SimOptions) -> Self {
        let store = ObjectStore::with_options(StoreOptions {
            history_capacity: options.history_capacity,
        });
        // Uids (and so Workload names) depend only on the order of creation.
        store.set_uid_seed(0x5eed_9a9e_0000_0000 ^ options.start_ms as u64);
        let clock = SimClock::new(options.start_ms);
        let c = clock.clone();
        store.set_clock(c.clock());
        let sub = store
            .subscribe(None, None)
            .expect("a fresh subscription cannot be expired");
        SimCluster {
            store,
            clock,
            sub,
            history_capacity: options.history_capacity.max(2),
            mirror: Mirror::default(),
            memory: SchedulerMemory::default(),
            queue: BTreeMap::new(),
            seq: 0,
            dirty: Dirty::default(),
            quiet_rvs: HashSet::new(),
            notify_cqs: BTreeSet::new(),
            wl_of_job: BTreeMap::new(),
            job_of_wl: BTreeMap::new(),
            runs: BTreeMap::new(),
            run_seq: 0,
            nodes: NodeIndex::default(),
            pods_of_owner: BTreeMap::new(),
            stats: stats::Stats::new(options.record_timeline),
            counters: SimCounters::default(),
            warnings: Vec::new(),
            cycles_this_instant: 0,
            preempted_this_instant: HashMap::new(),
            paused: false,
            written_status: HashMap::new(),
            totals: queue_status::QueueTotals::default(),
            speed: valid_speed(options.speed),
            limits: options.limits,
            events: events::Events::default(),
            pod_cap_warned: false,
        }
    }

    /// A cluster with `scenario` loaded; objects due at the start already exist and
    /// the controllers have settled.
    pub fn from_scenario(scenario: &Scenario, options: SimOptions) -> Self {
        let mut c = Self::new(options);
        c.load(scenario);
        let now = c.now_ms();
        c.advance_to(now);
        c
    }

    /// Schedules a scenario's objects relative to the simulation start (objects due
    /// in the past appear at the next [`advance_to`](Self::advance_to)).
    pub fn load(&mut self, scenario: &Scenario) {
        let start = self.clock.start_ms();
        for o in &scenario.objects {
            let at = (start + self.story_to_clock(o.at_ms)).max(self.clock.now_ms());
            self.schedule(
                at,
                Scheduled::Arrival {
                    resource: o.resource.clone(),
                    object: o.object.clone(),
                },
            );
        }
    }

    /// A story duration (scenario offset, job duration) in clock milliseconds.
    pub(crate) fn story_to_clock(&self, ms: i64) -> i64 {
        (ms as f64 / self.speed).round() as i64
    }

    /// The story's speed (see [`SimOptions::speed`]).
    pub fn speed(&self) -> f64 {
        self.speed
    }

    /// Makes the story run `speed` times faster than the clock from now on: every
    /// scheduled arrival and job completion still ahead keeps its share of the story
    /// but reaches it `speed / old speed` times sooner. Non-positive or non-finite
    /// values are ignored.
    ///
    /// This is how `sim serve --speed N` works: the clock itself stays the wall clock,
    /// so every timestamp is a real time in the past and ages are real (see
    /// docs/simulator.md, "Time").
    pub fn set_speed(&mut self, speed: f64) {
        if !(speed.is_finite() && speed > 0.0) || speed == self.speed {
            return;
        }
        let now = self.clock.now_ms();
        let ratio = self.speed / speed;
        let queue = std::mem::take(&mut self.queue);
        for ((at, seq), what) in queue {
            let at = now + ((at - now).max(0) as f64 * ratio).round() as i64;
            self.queue.insert((at, seq), what);
        }
        self.speed = speed;
        // A fast story puts events less than a second apart; Kueue orders workloads
        // by these stamps, so they keep milliseconds then.
        self.clock.set_millis(speed > 1.0);
        self.store.set_millis(speed > 1.0);
    }

    fn schedule(&mut self, at: i64, what: Scheduled) {
        self.seq += 1;
        self.queue.insert((at, self.seq), what);
    }

    /// The store (clone it to serve it over HTTP).
    pub fn store(&self) -> &ObjectStore {
        &self.store
    }

    /// The simulated clock.
    pub fn clock(&self) -> &SimClock {
        &self.clock
    }

    /// The allocation caps (see [`SimLimits`]).
    pub fn limits(&self) -> SimLimits {
        self.limits
    }

    /// Current simulated time, ms since the epoch.
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// When the next scheduled event (arrival, completion) is due, if any.
    pub fn next_event_time(&self) -> Option<i64> {
        self.queue.keys().next().map(|(t, _)| *t)
    }

    /// Whether the store has changes the controllers have not looked at yet (e.g. a
    /// write made through the API since the last [`settle`](Self::settle)).
    pub fn has_unprocessed_changes(&self) -> bool {
        self.store.resource_version() > self.sub.cursor()
    }

    /// Work counters so far.
    pub fn counters(&self) -> SimCounters {
        self.counters
    }

    /// Kueue's scheduler memory (inadmissible sets, sticky preemptors).
    pub fn scheduler_memory(&self) -> &SchedulerMemory {
        &self.memory
    }

    /// Things the simulator could not do (unparseable objects, missing priority
    /// classes, …), oldest first.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The recorded timeline (empty unless `record_timeline`).
    pub fn timeline(&self) -> &[TimelineEvent] {
        self.stats.timeline()
    }

    /// Per-ClusterQueue and per-priority-class figures up to now.
    pub fn summary(&self) -> SimSummary {
        self.stats.summary(self)
    }

    /// Processes the next scheduled instant; `false` when nothing is scheduled.
    pub fn step(&mut self) -> bool {
        match self.next_event_time() {
            Some(t) => {
                self.advance_to(t);
                true
            }
            None => false,
        }
    }

    /// Advances simulated time to `t` (ms since the epoch), processing every due
    /// event in time order and settling the controllers after each instant. Also
    /// settles at `t` itself, so changes made through the API are reacted to.
    pub fn advance_to(&mut self, t: i64) {
        while let Some(at) = self.next_event_time().filter(|at| *at <= t) {
            self.clock.advance(at);
            self.new_instant();
            while let Some(entry) = self.queue.first_entry() {
                if entry.key().0 != at {
                    break;
                }
                let what = entry.remove();
                self.counters.scheduled_events += 1;
                self.run_scheduled(what);
                self.maybe_ingest();
            }
            self.settle();
        }
        if t > self.clock.now_ms() {
            self.clock.advance(t);
            self.new_instant();
        }
        self.settle();
    }

    /// Advances simulated time by `ms`.
    pub fn advance_by(&mut self, ms: i64) {
        let t = self.clock.now_ms() + ms;
        self.advance_to(t);
    }

    fn new_instant(&mut self) {
        self.cycles_this_instant = 0;
        self.preempted_this_instant.clear();
        self.paused = false;
    }

    fn run_scheduled(&mut self, what: Scheduled) {
        match what {
            Scheduled::Arrival { resource, object } => {
                if let Err(e) = self
                    .store
                    .create(&resource, object, WriteOptions::default())
                {
                    self.warn(format!("scenario object not created: {e}"));
                }
                self.counters.writes += 1;
            }
            Scheduled::Completion { job, run_id } => self.complete_run(&job, run_id),
        }
    }

    /// Runs the controllers until nothing changes at the current instant.
    pub fn settle(&mut self) {
        for _ in 0..MAX_ROUNDS {
            self.ingest();
            if self.dirty.controller_work() {
                self.run_controllers();
                continue;
            }
            if !self.notify_cqs.is_empty() {
                for cq in std::mem::take(&mut self.notify_cqs) {
                    // Nothing parked: nothing to requeue (and building the engine's
                    // view for the requeuer is not free).
                    if self.memory.inadmissible.is_empty() {
                        break;
                    }
                    self.memory.notify_quota_change(&self.mirror.state, &cq);
                }
                self.dirty.cycle = true;
                continue;
            }
            if self.dirty.cycle {
                self.dirty.cycle = false;
                if self.paused {
                    continue;
                }
                if self.cycles_this_instant >= MAX_CYCLES_PER_INSTANT {
                    self.paused = true;
                    self.warn(format!(
                        "more than {MAX_CYCLES_PER_INSTANT} scheduling cycles at {}; \
                         scheduling paused until the next event",
                        crate::sim::clock::format_offset(self.clock.elapsed_ms())
                    ));
                    continue;
                }
                self.cycles_this_instant += 1;
                if self.run_cycle() {
                    self.dirty.cycle = true;
                }
                continue;
            }
            if self.dirty.queue_status {
                self.dirty.queue_status = false;
                self.write_queue_status();
                continue;
            }
            return;
        }
        self.warn("controllers did not settle; giving up at this instant".into());
    }

    fn run_controllers(&mut self) {
        if std::mem::take(&mut self.dirty.all_jobs) {
            for res in jobs::JOB_RESOURCES {
                for o in self.store.list(&res.res, None).items {
                    self.dirty.jobs.insert(ObjRef {
                        res: res.res.clone(),
                        ns: json::namespace(&o).to_string(),
                        name: json::name(&o).to_string(),
                    });
                }
            }
        }
        for j in std::mem::take(&mut self.dirty.deleted_jobs) {
            self.on_job_deleted(&j);
        }
        for j in std::mem::take(&mut self.dirty.jobs) {
            self.reconcile_job(&j);
        }
        for w in std::mem::take(&mut self.dirty.workloads) {
            self.reconcile_workload(&w);
        }
        for d in std::mem::take(&mut self.dirty.deployments) {
            self.reconcile_deployment(&d);
        }
        if std::mem::take(&mut self.dirty.bind) {
            self.bind_pending_pods();
        }
        for d in std::mem::take(&mut self.dirty.deployment_status) {
            self.write_deployment_status(&d);
        }
        for n in std::mem::take(&mut self.dirty.node_status) {
            self.report_node_status(&n);
        }
    }

    /// Consumes the store events written since the last call.
    fn ingest(&mut self) {
        loop {
            let events = match self.sub.try_next() {
                Ok(e) => e,
                Err(_) => {
                    self.resync();
                    return;
                }
            };
            if events.is_empty() {
                return;
            }
            for e in &events {
                self.counters.store_events += 1;
                self.on_event(e);
            }
        }
    }

    /// Ingests early when the store's history is about to drop unread events.
    fn maybe_ingest(&mut self) {
        let lag = self
            .store
            .resource_version()
            .saturating_sub(self.sub.cursor());
        if lag as usize > self.history_capacity / 2 {
            self.ingest();
        }
    }

    /// Rebuilds every index from a full list (after falling behind the history).
    fn resync(&mut self) {
        self.warn("controllers fell behind the store's history; resynchronising".into());
        self.sub = self
            .store
            .subscribe(None, None)
            .expect("a fresh subscription cannot be expired");
        self.mirror = Mirror::default();
        self.nodes.clear_pods();
        self.pods_of_owner.clear();
        for def in crate::sim::resources::all() {
            let res = def.key();
            for o in self.store.list(&res, None).items {
                let ev = StoreEvent {
                    resource_version: 0,
                    event_type: EventType::Added,
                    resource: res.clone(),
                    object: std::sync::Arc::new(o),
                    old: None,
                };
                self.on_event(&ev);
            }
        }
        self.dirty.all_jobs = true;
        self.dirty.cycle = true;
        self.totals.rebuild = true;
        self.dirty.queue_status = true;
    }

    fn on_event(&mut self, e: &StoreEvent) {
        let quiet = self.quiet_rvs.remove(&e.resource_version);
        let res = &e.resource;
        let obj: &Value = &e.object;
        let ns = json::namespace(obj).to_string();
        let name = json::name(obj).to_string();
        let deleted = e.event_type == EventType::Deleted;
        if *res == ResourceKey::EVENTS {
            return;
        }
        if *res == ResourceKey::PODS {
            self.on_pod_event(e);
            return;
        }
        if *res == ResourceKey::DEPLOYMENTS {
            self.dirty.deployments.insert((ns, name));
            return;
        }
        if let Some(kind) = jobs::job_kind(res) {
            if quiet {
                return;
            }
            let j = ObjRef {
                res: kind.res.clone(),
                ns,
                name,
            };
            if deleted {
                self.dirty.jobs.remove(&j);
                self.dirty.deleted_jobs.insert(j);
            } else {
                self.dirty.deleted_jobs.remove(&j);
                self.dirty.jobs.insert(j);
            }
            return;
        }
        let wl_key = (*res == ResourceKey::WORKLOADS).then(|| (ns.clone(), name.clone()));
        let contribution = |c: &SimCluster, k: &(String, String)| {
            let st = &c.mirror.state;
            st.workloads
                .get(k)
                .map(|w| queue_status::contribution(st, w))
        };
        let before = wl_key.as_ref().and_then(|k| contribution(self, k));
        if let Err(err) = self.mirror.apply(e) {
            self.warn(format!("{res} {name}: ignored by the controllers: {err}"));
        }
        if let Some(k) = &wl_key {
            let after = contribution(self, k);
            if before != after {
                if let Some(b) = &before {
                    self.totals.apply(b, -1);
                }
                if let Some(a) = &after {
                    self.totals.apply(a, 1);
                }
                self.dirty.queue_status = true;
            }
        }
        if *res == ResourceKey::NODES {
            if !deleted && json::condition(obj, "Ready").is_none() {
                self.dirty.node_status.insert(name.clone());
            }
            match self.mirror.state.nodes.get(&name) {
                Some(n) if !deleted => self.nodes.upsert(n),
                _ => self.nodes.remove(&name),
            }
            self.dirty.bind = true;
        } else if *res == ResourceKey::WORKLOADS {
            self.on_workload_event(e, quiet);
        } else if *res == ResourceKey::PRIORITY_CLASSES
            || *res == ResourceKey::WORKLOAD_PRIORITY_CLASSES
        {
            self.dirty.all_jobs = true;
        } else if *res == ResourceKey::CLUSTER_QUEUES
            || *res == ResourceKey::LOCAL_QUEUES
            || *res == ResourceKey::COHORTS
            || *res == ResourceKey::RESOURCE_FLAVORS
            || *res == ResourceKey::NAMESPACES
        {
            let spec_changed = match (&e.old, deleted) {
                (Some(old), false) => {
                    spec_of(old) != spec_of(obj) || labels_of(old) != labels_of(obj)
                }
                _ => true,
            };
            if spec_changed {
                self.written_status
                    .remove(&(res.clone(), ns.clone(), name.clone()));
                self.totals.rebuild = true;
                self.dirty.cycle = true;
                self.dirty.queue_status = true;
                // A quota or queue change is a reason for Kueue to retry parked workloads.
                let cqs: Vec<String> = self.mirror.state.cluster_queues.keys().cloned().collect();
                self.notify_cqs.extend(cqs);
            }
        }
    }

    fn warn(&mut self, message: String) {
        tracing::warn!(target: "gangplank::sim", "{message}");
        if self.warnings.len() < 1000 {
            self.warnings.push(message);
        }
    }

    // --- write helpers: every controller write goes through these.

    fn create(&mut self, res: &ResourceKey, obj: Value) -> Option<Value> {
        self.counters.writes += 1;
        let out = match self.store.create(res, obj, WriteOptions::default()) {
            Ok(o) => Some(o),
            Err(e) => {
                self.warn(format!("create {res}: {e}"));
                None
            }
        };
        self.maybe_ingest();
        out
    }

    fn write(
        &mut self,
        res: &ResourceKey,
        ns: &str,
        name: &str,
        scope: UpdateScope,
        f: impl FnOnce(&mut Value),
    ) -> Option<Value> {
        self.counters.writes += 1;
        let ns = (!ns.is_empty()).then_some(ns);
        let out = self
            .store
            .modify(res, ns, name, scope, WriteOptions::default(), |o| {
                f(o);
                Ok(())
            });
        self.maybe_ingest();
        match out {
            Ok(o) => Some(o),
            Err(StoreError::NotFound { .. }) => None,
            Err(e) => {
                self.warn(format!("update {res} {name}: {e}"));
                None
            }
        }
    }

    /// A write whose event needs no reaction: it does not mark the object dirty
    /// (jobs) or trigger another scheduling cycle (workloads).
    fn write_quiet(
        &mut self,
        res: &ResourceKey,
        ns: &str,
        name: &str,
        scope: UpdateScope,
        f: impl FnOnce(&mut Value),
    ) -> Option<Value> {
        let before = self.store.resource_version();
        let out = self.write(res, ns, name, scope, f);
        if let Some(rv) = out
            .as_ref()
            .and_then(|o| json::str_at(o, "/metadata/resourceVersion"))
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|rv| *rv > before)
        {
            self.quiet_rvs.insert(rv);
        }
        out
    }

    fn delete(&mut self, res: &ResourceKey, ns: &str, name: &str) {
        self.counters.writes += 1;
        let ns = (!ns.is_empty()).then_some(ns);
        let _ = self.store.delete(res, ns, name, &DeleteOptions::default());
        self.maybe_ingest();
    }

    fn get(&self, res: &ResourceKey, ns: &str, name: &str) -> Option<Value> {
        let ns = (!ns.is_empty()).then_some(ns);
        self.store.get(res, ns, name)
    }
}

fn valid_speed(speed: f64) -> f64 {
    if speed.is_finite() && speed > 0.0 {
        speed
    } else {
        1.0
    }
}

fn spec_of(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("status");
        m.remove("metadata");
    }
    v
}

fn labels_of(v: &Value) -> Option<&Value> {
    v.pointer("/metadata/labels")
}
