//! API errors rendered as Kubernetes `Status` bodies.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::sim::store::StoreError;

/// An API error: HTTP code, `Status.reason` and message.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// HTTP status code (also `Status.code`).
    pub code: u16,
    /// `Status.reason`, e.g. `NotFound`.
    pub reason: &'static str,
    /// Human-readable message.
    pub message: String,
    /// Optional `Status.details`.
    pub details: Option<Value>,
}

impl ApiError {
    /// A new error.
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 404 NotFound for a URL that matches nothing.
    pub fn not_found_path() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed(method: &str) -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            format!("the server does not allow this method on the requested resource ({method})"),
        )
    }

    /// 422 Invalid.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(422, "Invalid", message)
    }

    /// 415 UnsupportedMediaType.
    pub fn unsupported_media_type(ct: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml (got {ct})"
            ),
        )
    }

    /// Adds `details` (name, group, kind).
    pub fn with_details(mut self, name: &str, group: &str, kind: &str) -> Self {
        self.details = Some(json!({"name": name, "group": group, "kind": kind}));
        self
    }

    /// The `Status` object.
    pub fn status_body(&self) -> Value {
        let mut v = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(d) = &self.details {
            v["details"] = d.clone();
        }
        v
    }

    /// Maps a store error, adding details for the resource.
    pub fn from_store(e: StoreError, group: &str, plural: &str) -> Self {
        match &e {
            StoreError::NotFound { name, .. } => {
                Self::new(404, "NotFound", e.to_string()).with_details(name, group, plural)
            }
            StoreError::AlreadyExists { name, .. } => {
                Self::new(409, "AlreadyExists", e.to_string()).with_details(name, group, plural)
            }
            StoreError::Conflict { name, .. } => {
                Self::new(409, "Conflict", e.to_string()).with_details(name, group, plural)
            }
            StoreError::Invalid(m) => Self::invalid(m.clone()),
            StoreError::BadRequest(m) => Self::bad_request(m.clone()),
            StoreError::Expired { .. } => Self::new(410, "Expired", e.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        json_response(code, &self.status_body())
    }
}

/// A JSON response with `Content-Type: application/json`.
pub fn json_response(code: StatusCode, body: &Value) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    let mut resp = (code, bytes).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}
