//! The engine's per-workload state stays small (the timing figures live in
//! `benches/engine.rs`, never in tests).

#[test]
fn engine_state_per_workload_is_small() {
    // the record itself, plus a queue key, a key string and a short usage vector
    assert!(std::mem::size_of::<gangplank::engine::state::WlInfo<'static>>() <= 256);
    assert!(std::mem::size_of::<gangplank::engine::state::QKey>() <= 32);
}
