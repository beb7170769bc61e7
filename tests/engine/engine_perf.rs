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

/// The last cycle's queued rows of one ClusterQueue carry one copy of their texts, and
/// the rows of one LocalQueue one copy of its label (a plan of a large cluster lists
/// tens of thousands of them; copies were most of a live plan's memory).
#[test]
fn queued_rows_of_a_cluster_queue_share_their_texts() {
    use gangplank::engine::testing::*;
    use gangplank::engine::{PlanOptions, plan};
    let mut b = ClusterBuilder::new()
        .flavor("default")
        .cq(CqBuilder::new("cq").quota("default", "cpu", "1"))
        .lq("ns", "lq", "cq");
    for i in 0..6 {
        b = b.wl(WlBuilder::new("ns", &format!("w{i}"))
            .queue("lq")
            .created(i)
            .pod_set("main", 1, &[("cpu", "4")]));
    }
    // one cycle: the head is evaluated, the five behind it are queued
    let opts = PlanOptions {
        max_cycles: 1,
        ..Default::default()
    };
    let p = plan(&b.build(), &opts);
    let rows = &p.cycles.last().expect("a cycle").pending;
    let queued: Vec<_> = rows
        .iter()
        .filter_map(|r| r.explanation.as_deref())
        .filter(|e| e.kind == gangplank::engine::PendingKind::Queued)
        .collect();
    assert_eq!(queued.len(), 5, "{rows:?}");
    let first = queued[0];
    for e in &queued[1..] {
        assert!(e.reason.shares_with(&first.reason));
        assert!(e.message.shares_with(&first.message));
        let (a, b) = (e.local_queue.as_ref(), first.local_queue.as_ref());
        assert!(a.zip(b).is_some_and(|(a, b)| a.shares_with(b)));
    }
}
