//! Messages into [`update`](super::update) and effects out of it. Effects are data: the
//! run loop (or an SSH session, or a test) decides how to carry them out.

use crossterm::event::KeyEvent;

use super::data::ConsoleData;
pub use crate::actions::ActionKind;
pub use crate::actions::protocol::{
    ActionAccess, ActionRequest, ActionTarget, AuditRow, PriorityChoice, Prompt, PromptId,
};
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
    /// An action attempt was audited (or, at start, an earlier one read back).
    Audited(AuditRow),
}

/// What the caller of `update` must do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    Quit,
    /// Redraw the screen (state changed).
    Redraw,
    /// Carry out an operator action (to be wired to the action executor).
    RunAction(ActionRequest),
    /// The operator's answer to the [`Msg::Confirm`] prompt `prompt`.
    Confirmed {
        prompt: PromptId,
        yes: bool,
    },
    /// `:ctx NAME`: watch the kubeconfig's context NAME instead of the current one.
    SwitchContext(String),
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
