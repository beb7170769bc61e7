//! The reprioritize picker (`p` on a workload): the WorkloadPriorityClasses and
//! PriorityClasses of the snapshot with their values, highest first, the current one
//! marked; typing filters them by name, and a typed integer is offered as a plain
//! value. Enter sends the choice to the action task, which works out the consequence
//! and asks for confirmation; Esc cancels.
//!
//! Everything here reads the published snapshot only; nothing is fetched.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::{App, Mode};
use super::msg::{ActionKind, ActionRequest, ActionTarget, Effect, PriorityChoice};
use crate::model::{ClusterState, PriorityClassKind, Workload};

/// The picker's state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Picker {
    pub namespace: String,
    pub name: String,
    /// What the operator typed: filters classes by name; an integer is also a value.
    pub input: String,
    /// Index into [`options`].
    pub selected: usize,
}

/// One line of the picker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PriorityOption {
    pub choice: PriorityChoice,
    /// The class name, or "value N".
    pub name: String,
    /// "WorkloadPriorityClass", "PriorityClass" or "spec.priority".
    pub kind: &'static str,
    pub value: i32,
    /// The workload uses this class now.
    pub current: bool,
    /// Why this choice cannot be made for this workload (shown greyed, with the reason).
    pub unavailable: Option<String>,
}

fn workload<'a>(state: &'a ClusterState, p: &Picker) -> Option<&'a Workload> {
    state
        .workloads
        .get(&(p.namespace.clone(), p.name.clone()))
        .map(|w| &**w)
}

/// The workload's current priority, described.
pub fn current(state: &ClusterState, p: &Picker) -> String {
    match workload(state, p) {
        Some(w) => match &w.priority_class {
            Some(c) => format!("{} ({})", w.priority, c.name),
            None => w.priority.to_string(),
        },
        None => "unknown (not in the snapshot)".into(),
    }
}

/// The choices for the picker's workload, filtered by what was typed: a typed integer
/// first, then the classes by value, highest first.
pub fn options(state: &ClusterState, p: &Picker) -> Vec<PriorityOption> {
    let wl = workload(state, p);
    let class = wl.and_then(|w| w.priority_class.as_ref());
    let on_wpc = class.is_some_and(|c| c.kind == PriorityClassKind::WorkloadPriorityClass);
    let has_job = wl.is_some_and(|w| w.owner.as_ref().is_some_and(|o| o.controller));
    let typed = p.input.trim();
    let needle = typed.to_lowercase();
    let mut out = Vec::new();
    if let Ok(v) = typed.parse::<i32>() {
        out.push(PriorityOption {
            choice: PriorityChoice::Value(v),
            name: format!("value {v}"),
            kind: "spec.priority",
            value: v,
            current: false,
            unavailable: None,
        });
    }
    let mut classes: Vec<PriorityOption> = Vec::new();
    for c in state.workload_priority_classes.values() {
        classes.push(PriorityOption {
            choice: PriorityChoice::Class(c.name.clone()),
            name: c.name.clone(),
            kind: "WorkloadPriorityClass",
            value: c.value,
            current: class.is_some_and(|k| {
                k.kind == PriorityClassKind::WorkloadPriorityClass && k.name == c.name
            }),
            // The label goes on the job; a bare Workload has none to carry it.
            unavailable: (!has_job).then(|| "no owning job to label".to_string()),
        });
    }
    for c in state.priority_classes.values() {
        // A WorkloadPriorityClass of the same name wins (as `set-priority` resolves it).
        if state.workload_priority_classes.contains_key(&c.name) {
            continue;
        }
        classes.push(PriorityOption {
            choice: PriorityChoice::Class(c.name.clone()),
            name: c.name.clone(),
            kind: "PriorityClass",
            value: c.value,
            current: class
                .is_some_and(|k| k.kind == PriorityClassKind::PriorityClass && k.name == c.name),
            // Kueue would set spec.priority back from the job's label.
            unavailable: on_wpc.then(|| "the job uses a WorkloadPriorityClass".to_string()),
        });
    }
    classes.sort_by(|a, b| b.value.cmp(&a.value).then_with(|| a.name.cmp(&b.name)));
    out.extend(classes.into_iter().filter(|o| {
        needle.is_empty() || o.name.to_lowercase().contains(&needle) || o.value.to_string() == typed
    }));
    out
}

/// Opens the picker on the selected workload, its current class selected.
pub fn open(app: &mut App, namespace: String, name: String) {
    let mut picker = Picker {
        namespace,
        name,
        ..Picker::default()
    };
    picker.selected = options(&app.cache.data.state, &picker)
        .iter()
        .position(|o| o.current)
        .unwrap_or(0);
    app.message = None;
    app.mode = Mode::Priority(picker);
}

/// A key while the picker is up.
pub fn on_key(app: &mut App, key: KeyEvent, mut p: Picker) -> Vec<Effect> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let opts = options(&app.cache.data.state, &p);
    // New data may have shortened the list since the last key.
    p.selected = p.selected.min(opts.len().saturating_sub(1));
    match key.code {
        KeyCode::Char('c') if ctrl => return vec![Effect::Quit],
        KeyCode::Esc => {
            app.mode = Mode::Normal;
            app.message = Some("reprioritize: cancelled".into());
            return vec![Effect::Redraw];
        }
        KeyCode::Up => p.selected = p.selected.saturating_sub(1),
        KeyCode::Down => p.selected = (p.selected + 1).min(opts.len().saturating_sub(1)),
        KeyCode::Backspace => {
            p.input.pop();
            p.selected = 0;
        }
        KeyCode::Char(c) if !ctrl => {
            p.input.push(c);
            p.selected = 0;
        }
        KeyCode::Enter => return choose(app, p, &opts),
        _ => return Vec::new(),
    }
    app.message = None;
    app.mode = Mode::Priority(p);
    vec![Effect::Redraw]
}

fn choose(app: &mut App, p: Picker, opts: &[PriorityOption]) -> Vec<Effect> {
    let Some(o) = opts.get(p.selected) else {
        app.message = Some(format!(
            "reprioritize: nothing matches {:?}; type a class name or a number",
            p.input
        ));
        app.mode = Mode::Priority(p);
        return vec![Effect::Redraw];
    };
    let why = if let Some(why) = &o.unavailable {
        Some(format!("{} is unavailable: {why}", o.name))
    } else if o.current {
        Some(format!("{} is the current priority", o.name))
    } else {
        None
    };
    if let Some(why) = why {
        app.message = Some(format!("reprioritize: {why}"));
        app.mode = Mode::Priority(p);
        return vec![Effect::Redraw];
    }
    app.mode = Mode::Normal;
    app.message = Some(format!(
        "reprioritize: working out what {} would change for {}/{}…",
        o.name, p.namespace, p.name
    ));
    vec![
        Effect::RunAction(ActionRequest {
            kind: ActionKind::SetPriority,
            target: ActionTarget::Workload {
                namespace: p.namespace,
                name: p.name,
            },
            priority: Some(o.choice.clone()),
        }),
        Effect::Redraw,
    ]
}
