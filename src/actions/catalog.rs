//! The catalog of operator actions: what each one is called, what it writes and which
//! RBAC permissions it needs. Everything that offers or explains an action reads it from
//! here, so the console, the headless commands and docs/actions.md agree.

use serde::Serialize;

/// An operator action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActionKind {
    /// Deactivate a Workload (`spec.active=false`), as `kueuectl stop workload`.
    Hold,
    /// Reactivate a held Workload (`spec.active=true`).
    Resume,
    /// Change a job's priority (WorkloadPriorityClass label, or `spec.priority`).
    SetPriority,
    /// Approve a proposed preemption: deactivate its victims, then reactivate them.
    Approve,
    /// Finish the reactivation of victims left deactivated by an interrupted approval.
    Recover,
}

impl ActionKind {
    /// The name used on the command line and in the audit log.
    pub fn name(self) -> &'static str {
        match self {
            ActionKind::Hold => "hold",
            ActionKind::Resume => "resume",
            ActionKind::SetPriority => "set-priority",
            ActionKind::Approve => "approve",
            ActionKind::Recover => "recover",
        }
    }

    /// The word the console uses for it (its key is "reprioritize").
    pub fn console_word(self) -> &'static str {
        match self {
            ActionKind::SetPriority => "reprioritize",
            other => other.name(),
        }
    }

    /// The permissions the action needs (checked with SelfSubjectAccessReview before
    /// anything is written).
    pub fn permissions(self) -> &'static [Permission<'static>] {
        match self {
            ActionKind::Hold | ActionKind::Resume | ActionKind::Approve | ActionKind::Recover => {
                &[WORKLOADS_PATCH]
            }
            // Either the job (WorkloadPriorityClass label) or the Workload is patched;
            // which one is known only after resolution, see `Permission::for_job`.
            ActionKind::SetPriority => &[],
        }
    }
}

/// One RBAC permission: a verb on a resource of an API group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Permission<'a> {
    pub verb: &'a str,
    pub group: &'a str,
    pub resource: &'a str,
}

/// `patch workloads.kueue.x-k8s.io`.
pub const WORKLOADS_PATCH: Permission<'static> = Permission {
    verb: "patch",
    group: "kueue.x-k8s.io",
    resource: "workloads",
};

impl std::fmt::Display for Permission<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.group.is_empty() {
            write!(f, "{} {}", self.verb, self.resource)
        } else {
            write!(f, "{} {}.{}", self.verb, self.resource, self.group)
        }
    }
}

/// `REACTIVATE_ANNOTATION` on a victim: the preemptor an approval deactivated it for.
/// Its presence with `spec.active=false` means "reactivate me once my admission is
/// clear". `APPROVED_BY_ANNOTATION` on a victim: who approved its preemption.
pub use crate::model::well_known::{
    APPROVED_BY_ANNOTATION, JOB_UID_LABEL, PRIORITY_CLASS_LABEL, REACTIVATE_ANNOTATION,
};
/// The field manager of every write.
pub const FIELD_MANAGER: &str = "gangplank";
