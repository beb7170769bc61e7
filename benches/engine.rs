//! Engine benchmark: one scheduling cycle and the full plan on the generated
//! cluster (100 cohorts × 10 ClusterQueues, 5,000 nodes / 40,000 GPUs, 20,000 admitted
//! and 50,000 pending workloads), beside a baseline measured in the same run: one pass
//! over every workload summing its requests, the least any planner must do.
//!
//! Run: `cargo bench --bench engine` (add `-- --quick` for a smaller cluster). For a
//! profiler, `-- --only snapshot|cycle|step|plan [--heavy]` repeats one phase on one cluster
//! (e.g. under `perf record` or `valgrind --tool=callgrind`) without timing the others.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use gangplank::engine::testing::*;
use gangplank::engine::{self, EngineState, PlanOptions, SchedulerMemory, cycle};
use gangplank::model::synthetic::{SyntheticSpec, generate};
use gangplank::model::{ClusterState, Quantity};

/// Counts live heap bytes so the benchmark can report the engine's own peak memory.
struct CountingAlloc;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        ptr
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// Peak heap bytes allocated on top of what was live when `f` started.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed).saturating_sub(base))
}

/// Median wall time of `runs` calls.
fn median<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn baseline_pass(state: &ClusterState) -> Quantity {
    state
        .workloads
        .values()
        .flat_map(|w| w.pod_sets.iter())
        .flat_map(|ps| ps.requests.values().map(move |q| *q * i64::from(ps.count)))
        .sum()
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn measure(label: &str, state: &ClusterState) {
    let workloads = state.workloads.len();
    println!(
        "\n== {label}: {} ClusterQueues, {} cohorts, {} nodes, {} admitted + {} pending workloads",
        state.cluster_queues.len(),
        state.cohorts.len().max(
            state
                .cluster_queues
                .values()
                .filter_map(|c| c.cohort.as_ref())
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        ),
        state.nodes.len(),
        state
            .workloads
            .values()
            .filter(|w| w.admission.is_some())
            .count(),
        state
            .workloads
            .values()
            .filter(|w| w.admission.is_none())
            .count(),
    );
    let opts = PlanOptions {
        now: 1_767_312_000_000,
        ..PlanOptions::default()
    };

    let baseline = median(9, || baseline_pass(state));
    let (_, state_bytes) = peak_during(|| black_box(EngineState::new(state, &opts)));
    let snapshot = median(5, || EngineState::new(state, &opts));
    let fresh = EngineState::new(state, &opts);
    let cycle_only = median(9, || {
        let mut st = fresh.clone();
        cycle::run(&mut st)
    });
    let memory = SchedulerMemory::default();
    let step = median(3, || engine::schedule_cycle(state, &memory, &opts));
    let (plan, plan_peak) = peak_during(|| engine::plan(state, &opts));
    let full = median(3, || engine::plan(state, &opts));

    let row = |name: &str, d: Duration, note: &str| println!("{name:<52} {:>11}  {note}", ms(d));
    row(
        "baseline: one pass summing every workload's requests",
        baseline,
        "",
    );
    row("engine snapshot built from the ClusterState", snapshot, "");
    row(
        "one scheduling cycle on the snapshot",
        cycle_only,
        "goal <= 10 ms",
    );
    row(
        "one cycle incl. snapshot + explanations (sim API)",
        step,
        "",
    );
    row(
        "full plan to the fixed point",
        full,
        &format!(
            "goal <= 1 s; {} cycles, converged: {}",
            plan.cycles.len(),
            plan.converged
        ),
    );
    println!(
        "engine state {:.1} MiB = {} bytes per workload (goal <= 1024); plan peak heap {:.1} MiB",
        state_bytes as f64 / (1 << 20) as f64,
        state_bytes / workloads.max(1),
        plan_peak as f64 / (1 << 20) as f64
    );
    println!(
        "cycle / baseline = {:.1}x",
        cycle_only.as_secs_f64() / baseline.as_secs_f64().max(1e-9)
    );
}

/// Repeats one phase (`--only <phase>`) so a profiler sees nothing else.
fn profile_phase(phase: &str, state: &ClusterState, repeat: usize) {
    let opts = PlanOptions {
        now: 1_767_312_000_000,
        ..PlanOptions::default()
    };
    let fresh = EngineState::new(state, &opts);
    for _ in 0..repeat {
        match phase {
            "snapshot" => drop(black_box(EngineState::new(state, &opts))),
            "cycle" => {
                let mut st = fresh.clone();
                black_box(cycle::run(&mut st));
            }
            "step" => drop(black_box(engine::schedule_cycle(
                state,
                &SchedulerMemory::default(),
                &opts,
            ))),
            "plan" => drop(black_box(engine::plan(state, &opts))),
            other => panic!("unknown phase {other}"),
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    if let Some(i) = args.iter().position(|a| a == "--only") {
        let phase = args.get(i + 1).map_or("plan", String::as_str);
        let repeat = args
            .iter()
            .position(|a| a == "--repeat")
            .and_then(|j| args.get(j + 1))
            .and_then(|r| r.parse().ok())
            .unwrap_or(1);
        let state = if args.iter().any(|a| a == "--heavy") {
            preemption_heavy(100)
        } else if quick {
            generate(&SyntheticSpec {
                cohorts: 10,
                nodes: 500,
                admitted_workloads: 2_000,
                pending_workloads: 5_000,
                ..SyntheticSpec::large()
            })
        } else {
            generate(&SyntheticSpec::large())
        };
        profile_phase(phase, &state, repeat);
        return;
    }
    let spec = if quick {
        SyntheticSpec {
            cohorts: 10,
            nodes: 500,
            admitted_workloads: 2_000,
            pending_workloads: 5_000,
            ..SyntheticSpec::large()
        }
    } else {
        SyntheticSpec::large()
    };
    let t = Instant::now();
    let state = generate(&spec);
    println!("generated the synthetic cluster in {}", ms(t.elapsed()));
    measure("synthetic (issue 2 shape, 40,000 GPUs)", &state);
    drop(state);
    if !quick {
        measure(
            "preemption-heavy (every head must preempt)",
            &preemption_heavy(100),
        );
    }
}
