//! The keymap: the single source of truth for key handling, the `?` help and the docs.
//!
//! Each [`KeyAction`] has a config name, a description and default keys. A config file
//! may replace the keys of any action (`[keys] quit = ["q", "ctrl-q"]`).

use crossterm::event::KeyEvent;
use std::collections::HashMap;

pub use super::keychord::KeyChord;

/// Everything a key can do outside the command and filter lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyAction {
    Quit,
    Help,
    Command,
    Filter,
    NextView,
    PrevView,
    Goto(usize),
    Select,
    Back,
    Up,
    Down,
    Top,
    Bottom,
    PageUp,
    PageDown,
    SortNext,
    SortReverse,
    Approve,
    Reprioritize,
    Hold,
    Resume,
    Describe,
    Yaml,
}

/// (action, config name, description, default keys), in help order.
const DEFAULTS: &[(KeyAction, &str, &str, &[&str])] = &[
    (KeyAction::Quit, "quit", "quit", &["q", "ctrl-c"]),
    (KeyAction::Help, "help", "show or hide this help", &["?"]),
    (
        KeyAction::Command,
        "command",
        "command line (:wl, :cq, …; Tab completes)",
        &[":"],
    ),
    (
        KeyAction::Filter,
        "filter",
        "filter: text, ns=, queue=, cq=, state=, priority=",
        &["/"],
    ),
    (KeyAction::NextView, "next-view", "next view", &["tab"]),
    (
        KeyAction::PrevView,
        "prev-view",
        "previous view",
        &["shift-tab"],
    ),
    (KeyAction::Goto(0), "view-queues", "Queues view", &["1"]),
    (
        KeyAction::Goto(1),
        "view-workloads",
        "Workloads view",
        &["2"],
    ),
    (KeyAction::Goto(2), "view-nodes", "Nodes view", &["3"]),
    (KeyAction::Goto(3), "view-plan", "Plan view", &["4"]),
    (KeyAction::Goto(4), "view-drift", "Drift view", &["5"]),
    (KeyAction::Goto(5), "view-audit", "Audit view", &["6"]),
    (KeyAction::Goto(6), "view-health", "Health view", &["7"]),
    (KeyAction::Goto(7), "view-events", "Events view", &["8"]),
    (
        KeyAction::Select,
        "select",
        "drill in / details",
        &["enter"],
    ),
    (
        KeyAction::Back,
        "back",
        "back / close / clear filter",
        &["esc"],
    ),
    (KeyAction::Up, "up", "move up", &["up", "k"]),
    (KeyAction::Down, "down", "move down", &["down", "j"]),
    (KeyAction::Top, "top", "first row", &["g", "home"]),
    (KeyAction::Bottom, "bottom", "last row", &["G", "end"]),
    (KeyAction::PageUp, "page-up", "page up", &["pgup"]),
    (KeyAction::PageDown, "page-down", "page down", &["pgdn"]),
    (KeyAction::SortNext, "sort", "sort by next column", &["s"]),
    (
        KeyAction::SortReverse,
        "sort-reverse",
        "reverse sort order",
        &["S"],
    ),
    (
        KeyAction::Approve,
        "approve",
        "approve selected proposal",
        &["a"],
    ),
    (
        KeyAction::Reprioritize,
        "reprioritize",
        "reprioritize selected workload",
        &["p"],
    ),
    (
        KeyAction::Hold,
        "hold",
        "hold selected workload or queue",
        &["h"],
    ),
    (
        KeyAction::Resume,
        "resume",
        "resume selected workload or queue",
        &["r"],
    ),
    (
        KeyAction::Describe,
        "describe",
        "describe the selected workload, queue or node (conditions, events)",
        &["d"],
    ),
    (
        KeyAction::Yaml,
        "yaml",
        "YAML of the selected workload, queue or node",
        &["y"],
    ),
];

impl KeyAction {
    /// Every action, in help order.
    pub fn all() -> impl Iterator<Item = KeyAction> {
        DEFAULTS.iter().map(|d| d.0)
    }

    /// The name used in `[keys]` of the config file.
    pub fn config_name(self) -> &'static str {
        DEFAULTS.iter().find(|d| d.0 == self).map_or("?", |d| d.1)
    }

    pub fn description(self) -> &'static str {
        DEFAULTS.iter().find(|d| d.0 == self).map_or("", |d| d.2)
    }

    pub fn from_config_name(name: &str) -> Option<KeyAction> {
        DEFAULTS.iter().find(|d| d.1 == name).map(|d| d.0)
    }
}

/// Action → keys, with a reverse index for lookups.
#[derive(Clone, Debug)]
pub struct Keymap {
    bindings: Vec<(KeyAction, Vec<KeyChord>)>,
    index: HashMap<KeyChord, KeyAction>,
}

impl Default for Keymap {
    fn default() -> Self {
        Keymap::with_overrides(&[]).unwrap_or_else(|_| unreachable!("the defaults parse"))
    }
}

impl Keymap {
    /// The defaults with some actions' keys replaced. Errors name the action and key.
    pub fn with_overrides(overrides: &[(String, Vec<String>)]) -> Result<Keymap, String> {
        let mut bindings = Vec::new();
        for &(action, _, _, keys) in DEFAULTS {
            let parsed: Result<Vec<_>, _> = keys.iter().map(|k| KeyChord::parse(k)).collect();
            bindings.push((action, parsed?));
        }
        for (name, keys) in overrides {
            let action = KeyAction::from_config_name(name)
                .ok_or_else(|| format!("unknown action {name:?}"))?;
            let parsed: Result<Vec<_>, _> = keys.iter().map(|k| KeyChord::parse(k)).collect();
            if let Some(b) = bindings.iter_mut().find(|b| b.0 == action) {
                b.1 = parsed?;
            }
        }
        let mut index = HashMap::new();
        for (action, chords) in &bindings {
            for chord in chords {
                if let Some(prev) = index.insert(*chord, *action)
                    && prev != *action
                {
                    return Err(format!(
                        "key \"{chord}\" is bound to both {:?} and {:?}",
                        prev.config_name(),
                        action.config_name()
                    ));
                }
            }
        }
        Ok(Keymap { bindings, index })
    }

    pub fn lookup(&self, ev: &KeyEvent) -> Option<KeyAction> {
        self.index.get(&KeyChord::from_event(ev)).copied()
    }

    pub fn keys_for(&self, action: KeyAction) -> &[KeyChord] {
        self.bindings
            .iter()
            .find(|b| b.0 == action)
            .map_or(&[], |b| b.1.as_slice())
    }

    /// (keys joined with " / ", description) for every action, in help order.
    pub fn help_entries(&self) -> Vec<(String, &'static str)> {
        self.bindings
            .iter()
            .map(|(action, chords)| {
                let keys: Vec<String> = chords.iter().map(ToString::to_string).collect();
                (keys.join(" / "), action.description())
            })
            .collect()
    }

    /// The keys table in Markdown, for `docs/console.md`.
    pub fn markdown_table(&self) -> String {
        let mut out = String::from("| Keys | Action | Config name |\n|---|---|---|\n");
        for (action, chords) in &self.bindings {
            let keys: Vec<String> = chords.iter().map(|c| format!("`{c}`")).collect();
            out.push_str(&format!(
                "| {} | {} | `{}` |\n",
                keys.join(" "),
                action.description(),
                action.config_name()
            ));
        }
        out
    }
}
