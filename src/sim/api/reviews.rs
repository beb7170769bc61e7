//! `SelfSubjectAccessReview` and `SelfSubjectReview`: the two review resources a client
//! uses to ask "may I?" and "who am I?" before acting. Both are `create` requests that
//! store nothing, answered here so that clients (gangplank's permission checks and
//! audit, `kubectl auth can-i`, `kubectl auth whoami`) behave against the simulator as
//! against a cluster.
//!
//! The simulator has no RBAC; its fault rules stand in for it. An access review is
//! denied exactly when a fault rule with `status: 403` covers the verb and resource
//! (the rule is only looked at, not consumed), so a test that forbids `patch` on
//! workloads sees the permission check and the write agree. Reviews are counted under
//! the verb `review`, not as writes: they change nothing.

use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::Shared;
use super::errors::{ApiError, json_response};

/// The user the simulator says you are without impersonation.
pub const SIM_USER: &str = "gangplank-sim-admin";

fn parse_body(
    method: &Method,
    headers: &HeaderMap,
    body: &[u8],
    kind: &str,
) -> Result<Value, ApiError> {
    if method != Method::POST {
        return Err(ApiError::method_not_allowed(method.as_str()));
    }
    let protobuf = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.contains("protobuf"));
    // kubectl sends built-in kinds as protobuf; the answer is JSON either way (it
    // accepts both).
    let v: Value = if protobuf {
        proto::review_from_protobuf(body)
            .map_err(|e| ApiError::bad_request(format!("invalid {kind}: {e}")))?
    } else {
        super::write::check_body_nesting(body)?;
        serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("invalid {kind}: {e}")))?
    };
    if !v.is_object() {
        return Err(ApiError::bad_request(format!(
            "invalid {kind}: not an object"
        )));
    }
    Ok(v)
}

/// `POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews`
pub(crate) fn access_review(
    shared: &Shared,
    method: &Method,
    headers: &HeaderMap,
    body: &[u8],
) -> Response {
    let mut review = match parse_body(method, headers, body, "SelfSubjectAccessReview") {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    shared
        .stats
        .record("review", "selfsubjectaccessreviews.authorization.k8s.io");
    let attrs = &review["spec"]["resourceAttributes"];
    let status = if attrs.is_object() {
        let field = |k: &str| attrs[k].as_str().unwrap_or_default();
        let (verb, group, resource) = (field("verb"), field("group"), field("resource"));
        match shared.faults.denies(verb, group, resource) {
            Some(rule) => json!({
                "allowed": false,
                "denied": true,
                "reason": format!("simulated RBAC: fault rule {rule} forbids {verb} on {}",
                    qualified(group, resource)),
            }),
            None => {
                json!({"allowed": true, "reason": "the simulator allows everything not forbidden by a fault rule"})
            }
        }
    } else {
        // nonResourceAttributes (e.g. `kubectl auth can-i get /healthz`): no rules apply.
        json!({"allowed": true})
    };
    review["status"] = status;
    review["apiVersion"] = json!("authorization.k8s.io/v1");
    review["kind"] = json!("SelfSubjectAccessReview");
    json_response(StatusCode::CREATED, &review)
}

/// `POST /apis/authentication.k8s.io/v1/selfsubjectreviews`: the user from the
/// impersonation headers (`--as`, `--as-group`), else [`SIM_USER`].
pub(crate) fn self_review(
    shared: &Shared,
    method: &Method,
    headers: &HeaderMap,
    body: &[u8],
) -> Response {
    let mut review = match parse_body(method, headers, body, "SelfSubjectReview") {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    shared
        .stats
        .record("review", "selfsubjectreviews.authentication.k8s.io");
    let header = |name: &str| -> Vec<String> {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_string)
            .collect()
    };
    let (username, mut groups) = match header("impersonate-user").into_iter().next() {
        Some(user) => (user, header("impersonate-group")),
        None => (SIM_USER.to_string(), vec!["system:masters".to_string()]),
    };
    if !groups.iter().any(|g| g == "system:authenticated") {
        groups.push("system:authenticated".into());
    }
    review["status"] = json!({"userInfo": {"username": username, "groups": groups}});
    review["apiVersion"] = json!("authentication.k8s.io/v1");
    review["kind"] = json!("SelfSubjectReview");
    json_response(StatusCode::CREATED, &review)
}

fn qualified(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}

/// Just enough of Kubernetes' protobuf encoding to read a review: the `k8s\0` envelope
/// (`runtime.Unknown{typeMeta=1, raw=2}`), then `spec=2` → `resourceAttributes=1` /
/// `nonResourceAttributes=2` and their string fields. Unknown fields are skipped.
mod proto {
    use serde_json::{Map, Value, json};

    const RESOURCE_FIELDS: &[(u64, &str)] = &[
        (1, "namespace"),
        (2, "verb"),
        (3, "group"),
        (4, "version"),
        (5, "resource"),
        (6, "subresource"),
        (7, "name"),
    ];
    const NON_RESOURCE_FIELDS: &[(u64, &str)] = &[(1, "path"), (2, "verb")];

    fn varint(b: &[u8], i: &mut usize) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *b.get(*i).ok_or("truncated varint")?;
            *i += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("varint too long".into())
    }

    /// The length-delimited fields of one message, as (field number, bytes).
    fn fields(b: &[u8]) -> Result<Vec<(u64, &[u8])>, String> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            let key = varint(b, &mut i)?;
            match key & 7 {
                0 => {
                    varint(b, &mut i)?;
                }
                1 => i += 8,
                2 => {
                    let len = usize::try_from(varint(b, &mut i)?).map_err(|e| e.to_string())?;
                    let end = i.checked_add(len).filter(|&e| e <= b.len());
                    let end = end.ok_or("truncated field")?;
                    out.push((key >> 3, &b[i..end]));
                    i = end;
                }
                5 => i += 4,
                t => return Err(format!("unsupported wire type {t}")),
            }
        }
        if i > b.len() {
            return Err("truncated message".into());
        }
        Ok(out)
    }

    fn strings(b: &[u8], names: &[(u64, &str)]) -> Result<Value, String> {
        let mut m = Map::new();
        for (n, v) in fields(b)? {
            if let Some((_, name)) = names.iter().find(|(f, _)| *f == n) {
                m.insert((*name).to_string(), json!(String::from_utf8_lossy(v)));
            }
        }
        Ok(Value::Object(m))
    }

    pub fn review_from_protobuf(body: &[u8]) -> Result<Value, String> {
        let unknown = body
            .strip_prefix(b"k8s\0")
            .ok_or("missing the k8s protobuf envelope")?;
        let raw = fields(unknown)?
            .into_iter()
            .find(|(n, _)| *n == 2)
            .map(|(_, v)| v)
            .ok_or("the envelope has no object")?;
        let mut spec = Map::new();
        for (n, v) in fields(raw)? {
            if n != 2 {
                continue;
            }
            for (n, v) in fields(v)? {
                match n {
                    1 => {
                        spec.insert("resourceAttributes".into(), strings(v, RESOURCE_FIELDS)?);
                    }
                    2 => {
                        spec.insert(
                            "nonResourceAttributes".into(),
                            strings(v, NON_RESOURCE_FIELDS)?,
                        );
                    }
                    _ => {}
                }
            }
        }
        Ok(json!({"spec": spec}))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn ld(field: u64, bytes: &[u8]) -> Vec<u8> {
            let mut v = vec![
                u8::try_from(field << 3 | 2).unwrap(),
                u8::try_from(bytes.len()).unwrap(),
            ];
            v.extend_from_slice(bytes);
            v
        }

        #[test]
        fn reads_resource_attributes_from_the_envelope() {
            let attrs = [
                ld(1, b"team-a"),
                ld(2, b"patch"),
                ld(3, b"kueue.x-k8s.io"),
                ld(5, b"workloads"),
            ]
            .concat();
            let review = [ld(1, b""), ld(2, &ld(1, &attrs))].concat();
            let unknown = [ld(1, &ld(2, b"SelfSubjectAccessReview")), ld(2, &review)].concat();
            let body = [b"k8s\0".as_slice(), &unknown].concat();
            let v = review_from_protobuf(&body).unwrap();
            assert_eq!(
                v,
                json!({"spec": {"resourceAttributes": {
                    "namespace": "team-a", "verb": "patch",
                    "group": "kueue.x-k8s.io", "resource": "workloads"}}})
            );
        }

        #[test]
        fn truncated_input_is_an_error_not_a_panic() {
            let body = [b"k8s\0".as_slice(), &[0x12, 0x40, 0x01]].concat();
            assert!(review_from_protobuf(&body).is_err());
            assert!(review_from_protobuf(b"nope").is_err());
        }
    }
}
