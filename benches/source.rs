//! Live-source benchmark: the simulator's API server serves a generated cluster of
//! 5,000 nodes, 100,000 pods and 50,000 workloads; we report, in one run,
//!
//! * gangplank's time from start to the first complete snapshot, beside
//!   `kubectl get workloads,pods,nodes -A -o json` against the same server;
//! * the watch-event ingest rate (events/s parsed, stored and published) and the
//!   re-plans made meanwhile, with the cost per re-plan;
//! * the source's resident memory (VmHWM).
//!
//! The source runs in a child process (this binary re-executed) so that its VmHWM
//! does not include the simulator's store, which lives in the parent.
//!
//! Run: `cargo bench --bench source` (add `-- --quick` for a tenth of the size).
//! Goals: first snapshot ≤ 1.5× kubectl, ≥ 20,000 events/s, ≤ 500 MiB RSS.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use gangplank::sim::{
    ObjectStore, ResourceKey, ServerOptions, StoreOptions, UpdateScope, WriteOptions, serve,
};
use gangplank::source::replan::{self, ReplanOptions};
use gangplank::source::{self, ClusterArgs, SourceOptions};
use serde_json::{Value, json};

const ROLE: &str = "GANGPLANK_BENCH_ROLE";

/// Counts live heap bytes, to tell the model's size from allocator overhead in RSS.
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

struct Scale {
    nodes: usize,
    pods: usize,
    workloads: usize,
    queues: usize,
    events: usize,
}

fn main() {
    if std::env::var_os("GANGPLANK_BENCH_NO_HEAP_COUNT").is_some() {
        COUNT.store(false, Ordering::Relaxed);
    }
    if std::env::var(ROLE).is_ok_and(|r| r == "client") {
        client();
        return;
    }
    let quick = std::env::args().any(|a| a == "--quick");
    let d = if quick { 10 } else { 1 };
    let scale = Scale {
        nodes: 5_000 / d,
        pods: 100_000 / d,
        workloads: 50_000 / d,
        queues: 100,
        events: 100_000 / d,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(parent(scale));
}

// === parent: the server, kubectl, and the event generator ===

fn res(group: &str, plural: &str) -> ResourceKey {
    ResourceKey::new(group, plural)
}

fn fill(store: &ObjectStore, s: &Scale) {
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
    }
}

/// What the source spends on one Workload watch event before the store: JSON decode
/// (as kube does, into `RawObject`) and the model parse. Measured alone, in this
/// process, to explain the ingest rate.
fn decode_and_parse_cost(store: &ObjectStore) -> String {
    use gangplank::source::objects;
    use gangplank::source::{RawObject, ResourceKind};
    let wl = store
        .get(&res("kueue.x-k8s.io", "workloads"), Some("ns-0"), "wl-0")
        .expect("wl-0");
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

async fn parent(s: Scale) {
    println!(
        "gangplank live-source benchmark: {} nodes, {} pods, {} workloads, {} ClusterQueues",
        s.nodes, s.pods, s.workloads, s.queues
    );
    let store = ObjectStore::with_options(StoreOptions {
        history_capacity: s.events + 10_000,
    });
    let t = Instant::now();
    fill(&store, &s);
    println!("filled the simulator store in {:.1?}", t.elapsed());
    let per_event = decode_and_parse_cost(&store);
    let server = serve(store.clone(), ServerOptions::default())
        .await
        .expect("serve");
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");

    // kubectl first (cold), then gangplank. GANGPLANK_BENCH_SKIP_KUBECTL=1 skips it.
    let skip_kubectl = std::env::var("GANGPLANK_BENCH_SKIP_KUBECTL").is_ok();
    let kubectl = tokio::task::spawn_blocking({
        let kc = kubeconfig.clone();
        move || {
            if skip_kubectl {
                return None;
            }
            let t = Instant::now();
            let out = Command::new("kubectl")
                .args([
                    "get",
                    "workloads,pods,nodes",
                    "-A",
                    "-o",
                    "json",
                    "--request-timeout=0",
                ])
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

    let mut child = Command::new(std::env::current_exe().expect("exe"))
        .env(ROLE, "client")
        .env("GANGPLANK_BENCH_KUBECONFIG", &kubeconfig)
        .env("GANGPLANK_BENCH_EVENTS", s.events.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn client");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut report = Vec::new();
    // The client prints "synced" when its first complete snapshot is out.
    for line in lines.by_ref() {
        let line = line.expect("read");
        if line == "synced" {
            break;
        }
        report.push(line);
    }
    // Generate watch events (priority changes of workloads) while the client is
    // stopped (SIGSTOP): the server queues them in the open watch, and after SIGCONT
    // the client ingests the backlog as fast as it can. Measuring while producing
    // would measure the simulator's write rate instead.
    let pid = child.id().to_string();
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
    let (n, wls) = (s.events, s.workloads);
    tokio::task::spawn_blocking(move || {
        let r = res("kueue.x-k8s.io", "workloads");
        for i in 0..n {
            let w = i % wls;
            let ns = format!("ns-{}", w % 100);
            let prio = if i + 1 == n {
                424_242
            } else {
                1_000_000 + i as i64
            };
            store2
                .modify(
                    &r,
                    Some(&ns),
                    &format!("wl-{w}"),
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

    println!();
    println!(
        "{:<44} {} in {:.2?} ({:.0}/s, client stopped meanwhile)",
        "server: produced events",
        s.events,
        produced,
        s.events as f64 / produced.as_secs_f64()
    );
    match kubectl {
        Some(d) => println!(
            "{:<44} {:.2?}",
            "kubectl get workloads,pods,nodes -A -o json", d
        ),
        None => println!(
            "{:<44} skipped (GANGPLANK_BENCH_SKIP_KUBECTL set, or kubectl absent or failed)",
            "kubectl get workloads,pods,nodes -A -o json"
        ),
    }
    for line in report {
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
    println!(
        "{:<44} ≥ 20000 events/s, ≤ 500 MiB VmHWM",
        "goals (ingest, memory)"
    );
    drop(server);
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
        // Counted before the parent stops us, so no event is missed.
        let base_events = h.latest().stats.events;
        let base_generation = first_plan.generation;
        drop(first_plan);
        println!("synced");
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
        let _ = Arc::strong_count(&done);
    });
}
