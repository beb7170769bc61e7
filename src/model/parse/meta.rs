//! `metadata` of any object.

use super::error::FieldResult;
use super::value::At;
use crate::model::types::{OwnerReference, Timestamp};

/// The parts of `metadata` gangplank uses.
#[derive(Clone, Debug, Default)]
pub(crate) struct Meta {
    pub name: String,
    /// `metadata.namespace`, when given.
    pub namespace: Option<String>,
    pub uid: String,
    pub labels: crate::model::Labels,
    pub annotations: crate::model::Labels,
    pub creation_timestamp: Option<Timestamp>,
    pub owner_references: Vec<OwnerReference>,
}

impl Meta {
    /// The namespace, defaulting to `default` as `kubectl apply` does.
    pub fn namespace_or_default(&self) -> String {
        self.namespace
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "default".to_string())
    }

    /// The controller owner reference, else the first one.
    pub fn owner(&self) -> Option<OwnerReference> {
        self.owner_references
            .iter()
            .find(|o| o.controller)
            .or_else(|| self.owner_references.first())
            .cloned()
    }
}

/// Reads `metadata` of the object at `root`; `metadata.name` is required.
pub(crate) fn read_meta(root: &At) -> FieldResult<Meta> {
    let md = root.req("metadata")?;
    let name_at = md.req("name")?;
    let name = name_at.str()?.to_string();
    if name.is_empty() {
        return Err(name_at.err("must not be empty"));
    }
    let owner_references = md
        .opt_list("ownerReferences")?
        .iter()
        .map(read_owner_reference)
        .collect::<FieldResult<Vec<_>>>()?;
    Ok(Meta {
        name,
        namespace: md.opt_string("namespace")?,
        uid: md.str_or_empty("uid")?,
        labels: md.string_map("labels")?,
        annotations: md.string_map("annotations")?,
        creation_timestamp: md.opt_timestamp("creationTimestamp")?,
        owner_references,
    })
}

fn read_owner_reference(a: &At) -> FieldResult<OwnerReference> {
    Ok(OwnerReference {
        api_version: a.str_or_empty("apiVersion")?,
        kind: a.str_or_empty("kind")?,
        name: a.str_or_empty("name")?,
        uid: a.str_or_empty("uid")?,
        controller: a.opt_bool("controller")?.unwrap_or(false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_metadata_and_requires_name() {
        let v = json!({"metadata": {"name": "w", "uid": "u1",
            "creationTimestamp": "2024-01-01T00:00:00Z",
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "ju", "controller": true}]}});
        let m = read_meta(&At::root(&v, "")).unwrap();
        assert_eq!(m.namespace_or_default(), "default");
        assert_eq!(m.owner().unwrap().uid, "ju");
        assert_eq!(m.creation_timestamp, Some(1_704_067_200_000));
        let v = json!({"metadata": {"labels": {}}});
        let e = read_meta(&At::root(&v, "")).unwrap_err();
        assert_eq!(e.path, "metadata.name");
    }
}
