//! Permission checks before an action is offered or done (SelfSubjectAccessReview per
//! verb and resource), and who the apiserver thinks we are (SelfSubjectReview), for
//! the audit log's "who".
//!
//! Both reviews are `create` requests on review resources that store nothing. A read-only
//! executor makes neither (it refuses before any request). When the apiserver does not
//! serve them (404: old clusters, the simulator) the answer is [`Access::Unknown`] and
//! the action proceeds: the apiserver still enforces RBAC on the write itself, and a
//! 403 there is reported as clearly.

use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};

use super::catalog::Permission;
use super::executor::Executor;

/// The answer of an access review.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Access {
    Allowed,
    Denied {
        reason: String,
    },
    /// The review could not be made (not served, failed): the write will tell.
    Unknown {
        why: String,
    },
}

/// Can we `perm` in `namespace` (optionally the object `name`)?
pub async fn check(
    exec: &Executor,
    perm: &Permission<'_>,
    namespace: &str,
    name: Option<&str>,
) -> Access {
    if exec.is_readonly() {
        return Access::Denied {
            reason: "read-only mode".into(),
        };
    }
    let review = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                verb: Some(perm.verb.into()),
                group: Some(perm.group.into()),
                resource: Some(perm.resource.into()),
                // "" asks about every namespace (a cluster-wide grant).
                namespace: (!namespace.is_empty()).then(|| namespace.to_string()),
                name: name.map(str::to_string),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let api: Api<SelfSubjectAccessReview> = Api::all(exec.client().clone());
    let pp = PostParams::default();
    let fut = api.create(&pp, &review);
    match tokio::time::timeout(std::time::Duration::from_secs(10), fut).await {
        Ok(Ok(r)) => match r.status {
            Some(s) if s.allowed => Access::Allowed,
            Some(s) => Access::Denied {
                reason: s
                    .reason
                    .filter(|r| !r.is_empty())
                    .unwrap_or_else(|| format!("RBAC does not allow {perm} in {namespace}")),
            },
            None => Access::Unknown {
                why: "empty review status".into(),
            },
        },
        Ok(Err(e)) => Access::Unknown {
            why: format!("SelfSubjectAccessReview failed: {e}"),
        },
        Err(_) => Access::Unknown {
            why: "SelfSubjectAccessReview timed out".into(),
        },
    }
}

/// Who the apiserver sees (SelfSubjectReview), else a local description.
pub async fn whoami(exec: &Executor) -> String {
    let local = format!(
        "unknown (local user {})",
        std::env::var("USER").unwrap_or_else(|_| "?".into())
    );
    if exec.is_readonly() {
        return local;
    }
    let api: Api<SelfSubjectReview> = Api::all(exec.client().clone());
    let pp = PostParams::default();
    let review = SelfSubjectReview::default();
    let fut = api.create(&pp, &review);
    match tokio::time::timeout(std::time::Duration::from_secs(10), fut).await {
        Ok(Ok(r)) => r
            .status
            .and_then(|s| s.user_info)
            .and_then(|u| u.username)
            .unwrap_or(local),
        _ => local,
    }
}
