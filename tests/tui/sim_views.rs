//! Every view rendered from the simulator's data, at 80×24 and 160×48: the seed story
//! played by the simulated cluster to minute 12 (the boss job admitted, the two newest
//! normal jobs preempted and waiting), its objects read back through the model parser
//! as a dump would be, planned by the engine, checked by doctor and adapted by the
//! console's feed — the path `gangplank -f` and the live console take. Review the
//! `.snap` files: they are the console as a person sees it.

use std::sync::Arc;

use gangplank::cli::feed;
use gangplank::engine::{self, PlanOptions};
use gangplank::model::{Loader, Origin};
use gangplank::sim::resources;
use gangplank::sim::{Scenario, SimCluster, SimOptions};
use gangplank::source::resources::ResourceKind;
use gangplank::source::sync::{ResourceSync, SyncEvent};
use gangplank::source::{LivePlan, Snapshot};
use gangplank::tui::*;

use crate::tui_fixture::screen;

const MINUTE: i64 = 60_000;

/// The console's data and "now" at `minute` of the seed scenario.
fn seed_at(minute: i64) -> (ConsoleData, i64) {
    let mut sim = SimCluster::from_scenario(&Scenario::seed(), SimOptions::default());
    let now = sim.clock().start_ms() + minute * MINUTE;
    sim.advance_to(now);
    let store = sim.store();
    let mut loader = Loader::new();
    for def in resources::all() {
        for obj in store.list(&def.key(), None).items {
            loader
                .add_value(Origin::default(), &obj)
                .expect("the simulator's objects parse");
        }
    }
    let state = loader.finish();
    let plan = engine::plan(
        &state,
        &PlanOptions {
            now,
            // as the console builds it (src/cli/console.rs)
            pending_in_every_cycle: true,
            ..PlanOptions::default()
        },
    );
    let taken_at = jiff::Timestamp::from_millisecond(now).unwrap();
    let mut snap = Snapshot::empty(None);
    snap.generation = 1;
    snap.taken_at = taken_at;
    // What the live store records as it watches (src/source/store): the evictions with
    // the preemptor resolved from the UID in Kueue's message, and the timeline.
    (snap.evictions, snap.events) = gangplank::source::history::records_from_state(&state);
    snap.state = Arc::new(state);
    snap.sync = ResourceKind::ALL
        .iter()
        .map(|&k| {
            let mut s = ResourceSync::new(k);
            s.on(SyncEvent::ListStarted, taken_at);
            s.on(SyncEvent::ListDone, taken_at);
            s
        })
        .collect();
    let live = LivePlan {
        generation: 1,
        plan,
        drift: Vec::new(),
        plan_time: std::time::Duration::from_millis(3),
    };
    (
        feed::console_data(&snap, Some(&live), "simulator: seed", 1),
        now,
    )
}

fn app_on(data: &ConsoleData, now: i64, view: ViewId, w: u16, h: u16) -> App {
    let mut app = App::new(
        keymap::Keymap::default(),
        Theme::preset("dark"),
        false,
        view,
    );
    update(&mut app, Msg::Resize(w, h));
    update(&mut app, Msg::Tick(now));
    update(&mut app, Msg::Data(data.clone()));
    app
}

#[test]
fn every_view_from_the_simulated_seed_story() {
    let (data, now) = seed_at(12);
    for view in ViewId::ALL {
        for (w, h) in [(80, 24), (160, 48)] {
            let app = app_on(&data, now, view, w, h);
            insta::assert_snapshot!(
                format!("sim_{}_{w}x{h}", view.name().to_lowercase()),
                screen(&app, w, h)
            );
        }
    }
}

#[test]
fn the_simulated_story_reads_as_the_seed_tells_it() {
    let (data, now) = seed_at(12);
    let app = app_on(&data, now, ViewId::Workloads, 160, 48);
    let shot = screen(&app, 160, 48);
    // The row's own columns, before a "preempted by …" verdict naming another job.
    let row = |needle: &str| {
        shot.lines()
            .find(|l| {
                l.split("preempted by")
                    .next()
                    .unwrap_or("")
                    .contains(needle)
            })
            .unwrap_or_else(|| panic!("no row for {needle}:\n{shot}"))
            .to_string()
    };
    assert!(row("boss-urgent").contains("Admitted"), "{shot}");
    assert!(row("gpt-eval").contains("Preempted"), "{shot}");
    assert!(row("yolo-train").contains("Preempted"), "{shot}");
    assert!(row("bert-pretrain").contains("Admitted"), "{shot}");
    let queues = screen(&app_on(&data, now, ViewId::Queues, 160, 48), 160, 48);
    assert!(queues.contains("32/32"), "{queues}");
}

#[test]
fn every_theme_renders_the_simulated_queues_view() {
    let (data, now) = seed_at(12);
    for theme in ["dark", "light", "high-contrast", "monochrome"] {
        let mut app = App::new(
            keymap::Keymap::default(),
            Theme::preset(theme),
            false,
            ViewId::Queues,
        );
        update(&mut app, Msg::Resize(80, 24));
        update(&mut app, Msg::Tick(now));
        update(&mut app, Msg::Data(data.clone()));
        insta::assert_snapshot!(format!("sim_queues_theme_{theme}"), screen(&app, 80, 24));
    }
}

/// Issue #12: "who preempted me?" — the Events view names the preemptor (resolved from
/// the UID in Kueue's Preempted condition message) and the victim by job name, with
/// the reason and the GPUs freed; the victims' rows and details say it too.
#[test]
fn events_name_the_preemptor_of_each_victim() {
    let (data, now) = seed_at(12);
    let mut app = app_on(&data, now, ViewId::Workloads, 80, 24);
    update(
        &mut app,
        Msg::Key(crossterm::event::KeyEvent::from(
            crossterm::event::KeyCode::Char('8'),
        )),
    );
    assert_eq!(app.view, ViewId::Events);
    let shot = screen(&app, 80, 24);
    for victim in ["yolo-train", "gpt-eval"] {
        let line = shot
            .lines()
            .find(|l| l.contains("Preempted") && l.contains("preempted") && l.contains(victim))
            .unwrap_or_else(|| panic!("no preemption of {victim}:\n{shot}"));
        assert!(line.contains("nlp-team/boss-ur"), "{line}");
    }
    assert!(shot.contains("Admitted"), "{shot}");
    // Newest first: the preemptions (minute 10) above the first admissions (minute 0).
    let first = |needle: &str| shot.lines().position(|l| l.contains(needle)).unwrap();
    assert!(
        first("Preempted") < first("bert-pretrain admitted"),
        "{shot}"
    );
    // The Events detail has the reason and the GPUs freed.
    let wide = app_on(&data, now, ViewId::Events, 160, 48);
    let s = screen(&wide, 160, 48);
    assert!(s.contains("8 GPUs freed"), "{s}");
    // The victim's row says who, and its detail the count.
    let wl = screen(&app_on(&data, now, ViewId::Workloads, 160, 48), 160, 48);
    let row = wl
        .lines()
        .find(|l| l.contains("yolo-train"))
        .unwrap_or_else(|| panic!("{wl}"));
    assert!(row.contains("preempted by nlp-team/boss-urgent"), "{row}");
}

/// Issue #12 item 7: the Plan view says why. At minute 12 nothing more is planned:
/// no empty `cycle N` headers, and the ClusterQueue's pending head with its reason,
/// its total shortfall and what could free room.
#[test]
fn the_plan_view_says_why_the_head_waits() {
    let (data, now) = seed_at(12);
    let s = screen(&app_on(&data, now, ViewId::Plan, 160, 48), 160, 48);
    assert!(!s.contains("cycle 1"), "no empty cycle headers:\n{s}");
    let wait = s
        .lines()
        .find(|l| l.contains("wait") && l.contains("gpt-eval"))
        .unwrap_or_else(|| panic!("the head and its reason:\n{s}"));
    assert!(wait.contains("needs 8 nvidia.com/gpu"), "{wait}");
    assert!(s.contains("short 8 nvidia.com/gpu in p4d-flavor"), "{s}");
    assert!(
        s.contains("could free it: nothing of lower priority"),
        "{s}"
    );
}
