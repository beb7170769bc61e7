//! The engine's per-workload state stays small (the timing figures live in
//! `benches/engine.rs`, never in tests).

#[test]
fn engine_state_per_workload_is_small() {
    // the record itself, plus a queue key, a key string and a short usage vector
    assert!(std::mem::size_of::<gangplank::engine::state::WlInfo<'static>>() <= 256);
    assert!(std::mem::size_of::<gangplank::engine::state::QKey>() <= 32);
}

#[test]
fn workload_record_and_pending_row_stay_compact() {
    // the record owns no heap memory (usage is a span of a shared arena), so this is
    // all a workload costs the snapshot besides its queue keys
    assert!(std::mem::size_of::<gangplank::engine::state::WlInfo<'static>>() <= 96);
    // one row per pending workload per plan cycle: the explanation is boxed
    assert!(std::mem::size_of::<gangplank::engine::PlanPending>() <= 104);
}
