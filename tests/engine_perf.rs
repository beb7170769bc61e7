//! Performance check (ignored by default; run with
//! `cargo test --release --test engine_perf -- --ignored --nocapture`):
//! one cycle on 100 cohorts × 10 ClusterQueues, 20,000 admitted and 50,000 pending workloads.

use std::time::Instant;

use gangplank::engine::testing::*;
use gangplank::engine::{EngineState, PlanOptions, cycle};
use gangplank::model::{ClusterState, ReclaimWithinCohort as R, WithinClusterQueue as W};

fn big() -> ClusterState {
    let mut b = ClusterBuilder::new().flavor("gpu");
    for c in 0..100 {
        for q in 0..10 {
            let name = format!("cq-{c}-{q}");
            b = b
                .cq(CqBuilder::new(&name)
                    .cohort(&format!("co-{c}"))
                    .quota("gpu", "nvidia.com/gpu", "20")
                    .preemption(W::LowerPriority, R::Any))
                .lq("ns", &name, &name);
            for i in 0..20 {
                b = b.wl(WlBuilder::new("ns", &format!("run-{c}-{q}-{i}"))
                    .priority(i % 3)
                    .pod_set("main", 1, &[("nvidia.com/gpu", "1")])
                    .admitted(&name, "gpu", i64::from(i)));
            }
            for i in 0..50 {
                b = b.wl(WlBuilder::new("ns", &format!("pend-{c}-{q}-{i}"))
                    .queue(&name)
                    .priority(i % 5)
                    .created(i64::from(1000 + i))
                    .pod_set("main", 1, &[("nvidia.com/gpu", &(1 + i % 4).to_string())]));
            }
        }
    }
    b.build()
}

#[test]
#[ignore]
fn one_cycle_at_scale() {
    let state = big();
    let opts = PlanOptions {
        now: 10_000,
        ..Default::default()
    };
    let t0 = Instant::now();
    let mut st = EngineState::new(&state, &opts);
    let build = t0.elapsed();
    let mut best = std::time::Duration::MAX;
    let (mut entries, mut victims) = (0, 0);
    for _ in 0..10 {
        let mut copy = st.clone();
        let t1 = Instant::now();
        let res = cycle::run(&mut copy);
        best = best.min(t1.elapsed());
        (entries, victims) = (res.entries.len(), res.victims.len());
    }
    let t1 = Instant::now();
    cycle::run(&mut st);
    let cold = t1.elapsed();
    println!(
        "snapshot {build:?}; one cycle: best of 10 {best:?}, on the fresh snapshot {cold:?}; {entries} entries, {victims} victims"
    );
}

#[test]
fn engine_state_per_workload_is_small() {
    // the record itself, plus a queue key, a key string and a short usage vector
    assert!(std::mem::size_of::<gangplank::engine::state::WlInfo<'static>>() <= 256);
    assert!(std::mem::size_of::<gangplank::engine::state::QKey>() <= 32);
}
