//! GET, LIST and WATCH.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::Shared;
use super::errors::ApiError;
use super::routes::{Params, ResourceRequest};
use super::selectors::{FieldSelector, LabelSelector};
use crate::sim::convert;
use crate::sim::store::{EventType, StoreError, StoreEvent, object_namespace, parse_rv};

type ApiResult = Result<(StatusCode, Value), ApiError>;

/// Upper bound for any watch duration.
const MAX_WATCH: Duration = Duration::from_secs(24 * 3600);

/// `GET …/{name}` and `GET …/{name}/status`.
pub(crate) fn get(shared: &Shared, req: &ResourceRequest) -> ApiResult {
    let key = req.def.key();
    let name = req.name.as_deref().unwrap_or_default();
    let obj = shared
        .store
        .get(&key, req.namespace.as_deref(), name)
        .ok_or_else(|| {
            ApiError::from_store(
                StoreError::NotFound {
                    resource: key.qualified(),
                    name: name.to_string(),
                },
                req.def.group,
                req.def.plural,
            )
        })?;
    Ok((
        StatusCode::OK,
        convert::from_storage(req.def, &req.version, obj),
    ))
}

/// Selectors and namespace of a list or watch.
struct Filter {
    namespace: Option<String>,
    labels: LabelSelector,
    fields: FieldSelector,
}

impl Filter {
    fn from_params(req: &ResourceRequest, params: &Params) -> Result<Self, ApiError> {
        let labels = LabelSelector::parse(params.get("labelSelector").map_or("", String::as_str))
            .map_err(ApiError::bad_request)?;
        let fields = FieldSelector::parse(params.get("fieldSelector").map_or("", String::as_str))
            .map_err(ApiError::bad_request)?;
        Ok(Self {
            namespace: req.namespace.clone(),
            labels,
            fields,
        })
    }

    fn matches(&self, obj: &Value) -> bool {
        self.namespace
            .as_deref()
            .is_none_or(|ns| object_namespace(obj) == Some(ns))
            && self.labels.matches(obj)
            && self.fields.matches(obj)
    }
}

fn continue_token(obj: &Value) -> String {
    let ns = object_namespace(obj).unwrap_or("");
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    hex::encode(format!("{ns}\0{name}"))
}

fn sort_key(obj: &Value) -> (String, String) {
    (
        object_namespace(obj).unwrap_or("").to_string(),
        obj.pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
    )
}

/// `GET` on a collection: selectors, `limit`/`continue`, malformed-object faults.
pub(crate) fn list(shared: &Shared, req: &ResourceRequest, params: &Params) -> ApiResult {
    let filter = Filter::from_params(req, params)?;
    let limit = match params.get("limit").filter(|s| !s.is_empty()) {
        Some(l) => l
            .parse::<usize>()
            .map_err(|_| ApiError::bad_request(format!("invalid limit {l:?}")))?,
        None => 0,
    };
    let after = match params.get("continue").filter(|s| !s.is_empty()) {
        Some(tok) => {
            let raw =
                hex::decode(tok).map_err(|_| ApiError::bad_request("invalid continue token"))?;
            let s = String::from_utf8(raw)
                .map_err(|_| ApiError::bad_request("invalid continue token"))?;
            let (ns, name) = s
                .split_once('\0')
                .ok_or_else(|| ApiError::bad_request("invalid continue token"))?;
            Some((ns.to_string(), name.to_string()))
        }
        None => None,
    };
    let snap = shared.store.list(&req.def.key(), req.namespace.as_deref());
    let mut items: Vec<Value> = snap
        .items
        .into_iter()
        .filter(|o| filter.matches(o))
        .filter(|o| after.as_ref().is_none_or(|a| sort_key(o) > *a))
        .collect();
    let mut cont = String::new();
    let mut remaining = None;
    if limit > 0 && items.len() > limit {
        remaining = Some(items.len() - limit);
        items.truncate(limit);
        cont = items.last().map(continue_token).unwrap_or_default();
    }
    let mut out: Vec<Value> = items
        .into_iter()
        .map(|o| convert::from_storage(req.def, &req.version, o))
        .collect();
    if after.is_none() {
        for mut bad in shared.faults.malformed_for(req.def) {
            convert::set_type_meta(req.def, &req.version, &mut bad);
            out.push(bad);
        }
    }
    let mut meta = json!({"resourceVersion": snap.resource_version.to_string()});
    if !cont.is_empty() {
        meta["continue"] = json!(cont);
        meta["remainingItemCount"] = json!(remaining);
    }
    Ok((
        StatusCode::OK,
        json!({
            "kind": format!("{}List", req.def.kind),
            "apiVersion": req.def.api_version(&req.version),
            "metadata": meta,
            "items": out,
        }),
    ))
}

fn line(event_type: &str, object: &Value) -> Bytes {
    let mut v =
        serde_json::to_vec(&json!({"type": event_type, "object": object})).unwrap_or_default();
    v.push(b'\n');
    Bytes::from(v)
}

fn expired_status(e: &StoreError) -> Value {
    ApiError::new(410, "Expired", e.to_string()).status_body()
}

fn truthy(params: &Params, k: &str) -> bool {
    params.get(k).is_some_and(|v| v == "true" || v == "1")
}

/// `GET …?watch=true`: a chunked stream of JSON watch events.
pub(crate) fn watch(
    shared: Arc<Shared>,
    req: ResourceRequest,
    params: Params,
    in_stream_error: Option<ApiError>,
) -> Response {
    let filter = match Filter::from_params(&req, &params) {
        Ok(f) => f,
        Err(e) => return e.into_response(),
    };
    let rv_param = params
        .get("resourceVersion")
        .filter(|s| !s.is_empty())
        .cloned();
    let start_rv = match rv_param.as_deref() {
        None | Some("0") => None,
        Some(s) => match parse_rv(s) {
            Some(r) => Some(r),
            None => {
                return ApiError::bad_request(format!("invalid resource version {s:?}"))
                    .into_response();
            }
        },
    };
    let send_initial = match params.get("sendInitialEvents").map(String::as_str) {
        Some("true") => true,
        Some("false") => false,
        _ => start_rv.is_none(),
    };
    let initial_end_bookmark = params.get("sendInitialEvents").is_some_and(|v| v == "true");
    let bookmarks = truthy(&params, "allowWatchBookmarks");
    let timeout = params
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map(Duration::from_secs)
        .unwrap_or(shared.opts.default_watch_timeout)
        // Keeps `Instant + timeout` from overflowing on absurd values.
        .min(MAX_WATCH);
    let timeout = match shared.faults.watch_close_after() {
        Some(s) => timeout.min(Duration::from_secs(s)),
        None => timeout,
    };
    let (tx, rx) = mpsc::channel::<Bytes>(256);
    let body = Body::from_stream(futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<_, Infallible>(b), rx))
    }));
    let mut resp = (StatusCode::OK, body).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );

    if let Some(err) = in_stream_error {
        let _ = tx.try_send(line("ERROR", &err.status_body()));
        return resp;
    }
    let key = req.def.key();
    let (initial, sub, initial_rv) = if send_initial || start_rv.is_none() {
        let (snap, sub) = shared
            .store
            .list_and_subscribe(&key, req.namespace.as_deref());
        let items = if send_initial { snap.items } else { Vec::new() };
        (items, sub, snap.resource_version)
    } else {
        let from = start_rv.unwrap_or(0);
        match shared.store.subscribe(Some(key), Some(from)) {
            Ok(sub) => (Vec::new(), sub, from),
            Err(e) => {
                let _ = tx.try_send(line("ERROR", &expired_status(&e)));
                return resp;
            }
        }
    };
    let task = WatchTask {
        shared: shared.clone(),
        req,
        filter,
        tx,
        bookmarks,
    };
    tokio::spawn(task.run(initial, initial_rv, initial_end_bookmark, sub, timeout));
    resp
}

struct WatchTask {
    shared: Arc<Shared>,
    req: ResourceRequest,
    filter: Filter,
    tx: mpsc::Sender<Bytes>,
    bookmarks: bool,
}

impl WatchTask {
    async fn send(&self, event_type: &str, obj: Value) -> bool {
        let obj = convert::from_storage(self.req.def, &self.req.version, obj);
        self.tx.send(line(event_type, &obj)).await.is_ok()
    }

    async fn bookmark(&self, rv: u64, initial_end: bool) -> bool {
        let mut meta = json!({"resourceVersion": rv.to_string()});
        if initial_end {
            meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let obj = json!({
            "kind": self.req.def.kind,
            "apiVersion": self.req.def.api_version(&self.req.version),
            "metadata": meta,
        });
        self.tx.send(line("BOOKMARK", &obj)).await.is_ok()
    }

    /// Sends one store event, translating selector transitions into
    /// ADDED/DELETED as the real server does.
    async fn deliver(&self, ev: &StoreEvent) -> bool {
        let now = self.filter.matches(&ev.object);
        let before = ev.old.as_deref().is_some_and(|o| self.filter.matches(o));
        let t = match ev.event_type {
            EventType::Added if now => "ADDED",
            EventType::Deleted if before || now => "DELETED",
            EventType::Modified if now && before => "MODIFIED",
            EventType::Modified if now => "ADDED",
            EventType::Modified if before => "DELETED",
            _ => return true,
        };
        self.send(t, (*ev.object).clone()).await
    }

    async fn run(
        self,
        initial: Vec<Value>,
        initial_rv: u64,
        initial_end_bookmark: bool,
        mut sub: crate::sim::store::Subscription,
        timeout: Duration,
    ) {
        let deadline = Instant::now() + timeout;
        let mut close_rx = self.shared.close_watches.subscribe();
        for obj in initial.into_iter().filter(|o| self.filter.matches(o)) {
            if !self.send("ADDED", obj).await {
                return;
            }
        }
        for mut bad in self.shared.faults.malformed_for(self.req.def) {
            convert::set_type_meta(self.req.def, &self.req.version, &mut bad);
            if self.tx.send(line("ADDED", &bad)).await.is_err() {
                return;
            }
        }
        if initial_end_bookmark && self.bookmarks && !self.bookmark(initial_rv, true).await {
            return;
        }
        // `interval` panics on zero.
        let interval = self
            .shared
            .opts
            .bookmark_interval
            .max(Duration::from_millis(1));
        let mut tick = tokio::time::interval_at(Instant::now() + interval, interval);
        loop {
            tokio::select! {
                _ = self.shared.shutdown.cancelled() => return,
                _ = close_rx.changed() => return,
                _ = tokio::time::sleep_until(deadline) => return,
                _ = self.tx.closed() => return,
                _ = tick.tick(), if self.bookmarks => {
                    // Deliver everything up to the cursor first, so the bookmark's
                    // resourceVersion never skips an undelivered event.
                    match sub.try_next() {
                        Ok(evs) => {
                            for ev in &evs {
                                if !self.deliver(ev).await { return; }
                            }
                        }
                        Err(e) => {
                            let _ = self.tx.send(line("ERROR", &expired_status(&e))).await;
                            return;
                        }
                    }
                    if !self.bookmark(sub.cursor(), false).await { return; }
                }
                res = sub.next() => match res {
                    Ok(evs) => {
                        for ev in &evs {
                            if !self.deliver(ev).await { return; }
                        }
                    }
                    Err(e) => {
                        let _ = self.tx.send(line("ERROR", &expired_status(&e))).await;
                        return;
                    }
                }
            }
        }
    }
}
