//! Operator actions: catalog, pure plans, the kube executor and the audit log.
//!
//! * [`catalog`]: the actions, their permissions and the annotations they use.
//! * [`plan`]: pure — the merge-patch bodies each action writes.
//! * [`executor`]: the one kube executor (dry run first, fieldManager, preconditions,
//!   timeouts; read-only mode refuses before any request).
//! * [`resolve`]: `NS/NAME` (a Workload or its job) → the Workload.
//! * [`permissions`]: SelfSubjectAccessReview / SelfSubjectReview.
//! * [`ops`]: hold, resume, set-priority; [`approve`]: the preemption approval flow;
//!   [`recovery`]: finishing interrupted approvals.
//! * [`reprioritize`]: pure — what a priority change would do to the plan.
//! * [`console`]: the console's action task (prompt, confirm, execute, audit).
//! * [`audit`]: one JSON line per attempt.
//!
//! See docs/actions.md.

pub mod approve;
pub mod audit;
pub mod catalog;
pub mod console;
pub mod executor;
pub mod intent;
pub mod ops;
pub mod permissions;
pub mod plan;
pub mod protocol;
pub mod recovery;
pub mod reprioritize;
pub mod resolve;

pub use approve::{ApprovalPlan, ApprovalPolicy, ApproveOptions, VictimPlan};
pub use audit::{AuditLog, AuditRecord, default_audit_path, read_audit};
pub use catalog::ActionKind;
pub use executor::{ActionError, Executor, ObjRef};
pub use plan::PriorityTarget;
pub use protocol::{
    ActionAccess, ActionEvent, ActionRequest, ActionTarget, AuditRow, ConsoleRequest,
    PriorityChoice, Prompt, PromptId,
};

/// Who acts, through which executor, logging where.
#[derive(Clone)]
pub struct Actor {
    pub exec: Executor,
    pub audit: AuditLog,
    /// The user the apiserver sees (see [`permissions::whoami`]).
    pub who: String,
}

/// What one attempt ended with.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// True when everything asked for happened (a dry run that passed counts).
    pub ok: bool,
    /// What the operator is told.
    pub message: String,
    /// The audit line written.
    pub record: AuditRecord,
}

impl Actor {
    /// An actor; asks the apiserver who we are (not in read-only mode).
    pub async fn new(exec: Executor, audit: AuditLog) -> Actor {
        let who = permissions::whoami(&exec).await;
        Actor { exec, audit, who }
    }

    pub(crate) fn record(&self, kind: ActionKind, target: &str) -> AuditRecord {
        ops::new_record(self, kind, target)
    }

    /// Writes the audit line of an attempt and turns it into an [`Outcome`].
    pub(crate) fn finish(
        &self,
        mut rec: AuditRecord,
        result: Result<(&str, String), ActionError>,
    ) -> Outcome {
        let ok;
        match result {
            Ok((outcome, message)) => {
                ok = true;
                rec.outcome = outcome.into();
                rec.message = message;
            }
            Err(e) => {
                ok = false;
                rec.outcome = ops::outcome_of(&e).into();
                rec.message = e.to_string();
            }
        }
        self.log(&mut rec);
        Outcome {
            ok,
            message: rec.message.clone(),
            record: rec,
        }
    }

    /// Appends `rec` (stamping the time); an audit failure is added to the message,
    /// never swallowed.
    pub(crate) fn log(&self, rec: &mut AuditRecord) {
        rec.time = audit::now_rfc3339();
        if let Err(e) = self.audit.append(rec) {
            rec.message
                .push_str(&format!(" (AUDIT LOG WRITE FAILED: {e})"));
        }
    }

    /// Connects like every other command (the flags' kubeconfig/context/impersonation;
    /// gangplank's User-Agent) and finds the served Kueue version.
    pub async fn connect(
        cluster: &crate::source::ClusterArgs,
        readonly: bool,
        dry_run: bool,
        audit: AuditLog,
    ) -> Result<Actor, ActionError> {
        let client = crate::source::connect(cluster, std::time::Duration::from_secs(30))
            .await
            .map_err(|e| ActionError::Other(format!("cannot connect: {e}")))?;
        let (_, version) = crate::source::detect_kueue(&client).await;
        let exec = Executor::new(client, &version, readonly).dry_run_only(dry_run);
        Ok(Actor::new(exec, audit).await)
    }

    /// Records an attempt the operator cancelled (or that could not be confirmed).
    pub fn cancelled(&self, kind: ActionKind, target: &str, why: &str) -> Outcome {
        self.not_done(kind, target, "cancelled", why)
    }

    /// Records an attempt that ended before any write (`outcome`: cancelled, refused…).
    pub fn not_done(&self, kind: ActionKind, target: &str, outcome: &str, why: &str) -> Outcome {
        let mut rec = self.record(kind, target);
        rec.dry_run = "skipped".into();
        rec.outcome = outcome.into();
        rec.message = why.into();
        self.log(&mut rec);
        Outcome {
            ok: false,
            message: rec.message.clone(),
            record: rec,
        }
    }

    /// Hold a Workload (or the job owning one).
    pub async fn hold(&self, target: &str) -> Outcome {
        ops::set_active(self, target, false).await
    }

    /// Resume a held Workload.
    pub async fn resume(&self, target: &str) -> Outcome {
        ops::set_active(self, target, true).await
    }

    /// Hold (`stopPolicy: Hold`) or resume (`None`) a ClusterQueue (`namespace` empty)
    /// or LocalQueue.
    pub async fn set_queue_stop(
        &self,
        kind: &str,
        namespace: &str,
        name: &str,
        hold: bool,
    ) -> Outcome {
        ops::set_queue_stop(self, kind, namespace, name, hold).await
    }

    /// Change a job's priority.
    pub async fn set_priority(&self, target: &str, to: &PriorityTarget) -> Outcome {
        ops::set_priority(self, target, to).await
    }
}
