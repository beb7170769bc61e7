//! URL parsing and dispatch of every request.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::errors::{ApiError, json_response};
use super::faults::{FaultConfig, fault_error};
use super::{Shared, discovery, list_watch, openapi, reviews, table, write};
use crate::sim::resources::{self, ResourceDef};

/// Query parameters (last value wins; empty pairs, as kube-rs sends, are fine).
pub(crate) type Params = HashMap<String, String>;

/// A request addressed to a resource.
#[derive(Debug)]
pub(crate) struct ResourceRequest {
    pub def: &'static ResourceDef,
    pub version: String,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

enum Route {
    Version,
    CoreVersions,
    Groups,
    Group(String),
    ResourceList(String, String),
    OpenApi,
    OpenApiV3Root,
    OpenApiV3,
    Faults,
    AccessReview,
    SelfReview,
    Resource(ResourceRequest),
    NotFound,
}

fn parse_route(path: &str) -> Route {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segs.as_slice() {
        ["version"] => Route::Version,
        ["_sim", "faults"] => Route::Faults,
        [
            "apis",
            "authorization.k8s.io",
            "v1",
            "selfsubjectaccessreviews",
        ] => Route::AccessReview,
        ["apis", "authentication.k8s.io", "v1", "selfsubjectreviews"] => Route::SelfReview,
        ["openapi", "v2"] => Route::OpenApi,
        ["openapi", "v3"] => Route::OpenApiV3Root,
        ["openapi", "v3", ..] => Route::OpenApiV3,
        ["api"] => Route::CoreVersions,
        ["apis"] => Route::Groups,
        ["apis", g] => Route::Group((*g).to_string()),
        ["api", v, rest @ ..] => resource_route("", v, rest),
        ["apis", g, v, rest @ ..] => resource_route(g, v, rest),
        _ => Route::NotFound,
    }
}

fn resource_route(group: &str, version: &str, rest: &[&str]) -> Route {
    if rest.is_empty() {
        return Route::ResourceList(group.to_string(), version.to_string());
    }
    let lookup = |plural: &str| resources::find(group, plural).filter(|d| d.serves(version));
    // `/namespaces/{ns}/{plural}/…` addresses namespaced resources; anything else
    // (including `/namespaces/{name}` itself) is a cluster-level path.
    let (namespace, tail) = match rest {
        ["namespaces", ns, plural, tail @ ..] if lookup(plural).is_some_and(|d| d.namespaced) => {
            (Some((*ns).to_string()), {
                let mut t = vec![*plural];
                t.extend_from_slice(tail);
                t
            })
        }
        _ => (None, rest.to_vec()),
    };
    let Some(def) = tail.first().and_then(|p| lookup(p)) else {
        return Route::NotFound;
    };
    let (name, subresource) = match tail.as_slice() {
        [_] => (None, None),
        [_, name] => (Some((*name).to_string()), None),
        [_, name, "status"] => (Some((*name).to_string()), Some("status".to_string())),
        _ => return Route::NotFound,
    };
    if subresource.is_some() && !def.has_status {
        return Route::NotFound;
    }
    // A namespaced object can only be addressed by name inside its namespace.
    if def.namespaced && namespace.is_none() && name.is_some() {
        return Route::NotFound;
    }
    Route::Resource(ResourceRequest {
        def,
        version: version.to_string(),
        namespace,
        name,
        subresource,
    })
}

/// The fallback handler: every request comes through here.
pub(crate) async fn dispatch(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let params: Params = match Query::<Params>::try_from_uri(&uri) {
        Ok(q) => q.0,
        Err(e) => return ApiError::bad_request(format!("invalid query: {e}")).into_response(),
    };
    match parse_route(uri.path()) {
        Route::Version => get_only(&method, discovery::version),
        Route::CoreVersions => get_only(&method, || {
            discovery::core_versions(&shared.addr.to_string())
        }),
        Route::Groups => get_only(&method, discovery::group_list),
        Route::Group(g) => match discovery::group(&g) {
            Some(doc) => get_only(&method, || doc),
            None => ApiError::not_found_path().into_response(),
        },
        Route::ResourceList(g, v) => match discovery::resource_list(&g, &v) {
            Some(doc) => get_only(&method, || doc),
            None => ApiError::not_found_path().into_response(),
        },
        Route::OpenApi => openapi(uri.path(), &headers),
        Route::OpenApiV3Root => get_only(&method, openapi::root),
        Route::OpenApiV3 => match openapi::group_version(uri.path()) {
            Some(doc) => get_only(&method, || doc),
            None => ApiError::not_found_path().into_response(),
        },
        Route::Faults => faults_endpoint(&shared, &method, &body),
        Route::AccessReview => reviews::access_review(&shared, &method, &headers, &body),
        Route::SelfReview => reviews::self_review(&shared, &method, &headers, &body),
        Route::NotFound => ApiError::not_found_path().into_response(),
        Route::Resource(req) => resource(shared, method, req, params, headers, body).await,
    }
}

fn get_only(method: &Method, doc: impl FnOnce() -> Value) -> Response {
    if method == Method::GET {
        json_response(StatusCode::OK, &doc())
    } else {
        ApiError::method_not_allowed(method.as_str()).into_response()
    }
}

fn faults_endpoint(shared: &Shared, method: &Method, body: &[u8]) -> Response {
    match *method {
        Method::GET => json_response(
            StatusCode::OK,
            &serde_json::to_value(shared.faults.get()).unwrap_or_default(),
        ),
        Method::PUT | Method::POST => match super::write::check_body_nesting(body)
            .map_err(|e| e.message)
            .and_then(|()| serde_json::from_slice::<FaultConfig>(body).map_err(|e| e.to_string()))
        {
            Ok(cfg) => {
                shared.faults.set(cfg);
                json_response(
                    StatusCode::OK,
                    &serde_json::to_value(shared.faults.get()).unwrap_or_default(),
                )
            }
            Err(e) => ApiError::bad_request(format!("invalid fault config: {e}")).into_response(),
        },
        Method::DELETE => {
            shared.faults.clear();
            json_response(StatusCode::OK, &serde_json::json!({}))
        }
        _ => ApiError::method_not_allowed(method.as_str()).into_response(),
    }
}

/// The verb of a resource request, as used by RBAC and the request counters.
fn verb_of(method: &Method, req: &ResourceRequest, params: &Params) -> Option<&'static str> {
    let watch = params.get("watch").is_some_and(|w| w == "true" || w == "1");
    Some(match (method.as_str(), req.name.is_some()) {
        ("GET", true) => "get",
        ("GET", false) if watch => "watch",
        ("GET", false) => "list",
        ("POST", false) if req.subresource.is_none() => "create",
        ("PUT", true) => "update",
        ("PATCH", true) => "patch",
        ("DELETE", true) if req.subresource.is_none() => "delete",
        ("DELETE", false) => "deletecollection",
        _ => return None,
    })
}

async fn resource(
    shared: Arc<Shared>,
    method: Method,
    req: ResourceRequest,
    params: Params,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(verb) = verb_of(&method, &req, &params) else {
        return ApiError::method_not_allowed(method.as_str()).into_response();
    };
    shared.stats.record(verb, &req.def.key().qualified());
    let mut in_stream_error = None;
    if let Some(action) = shared.faults.take(verb, req.def) {
        if let Some(ms) = action.delay_ms {
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        if action.hang && verb == "watch" {
            return list_watch::hung_watch(&shared);
        }
        if let Some(code) = action.status {
            let err = fault_error(code, verb, req.def);
            if action.in_stream && verb == "watch" {
                in_stream_error = Some(err);
            } else {
                return err.into_response();
            }
        }
    }
    if let Some(v) = params.get("dryRun")
        && v != "All"
    {
        return ApiError::bad_request(format!(
            "unsupported dryRun value {v:?}: only \"All\" is supported"
        ))
        .into_response();
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_string();
    if req.def.read_only() && !matches!(verb, "get" | "list" | "watch") {
        return ApiError::method_not_allowed(method.as_str()).into_response();
    }
    let view = table::requested(&headers, params.get("includeObject").map(String::as_str));
    let result = match verb {
        "get" => list_watch::get(&shared, &req, view),
        "list" => list_watch::list(&shared, &req, &params, view),
        "watch" => return list_watch::watch(shared, req, params, in_stream_error, view),
        "create" | "update" | "patch" | "delete" | "deletecollection" => {
            blocking_write(shared, verb, req, params, content_type, body).await
        }
        _ => Err(ApiError::method_not_allowed(method.as_str())),
    };
    match result {
        Ok((code, v)) => json_response(code, &v),
        Err(e) => e.into_response(),
    }
}

/// The longest a write request may take before it is answered with a 504 Timeout.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs a write (body parsing, validation, the store) on the blocking pool, never on
/// the async workers, and answers 504 after [`WRITE_TIMEOUT`]: a heavy body cannot
/// stall `/version`, lists or watches of other clients.
async fn blocking_write(
    shared: Arc<Shared>,
    verb: &'static str,
    req: ResourceRequest,
    params: Params,
    content_type: String,
    body: Bytes,
) -> Result<(StatusCode, Value), ApiError> {
    let work = tokio::task::spawn_blocking(move || match verb {
        "create" => write::create(&shared, &req, &params, &content_type, &body),
        "update" => write::update(&shared, &req, &params, &content_type, &body),
        "patch" => write::patch(&shared, &req, &params, &content_type, &body),
        "delete" => write::delete(&shared, &req, &params, &body),
        _ => write::delete_collection(&shared, &req, &params),
    });
    match tokio::time::timeout(WRITE_TIMEOUT, work).await {
        Ok(Ok(result)) => result,
        Ok(Err(e)) => Err(ApiError::new(
            500,
            "InternalError",
            format!("the request failed: {e}"),
        )),
        Err(_) => Err(ApiError::new(
            504,
            "Timeout",
            format!(
                "the server was unable to finish the request in the time allotted ({}s)",
                WRITE_TIMEOUT.as_secs()
            ),
        )),
    }
}

/// `/openapi/v2`: an empty but valid document, for clients that still ask for v2 (an
/// empty protobuf message is an empty `openapi_v2.Document`: every kind is "unknown"
/// to them and their client-side validation is skipped). kubectl 1.32 reads v3
/// ([`openapi`]) for `explain` and learns from it that the server validates fields.
fn openapi(_path: &str, headers: &HeaderMap) -> Response {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if accept.contains("protobuf") {
        let mut resp = (StatusCode::OK, Vec::<u8>::new()).into_response();
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            axum::http::HeaderValue::from_static(
                "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
            ),
        );
        return resp;
    }
    json_response(
        StatusCode::OK,
        &serde_json::json!({
            "swagger": "2.0",
            "info": {"title": "gangplank-sim", "version": "v1.32.0"},
            "paths": {},
            "definitions": {}
        }),
    )
}
