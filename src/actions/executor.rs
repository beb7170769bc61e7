//! The one kube executor: every write gangplank makes goes through [`Executor::write`],
//! for real clusters and the simulator alike.
//!
//! Each write is a JSON merge patch with fieldManager `gangplank`, sent by the client
//! from [`crate::source::connect`] (which sets gangplank's User-Agent), first as a
//! server-side dry run (`dryRun=All`) and then for real, each under a timeout. A
//! read-only executor refuses every write before any request is made: `--readonly`
//! is enforced here, at the client layer, not by hiding keys.

use std::time::Duration;

use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use kube::{Client, core::GroupVersionKind};
use serde_json::Value;

use super::catalog::FIELD_MANAGER;
use crate::source::KUEUE_GROUP;

/// Why an action (or one write of it) did not happen.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ActionError {
    #[error("read-only mode: refusing to {what}; nothing was sent to the cluster")]
    ReadOnly { what: String },
    #[error("{object} changed since the plan was made (409 Conflict): {message}")]
    Conflict { object: String, message: String },
    #[error("forbidden to {what}: {message}")]
    Forbidden { what: String, message: String },
    #[error("{object} was rejected by the apiserver ({code}): {message}")]
    Rejected {
        object: String,
        code: u16,
        message: String,
    },
    #[error("{object} not found")]
    NotFound { object: String },
    #[error("{what} timed out after {secs} s")]
    Timeout { what: String, secs: u64 },
    #[error("{0}")]
    Other(String),
}

/// A namespaced object an action reads or writes.
#[derive(Clone, Debug)]
pub struct ObjRef {
    pub resource: ApiResource,
    pub namespace: String,
    pub name: String,
}

impl ObjRef {
    /// `kind ns/name` (`kind name` when cluster-scoped), as messages name it.
    pub fn describe(&self) -> String {
        format!("{} {}", self.resource.kind, self.key())
    }

    /// `ns/name`, or `name` when cluster-scoped.
    pub fn key(&self) -> String {
        if self.namespace.is_empty() {
            self.name.clone()
        } else {
            format!("{}/{}", self.namespace, self.name)
        }
    }
}

/// The result of one write.
#[derive(Clone, Debug)]
pub struct Written {
    /// The object after the write (after the dry run only, for dry runs).
    pub after: Value,
    /// True when only the dry run was sent.
    pub dry_run_only: bool,
}

/// The executor. Clone it freely (the client is shared).
#[derive(Clone)]
pub struct Executor {
    client: Client,
    readonly: bool,
    /// Only dry runs are sent (`--dry-run`).
    dry_run_only: bool,
    timeout: Duration,
    kueue_version: String,
}

impl Executor {
    /// An executor that writes (after a dry run) unless `readonly`.
    pub fn new(client: Client, kueue_version: &str, readonly: bool) -> Executor {
        Executor {
            client,
            readonly,
            dry_run_only: false,
            timeout: Duration::from_secs(15),
            kueue_version: kueue_version.to_string(),
        }
    }

    /// Sends only server-side dry runs.
    pub fn dry_run_only(mut self, yes: bool) -> Self {
        self.dry_run_only = yes;
        self
    }

    /// Per-request timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub fn is_readonly(&self) -> bool {
        self.readonly
    }

    pub fn is_dry_run_only(&self) -> bool {
        self.dry_run_only
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The Kueue version in use (`v1beta2` or `v1beta1`).
    pub fn kueue_version(&self) -> &str {
        &self.kueue_version
    }

    /// The Workload resource at the served Kueue version.
    pub fn workload_resource(&self) -> ApiResource {
        ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(KUEUE_GROUP, &self.kueue_version, "Workload"),
            "workloads",
        )
    }

    /// A Workload by namespace and name.
    pub fn workload(&self, namespace: &str, name: &str) -> ObjRef {
        ObjRef {
            resource: self.workload_resource(),
            namespace: namespace.to_string(),
            name: name.to_string(),
        }
    }

    /// A Kueue queue by kind (`ClusterQueue`: cluster-scoped, `namespace` empty; or
    /// `LocalQueue`) at the served Kueue version.
    pub fn queue(&self, kind: &str, namespace: &str, name: &str) -> ObjRef {
        let plural = format!("{}s", kind.to_ascii_lowercase());
        ObjRef {
            resource: ApiResource::from_gvk_with_plural(
                &GroupVersionKind::gvk(KUEUE_GROUP, &self.kueue_version, kind),
                &plural,
            ),
            namespace: namespace.to_string(),
            name: name.to_string(),
        }
    }

    fn api(&self, obj: &ObjRef) -> Api<DynamicObject> {
        // An empty namespace addresses a cluster-scoped object (a ClusterQueue).
        if obj.namespace.is_empty() {
            Api::all_with(self.client.clone(), &obj.resource)
        } else {
            Api::namespaced_with(self.client.clone(), &obj.namespace, &obj.resource)
        }
    }

    /// Reads an object (reads are allowed in read-only mode).
    pub async fn get(&self, obj: &ObjRef) -> Result<Value, ActionError> {
        let what = format!("get {}", obj.describe());
        let got = tokio::time::timeout(self.timeout, self.api(obj).get_opt(&obj.name))
            .await
            .map_err(|_| ActionError::Timeout {
                what: what.clone(),
                secs: self.timeout.as_secs(),
            })?
            .map_err(|e| classify(e, &obj.describe(), &what))?;
        match got {
            Some(o) => serde_json::to_value(o).map_err(|e| ActionError::Other(e.to_string())),
            None => Err(ActionError::NotFound {
                object: obj.describe(),
            }),
        }
    }

    /// Lists a resource in a namespace (`None`: all namespaces).
    pub async fn list(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<Value>, ActionError> {
        let api: Api<DynamicObject> = match namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, resource),
            None => Api::all_with(self.client.clone(), resource),
        };
        let mut lp = kube::api::ListParams::default();
        if let Some(s) = label_selector {
            lp = lp.labels(s);
        }
        let what = format!("list {}", resource.plural);
        let list = tokio::time::timeout(self.timeout, api.list(&lp))
            .await
            .map_err(|_| ActionError::Timeout {
                what: what.clone(),
                secs: self.timeout.as_secs(),
            })?
            .map_err(|e| classify(e, &resource.plural, &what))?;
        list.items
            .into_iter()
            .map(|o| serde_json::to_value(o).map_err(|e| ActionError::Other(e.to_string())))
            .collect()
    }

    async fn patch_once(
        &self,
        obj: &ObjRef,
        patch: &Value,
        dry_run: bool,
    ) -> Result<Value, ActionError> {
        let pp = PatchParams {
            dry_run,
            field_manager: Some(FIELD_MANAGER.to_string()),
            ..PatchParams::default()
        };
        let what = format!(
            "patch {}{}",
            obj.describe(),
            if dry_run { " (dry run)" } else { "" }
        );
        let out = tokio::time::timeout(
            self.timeout,
            self.api(obj).patch(&obj.name, &pp, &Patch::Merge(patch)),
        )
        .await
        .map_err(|_| ActionError::Timeout {
            what: what.clone(),
            secs: self.timeout.as_secs(),
        })?
        .map_err(|e| classify(e, &obj.describe(), &what))?;
        serde_json::to_value(out).map_err(|e| ActionError::Other(e.to_string()))
    }

    /// The server-side dry run (`dryRun=All`) of a write. Read-only: refused before
    /// any request.
    pub async fn dry_run(&self, obj: &ObjRef, patch: &Value) -> Result<Value, ActionError> {
        self.refuse_if_readonly(obj)?;
        self.patch_once(obj, patch, true).await
    }

    /// The write itself, after its dry run passed (`dry` is the dry run's answer,
    /// returned as is when only dry runs are sent). Read-only: refused.
    pub async fn commit(
        &self,
        obj: &ObjRef,
        patch: &Value,
        dry: Value,
    ) -> Result<Written, ActionError> {
        self.refuse_if_readonly(obj)?;
        if self.dry_run_only {
            return Ok(Written {
                after: dry,
                dry_run_only: true,
            });
        }
        let after = self.patch_once(obj, patch, false).await?;
        Ok(Written {
            after,
            dry_run_only: false,
        })
    }

    /// The one write path: a server-side dry run, then (unless dry-run-only) the
    /// write. A refused dry run writes nothing. Read-only: refused before any request.
    pub async fn write(&self, obj: &ObjRef, patch: &Value) -> Result<Written, ActionError> {
        let dry = self.dry_run(obj, patch).await?;
        self.commit(obj, patch, dry).await
    }

    fn refuse_if_readonly(&self, obj: &ObjRef) -> Result<(), ActionError> {
        if self.readonly {
            return Err(ActionError::ReadOnly {
                what: format!("patch {}", obj.describe()),
            });
        }
        Ok(())
    }
}

/// The audit's `dryRun` field for a refused dry run.
pub fn dry_run_refusal(e: &ActionError) -> String {
    match e {
        ActionError::ReadOnly { .. } => "not sent (read-only)".into(),
        e => format!("refused: {e}"),
    }
}

/// Maps a kube error to what the operator is told; the apiserver's message (a
/// webhook's denial included) is kept verbatim.
pub fn classify(err: kube::Error, object: &str, what: &str) -> ActionError {
    match err {
        kube::Error::Api(s) => match s.code {
            409 => ActionError::Conflict {
                object: object.to_string(),
                message: s.message,
            },
            403 => ActionError::Forbidden {
                what: what.to_string(),
                message: s.message,
            },
            404 => ActionError::NotFound {
                object: object.to_string(),
            },
            code => ActionError::Rejected {
                object: object.to_string(),
                code,
                message: s.message,
            },
        },
        other => ActionError::Other(format!("{what}: {other}")),
    }
}
