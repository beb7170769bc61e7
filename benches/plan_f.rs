//! `plan -f` / `doctor -f` end to end on generated dumps (issue 16), beside a baseline
//! measured in the same run on the same bytes: `serde_json::from_slice::<Value>`.
//!
//! The dumps are real manifests written by `gangplank sim generate`'s code
//! ([`gangplank::sim::generate`]) as one JSON `List` into a temporary directory, then read
//! back through the same path as the CLI: `load_paths` → `engine::plan` → JSON text (and
//! `doctor::run` → JSON text). Shapes: flat, hyperpod, hierarchical at scale 1, 2, 4, 8
//! (scale 1 ≈ 850 objects); the large size (scale 100, ≈ 78k objects) with
//! `GANGPLANK_BENCH_LARGE=1`.
//!
//! Run: `cargo bench --bench plan_f` (`GANGPLANK_BENCH_LARGE=1 cargo bench --bench plan_f`).
//! Printed per dump: objects, bytes, baseline parse, `plan -f --max-cycles 1`, full
//! `plan -f`, `doctor -f` (each as a multiple of the baseline), engine time of one cycle
//! and of the full plan (cycles, whether it converged or found a loop) with the default
//! nomination threads and on one thread, output bytes, and a scaling table (time per
//! object at each scale, as a ratio to scale 1).

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use gangplank::doctor::{self, DoctorOptions};
use gangplank::engine::{self, PlanOptions};
use gangplank::model::load_paths;
use gangplank::sim::generate::{Shape, ShapeKind, generate, to_json_list};

const NOW: i64 = 1_767_225_600_000; // 2026-01-01

/// The allocator of the `gangplank` binary (src/main.rs), so the figures are the CLI's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..runs {
        let t = Instant::now();
        let v = black_box(f());
        best = best.min(t.elapsed());
        out = Some(v);
    }
    (best, out.expect("runs > 0"))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

struct Row {
    shape: &'static str,
    scale: usize,
    objects: usize,
    bytes: usize,
    baseline: Duration,
    plan1: Duration,
    plan_full: Duration,
    doctor: Duration,
    engine_cycle: Duration,
    engine_full: Duration,
    /// The full plan nominating on one thread (`PlanOptions::workers` = 1).
    engine_full_serial: Duration,
    workers: usize,
    cycles: usize,
    end: String,
    out1: usize,
    out_full: usize,
}

fn measure(dir: &std::path::Path, kind: ShapeKind, scale: usize, runs: usize) -> Row {
    let objects = generate(&Shape::named(kind, scale));
    let bytes = to_json_list(&objects);
    let path: PathBuf = dir.join(format!("{}-{scale}.json", kind.name()));
    std::fs::write(&path, &bytes).expect("write dump");
    let paths = vec![path];

    let (baseline, _) = best(runs, || {
        serde_json::from_slice::<serde_json::Value>(&std::fs::read(&paths[0]).unwrap()).unwrap()
    });
    let opts = |max_cycles| PlanOptions {
        now: NOW,
        max_cycles,
        ..PlanOptions::default()
    };
    let workers = opts(1).workers;
    let run_plan = |max_cycles| {
        let state = load_paths(&paths).expect("dump parses");
        let plan = engine::plan(&state, &opts(max_cycles));
        let json = serde_json::to_string_pretty(&serde_json::to_value(&plan).unwrap()).unwrap();
        (
            json.len(),
            plan.stats.cycles,
            plan.converged,
            plan.detected_cycle,
        )
    };
    let (plan1, (out1, _, _, _)) = best(runs, || run_plan(1));
    let (plan_full, (out_full, cycles, converged, detected)) = best(runs, || run_plan(100));
    let (doctor, _) = best(runs, || {
        let state = load_paths(&paths).expect("dump parses");
        let report = doctor::run(&state, &DoctorOptions::at(NOW));
        report.to_json_pretty().len()
    });
    // engine alone, on a loaded state: best of 3 at every scale (a second each at scale
    // 100; one run on this shared 2-core VM varied by ±20%)
    let state = load_paths(&paths).expect("dump parses");
    let engine_runs = 3;
    let (engine_cycle, _) = best(engine_runs, || engine::plan(&state, &opts(1)));
    let (engine_full, _) = best(engine_runs, || engine::plan(&state, &opts(100)));
    let (engine_full_serial, _) = best(engine_runs, || {
        let serial = PlanOptions {
            workers: 1,
            ..opts(100)
        };
        engine::plan(&state, &serial)
    });
    let end = match (converged, detected) {
        (true, _) => "converged".to_string(),
        (false, Some(d)) => format!("{} (period {})", d.name, d.period),
        (false, None) => "hit --max-cycles".to_string(),
    };
    Row {
        shape: kind.name(),
        scale,
        objects: objects.len(),
        bytes: bytes.len(),
        baseline,
        plan1,
        plan_full,
        doctor,
        engine_cycle,
        engine_full,
        engine_full_serial,
        workers,
        cycles,
        end,
        out1,
        out_full,
    }
}

fn main() {
    let large = std::env::var("GANGPLANK_BENCH_LARGE").is_ok_and(|v| v == "1");
    let dir = tempfile::tempdir().expect("temp dir");
    let mut scales = vec![1, 2, 4, 8];
    if large {
        scales.push(100);
    }
    println!(
        "plan -f / doctor -f on generated JSON Lists; baseline = serde_json::from_slice::<Value> \
         of the same bytes, same run (best of 3; large: 1 run, engine-only columns best of 3)\n"
    );
    println!(
        "{:<13} {:>5} {:>7} {:>9} {:>9} {:>16} {:>16} {:>16} {:>9} {:>9} {:>12} {:>6} {:>24} {:>10} {:>11}",
        "shape",
        "scale",
        "objects",
        "MB",
        "baseline",
        "plan -f c=1",
        "plan -f full",
        "doctor -f",
        "eng 1cyc",
        "eng full",
        "eng full 1thr",
        "cycles",
        "end",
        "out c=1 MB",
        "out full MB"
    );
    let mut rows: Vec<Row> = Vec::new();
    for kind in ShapeKind::ALL {
        for &scale in &scales {
            let runs = if scale >= 50 { 1 } else { 3 };
            let r = measure(dir.path(), kind, scale, runs);
            let x = |d: Duration| format!("{:.0} ms {:.1}×", ms(d), ms(d) / ms(r.baseline));
            println!(
                "{:<13} {:>5} {:>7} {:>9.1} {:>6.0} ms {:>16} {:>16} {:>16} {:>6.1} ms {:>6.0} ms {:>9.0} ms {:>6} {:>24} {:>10.2} {:>11.2}",
                r.shape,
                r.scale,
                r.objects,
                r.bytes as f64 / 1e6,
                ms(r.baseline),
                x(r.plan1),
                x(r.plan_full),
                x(r.doctor),
                ms(r.engine_cycle),
                ms(r.engine_full),
                ms(r.engine_full_serial),
                r.cycles,
                r.end,
                r.out1 as f64 / 1e6,
                r.out_full as f64 / 1e6,
            );
            rows.push(r);
        }
    }
    if let Some(r) = rows.first() {
        println!(
            "\nplans nominate each cycle's heads on {} threads (`eng full 1thr`: on one)",
            r.workers
        );
    }
    println!(
        "\nscaling: µs per object (ratio to scale 1); goal: flat within 2×. The last column is \
         the full plan's engine time per object and per simulated cycle (plans of different \
         sizes stop after different numbers of cycles)"
    );
    println!(
        "{:<13} {:>5} {:>20} {:>20} {:>20} {:>22}",
        "shape", "scale", "plan -f c=1", "plan -f full", "doctor -f", "eng full /cycle"
    );
    for r in &rows {
        let base = rows
            .iter()
            .find(|b| b.shape == r.shape && b.scale == 1)
            .expect("scale 1 measured");
        let per = |d: Duration, o: usize| d.as_secs_f64() * 1e6 / o as f64;
        let cell = |d: Duration, b: Duration| {
            let (v, v1) = (per(d, r.objects), per(b, base.objects));
            format!("{v:.1} ({:.2}×)", v / v1)
        };
        let per_cycle = |r: &Row| {
            r.engine_full.as_secs_f64() * 1e9 / (r.objects as f64 * r.cycles.max(1) as f64)
        };
        let (v, v1) = (per_cycle(r), per_cycle(base));
        println!(
            "{:<13} {:>5} {:>20} {:>20} {:>20} {:>22}",
            r.shape,
            r.scale,
            cell(r.plan1, base.plan1),
            cell(r.plan_full, base.plan_full),
            cell(r.doctor, base.doctor),
            format!("{v:.1} ns ({:.2}×)", v / v1),
        );
    }
}
