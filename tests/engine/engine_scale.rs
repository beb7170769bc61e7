//! Scale guards (issue 16), not timed: the engine's counted steps (heads nominated,
//! preemption candidates classified, fit checks; `Plan::stats`) on a generated dump 4×
//! larger must stay under 5× — a quadratic path fails here on any machine. And the
//! generator's contract: real manifests that `plan -f` reads without warnings, sized by
//! `--scale`, the same bytes for the same seed.

use std::path::PathBuf;

use gangplank::engine::{PlanOptions, plan};
use gangplank::model::{ClusterState, load_paths};
use gangplank::sim::generate::{Shape, ShapeKind, generate, to_json_list, to_yaml_documents};

const NOW: i64 = 1_767_225_600_000;

/// Writes the shape as a JSON List (or multi-document YAML) and reads it back like `plan -f`.
fn load(shape: &Shape, yaml: bool) -> ClusterState {
    let dir = tempfile::tempdir().unwrap();
    let objects = generate(shape);
    let (name, bytes) = if yaml {
        ("dump.yaml", to_yaml_documents(&objects))
    } else {
        ("dump.json", to_json_list(&objects))
    };
    let path: PathBuf = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    load_paths(&[path]).unwrap_or_else(|e| panic!("{} does not load: {e}", shape.kind.name()))
}

fn steps(state: &ClusterState, max_cycles: usize) -> u64 {
    let p = plan(
        state,
        &PlanOptions {
            now: NOW,
            max_cycles,
            ..PlanOptions::default()
        },
    );
    p.stats.steps
}

#[test]
fn four_times_the_input_costs_less_than_five_times_the_steps() {
    for kind in ShapeKind::ALL {
        let small = load(&Shape::named(kind, 1), false);
        let large = load(&Shape::named(kind, 4), false);
        for max_cycles in [1, 10] {
            let (s, l) = (steps(&small, max_cycles), steps(&large, max_cycles));
            assert!(s > 0, "{}: the engine counted no work", kind.name());
            eprintln!(
                "{} {max_cycles} cycles: {s} → {l} steps ({:.2}×)",
                kind.name(),
                l as f64 / s as f64
            );
            assert!(
                l < 5 * s,
                "{} over {max_cycles} cycles: scale 4 took {l} steps, scale 1 {s} ({:.1}×): \
                 something in the engine is quadratic",
                kind.name(),
                l as f64 / s as f64
            );
        }
    }
}

#[test]
fn every_generated_shape_loads_without_warnings_as_json_and_yaml() {
    for kind in ShapeKind::ALL {
        let shape = Shape::named(kind, 1);
        let objects = generate(&shape);
        let json = load(&shape, false);
        let yaml = load(&shape, true);
        for (what, s) in [("JSON List", &json), ("YAML", &yaml)] {
            assert!(
                s.warnings.is_empty(),
                "{} as {what}: {:?}",
                kind.name(),
                s.warnings
            );
            assert_eq!(s.cluster_queues.len(), shape.cluster_queue_count());
            assert_eq!(s.nodes.len(), shape.nodes);
        }
        assert_eq!(json.workloads.len(), yaml.workloads.len());
        let admitted = json
            .workloads
            .values()
            .filter(|w| w.admission.is_some())
            .count();
        assert_eq!(admitted, shape.admitted, "{}", kind.name());
        // every pending one is a Workload or a job alone, so pending Workloads + lone jobs
        assert!(json.workloads.len() >= shape.admitted + shape.pending / 2);
        assert!(objects.len() > shape.admitted + shape.pending);
    }
}

#[test]
fn object_counts_scale_with_scale() {
    for kind in ShapeKind::ALL {
        let n = |s| generate(&Shape::named(kind, s)).len() as f64;
        let (one, four) = (n(1), n(4));
        let ratio = four / one;
        assert!(
            (3.6..=4.4).contains(&ratio),
            "{}: scale 4 has {four} objects, scale 1 {one} ({ratio:.2}×)",
            kind.name()
        );
    }
}

#[test]
fn the_same_seed_gives_the_same_bytes() {
    for kind in ShapeKind::ALL {
        let shape = Shape::named(kind, 2);
        let a = to_json_list(&generate(&shape));
        let b = to_json_list(&generate(&shape));
        assert!(a == b, "{}: two runs differ", kind.name());
        let other = Shape { seed: 7, ..shape };
        assert!(
            to_json_list(&generate(&other)) != a,
            "{}: the seed changes nothing",
            kind.name()
        );
    }
}

/// Nominating a cycle's heads on several threads (`PlanOptions::workers`) must not change
/// the plan: the same admissions, preemptions, pending rows and explanations, the same
/// loop found, and the same counted work, on every generated shape.
#[test]
fn the_plan_is_the_same_for_any_number_of_nomination_threads() {
    for kind in ShapeKind::ALL {
        // scale 4: 40 ClusterQueues in the cohort shapes, enough heads for the threads
        let state = load(&Shape::named(kind, 4), false);
        let run = |workers: usize| {
            plan(
                &state,
                &PlanOptions {
                    now: NOW,
                    max_cycles: 30,
                    pending_in_every_cycle: true,
                    workers,
                    ..PlanOptions::default()
                },
            )
        };
        let serial = run(1);
        assert_eq!(serial.stats.parallel_heads, 0);
        for workers in [2, 3] {
            let parallel = run(workers);
            let without_stats = |p: &gangplank::engine::Plan| gangplank::engine::Plan {
                stats: Default::default(),
                ..p.clone()
            };
            assert_eq!(
                without_stats(&parallel),
                without_stats(&serial),
                "{} with {workers} nomination threads planned differently",
                kind.name()
            );
            assert_eq!(parallel.stats.steps, serial.stats.steps, "{}", kind.name());
            if kind != ShapeKind::Flat {
                // one ClusterQueue has one head: only the cohort shapes go parallel
                assert!(
                    parallel.stats.parallel_heads > 0,
                    "{}: no cycle nominated on {workers} threads",
                    kind.name()
                );
            }
        }
    }
}
