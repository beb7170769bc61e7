//! `NS/NAME` → the Workload to act on: a Workload name, or the job that owns one (the
//! Workload whose controller ownerReference names the job; Kueue also labels it
//! `kueue.x-k8s.io/job-uid` with the same UID the ownerReference carries, so matching
//! the ownerReference needs no extra request to find the job's kind).

use kube::api::ApiResource;
use kube::core::GroupVersionKind;
use serde_json::Value;

use super::executor::{ActionError, Executor, ObjRef};

/// A resolved target.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The Workload.
    pub workload: ObjRef,
    /// Its live object, as read.
    pub object: Value,
    /// The owning job, when it has one.
    pub job: Option<ObjRef>,
}

impl Resolved {
    pub fn resource_version(&self) -> Option<String> {
        rv(&self.object)
    }
}

/// `metadata.resourceVersion`.
pub fn rv(obj: &Value) -> Option<String> {
    obj.pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Splits `NS/NAME`.
pub fn split_target(s: &str) -> Result<(String, String), ActionError> {
    match s.split_once('/') {
        Some((ns, name)) if !ns.is_empty() && !name.is_empty() && !name.contains('/') => {
            Ok((ns.to_string(), name.to_string()))
        }
        _ => Err(ActionError::Other(format!(
            "expected NAMESPACE/NAME (a Workload or the job that owns one), got {s:?}"
        ))),
    }
}

/// The controlling owner of a Workload as an object reference (its plural is the
/// lower-cased kind + "s", true of Job, PyTorchJob, TFJob, MPIJob, RayJob, JobSet).
pub fn owner_job(wl: &Value) -> Option<ObjRef> {
    let ns = wl.pointer("/metadata/namespace")?.as_str()?;
    let owner = wl
        .pointer("/metadata/ownerReferences")?
        .as_array()?
        .iter()
        .find(|o| o.get("controller").and_then(Value::as_bool) == Some(true))?;
    let api_version = owner.get("apiVersion")?.as_str()?;
    let kind = owner.get("kind")?.as_str()?;
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let plural = format!("{}s", kind.to_lowercase());
    Some(ObjRef {
        resource: ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(group, version, kind),
            &plural,
        ),
        namespace: ns.to_string(),
        name: owner.get("name")?.as_str()?.to_string(),
    })
}

fn owner_matches(wl: &Value, job_name: &str) -> bool {
    owner_job(wl).is_some_and(|j| j.name == job_name)
}

/// Resolves `NS/NAME`.
pub async fn resolve(exec: &Executor, target: &str) -> Result<Resolved, ActionError> {
    let (ns, name) = split_target(target)?;
    let wl = exec.workload(&ns, &name);
    match exec.get(&wl).await {
        Ok(object) => {
            return Ok(Resolved {
                job: owner_job(&object),
                workload: wl,
                object,
            });
        }
        Err(ActionError::NotFound { .. }) => {}
        Err(e) => return Err(e),
    }
    let all = exec
        .list(&exec.workload_resource(), Some(&ns), None)
        .await?;
    let mut found: Vec<Value> = all
        .iter()
        .filter(|w| owner_matches(w, &name))
        .cloned()
        .collect();
    match found.len() {
        0 => Err(ActionError::NotFound {
            object: format!("Workload (or job owning one) {ns}/{name}"),
        }),
        1 => {
            let object = found.remove(0);
            let wl_name = object
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            Ok(Resolved {
                job: owner_job(&object),
                workload: exec.workload(&ns, &wl_name),
                object,
            })
        }
        n => Err(ActionError::Other(format!(
            "{ns}/{name} owns {n} Workloads; name the Workload instead"
        ))),
    }
}
