//! Messages into [`update`](super::update) and effects out of it. Effects are data: the
//! run loop (or an SSH session, or a test) decides how to carry them out.

use crossterm::event::KeyEvent;

use super::data::ConsoleData;
use crate::model::Timestamp;

/// Everything that can happen to the console.
#[derive(Clone, Debug)]
pub enum Msg {
    /// A key press, mapped through the keymap (or edited into the command/filter line).
    Key(KeyEvent),
    /// New data was published.
    Data(ConsoleData),
    /// The clock moved (refreshes ages only). Milliseconds since the epoch.
    Tick(Timestamp),
    /// The terminal was resized to columns × rows.
    Resize(u16, u16),
    /// Feedback from an action executed elsewhere, shown on the message line.
    Notice(String),
    /// The action executor asks the operator to confirm this: the next key answers
    /// (`y` confirms, anything else cancels). See [`super::confirm`].
    Confirm(Prompt),
    /// Where RBAC refuses the console's writes (from access reviews at start).
    Access(ActionAccess),
}

/// Where the cluster's RBAC refuses the writes behind the action keys (`patch` on
/// Workloads), from SelfSubjectAccessReviews the action task makes when the console
/// starts. Refused actions are shown unavailable, with the reason, and never requested.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ActionAccess {
    /// Refused in every namespace.
    pub everywhere: Option<String>,
    /// Refused in these namespaces (namespace → reason).
    pub namespaces: std::collections::BTreeMap<String, String>,
}

impl ActionAccess {
    /// Why writes in `namespace` are refused, if they are.
    pub fn refusal(&self, namespace: &str) -> Option<&str> {
        self.everywhere
            .as_deref()
            .or_else(|| self.namespaces.get(namespace).map(String::as_str))
    }

    /// Nothing is known to be refused.
    pub fn all_allowed(&self) -> bool {
        self.everywhere.is_none() && self.namespaces.is_empty()
    }
}

/// A confirmation prompt: a one-line summary of exactly what will be written, and
/// optional detail lines (a reprioritize's consequence) shown in a panel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prompt {
    pub summary: String,
    pub details: Vec<String>,
}

impl From<String> for Prompt {
    fn from(summary: String) -> Prompt {
        Prompt {
            summary,
            details: Vec::new(),
        }
    }
}

impl From<&str> for Prompt {
    fn from(summary: &str) -> Prompt {
        summary.to_string().into()
    }
}

/// What the caller of `update` must do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    Quit,
    /// Redraw the screen (state changed).
    Redraw,
    /// Carry out an operator action (to be wired to the action executor).
    RunAction(ActionRequest),
    /// The operator's answer to a [`Msg::Confirm`] prompt.
    Confirmed(bool),
}

/// The operator actions the console can ask for. Refused in read-only mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ActionKind {
    /// Approve the selected proposal.
    Approve,
    /// Change the selected workload's priority.
    Reprioritize,
    /// Hold (deactivate) the selected workload or queue.
    Hold,
    /// Resume the selected workload or queue.
    Resume,
}

impl ActionKind {
    pub fn name(self) -> &'static str {
        match self {
            ActionKind::Approve => "approve",
            ActionKind::Reprioritize => "reprioritize",
            ActionKind::Hold => "hold",
            ActionKind::Resume => "resume",
        }
    }
}

/// The object an action targets: whatever is selected in the current view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ActionTarget {
    Workload { namespace: String, name: String },
    LocalQueue { namespace: String, name: String },
    ClusterQueue { name: String },
    Proposal { id: String },
}

/// The priority a reprioritize asks for: a WorkloadPriorityClass or PriorityClass by
/// name, or a plain value for the Workload's `spec.priority`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PriorityChoice {
    Class(String),
    Value(i32),
}

/// An action asked for by the operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionRequest {
    pub kind: ActionKind,
    pub target: ActionTarget,
    /// The chosen priority (reprioritize only).
    pub priority: Option<PriorityChoice>,
}

/// The console's views, in tab order (number keys 1–8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ViewId {
    Queues,
    #[default]
    Workloads,
    Nodes,
    Plan,
    Drift,
    Audit,
    Health,
    Events,
}

impl ViewId {
    /// How many views there are.
    pub const COUNT: usize = 8;

    pub const ALL: [ViewId; ViewId::COUNT] = [
        ViewId::Queues,
        ViewId::Workloads,
        ViewId::Nodes,
        ViewId::Plan,
        ViewId::Drift,
        ViewId::Audit,
        ViewId::Health,
        ViewId::Events,
    ];

    /// The name used in config files, tabs and `:` commands.
    pub fn name(self) -> &'static str {
        match self {
            ViewId::Queues => "queues",
            ViewId::Workloads => "workloads",
            ViewId::Nodes => "nodes",
            ViewId::Plan => "plan",
            ViewId::Drift => "drift",
            ViewId::Audit => "audit",
            ViewId::Health => "health",
            ViewId::Events => "events",
        }
    }

    pub fn index(self) -> usize {
        ViewId::ALL.iter().position(|v| *v == self).unwrap_or(0)
    }

    pub fn from_name(name: &str) -> Option<ViewId> {
        ViewId::ALL.into_iter().find(|v| v.name() == name)
    }

    pub fn next(self) -> ViewId {
        ViewId::ALL[(self.index() + 1) % ViewId::ALL.len()]
    }

    pub fn prev(self) -> ViewId {
        ViewId::ALL[(self.index() + ViewId::ALL.len() - 1) % ViewId::ALL.len()]
    }
}
