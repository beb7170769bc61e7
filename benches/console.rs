//! Console benchmark: a frame of the Workloads view over 120,000 workloads (goal ≤ 2 ms:
//! only visible rows are built; filter and sort results are cached in `App`), beside
//! a baseline from the same run: the same view over 100 workloads.
//!
//! Run: `cargo bench --bench console`

use std::sync::Arc;
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use gangplank::model::synthetic::{SyntheticSpec, generate};
use gangplank::tui::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn measure(label: &str, admitted: usize, pending: usize) -> std::time::Duration {
    let spec = SyntheticSpec {
        admitted_workloads: admitted,
        pending_workloads: pending,
        ..SyntheticSpec::large()
    };
    let state = generate(&spec);
    let count = state.workloads.len();
    let data = ConsoleData::from_state(Arc::new(state), "synthetic");
    let (w, h) = (160, 48);
    let mut app = App::new(
        Default::default(),
        Theme::preset("dark"),
        false,
        ViewId::Workloads,
    );
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
        "{label:<28} {count:>7} workloads: frame {:>8.3} ms, rebuild on data change {:>8.1} ms, re-sort {:>7.1} ms",
        per_frame.as_secs_f64() * 1e3,
        rebuild.as_secs_f64() * 1e3,
        resort.as_secs_f64() * 1e3
    );
    per_frame
}

fn main() {
    let base = measure("baseline (small cluster)", 40, 60);
    let big = measure("workloads view at scale", 30_000, 90_000);
    println!(
        "frame at scale / baseline = {:.1}x (goal: frame <= 2 ms)",
        big.as_secs_f64() / base.as_secs_f64().max(1e-9)
    );
}
