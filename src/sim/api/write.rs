//! POST, PUT, PATCH and DELETE.

use axum::http::StatusCode;
use serde_json::{Map, Value, json};

use super::Shared;
use super::errors::ApiError;
use super::routes::{Params, ResourceRequest};
use super::selectors::{FieldSelector, LabelSelector, labels_match};
use crate::sim::convert;
use crate::sim::patch::{self, PatchKind};
use crate::sim::resources::ResourceDef;
use crate::sim::store::{DeleteOptions, StoreError, UpdateScope, WriteOptions, object_name};

type ApiResult = Result<(StatusCode, Value), ApiError>;

fn write_opts(params: &Params) -> WriteOptions {
    WriteOptions {
        dry_run: params.get("dryRun").is_some_and(|v| v == "All"),
    }
}

fn store_err(req: &ResourceRequest) -> impl Fn(StoreError) -> ApiError + '_ {
    |e| ApiError::from_store(e, req.def.group, req.def.plural)
}

/// Refuses a body that nests deeper than the model's limit, in linear time and before
/// any parser sees it (the YAML parser's cost on deep nesting is quadratic).
pub(crate) fn check_body_nesting(body: &[u8]) -> Result<(), ApiError> {
    crate::model::parse::check_nesting(body, crate::model::parse::MAX_NESTING_DEPTH)
        .map_err(|e| ApiError::bad_request(format!("the request body is {e}")))
}

/// Parses a request body as JSON, or YAML when the content type says so.
fn parse_body(content_type: &str, body: &[u8]) -> Result<Value, ApiError> {
    if body.is_empty() {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    check_body_nesting(body)?;
    let v: Value = if content_type.contains("yaml") {
        serde_yaml_ng::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?
    } else {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding JSON: {e}")))?
    };
    Ok(v)
}

/// How the API server decodes a create, update or patch body of `content_type` (YAML
/// when it says so, else JSON; the nesting check first): the decoded value, or the
/// message of the 400 the client gets. Public for the fuzz tests.
pub fn decode_body(content_type: &str, body: &[u8]) -> Result<Value, String> {
    parse_body(content_type, body).map_err(|e| e.message)
}

fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.ends_with(|c: char| c.is_ascii_alphanumeric())
}

fn invalid(def: &ResourceDef, name: &str, field: &str, detail: &str) -> ApiError {
    let kind_q = if def.group.is_empty() {
        def.kind.to_string()
    } else {
        format!("{}.{}", def.kind, def.group)
    };
    let mut e = ApiError::invalid(format!("{kind_q} \"{name}\" is invalid: {field}: {detail}"))
        .with_details(name, def.group, def.kind);
    // kubectl prints "The Deployment "x" is invalid: <field>: <message>" from the causes.
    if let Some(d) = e.details.as_mut() {
        d["causes"] = json!([{"reason": "FieldValueInvalid", "message": detail, "field": field}]);
    }
    e
}

/// Checks type meta against the URL and a few schema rules that clients rely on.
fn validate(req: &ResourceRequest, obj: &Value) -> Result<(), ApiError> {
    let def = req.def;
    let map = obj
        .as_object()
        .ok_or_else(|| ApiError::bad_request("the request body must be a JSON object"))?;
    let name = object_name(obj).unwrap_or_default();
    let want_av = def.api_version(&req.version);
    if let Some(av) = map.get("apiVersion")
        && av.as_str() != Some(want_av.as_str())
    {
        return Err(invalid(
            def,
            name,
            "apiVersion",
            &format!("Invalid value: {av}: must be {want_av}"),
        ));
    }
    if let Some(k) = map.get("kind")
        && k.as_str() != Some(def.kind)
    {
        return Err(invalid(
            def,
            name,
            "kind",
            &format!("Invalid value: {k}: must be {}", def.kind),
        ));
    }
    if !map.get("metadata").is_none_or(Value::is_object) {
        return Err(invalid(
            def,
            name,
            "metadata",
            "Invalid value: must be an object",
        ));
    }
    if !name.is_empty() && !is_dns_subdomain(name) {
        return Err(invalid(
            def,
            name,
            "metadata.name",
            &format!(
                "Invalid value: {name:?}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'"
            ),
        ));
    }
    if let Some(labels) = obj.pointer("/metadata/labels")
        && !labels
            .as_object()
            .is_some_and(|l| l.values().all(Value::is_string))
    {
        return Err(invalid(
            def,
            name,
            "metadata.labels",
            "Invalid value: must be a map of strings",
        ));
    }
    if def.kind == "Workload"
        && let Some(spec) = map.get("spec")
    {
        if !spec.get("podSets").is_none_or(Value::is_array) {
            return Err(invalid(
                def,
                name,
                "spec.podSets",
                "Invalid value: must be an array",
            ));
        }
        if !spec
            .get("priority")
            .is_none_or(|p| p.is_i64() || p.is_null())
        {
            return Err(invalid(
                def,
                name,
                "spec.priority",
                "Invalid value: must be an integer",
            ));
        }
    }
    Ok(())
}

/// The simulator's pod caps ([`crate::sim::cluster::SimLimits`]): an object asking for
/// too many pods is Invalid (422) with the field named, as Kubernetes' own validation
/// answers; a pod beyond the cluster's total is Forbidden (403), as a quota would be.
fn check_limits(
    shared: &Shared,
    req: &ResourceRequest,
    obj: &Value,
    creating: bool,
) -> Result<(), ApiError> {
    let def = req.def;
    let name = object_name(obj).unwrap_or_default();
    if let Err(v) = shared.opts.limits.check(def.kind, obj) {
        return Err(invalid(
            def,
            name,
            &v.field,
            &format!("Invalid value: {}: {}", v.value, v.detail),
        ));
    }
    let max = shared.opts.limits.max_pods;
    if creating && def.kind == "Pod" && shared.store.count(&def.key()) >= max {
        return Err(ApiError::new(
            403,
            "Forbidden",
            format!(
                "pods \"{name}\" is forbidden: the simulated cluster already holds its limit of {max} pods (--max-pods)"
            ),
        )
        .with_details(name, def.group, def.plural));
    }
    Ok(())
}

/// `fieldValidation=Strict` (what `kubectl apply` sends by default): fields the kind's
/// schema does not declare are refused as kube-apiserver refuses them (400).
fn check_fields(req: &ResourceRequest, params: &Params, obj: &Value) -> Result<(), ApiError> {
    if params.get("fieldValidation").map(String::as_str) != Some("Strict") {
        return Ok(());
    }
    let unknown = super::openapi::unknown_fields(req.def, &req.version, obj);
    if unknown.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = unknown
        .iter()
        .map(|f| format!("unknown field \"{f}\""))
        .collect();
    let kind = req.def.kind;
    Err(ApiError::bad_request(format!(
        "{kind} in version \"{}\" cannot be handled as a {kind}: strict decoding error: {}",
        req.version,
        list.join(", ")
    )))
}

/// Fills or checks `metadata.namespace` against the URL.
fn fix_namespace(req: &ResourceRequest, obj: &mut Value) -> Result<(), ApiError> {
    let meta = obj
        .as_object_mut()
        .ok_or_else(|| ApiError::bad_request("the request body must be a JSON object"))?
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    let meta = meta
        .as_object_mut()
        .ok_or_else(|| ApiError::bad_request("metadata must be an object"))?;
    if !req.def.namespaced {
        meta.remove("namespace");
        return Ok(());
    }
    let Some(url_ns) = req.namespace.as_deref() else {
        return Err(ApiError::method_not_allowed("POST"));
    };
    match meta
        .get("namespace")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        Some(ns) if ns != url_ns => Err(ApiError::bad_request(format!(
            "the namespace of the provided object ({ns}) does not match the namespace sent on the request ({url_ns})"
        ))),
        _ => {
            meta.insert("namespace".into(), json!(url_ns));
            Ok(())
        }
    }
}

fn respond(req: &ResourceRequest, code: StatusCode, obj: Value) -> ApiResult {
    Ok((code, convert::from_storage(req.def, &req.version, obj)))
}

/// `POST` on a collection.
pub(crate) fn create(
    shared: &Shared,
    req: &ResourceRequest,
    params: &Params,
    ct: &str,
    body: &[u8],
) -> ApiResult {
    let mut obj = parse_body(ct, body)?;
    validate(req, &obj)?;
    check_fields(req, params, &obj)?;
    check_limits(shared, req, &obj, true)?;
    fix_namespace(req, &mut obj)?;
    let has_name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
        || obj
            .pointer("/metadata/generateName")
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty());
    if !has_name {
        return Err(invalid(
            req.def,
            "",
            "metadata.name",
            "Required value: name or generateName is required",
        ));
    }
    let obj = convert::to_storage(req.def, &req.version, obj);
    let out = shared
        .store
        .create(&req.def.store_key(), obj, write_opts(params))
        .map_err(store_err(req))?;
    respond(req, StatusCode::CREATED, out)
}

fn scope(req: &ResourceRequest) -> UpdateScope {
    if req.subresource.is_some() {
        UpdateScope::Status
    } else {
        UpdateScope::Main
    }
}

/// `PUT` on an object or its status.
pub(crate) fn update(
    shared: &Shared,
    req: &ResourceRequest,
    params: &Params,
    ct: &str,
    body: &[u8],
) -> ApiResult {
    let mut obj = parse_body(ct, body)?;
    validate(req, &obj)?;
    check_fields(req, params, &obj)?;
    check_limits(shared, req, &obj, false)?;
    fix_namespace(req, &mut obj)?;
    let url_name = req.name.as_deref().unwrap_or_default();
    match object_name(&obj) {
        Some(n) if !n.is_empty() && n != url_name => {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({n}) does not match the name on the URL ({url_name})"
            )));
        }
        _ => {
            if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                m.insert("name".into(), json!(url_name));
            }
        }
    }
    let obj = convert::to_storage(req.def, &req.version, obj);
    let out = shared
        .store
        .replace(&req.def.store_key(), obj, scope(req), write_opts(params))
        .map_err(store_err(req))?;
    respond(req, StatusCode::OK, out)
}

/// `PATCH` on an object or its status (merge, JSON, strategic, apply).
pub(crate) fn patch(
    shared: &Shared,
    req: &ResourceRequest,
    params: &Params,
    ct: &str,
    body: &[u8],
) -> ApiResult {
    let kind =
        PatchKind::from_content_type(ct).ok_or_else(|| ApiError::unsupported_media_type(ct))?;
    if kind == PatchKind::Strategic && !req.def.supports_strategic_merge() {
        return Err(ApiError::unsupported_media_type(ct));
    }
    let body_ct = if kind == PatchKind::Apply {
        "application/yaml"
    } else {
        "application/json"
    };
    let patch_body = parse_body(body_ct, body)?;
    if kind != PatchKind::Json {
        check_fields(req, params, &patch_body)?;
    }
    let opts = write_opts(params);
    let key = req.def.store_key();
    let name = req.name.as_deref().unwrap_or_default();
    let ns = req.namespace.as_deref();
    if kind == PatchKind::Apply {
        if params.get("fieldManager").is_none_or(|f| f.is_empty()) {
            return Err(ApiError::bad_request(
                "PATCH with application/apply-patch+yaml requires the fieldManager parameter",
            ));
        }
        validate(req, &patch_body)?;
        if shared.store.get(&key, ns, name).is_none() {
            check_limits(shared, req, &patch_body, true)?;
            // Server-side apply creates missing objects.
            let mut obj = patch_body;
            fix_namespace(req, &mut obj)?;
            if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                m.insert("name".into(), json!(name));
            }
            let obj = convert::to_storage(req.def, &req.version, obj);
            let out = shared
                .store
                .create(&key, obj, opts)
                .map_err(store_err(req))?;
            return respond(req, StatusCode::CREATED, out);
        }
    }
    let precondition = match kind {
        PatchKind::Json => None,
        _ => patch_body
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .map(str::to_string),
    };
    let def = req.def;
    let version = req.version.clone();
    let mut rejected: Option<ApiError> = None;
    let result = shared
        .store
        .modify(&key, ns, name, scope(req), opts, |live| {
            if let Some(rv) = &precondition
                && live
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
                    != Some(rv.as_str())
            {
                return Err(StoreError::Conflict {
                    resource: String::new(),
                    name: String::new(),
                });
            }
            // Patches are written against the client's version: convert the live
            // object to it, patch, and convert back.
            let mut obj = convert::from_storage(def, &version, live.clone());
            patch::apply(kind, &mut obj, &patch_body).map_err(StoreError::Invalid)?;
            // The patched result must pass the same checks as a full write.
            if let Err(e) =
                validate(req, &obj).and_then(|()| check_limits(shared, req, &obj, false))
            {
                let msg = e.message.clone();
                rejected = Some(e);
                return Err(StoreError::Invalid(msg));
            }
            *live = convert::to_storage(def, &version, obj);
            Ok(())
        });
    if let Some(e) = rejected {
        return Err(e);
    }
    let out = result.map_err(store_err(req))?;
    respond(req, StatusCode::OK, out)
}

fn delete_options(params: &Params, body: &[u8]) -> Result<DeleteOptions, ApiError> {
    let mut opts = DeleteOptions {
        dry_run: params.get("dryRun").is_some_and(|v| v == "All"),
        ..Default::default()
    };
    if !body.is_empty() {
        check_body_nesting(body)?;
        let v: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding DeleteOptions: {e}")))?;
        if let Some(p) = v.get("preconditions") {
            opts.resource_version = p
                .get("resourceVersion")
                .and_then(Value::as_str)
                .map(str::to_string);
            opts.uid = p.get("uid").and_then(Value::as_str).map(str::to_string);
        }
        if v.get("dryRun")
            .and_then(Value::as_array)
            .is_some_and(|d| d.iter().any(|x| x == "All"))
        {
            opts.dry_run = true;
        }
    }
    Ok(opts)
}

/// `DELETE` on an object: answers with the deleted object.
pub(crate) fn delete(
    shared: &Shared,
    req: &ResourceRequest,
    params: &Params,
    body: &[u8],
) -> ApiResult {
    let opts = delete_options(params, body)?;
    let out = shared
        .store
        .delete(
            &req.def.store_key(),
            req.namespace.as_deref(),
            req.name.as_deref().unwrap_or_default(),
            &opts,
        )
        .map_err(store_err(req))?;
    respond(req, StatusCode::OK, out)
}

/// `DELETE` on a collection (with selectors): answers with the deleted objects.
pub(crate) fn delete_collection(
    shared: &Shared,
    req: &ResourceRequest,
    params: &Params,
) -> ApiResult {
    let labels = LabelSelector::parse(params.get("labelSelector").map_or("", String::as_str))
        .map_err(ApiError::bad_request)?;
    let fields = FieldSelector::parse(params.get("fieldSelector").map_or("", String::as_str))
        .map_err(ApiError::bad_request)?;
    let opts = delete_options(params, &[])?;
    let key = req.def.store_key();
    let snap = shared.store.list(&key, req.namespace.as_deref());
    let mut deleted = Vec::new();
    for obj in snap
        .items
        .iter()
        .filter(|o| labels_match(&labels, o) && fields.matches(o))
    {
        let name = object_name(obj).unwrap_or_default();
        let ns = crate::sim::store::object_namespace(obj);
        // Objects may vanish concurrently; that is not an error here.
        if let Ok(d) = shared.store.delete(&key, ns, name, &opts) {
            deleted.push(convert::from_storage(req.def, &req.version, d));
        }
    }
    Ok((
        StatusCode::OK,
        json!({
            "kind": format!("{}List", req.def.kind),
            "apiVersion": req.def.api_version(&req.version),
            "metadata": {"resourceVersion": shared.store.resource_version().to_string()},
            "items": deleted,
        }),
    ))
}
