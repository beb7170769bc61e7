//! update(): filter parsing, command completion, keymap parsing, sorting, navigation,
//! drill-in and back, read-only refusal and action effects.

use crate::tui_fixture;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use gangplank::tui::app::Mode;
use gangplank::tui::command::{self, Command};
use gangplank::tui::filter::{Filter, FilterKey, Term};
use gangplank::tui::keymap::{KeyAction, KeyChord, Keymap};
use gangplank::tui::*;
use tui_fixture::{app, key, type_str};

fn names(a: &App) -> Vec<String> {
    a.visible(ViewId::Workloads)
        .iter()
        .map(|&i| {
            let r = &a.cache.workloads[i as usize];
            format!("{}/{}", r.namespace, r.name)
        })
        .collect()
}

#[test]
fn filter_parses_text_and_fields() {
    let f = Filter::parse("boss ns=nlp-team  state=Pending").unwrap();
    assert_eq!(
        f.terms,
        vec![
            Term::Text("boss".into()),
            Term::Field(FilterKey::Namespace, "nlp-team".into()),
            Term::Field(FilterKey::State, "pending".into()),
        ]
    );
    assert!(Filter::parse("namespace=a queue=b cq=c priority=1").is_ok());
    let err = Filter::parse("colour=red").unwrap_err();
    assert!(err.0.contains("unknown filter key \"colour\""), "{err}");
    assert!(Filter::parse("ns=").is_err());
    assert!(Filter::parse("").unwrap().is_empty());
}

#[test]
fn filter_terms_are_anded_on_rows() {
    let mut a = app(ViewId::Workloads, 80, 24, "dark");
    update(&mut a, key(KeyCode::Char('/')));
    type_str(&mut a, "ns=nlp-team state=admitted");
    assert_eq!(names(&a), ["nlp-team/bert-pretrain", "nlp-team/gpt-eval"]);
    update(&mut a, key(KeyCode::Enter));
    assert_eq!(a.mode, Mode::Normal);
    assert_eq!(a.filter.source, "ns=nlp-team state=admitted");
    // Priority matches the class name or the value; text is a substring.
    update(&mut a, key(KeyCode::Char('/')));
    update(&mut a, key(KeyCode::Esc));
    assert!(a.filter.is_empty());
    update(&mut a, key(KeyCode::Char('/')));
    type_str(&mut a, "priority=1000000");
    assert_eq!(names(&a), ["nlp-team/boss-urgent-llama-finetune"]);
    update(&mut a, key(KeyCode::Enter));
    update(&mut a, key(KeyCode::Esc));
    assert_eq!(names(&a).len(), 5, "Esc in normal mode clears the filter");
}

#[test]
fn command_completion() {
    assert_eq!(command::complete("wo").as_deref(), Some("workload"));
    assert_eq!(command::complete("wor").as_deref(), Some("workload"));
    // Ambiguous and already at the common prefix ("no", "node", "nodes"): no change.
    assert_eq!(command::complete("no"), None);
    assert_eq!(command::complete("dr").as_deref(), Some("drift "));
    assert_eq!(command::complete("coh").as_deref(), Some("cohort"));
    assert_eq!(command::complete("zzz"), None);
    assert!(command::candidates("c").contains(&"cq"));
    assert_eq!(
        command::parse("cq").unwrap(),
        Command::View(ViewId::Queues, None)
    );
    assert_eq!(
        command::parse("wl nlp-team").unwrap(),
        Command::View(ViewId::Workloads, Some("ns=nlp-team".into()))
    );
    assert_eq!(command::parse("ctx").unwrap(), Command::Context(None));
    assert!(command::parse("bogus").is_err());
}

#[test]
fn command_line_switches_views_with_tab_completion() {
    let mut a = app(ViewId::Workloads, 80, 24, "dark");
    update(&mut a, key(KeyCode::Char(':')));
    type_str(&mut a, "hea");
    update(&mut a, key(KeyCode::Tab));
    assert_eq!(a.mode, Mode::Command("health ".into()));
    update(&mut a, key(KeyCode::Enter));
    assert_eq!(a.view, ViewId::Health);
    for (cmd, view) in [
        ("cq", ViewId::Queues),
        ("lq", ViewId::Queues),
        ("cohort", ViewId::Queues),
        ("wl", ViewId::Workloads),
        ("nodes", ViewId::Nodes),
        ("plan", ViewId::Plan),
        ("drift", ViewId::Drift),
        ("audit", ViewId::Audit),
        ("clusterqueues", ViewId::Queues),
    ] {
        update(&mut a, key(KeyCode::Char(':')));
        type_str(&mut a, cmd);
        update(&mut a, key(KeyCode::Enter));
        assert_eq!(a.view, view, ":{cmd}");
    }
    update(&mut a, key(KeyCode::Char(':')));
    type_str(&mut a, "ctx");
    update(&mut a, key(KeyCode::Enter));
    assert_eq!(a.message.as_deref(), Some("context: seed (simulator)"));
    update(&mut a, key(KeyCode::Char(':')));
    type_str(&mut a, "q");
    assert_eq!(update(&mut a, key(KeyCode::Enter)), vec![Effect::Quit]);
}

#[test]
fn keymap_parses_key_strings() {
    let k = |s| KeyChord::parse(s).unwrap();
    let ev = |c, m| KeyChord::from_event(&KeyEvent::new(c, m));
    assert_eq!(k("ctrl-c"), ev(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert_eq!(k("G"), ev(KeyCode::Char('G'), KeyModifiers::SHIFT));
    assert_eq!(k("shift-tab"), ev(KeyCode::BackTab, KeyModifiers::SHIFT));
    assert_eq!(k("pgdn"), ev(KeyCode::PageDown, KeyModifiers::NONE));
    assert_eq!(k("f5"), ev(KeyCode::F(5), KeyModifiers::NONE));
    assert_eq!(k("-"), ev(KeyCode::Char('-'), KeyModifiers::NONE));
    assert_eq!(k("ctrl-c").to_string(), "ctrl-c");
    assert!(KeyChord::parse("hyper-x").is_err());
    assert!(KeyChord::parse("nokey").is_err());
    let km = Keymap::with_overrides(&[("hold".into(), vec!["H".into()])]).unwrap();
    assert_eq!(km.keys_for(KeyAction::Hold), &[k("H")]);
    let clash = Keymap::with_overrides(&[("hold".into(), vec!["q".into()])]).unwrap_err();
    assert!(clash.contains("\"q\" is bound to both"), "{clash}");
    assert!(Keymap::with_overrides(&[("fly".into(), vec!["x".into()])]).is_err());
}

#[test]
fn help_lists_every_bound_key() {
    let a = app(ViewId::Workloads, 80, 24, "dark");
    let help: Vec<String> = views::help::lines(&a)
        .iter()
        .map(|l| l.to_string())
        .collect();
    for action in KeyAction::all() {
        let keys: Vec<String> = a
            .keymap
            .keys_for(action)
            .iter()
            .map(|c| c.to_string())
            .collect();
        let line = help.iter().find(|l| l.contains(action.description()));
        let line = line.unwrap_or_else(|| panic!("no help line for {action:?}"));
        for k in keys {
            assert!(line.contains(&k), "{k} missing from {line:?}");
        }
    }
    assert_eq!(help.len(), KeyAction::all().count());
}

#[test]
fn sort_cycles_columns_and_reverses() {
    let mut a = app(ViewId::Workloads, 80, 24, "dark");
    assert_eq!(names(&a)[0], "cv-team/resnet-sweep");
    update(&mut a, key(KeyCode::Char('s'))); // QUEUE
    update(&mut a, key(KeyCode::Char('s'))); // PRIORITY
    assert_eq!(a.message.as_deref(), Some("sorted by PRIORITY ascending"));
    assert_eq!(
        names(&a).last().unwrap(),
        "nlp-team/boss-urgent-llama-finetune"
    );
    update(&mut a, key(KeyCode::Char('S')));
    assert_eq!(names(&a)[0], "nlp-team/boss-urgent-llama-finetune");
    update(&mut a, key(KeyCode::Char('s'))); // STATE
    update(&mut a, key(KeyCode::Char('s'))); // GPUS
    assert_eq!(
        names(&a)[0],
        "nlp-team/boss-urgent-llama-finetune",
        "16 GPUs, descending"
    );
}

#[test]
fn navigation_keys_move_the_selection() {
    let mut a = app(ViewId::Workloads, 80, 24, "dark");
    update(&mut a, key(KeyCode::Char('j')));
    update(&mut a, key(KeyCode::Down));
    assert_eq!(a.list().selected, 2);
    update(&mut a, key(KeyCode::Char('G')));
    assert_eq!(a.list().selected, 4);
    update(&mut a, key(KeyCode::Char('k')));
    assert_eq!(a.list().selected, 3);
    update(&mut a, key(KeyCode::Home));
    assert_eq!(a.list().selected, 0);
    update(&mut a, key(KeyCode::PageDown));
    assert_eq!(a.list().selected, 4);
    update(&mut a, key(KeyCode::Tab));
    assert_eq!(a.view, ViewId::Nodes);
    update(&mut a, key(KeyCode::BackTab));
    update(&mut a, key(KeyCode::BackTab));
    assert_eq!(a.view, ViewId::Queues);
    update(&mut a, key(KeyCode::Char('7')));
    assert_eq!(a.view, ViewId::Health);
    let ctrl_c = Msg::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert_eq!(update(&mut a, ctrl_c), vec![Effect::Quit]);
    assert_eq!(update(&mut a, key(KeyCode::Char('q'))), vec![Effect::Quit]);
}

#[test]
fn enter_on_a_queue_drills_into_its_workloads_and_esc_returns() {
    let mut a = app(ViewId::Queues, 80, 24, "dark");
    update(&mut a, key(KeyCode::Char('j'))); // cv-team/cv-team-queue
    update(&mut a, key(KeyCode::Enter));
    assert_eq!(a.view, ViewId::Workloads);
    assert_eq!(names(&a), ["cv-team/resnet-sweep", "cv-team/yolo-train"]);
    update(&mut a, key(KeyCode::Enter));
    assert!(a.detail);
    update(&mut a, key(KeyCode::Esc));
    assert!(!a.detail);
    update(&mut a, key(KeyCode::Esc));
    assert_eq!(a.view, ViewId::Queues);
    assert!(a.filter.is_empty());
}

#[test]
fn readonly_refuses_every_action() {
    let mut a = app(ViewId::Workloads, 80, 24, "dark");
    a.readonly = true;
    for (c, name) in [
        ('a', "approve"),
        ('p', "reprioritize"),
        ('h', "hold"),
        ('r', "resume"),
    ] {
        let effects = update(&mut a, key(KeyCode::Char(c)));
        assert_eq!(effects, vec![Effect::Redraw]);
        assert_eq!(a.message, Some(format!("read-only: {name} is disabled")));
    }
}

#[test]
fn actions_become_effects_when_writable() {
    let mut a = app(ViewId::Workloads, 80, 24, "dark");
    let effects = update(&mut a, key(KeyCode::Char('h')));
    assert_eq!(
        effects[0],
        Effect::RunAction(ActionRequest {
            kind: ActionKind::Hold,
            target: ActionTarget::Workload {
                namespace: "cv-team".into(),
                name: "resnet-sweep".into()
            },
            priority: None,
        })
    );
    update(&mut a, key(KeyCode::Char('a')));
    assert_eq!(
        a.message.as_deref(),
        Some("approve: select a proposal in the Plan view (4)")
    );
    update(&mut a, key(KeyCode::Char('4')));
    update(&mut a, key(KeyCode::Char('j')));
    let effects = update(&mut a, key(KeyCode::Char('a')));
    assert_eq!(
        effects[0],
        Effect::RunAction(ActionRequest {
            kind: ActionKind::Approve,
            target: ActionTarget::Proposal { id: "p-2".into() },
            priority: None,
        })
    );
    update(&mut a, key(KeyCode::Char('1')));
    let effects = update(&mut a, key(KeyCode::Char('r')));
    assert_eq!(
        effects[0],
        Effect::RunAction(ActionRequest {
            kind: ActionKind::Resume,
            target: ActionTarget::ClusterQueue {
                name: "hyperpod-global-queue".into()
            },
            priority: None,
        })
    );
}

#[test]
fn gpu_history_keeps_an_hour_of_minutes() {
    let mut h = app::History::default();
    for m in 0..90 {
        h.record(m * 60_000, m);
        h.record(m * 60_000 + 30_000, m + 1);
    }
    assert_eq!(h.samples.len(), 60);
    assert_eq!(h.samples.back(), Some(&(89, 90)));
    assert_eq!(h.samples.front(), Some(&(30, 31)));
}

#[test]
fn status_bar_spells_out_sync_state() {
    use gangplank::tui::widgets::status_bar::sync_summary;
    let mut data = tui_fixture::data();
    let now = tui_fixture::NOW;
    assert_eq!(sync_summary(&data, now), ("synced".into(), false));
    data.sync.resources = vec![
        ResourceSync {
            kind: "wl".into(),
            state: SyncState::Synced,
        },
        ResourceSync {
            kind: "pods".into(),
            state: SyncState::Syncing {
                done: 120,
                total: Some(500),
            },
        },
        ResourceSync {
            kind: "nodes".into(),
            state: SyncState::Resyncing {
                since: now - 12_000,
            },
        },
        ResourceSync {
            kind: "rf".into(),
            state: SyncState::Forbidden,
        },
        ResourceSync {
            kind: "cq".into(),
            state: SyncState::Error("timeout".into()),
        },
    ];
    let (text, bad) = sync_summary(&data, now);
    assert_eq!(
        text,
        "pods syncing 120/500, nodes resyncing 12s, rf forbidden, cq error: timeout"
    );
    assert!(bad);
    let mut a = app(ViewId::Workloads, 160, 48, "dark");
    update(&mut a, Msg::Data(data));
    let s = tui_fixture::screen(&a, 160, 48);
    assert!(
        s.contains("ctx seed (simulator) │ ns all │ pods syncing 120/500, nodes resyncing 12s"),
        "{s}"
    );
    // The plan was computed after the last event: it is current, and shows no ticking age.
    assert!(s.contains("last event 3s ago │ plan 3ms, current"), "{s}");

    // A newer event than the plan's snapshot: the plan lags and says how old it is.
    let mut lagging = tui_fixture::data();
    let mut plan = (*lagging.plan.clone().unwrap()).clone();
    plan.computed_at = Some(now - 5_000);
    lagging.plan = Some(std::sync::Arc::new(plan));
    lagging.sync.last_event = Some(now - 1_000);
    update(&mut a, Msg::Data(lagging));
    let s = tui_fixture::screen(&a, 160, 48);
    assert!(
        s.contains("last event 1s ago │ plan 3ms, re-planning (plan is 5s old)"),
        "{s}"
    );
}

#[test]
fn ages_are_compact() {
    use gangplank::tui::widgets::format_age;
    assert_eq!(format_age(45_000), "45s");
    assert_eq!(format_age(12 * 60_000), "12m");
    assert_eq!(format_age(3 * 3_600_000 + 4 * 60_000), "3h04m");
    assert_eq!(format_age(2 * 86_400_000 + 3 * 3_600_000), "2d03h");
    assert_eq!(format_age(332 * 86_400_000), "332d");
    assert_eq!(format_age(-5), "0s");
}

#[test]
fn observe_rebuilds_only_on_change() {
    let mut a = app(ViewId::Workloads, 80, 24, "dark");
    let data = a.cache.data.clone();
    update(&mut a, key(KeyCode::Char('/')));
    type_str(&mut a, "boss");
    update(&mut a, key(KeyCode::Enter));
    // Same snapshot: the filtered index survives untouched.
    a.observe(&data, tui_fixture::NOW + 1_000);
    assert_eq!(a.now, tui_fixture::NOW + 1_000);
    assert_eq!(names(&a), ["nlp-team/boss-urgent-llama-finetune"]);
    // New snapshot without the boss job: rebuilt, still filtered.
    let mut state = (*data.state).clone();
    state.workloads.remove(&(
        "nlp-team".to_string(),
        "boss-urgent-llama-finetune".to_string(),
    ));
    let newer = ConsoleData {
        state: std::sync::Arc::new(state),
        generation: 2,
        ..data
    };
    a.observe(&newer, tui_fixture::NOW + 2_000);
    assert!(names(&a).is_empty());
    assert_eq!(a.cache.workloads.len(), 4);
}
