//! The one vocabulary between whoever asks for actions (the console) and the action
//! task that prepares, confirms and executes them: requests and answers go in on one
//! channel ([`ConsoleRequest`]), prompts, notices, access and audit rows come out on
//! one channel ([`ActionEvent`]). Prompts carry an id and an answer names the prompt
//! it answers, so a late answer to a lapsed prompt can never confirm a newer one.
//!
//! The console (`tui/`) imports these types; nothing here knows the console.

use std::collections::BTreeMap;

use super::catalog::ActionKind;
use crate::model::Timestamp;

/// Where the cluster's RBAC refuses the writes behind the action keys (`patch` on
/// Workloads), from SelfSubjectAccessReviews the action task makes when it starts.
/// Refused actions are shown unavailable, with the reason, and never requested.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ActionAccess {
    /// Refused in every namespace.
    pub everywhere: Option<String>,
    /// Refused in these namespaces (namespace → reason).
    pub namespaces: BTreeMap<String, String>,
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

/// Which prompt an answer is for.
pub type PromptId = u64;

/// A confirmation prompt: a one-line summary of exactly what will be written, and
/// optional detail lines (a reprioritize's consequence) shown in a panel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prompt {
    /// Unique per action task; the answer must name it.
    pub id: PromptId,
    pub summary: String,
    pub details: Vec<String>,
}

impl From<String> for Prompt {
    fn from(summary: String) -> Prompt {
        Prompt {
            id: 0,
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
    /// Hold, Resume, SetPriority or Approve.
    pub kind: ActionKind,
    pub target: ActionTarget,
    /// The chosen priority (SetPriority only).
    pub priority: Option<PriorityChoice>,
}

/// One audit ledger entry as the Audit view shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditRow {
    pub time: Timestamp,
    pub actor: String,
    pub action: String,
    pub target: String,
    pub outcome: String,
    /// Victims, the object before and after, the message: the Audit detail pane.
    pub details: Vec<String>,
}

/// Into the action task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConsoleRequest {
    /// Prepare this action and ask for confirmation.
    Run(ActionRequest),
    /// The operator's answer to the prompt `prompt`.
    Answer { prompt: PromptId, yes: bool },
}

/// Out of the action task, in the order they happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ActionEvent {
    /// Feedback for the message line.
    Notice(String),
    /// Confirm this before anything is written.
    Prompt(Prompt),
    /// Where RBAC refuses the actions (sent once, after start).
    Access(ActionAccess),
    /// An attempt was recorded in the audit log (also earlier ones, at start).
    Audited(AuditRow),
}
