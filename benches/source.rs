//! Live-source benchmark: the simulator's API server serves a cluster and the live
//! source (in a child process) reads it. Cases:
//!
//! * `pods-heavy`: 5,000 nodes, 100,000 pods, 50,000 Workloads, 100 ClusterQueues;
//! * `flat`, `hyperpod`, `hierarchical`: the shapes of `gangplank sim generate`
//!   (`gangplank::sim::generate`, as `benches/plan_f.rs` reads them) at scale 100
//!   (≈ 80k objects: 5,000 nodes, 20,000 admitted and 50,000 pending Workloads, jobs).
//!
//! Per case, in one run:
//!
//! * gangplank's time from start to the first complete snapshot, beside
//!   `kubectl get <every watched resource that has objects> -A -o json` against the
//!   same server;
//! * the watch-event ingest rate (events/s parsed, stored and published: Workload
//!   priority changes queued while the client is stopped) and the re-plans made
//!   meanwhile, with the cost per re-plan;
//! * the source's resident memory (VmHWM) and the heap the counting allocator saw.
//!
//! The source runs in a child process (this binary re-executed) so that its VmHWM
//! does not include the simulator's store, which lives in the parent.
//!
//! Run: `cargo bench --bench source` (a tenth of the size: pods-heavy / 10, shapes at
//! scale 10, 10,000 events); `GANGPLANK_BENCH_LARGE=1 cargo bench --bench source` for
//! the sizes above and 100,000 events. `GANGPLANK_BENCH_CASES=flat,pods` picks cases
//! (by name prefix); `GANGPLANK_BENCH_WRAP="heaptrack -o /tmp/src"` runs the client
//! under a profiler; `GANGPLANK_BENCH_SKIP_KUBECTL=1` skips kubectl.
//! Goals: first snapshot ≤ 1.5× kubectl, ≥ 20,000 events/s, ≤ 500 MiB VmHWM.

use std::alloc::{GlobalAlloc, Layout};

use mimalloc::MiMalloc as System;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use gangplank::sim::generate::{Shape, ShapeKind, generate};
use gangplank::sim::{
    ObjectStore, ResourceKey, ServerOptions, StoreOptions, UpdateScope, WriteOptions, serve,
};
use gangplank::source::replan::{self, ReplanOptions};
use gangplank::source::{self, ClusterArgs, ResourceKind, SourceOptions};
use serde_json::{Value, json};

const ROLE: &str = "GANGPLANK_BENCH_ROLE";

/// Counts live heap bytes, to tell the model's size from allocator overhead in RSS.
/// Allocates with mimalloc, as the `gangplank` binary does (`src/main.rs`).
struct CountingAlloc;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Off with `GANGPLANK_BENCH_NO_HEAP_COUNT=1`: the shared counter is one contended
/// atomic per allocation and free, which costs ingest a few percent.
static COUNT: AtomicBool = AtomicBool::new(true);

unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() && COUNT.load(Ordering::Relaxed) {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            // Read first: a write on every allocation bounces the cache line between
            // cores and made the measurement itself a bottleneck of ingest.
            if now > PEAK.load(Ordering::Relaxed) {
                PEAK.fetch_max(now, Ordering::Relaxed);
            }
        }
        ptr
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        if COUNT.load(Ordering::Relaxed) {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
    }
    /// The allocator's own realloc (grows in place when it can), as in the binary.
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() && COUNT.load(Ordering::Relaxed) {
            if new_size >= layout.size() {
                let now = LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed)
                    + (new_size - layout.size());
                if now > PEAK.load(Ordering::Relaxed) {
                    PEAK.fetch_max(now, Ordering::Relaxed);
                }
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        new
    }
}

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

fn heap() -> String {
    format!(
        "heap live {} MiB, heap peak {} MiB",
        LIVE.load(Ordering::Relaxed) >> 20,
        PEAK.load(Ordering::Relaxed) >> 20
    )
}

/// The pods-heavy cluster of the first version of this bench.
struct Scale {
    nodes: usize,
    pods: usize,
    workloads: usize,
    queues: usize,
}

/// One measured cluster.
enum Case {
    /// 5,000 nodes, 100,000 pods, 50,000 Workloads (large run; a tenth by default).
    PodsHeavy(Scale),
    /// A shape of `gangplank sim generate` (scale 100 ≈ 85k objects; 10 by default).
    Shape(ShapeKind, usize),
}

impl Case {
    fn name(&self) -> String {
        match self {
            Case::PodsHeavy(_) => "pods-heavy".into(),
            Case::Shape(k, s) => format!("{}@{s}", k.name()),
        }
    }
}

fn main() {
    if std::env::var_os("GANGPLANK_BENCH_NO_HEAP_COUNT").is_some() {
        COUNT.store(false, Ordering::Relaxed);
    }
    if std::env::var(ROLE).is_ok_and(|r| r == "client") {
        client();
        return;
    }
    // `--quick` is the default size (kept for old command lines).
    let large = std::env::var("GANGPLANK_BENCH_LARGE").is_ok_and(|v| v == "1");
    let d = if large { 1 } else { 10 };
    let scale = if large { 100 } else { 10 };
    let events = 100_000 / d;
    let only = std::env::var("GANGPLANK_BENCH_CASES").ok();
    let wanted = |name: &str| {
        only.as_deref()
            .is_none_or(|o| o.split(',').any(|c| name.starts_with(c.trim())))
    };
    let mut cases = vec![Case::PodsHeavy(Scale {
        nodes: 5_000 / d,
        pods: 100_000 / d,
        workloads: 50_000 / d,
        queues: 100,
    })];
    cases.extend(ShapeKind::ALL.into_iter().map(|k| Case::Shape(k, scale)));
    cases.retain(|c| wanted(&c.name()));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut rows = Vec::new();
    for case in &cases {
        rows.push(rt.block_on(parent(case, events)));
    }
    summary(&rows);
}

/// The figures of one case, for the summary table.
struct Row {
    case: String,
    objects: usize,
    kubectl: Option<Duration>,
    first: Option<f64>,
    events_per_s: Option<f64>,
    cpu_us: Option<f64>,
    hwm_kib: Option<u64>,
}

fn summary(rows: &[Row]) {
    println!();
    println!("summary (goals: first snapshot ≤ 1.5× kubectl, ≥ 20000 events/s, VmHWM ≤ 500 MiB)");
    println!(
        "{:<18} {:>8} {:>12} {:>18} {:>12} {:>12} {:>12}",
        "case", "objects", "kubectl", "first snapshot", "events/s", "CPU/event", "VmHWM"
    );
    for r in rows {
        let first = match (r.first, r.kubectl) {
            (Some(f), Some(k)) => format!("{f:.2} s ({:.2}×)", f / k.as_secs_f64()),
            (Some(f), None) => format!("{f:.2} s"),
            _ => "n/a".into(),
        };
        println!(
            "{:<18} {:>8} {:>12} {:>18} {:>12} {:>12} {:>12}",
            r.case,
            r.objects,
            r.kubectl
                .map_or("skipped".into(), |d| format!("{:.2} s", d.as_secs_f64())),
            first,
            r.events_per_s.map_or("n/a".into(), |e| format!("{e:.0}")),
            r.cpu_us.map_or("n/a".into(), |c| format!("{c:.0} µs")),
            r.hwm_kib
                .map_or("n/a".into(), |h| format!("{} MiB", h >> 10)),
        );
    }
}

// === parent: the server, kubectl, and the event generator ===

fn res(group: &str, plural: &str) -> ResourceKey {
    ResourceKey::new(group, plural)
}

fn fill(store: &ObjectStore, s: &Scale) -> Vec<(String, String)> {
    let mut keys = Vec::with_capacity(s.workloads);
    let create = |r: &ResourceKey, v: Value| {
        store.create(r, v, WriteOptions::default()).expect("create");
    };
    let kueue = |p: &str| res("kueue.x-k8s.io", p);
    for f in ["a100", "h100"] {
        create(
            &kueue("resourceflavors"),
            json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
            "metadata": {"name": f}, "spec": {"nodeLabels": {"gpu.class": f}}}),
        );
    }
    let gpus_per_queue = (s.nodes * 8 / s.queues).max(1);
    for q in 0..s.queues {
        create(
            &res("", "namespaces"),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": format!("ns-{q}")}}),
        );
        create(
            &kueue("clusterqueues"),
            json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": format!("cq-{q}")}, "spec": {"cohortName": format!("cohort-{}", q / 10), "namespaceSelector": {},
            "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
            "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [
                {"name": "a100", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": (gpus_per_queue * 3 / 4).to_string()}]},
                {"name": "h100", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": (gpus_per_queue / 4).to_string()}]}]}]}}),
        );
        create(
            &kueue("localqueues"),
            json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": format!("ns-{q}")}, "spec": {"clusterQueue": format!("cq-{q}")}}),
        );
    }
    for (name, value) in [("low", 100), ("normal", 1000), ("high", 10000)] {
        create(
            &kueue("workloadpriorityclasses"),
            json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
            "metadata": {"name": name}, "value": value}),
        );
    }
    for n in 0..s.nodes {
        let flavor = if n % 4 == 3 { "h100" } else { "a100" };
        create(
            &res("", "nodes"),
            json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": format!("node-{n}"), "labels": {"gpu.class": flavor, "kubernetes.io/hostname": format!("node-{n}")}},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
            "status": {"allocatable": {"nvidia.com/gpu": "8", "cpu": "96", "memory": "1Ti", "pods": "110"},
                "capacity": {"nvidia.com/gpu": "8", "cpu": "96", "memory": "1Ti", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status"}],
                "nodeInfo": {"kubeletVersion": "v1.33.0", "containerRuntimeVersion": "containerd://2.0"}}}),
        );
    }
    // Admitted workloads own the pods (pods_per_admitted each); the rest are pending.
    let pods_per_admitted = 5;
    let admitted = (s.pods / pods_per_admitted).min(s.workloads);
    let mut pod = 0;
    for w in 0..s.workloads {
        let q = w % s.queues;
        let ns = format!("ns-{q}");
        let prio = ["low", "normal", "high"][w % 3];
        let prio_value = [100, 1000, 10000][w % 3];
        let count = if w < admitted {
            pods_per_admitted
        } else {
            1 + w % 4
        };
        let mut wl = json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": format!("wl-{w}"), "namespace": ns,
                "labels": {"kueue.x-k8s.io/job-uid": format!("job-{w}")},
                "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": format!("job-{w}"), "uid": format!("job-{w}"), "controller": true}]},
            "spec": {"queueName": "lq", "priorityClassName": prio, "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass",
                "priority": prio_value, "active": true,
                "podSets": [{"name": "main", "count": count, "template": {"spec": {
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                    "containers": [{"name": "trainer", "image": "registry.example/train:1.0",
                        "resources": {"requests": {"nvidia.com/gpu": "1", "cpu": "8", "memory": "64Gi"}}}]}}}]}});
        if w < admitted {
            wl["status"] = json!({"admission": {"clusterQueue": format!("cq-{q}"), "podSetAssignments": [{"name": "main",
                    "flavors": {"nvidia.com/gpu": "a100", "cpu": "a100", "memory": "a100"},
                    "resourceUsage": {"nvidia.com/gpu": count.to_string(), "cpu": (8 * count).to_string(), "memory": format!("{}Gi", 64 * count)}, "count": count}]},
                "conditions": [
                    {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "Quota reserved in ClusterQueue", "lastTransitionTime": "2026-01-01T00:00:00Z"},
                    {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "The workload is admitted", "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
            for i in 0..pods_per_admitted {
                if pod >= s.pods {
                    break;
                }
                create(
                    &res("", "pods"),
                    json!({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": format!("wl-{w}-{i}"), "namespace": format!("ns-{q}"),
                        "labels": {"kueue.x-k8s.io/queue-name": "lq", "kueue.x-k8s.io/podset": "main", "batch.kubernetes.io/job-name": format!("job-{w}")},
                        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": format!("job-{w}"), "uid": format!("job-{w}"), "controller": true}]},
                    "spec": {"nodeName": format!("node-{}", pod / 8 % s.nodes),
                        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                        "containers": [{"name": "trainer", "image": "registry.example/train:1.0",
                            "resources": {"requests": {"nvidia.com/gpu": "1", "cpu": "8", "memory": "64Gi"}}}]},
                    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                        "containerStatuses": [{"name": "trainer", "ready": true, "restartCount": 0, "image": "registry.example/train:1.0"}]}}),
                );
                pod += 1;
            }
        }
        create(&kueue("workloads"), wl);
        keys.push((format!("ns-{q}"), format!("wl-{w}")));
    }
    keys
}

/// Loads a generated shape into the simulator; returns its Workloads' keys.
fn fill_shape(store: &ObjectStore, kind: ShapeKind, scale: usize) -> Vec<(String, String)> {
    let mut keys = Vec::new();
    for obj in generate(&Shape::named(kind, scale)) {
        let api_version = obj["apiVersion"].as_str().unwrap_or("");
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        let k = obj["kind"].as_str().unwrap_or("");
        let def = gangplank::sim::resources::all()
            .iter()
            .find(|d| d.group == group && d.kind == k)
            .unwrap_or_else(|| panic!("no simulator resource for {api_version} {k}"));
        if k == "Workload" {
            keys.push((
                obj["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                obj["metadata"]["name"].as_str().unwrap_or("").to_string(),
            ));
        }
        store
            .create(&def.key(), obj, WriteOptions::default())
            .expect("create");
    }
    keys
}

/// What kubectl lists for the comparison: every resource the source watches that has
/// objects in this cluster.
fn kubectl_resources(store: &ObjectStore) -> String {
    ResourceKind::ALL
        .iter()
        .filter(|k| store.count(&res(k.group(), k.plural())) > 0)
        .map(|k| k.qualified())
        .collect::<Vec<_>>()
        .join(",")
}

/// What the source spends on one Workload watch event before the store: JSON decode
/// (as kube does, into `RawObject`) and the model parse. Measured alone, in this
/// process, to explain the ingest rate.
fn decode_and_parse_cost(store: &ObjectStore, key: &(String, String)) -> String {
    use gangplank::source::RawObject;
    use gangplank::source::objects;
    let wl = store
        .get(&res("kueue.x-k8s.io", "workloads"), Some(&key.0), &key.1)
        .expect("a workload");
    let bytes = serde_json::to_vec(&wl).expect("json");
    let n = 20_000u32;
    let t = Instant::now();
    for _ in 0..n {
        let raw: RawObject = serde_json::from_slice(&bytes).expect("decode");
        std::hint::black_box(raw);
    }
    let decode = t.elapsed() / n;
    let t = Instant::now();
    for _ in 0..n {
        let raw: RawObject = serde_json::from_slice(&bytes).expect("decode");
        let p = objects::parse(ResourceKind::Workload, "kueue.x-k8s.io/v1beta2", raw);
        std::hint::black_box(p.expect("parse"));
    }
    let both = t.elapsed() / n;
    format!(
        "{} bytes: decode {:.1?} + model parse {:.1?}",
        bytes.len(),
        decode,
        both.saturating_sub(decode)
    )
}

async fn parent(case: &Case, events: usize) -> Row {
    let store = ObjectStore::with_options(StoreOptions {
        history_capacity: events + 10_000,
    });
    let t = Instant::now();
    let keys = match case {
        Case::PodsHeavy(s) => {
            println!(
                "\n=== pods-heavy: {} nodes, {} pods, {} workloads, {} ClusterQueues",
                s.nodes, s.pods, s.workloads, s.queues
            );
            fill(&store, s)
        }
        Case::Shape(kind, scale) => {
            println!(
                "\n=== {}: `gangplank sim generate --shape {}` at scale {scale}",
                case.name(),
                kind.name()
            );
            fill_shape(&store, *kind, *scale)
        }
    };
    let objects: usize = ResourceKind::ALL
        .iter()
        .map(|k| store.count(&res(k.group(), k.plural())))
        .sum();
    println!(
        "filled the simulator store in {:.1?}: {objects} objects ({} Workloads)",
        t.elapsed(),
        keys.len()
    );
    let per_event = decode_and_parse_cost(&store, &keys[0]);
    let server = serve(store.clone(), ServerOptions::default())
        .await
        .expect("serve");
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let resources = kubectl_resources(&store);

    // kubectl first (cold), then gangplank. GANGPLANK_BENCH_SKIP_KUBECTL=1 skips it.
    let skip_kubectl = std::env::var("GANGPLANK_BENCH_SKIP_KUBECTL").is_ok();
    let kubectl = tokio::task::spawn_blocking({
        let kc = kubeconfig.clone();
        let resources = resources.clone();
        move || {
            if skip_kubectl {
                return None;
            }
            let t = Instant::now();
            let out = Command::new("kubectl")
                .args(["get", &resources, "-A", "-o", "json", "--request-timeout=0"])
                .arg("--kubeconfig")
                .arg(&kc)
                .env("KUBECACHEDIR", kc.with_file_name("kubecache"))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .output();
            match out {
                Ok(o) if o.status.success() => Some(t.elapsed()),
                Ok(o) => {
                    eprintln!("kubectl failed: {}", String::from_utf8_lossy(&o.stderr));
                    None
                }
                Err(_) => None,
            }
        }
    })
    .await
    .expect("kubectl task");

    // GANGPLANK_BENCH_WRAP runs the client under a profiler, e.g.
    // "heaptrack -o /tmp/source" or "perf record -g -o /tmp/source.perf".
    let exe = std::env::current_exe().expect("exe");
    let wrap = std::env::var("GANGPLANK_BENCH_WRAP").unwrap_or_default();
    let mut words = wrap.split_whitespace();
    let mut cmd = match words.next() {
        Some(w) => {
            let mut c = Command::new(w);
            c.args(words).arg(&exe);
            c
        }
        None => Command::new(&exe),
    };
    let mut child = cmd
        .env(ROLE, "client")
        .env("GANGPLANK_BENCH_KUBECONFIG", &kubeconfig)
        .env("GANGPLANK_BENCH_EVENTS", events.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn client");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut report = Vec::new();
    // The client prints "synced <pid>" when its first complete snapshot is out.
    let mut pid = child.id().to_string();
    for line in lines.by_ref() {
        let line = line.expect("read");
        if let Some(p) = line.strip_prefix("synced ") {
            pid = p.to_string();
            break;
        }
        report.push(line);
    }
    // Generate watch events (priority changes of workloads) while the client is
    // stopped (SIGSTOP): the server queues them in the open watch, and after SIGCONT
    // the client ingests the backlog as fast as it can. Measuring while producing
    // would measure the simulator's write rate instead.
    let signal = |sig: &str| {
        let ok = Command::new("kill")
            .args([sig, &pid])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill {sig} {pid}");
    };
    signal("-STOP");
    let t = Instant::now();
    let store2 = store.clone();
    let n = events;
    let keys = Arc::new(keys);
    let keys2 = keys.clone();
    tokio::task::spawn_blocking(move || {
        let r = res("kueue.x-k8s.io", "workloads");
        for i in 0..n {
            let (ns, name) = &keys2[i % keys2.len()];
            let prio = if i + 1 == n {
                424_242
            } else {
                1_000_000 + i as i64
            };
            store2
                .modify(
                    &r,
                    Some(ns),
                    name,
                    UpdateScope::All,
                    WriteOptions::default(),
                    |o| {
                        o["spec"]["priority"] = json!(prio);
                        Ok(())
                    },
                )
                .expect("modify");
        }
    })
    .await
    .expect("generator");
    let produced = t.elapsed();
    writeln!(stdin, "go").expect("go");
    signal("-CONT");
    for line in lines {
        report.push(line.expect("read"));
    }
    let _ = child.wait();

    println!(
        "{:<44} {} in {:.2?} ({:.0}/s, client stopped meanwhile)",
        "server: produced events",
        events,
        produced,
        events as f64 / produced.as_secs_f64()
    );
    let kubectl_label = format!(
        "kubectl get … -A -o json ({} kinds)",
        resources.split(',').count()
    );
    match kubectl {
        Some(d) => println!("{kubectl_label:<44} {d:.2?}"),
        None => println!(
            "{kubectl_label:<44} skipped (GANGPLANK_BENCH_SKIP_KUBECTL set, or kubectl absent or failed)"
        ),
    }
    let mut row = Row {
        case: case.name(),
        objects,
        kubectl,
        first: None,
        events_per_s: None,
        cpu_us: None,
        hwm_kib: None,
    };
    for line in report {
        if let Some(r) = line.strip_prefix("RESULT ") {
            for kv in r.split_whitespace() {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                let f = v.parse::<f64>().ok();
                match k {
                    "first_s" => row.first = f,
                    "events_per_s" => row.events_per_s = f,
                    "cpu_us" => row.cpu_us = f,
                    "hwm_kib" => row.hwm_kib = v.parse().ok(),
                    _ => {}
                }
            }
            continue;
        }
        println!("{line}");
    }
    if let Some(d) = kubectl {
        println!(
            "{:<44} kubectl list time × 1.5 = {:.2?}",
            "goal (first snapshot)",
            d.mul_f64(1.5)
        );
    }
    println!("{:<44} {per_event}", "one Workload event, single thread");
    drop(server);
    row
}

// === child: the live source ===

fn vm_hwm() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM"))
                .map(|l| l.trim_start_matches("VmHWM:").trim().to_string())
        })
        .unwrap_or_else(|| "n/a".into())
}

/// User + system CPU time of this process so far (/proc/self/stat, clock ticks of 10 ms).
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // Fields after the parenthesised command name; utime and stime are 14 and 15.
            let rest = s.rsplit_once(')')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
            Some(ticks / 100.0)
        })
        .unwrap_or(0.0)
}

fn client() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let kubeconfig = std::env::var("GANGPLANK_BENCH_KUBECONFIG").expect("kubeconfig");
        let events: u64 = std::env::var("GANGPLANK_BENCH_EVENTS")
            .expect("events")
            .parse()
            .expect("number");
        let args = ClusterArgs {
            kubeconfig: Some(kubeconfig.into()),
            ..ClusterArgs::default()
        };
        let opts = SourceOptions::default();
        let t = Instant::now();
        let client = source::connect(&args, opts.read_timeout()).await.expect("connect");
        let h = source::start(client, opts).await;
        let snap = h
            .wait_synced(Duration::from_secs(900))
            .await
            .expect("initial sync");
        let first = t.elapsed();
        // Kept in the report only: holding it would keep a whole extra copy alive.
        println!(
            "{:<44} {:.2?} ({} workloads, {} pods, {} nodes; assembly {} ms)",
            "gangplank: start → first complete snapshot",
            first,
            snap.state.workloads.len(),
            snap.state.pods.len(),
            snap.state.nodes.len(),
            snap.stats.last_assembly_us / 1000
        );
        println!("{:<44} {} ({})", "gangplank VmHWM after initial sync", vm_hwm(), heap());
        drop(snap);
        let (plans, _task) = replan::spawn(h.snapshots(), ReplanOptions::default());
        let plan_t = Instant::now();
        let mut p = plans.clone();
        let first_plan = p.wait_for(|p| p.is_some()).await.expect("plan").clone().expect("plan");
        println!(
            "{:<44} {:.2?} (engine {:.2?})",
            "first plan after sync",
            plan_t.elapsed(),
            first_plan.plan_time
        );
        println!("{:<44} {} ({})", "gangplank VmHWM after the first plan", vm_hwm(), heap());
        // Counted before the parent stops us, so no event is missed.
        let base_events = h.latest().stats.events;
        let base_generation = first_plan.generation;
        drop(first_plan);
        println!("synced {}", std::process::id());
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).expect("go");
        let t = Instant::now();
        let cpu0 = cpu_seconds();
        let done = h
            .wait_for(Duration::from_secs(900), |s| {
                s.stats.events >= base_events + events
                    && s.state.workloads.values().any(|w| w.priority == 424_242)
            })
            .await
            .expect("events ingested");
        let took = t.elapsed();
        let cpu = cpu_seconds() - cpu0;
        let ingested = done.stats.events - base_events;
        println!("{:<44} {} ({})", "gangplank VmHWM when the events are in", vm_hwm(), heap());
        // Let the re-planner catch up with the last snapshot, then count its plans.
        let last_gen = done.generation;
        let mut p = plans.clone();
        let lp = tokio::time::timeout(Duration::from_secs(600), p.wait_for(|p| p.as_ref().is_some_and(|p| p.generation >= last_gen)))
            .await
            .ok()
            .and_then(|r| r.ok().map(|g| g.clone()))
            .flatten();
        println!(
            "{:<44} {} events in {:.2?} = {:.0} events/s (store apply {:.1} µs/event)",
            "gangplank: watch events ingested",
            ingested,
            took,
            ingested as f64 / took.as_secs_f64(),
            done.stats.apply_us as f64 / done.stats.events.max(1) as f64
        );
        println!(
            "{:<44} {:.2} s user+system = {:.0} µs per event ({:.2} cores busy)",
            "gangplank: CPU during ingest",
            cpu,
            cpu * 1e6 / ingested.max(1) as f64,
            cpu / took.as_secs_f64()
        );
        println!(
            "{:<44} {} snapshots published during ingest (last assembly {} ms)",
            "gangplank: coalescing",
            done.generation.saturating_sub(base_generation),
            done.stats.last_assembly_us / 1000
        );
        if let Some(lp) = lp {
            println!(
                "{:<44} re-planned up to generation {} (last re-plan {:.2?}) {:.2?} after the last event",
                "gangplank: re-plans",
                lp.generation,
                lp.plan_time,
                t.elapsed() - took
            );
        }
        println!("{:<44} {} ({})", "gangplank VmHWM (peak RSS)", vm_hwm(), heap());
        println!(
            "RESULT first_s={} events_per_s={} cpu_us={} hwm_kib={}",
            first.as_secs_f64(),
            ingested as f64 / took.as_secs_f64(),
            cpu * 1e6 / ingested.max(1) as f64,
            vm_hwm().trim_end_matches("kB").trim()
        );
        let _ = Arc::strong_count(&done);
    });
}
