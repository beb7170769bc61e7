//! The console's confirmation prompt for actions: the executor's summary is shown,
//! the next key answers (`y` confirms, anything else cancels) and no other key acts
//! while the prompt is up.

use crate::tui_fixture;

use crossterm::event::KeyCode;
use gangplank::tui::app::Mode;
use gangplank::tui::*;
use tui_fixture::{app, key};

#[test]
fn y_confirms_the_prompted_action() {
    let mut a = app(ViewId::Workloads, 100, 30, "dark");
    update(&mut a, Msg::Confirm("hold nlp-team/bert-pretrain".into()));
    assert_eq!(a.mode, Mode::Confirm("hold nlp-team/bert-pretrain".into()));
    assert!(
        a.message
            .as_deref()
            .unwrap()
            .starts_with("press y to confirm: hold")
    );
    let effects = update(&mut a, key(KeyCode::Char('y')));
    assert_eq!(
        effects,
        vec![
            Effect::Confirmed {
                prompt: 0,
                yes: true
            },
            Effect::Redraw
        ]
    );
    assert_eq!(a.mode, Mode::Normal);
}

#[test]
fn any_other_key_cancels_and_does_not_act() {
    let mut a = app(ViewId::Workloads, 100, 30, "dark");
    update(&mut a, Msg::Confirm("hold nlp-team/bert-pretrain".into()));
    // `q` would quit in normal mode: here it only cancels.
    let effects = update(&mut a, key(KeyCode::Char('q')));
    assert_eq!(
        effects,
        vec![
            Effect::Confirmed {
                prompt: 0,
                yes: false
            },
            Effect::Redraw
        ]
    );
    assert!(a.message.as_deref().unwrap().starts_with("cancelled"));
}

// --- reprioritize: `p` opens the picker, Enter asks the action task, `y` confirms ---

use std::sync::Arc;

use gangplank::actions::PriorityTarget;
use gangplank::actions::reprioritize::consequence;
use gangplank::model::{
    ClusterState, PriorityClass, PriorityClassKind, PriorityClassRef, WithinClusterQueue,
    WorkloadPriorityClass,
};
use tui_fixture::{NOW, screen, type_str};

const W: u16 = 120;
const H: u16 = 30;

/// The fixture with its PriorityClasses, one WorkloadPriorityClass, and the
/// ClusterQueue preempting lower priorities (as the seed's does).
fn state_with_classes() -> ClusterState {
    let mut s = tui_fixture::cluster();
    for (name, value) in [
        ("boss-urgent", 1_000_000),
        ("normal-batch", 1000),
        ("low", 100),
    ] {
        s.priority_classes.insert(
            name.into(),
            PriorityClass {
                name: name.into(),
                value,
                ..PriorityClass::default()
            },
        );
    }
    s.workload_priority_classes.insert(
        "research".into(),
        WorkloadPriorityClass {
            name: "research".into(),
            value: 5000,
            description: None,
            origin: Default::default(),
        },
    );
    for cq in s.cluster_queues.values_mut() {
        cq.preemption.within_cluster_queue = WithinClusterQueue::LowerPriority;
    }
    s
}

fn app_with(state: ClusterState) -> App {
    let mut a = app(ViewId::Workloads, W, H, "dark");
    let mut data = tui_fixture::data();
    data.state = Arc::new(state);
    data.generation += 1;
    update(&mut a, Msg::Data(data));
    a
}

/// Selects `ns/name` in the Workloads view through the filter, as an operator would.
fn select(a: &mut App, key_: &str) {
    update(a, key(KeyCode::Char('/')));
    type_str(a, key_);
    update(a, key(KeyCode::Enter));
}

/// The screen line containing `needle`, without the panel's right border.
fn line_with<'a>(screen: &'a str, needle: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{screen}"))
        .trim_end_matches(['│', ' '])
}

fn position(screen: &str, needle: &str) -> usize {
    screen
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{screen}"))
}

#[test]
fn p_lists_the_classes_with_values_highest_first_and_marks_the_current_one() {
    let mut a = app_with(state_with_classes());
    select(&mut a, "nlp-team/bert");
    update(&mut a, key(KeyCode::Char('p')));
    let s = screen(&a, W, H);
    assert!(s.contains("Reprioritize nlp-team/bert-pretrain"), "{s}");
    assert!(s.contains("current: 1000 (normal-batch)"), "{s}");
    let boss = line_with(&s, "boss-urgent");
    assert!(
        boss.contains("PriorityClass") && boss.contains("1000000"),
        "{boss}"
    );
    let research = line_with(&s, "research");
    assert!(research.contains("WorkloadPriorityClass") && research.contains("5000"));
    let normal = line_with(&s, "normal-batch ");
    assert!(
        normal.contains("1000") && normal.ends_with("current"),
        "{normal}"
    );
    // The selection starts on the current class, marked with › (not colour alone).
    assert!(normal.contains('›'), "{normal}");
    assert!(line_with(&s, " low ").contains("100"));
    let order: Vec<usize> = ["boss-urgent", "research", "normal-batch ", " low "]
        .iter()
        .map(|n| position(&s, n))
        .collect();
    assert!(order.is_sorted(), "highest value first: {order:?}\n{s}");

    // Typing filters by name; a number is offered as a plain value.
    type_str(&mut a, "lo");
    let s = screen(&a, W, H);
    assert!(s.contains(" low "), "{s}");
    assert!(!s.contains("boss-urgent"), "{s}");
    update(&mut a, key(KeyCode::Backspace));
    update(&mut a, key(KeyCode::Backspace));
    type_str(&mut a, "2500");
    let s = screen(&a, W, H);
    let value = line_with(&s, "value 2500");
    assert!(
        value.contains("spec.priority") && value.contains('›'),
        "{value}"
    );
    let effects = update(&mut a, key(KeyCode::Enter));
    assert_eq!(
        effects[0],
        Effect::RunAction(ActionRequest {
            kind: ActionKind::SetPriority,
            target: ActionTarget::Workload {
                namespace: "nlp-team".into(),
                name: "bert-pretrain".into(),
            },
            priority: Some(PriorityChoice::Value(2500)),
        })
    );
    assert_eq!(a.mode, Mode::Normal);
}

#[test]
fn the_consequence_is_shown_before_y_confirms() {
    let state = state_with_classes();
    let mut a = app_with(state.clone());
    select(&mut a, "nlp-team/bert");
    update(&mut a, key(KeyCode::Char('p')));
    // Arrows move from the current class (normal-batch) down to `low`.
    update(&mut a, key(KeyCode::Down));
    let effects = update(&mut a, key(KeyCode::Enter));
    let Effect::RunAction(req) = &effects[0] else {
        panic!("{effects:?}");
    };
    assert_eq!(req.priority, Some(PriorityChoice::Class("low".into())));
    let msg = a.message.clone().unwrap();
    assert!(msg.contains("working out what low would change"), "{msg}");

    // What the action task answers: the consequence on the same snapshot.
    let c = consequence(
        &state,
        "nlp-team/bert-pretrain",
        &PriorityTarget::Class("low".into()),
        NOW,
    )
    .unwrap();
    update(
        &mut a,
        Msg::Confirm(Prompt {
            id: 0,
            summary: "set spec.priority=100 (PriorityClass low) on Workload nlp-team/bert-pretrain"
                .into(),
            details: c.lines(),
        }),
    );
    let s = screen(&a, W, H);
    assert!(s.contains("Confirm · y confirms · n / Esc cancel"), "{s}");
    assert!(
        s.contains("priority of nlp-team/bert-pretrain: 1000 (PriorityClass normal-batch) → 100 (PriorityClass low)"),
        "{s}"
    );
    // Lowered below the others, bert becomes the boss job's victim.
    assert!(
        s.contains("preempted by: nobody → nlp-team/boss-urgent-llama-finetune (next cycle)"),
        "{s}"
    );
    assert!(
        s.contains("press y to confirm: set spec.priority=100"),
        "{s}"
    );
    let effects = update(&mut a, key(KeyCode::Char('y')));
    assert_eq!(
        effects,
        vec![
            Effect::Confirmed {
                prompt: 0,
                yes: true
            },
            Effect::Redraw
        ]
    );
    assert!(!screen(&a, W, H).contains("Confirm · y confirms"));
}

#[test]
fn unavailable_choices_are_greyed_with_the_reason_and_cannot_be_chosen() {
    let mut state = state_with_classes();
    let bert = std::sync::Arc::make_mut(
        state
            .workloads
            .get_mut(&("nlp-team".to_string(), "bert-pretrain".to_string()))
            .unwrap(),
    );
    bert.priority = 5000;
    bert.priority_class = Some(PriorityClassRef {
        kind: PriorityClassKind::WorkloadPriorityClass,
        name: "research".into(),
    });
    let mut a = app_with(state);
    select(&mut a, "nlp-team/bert");
    update(&mut a, key(KeyCode::Char('p')));
    let s = screen(&a, W, H);
    assert!(
        line_with(&s, " low ").contains("unavailable: the job uses a WorkloadPriorityClass"),
        "{s}"
    );
    assert!(line_with(&s, "› research").ends_with("current"), "{s}");
    // Greyed: the unavailable line is drawn in the theme's muted style.
    let term = tui_fixture::terminal(&a, W, H);
    let buf = term.backend().buffer();
    let y = position(&s, " low ");
    let row = s.lines().nth(y).unwrap();
    // Screen columns are characters (the borders are multi-byte).
    let x = row[..row.find(" low ").unwrap()].chars().count() as u16 + 1;
    let y = y as u16;
    assert_eq!(buf[(x, y)].symbol(), "l");
    assert_eq!(buf[(x, y)].fg, a.theme.muted.fg.unwrap());
    // Enter on the current class or on a greyed one does nothing but say why.
    let effects = update(&mut a, key(KeyCode::Enter));
    assert_eq!(effects, vec![Effect::Redraw]);
    assert_eq!(
        a.message.as_deref(),
        Some("reprioritize: research is the current priority")
    );
    type_str(&mut a, "low");
    let effects = update(&mut a, key(KeyCode::Enter));
    assert_eq!(effects, vec![Effect::Redraw]);
    assert_eq!(
        a.message.as_deref(),
        Some("reprioritize: low is unavailable: the job uses a WorkloadPriorityClass")
    );
    // Esc cancels without asking for anything.
    let effects = update(&mut a, key(KeyCode::Esc));
    assert_eq!(effects, vec![Effect::Redraw]);
    assert_eq!(a.mode, Mode::Normal);
    assert!(!screen(&a, W, H).contains("Reprioritize"));
}

#[test]
fn readonly_never_opens_the_picker() {
    let mut a = app_with(state_with_classes());
    a.readonly = true;
    let effects = update(&mut a, key(KeyCode::Char('p')));
    assert_eq!(effects, vec![Effect::Redraw]);
    assert_eq!(a.mode, Mode::Normal);
    let s = screen(&a, W, H);
    assert!(!s.contains("Reprioritize"), "{s}");
    assert!(s.contains("read-only: reprioritize is disabled"), "{s}");
}

// --- RBAC: action keys refused where the access reviews said no ---

fn filter_to(a: &mut App, text: &str) {
    update(a, key(KeyCode::Char('/')));
    tui_fixture::type_str(a, text);
    update(a, key(KeyCode::Enter));
}

#[test]
fn actions_refused_by_rbac_in_a_namespace_are_unavailable_there_only() {
    let mut a = app(ViewId::Workloads, 120, 30, "dark");
    let mut access = ActionAccess::default();
    access.namespaces.insert(
        "nlp-team".into(),
        "RBAC: no patch on workloads in nlp-team".into(),
    );
    update(&mut a, Msg::Access(access));
    let shot = tui_fixture::screen(&a, 120, 30);
    assert!(shot.contains("a h r p unavailable in nlp-team"), "{shot}");

    filter_to(&mut a, "bert-pretrain");
    let effects = update(&mut a, key(KeyCode::Char('h')));
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::RunAction(_))),
        "{effects:?}"
    );
    let msg = a.message.clone().unwrap();
    assert!(msg.contains("unavailable in nlp-team"), "{msg}");
    assert!(msg.contains("RBAC: no patch"), "{msg}");
    // `p` does not even open the picker.
    update(&mut a, key(KeyCode::Char('p')));
    assert_eq!(a.mode, Mode::Normal);

    // cv-team is allowed: the same key asks the executor.
    update(&mut a, key(KeyCode::Esc));
    filter_to(&mut a, "resnet-sweep");
    let effects = update(&mut a, key(KeyCode::Char('h')));
    assert!(
        effects.iter().any(|e| matches!(e, Effect::RunAction(_))),
        "{effects:?}"
    );
}

#[test]
fn actions_refused_everywhere_say_so_on_the_hint_line_and_approve_too() {
    let mut a = app(ViewId::Plan, 140, 30, "dark");
    update(
        &mut a,
        Msg::Access(ActionAccess {
            everywhere: Some("simulated RBAC forbids patch on workloads".into()),
            ..Default::default()
        }),
    );
    let shot = tui_fixture::screen(&a, 140, 30);
    assert!(
        shot.contains("a h r p unavailable: simulated RBAC forbids patch on workloads"),
        "{shot}"
    );
    let effects = update(&mut a, key(KeyCode::Char('a')));
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::RunAction(_))),
        "{effects:?}"
    );
    assert!(a.message.clone().unwrap().contains("unavailable"));
}
