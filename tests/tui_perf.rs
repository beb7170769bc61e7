//! The Workloads view over 100,000 workloads draws a frame in ≤ 2 ms in release
//! (only visible rows are built; filter and sort results are cached in `App`).
//! In debug builds the timings are printed, not asserted.
//!
//! `cargo test --release --test tui_perf -- --nocapture`

use std::sync::Arc;
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use gangplank::model::synthetic::{SyntheticSpec, generate};
use gangplank::tui::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

#[test]
fn workloads_view_renders_100k_rows_fast() {
    let spec = SyntheticSpec {
        admitted_workloads: 30_000,
        pending_workloads: 90_000,
        ..SyntheticSpec::large()
    };
    let state = generate(&spec);
    assert!(
        state.workloads.len() >= 100_000,
        "{}",
        state.workloads.len()
    );
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
    println!("rebuild {rebuild:?}, re-sort {resort:?}, frame {per_frame:?}");
    if !cfg!(debug_assertions) {
        assert!(per_frame.as_micros() <= 2_000, "frame took {per_frame:?}");
    }
}
