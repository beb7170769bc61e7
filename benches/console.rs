//! Console benchmark: a frame of the Workloads view over 120,000 workloads and of the
//! Queues view over 1,000 ClusterQueues (100 cohorts × 10; goal ≤ 2 ms per frame: only
//! visible rows are built; filter and sort results are cached in `App`), each beside a
//! baseline from the same run: the same view over a small cluster.
//!
//! Run: `cargo bench --bench console`

use std::sync::Arc;
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use gangplank::model::synthetic::{SyntheticSpec, generate};
use gangplank::tui::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn measure(label: &str, view_id: ViewId, spec: SyntheticSpec) -> std::time::Duration {
    let state = generate(&spec);
    let count = state.workloads.len();
    let queues = state.cluster_queues.len();
    let data = ConsoleData::from_state(Arc::new(state), "synthetic");
    let (w, h) = (160, 48);
    let mut app = App::new(Default::default(), Theme::preset("dark"), false, view_id);
    update(&mut app, Msg::Resize(w, h));
    update(&mut app, Msg::Tick(1_767_225_600_000 + 3_600_000));
    let t = Instant::now();
    update(&mut app, Msg::Data(data));
    let rebuild = t.elapsed();
    let t = Instant::now();
    update(
        &mut app,
        Msg::Key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::NONE)),
    );
    let resort = t.elapsed();

    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    // Scroll to the middle so the offset path is exercised too.
    for _ in 0..1000 {
        update(
            &mut app,
            Msg::Key(KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE)),
        );
    }
    term.draw(|f| view(&app, &app.cache.data, f)).unwrap();
    let frames = 50;
    let t = Instant::now();
    for i in 0..frames {
        let k = if i % 2 == 0 {
            KeyCode::Down
        } else {
            KeyCode::Up
        };
        update(&mut app, Msg::Key(KeyEvent::new(k, KeyModifiers::NONE)));
        term.draw(|f| view(&app, &app.cache.data, f)).unwrap();
    }
    let per_frame = t.elapsed() / frames;
    println!(
        "{label:<28} {queues:>5} ClusterQueues, {count:>7} workloads: frame {:>8.3} ms, rebuild on data change {:>8.1} ms, re-sort {:>7.1} ms",
        per_frame.as_secs_f64() * 1e3,
        rebuild.as_secs_f64() * 1e3,
        resort.as_secs_f64() * 1e3
    );
    per_frame
}

fn small() -> SyntheticSpec {
    SyntheticSpec {
        cohorts: 2,
        cluster_queues_per_cohort: 5,
        nodes: 50,
        admitted_workloads: 40,
        pending_workloads: 60,
        ..SyntheticSpec::large()
    }
}

fn main() {
    let base = measure("workloads, small cluster", ViewId::Workloads, small());
    let big = measure(
        "workloads view at scale",
        ViewId::Workloads,
        SyntheticSpec {
            admitted_workloads: 30_000,
            pending_workloads: 90_000,
            ..SyntheticSpec::large()
        },
    );
    println!(
        "workloads: frame at scale / baseline = {:.1}x (goal: frame <= 2 ms)",
        big.as_secs_f64() / base.as_secs_f64().max(1e-9)
    );
    let base = measure("queues, small cluster", ViewId::Queues, small());
    let big = measure(
        "queues view at scale",
        ViewId::Queues,
        SyntheticSpec::large(),
    );
    println!(
        "queues: frame at scale / baseline = {:.1}x (goal: frame <= 2 ms)",
        big.as_secs_f64() / base.as_secs_f64().max(1e-9)
    );
}
