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
use super::crds;
use super::errors::ApiError;
use super::paging::{Cursor, ListSnapshot};
use super::routes::{Params, ResourceRequest};
use super::selectors::{FieldSelector, LabelSelector, labels_match};
use super::table::{self, TableRequest};
use crate::sim::convert;
use crate::sim::store::{EventType, StoreError, StoreEvent, object_namespace, parse_rv};

type ApiResult = Result<(StatusCode, Value), ApiError>;

/// Bytes of watch events written at once when a backlog is sent.
const CHUNK: usize = 64 * 1024;

/// Upper bound for any watch duration.
const MAX_WATCH: Duration = Duration::from_secs(24 * 3600);

/// Objects served from the CRD table rather than the store.
fn is_crd(req: &ResourceRequest) -> bool {
    req.def.group == "apiextensions.k8s.io"
}

/// `GET …/{name}` and `GET …/{name}/status`.
pub(crate) fn get(shared: &Shared, req: &ResourceRequest, view: Option<TableRequest>) -> ApiResult {
    let key = req.def.store_key();
    let name = req.name.as_deref().unwrap_or_default();
    let found = if is_crd(req) {
        crds::all().iter().find(|c| table::name(c) == name).cloned()
    } else {
        shared.store.get(&key, req.namespace.as_deref(), name)
    };
    let obj = found.ok_or_else(|| {
        ApiError::from_store(
            StoreError::NotFound {
                resource: key.qualified(),
                name: name.to_string(),
            },
            req.def.group,
            req.def.plural,
        )
    })?;
    let obj = convert::from_storage(req.def, &req.version, obj);
    if let Some(t) = view {
        let rv = obj
            .pointer("/metadata/resourceVersion")
            .cloned()
            .unwrap_or(json!(""));
        let meta = json!({"resourceVersion": rv});
        let now = shared.opts.now_ms();
        return Ok((
            StatusCode::OK,
            table::table(req.def, &req.version, t, &[obj], meta, now),
        ));
    }
    Ok((StatusCode::OK, obj))
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
        let mut fields =
            FieldSelector::parse(params.get("fieldSelector").map_or("", String::as_str))
                .map_err(ApiError::bad_request)?;
        if req.def.group == "events.k8s.io" {
            // Selectors name events.k8s.io/v1 fields; events are stored as core/v1.
            fields = fields.map_paths(convert::event_field_to_core);
        }
        Ok(Self {
            namespace: req.namespace.clone(),
            labels,
            fields,
        })
    }

    /// No selectors: every object of the namespace matches.
    fn is_trivial(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }

    fn matches(&self, obj: &Value) -> bool {
        self.namespace
            .as_deref()
            .is_none_or(|ns| object_namespace(obj) == Some(ns))
            && labels_match(&self.labels, obj)
            && self.fields.matches(obj)
    }
}

/// `GET` on a collection: selectors, `limit`/`continue`, malformed-object faults.
///
/// A `limit`ed list is consistent across its pages: the first page snapshots the
/// collection (see [`super::paging`]) and each `continue` token points into that
/// snapshot, so every page costs O(page) and all pages carry the first page's
/// resourceVersion. `remainingItemCount` is set only without selectors, as upstream
/// (counting matches ahead would rescan the rest on every page).
pub(crate) fn list(
    shared: &Shared,
    req: &ResourceRequest,
    params: &Params,
    view: Option<TableRequest>,
) -> ApiResult {
    let filter = Filter::from_params(req, params)?;
    let limit = match params.get("limit").filter(|s| !s.is_empty()) {
        Some(l) => l
            .parse::<usize>()
            .map_err(|_| ApiError::bad_request(format!("invalid limit {l:?}")))?,
        None => 0,
    };
    let now = std::time::Instant::now();
    let key = req.def.store_key();
    let (snap, id, start) = match params.get("continue").filter(|s| !s.is_empty()) {
        Some(tok) => {
            let cursor = Cursor::parse(tok)?;
            let snap = shared.lists.get(cursor.id, now)?;
            if snap.resource != key || snap.namespace != req.namespace {
                return Err(ApiError::bad_request(
                    "the continue token was issued for another list",
                ));
            }
            (snap, Some(cursor.id), cursor.offset)
        }
        None => {
            let (mut items, rv) = shared.store.list_shared(&key, req.namespace.as_deref());
            if is_crd(req) {
                items = crds::all().iter().cloned().map(Arc::new).collect();
            }
            let snap = Arc::new(ListSnapshot {
                resource: key,
                namespace: req.namespace.clone(),
                resource_version: rv,
                items,
            });
            (snap, None, 0)
        }
    };
    let mut page: Vec<&Arc<Value>> = Vec::new();
    let mut next = start;
    let items = snap.items.get(start..).unwrap_or_default();
    for obj in items {
        if limit > 0 && page.len() == limit {
            break;
        }
        next += 1;
        if filter.matches(obj) {
            page.push(obj);
        }
    }
    // More to come only if an unexamined item is left (it may still not match the
    // selectors: then the next page is empty, which clients accept).
    let more = next < snap.items.len();
    let mut meta = json!({"resourceVersion": snap.resource_version.to_string()});
    match (more, id) {
        (true, _) => {
            let id = id.unwrap_or_else(|| shared.lists.insert(snap.clone(), now));
            meta["continue"] = json!(Cursor { id, offset: next }.token());
            if filter.is_trivial() {
                meta["remainingItemCount"] = json!(snap.items.len() - next);
            }
        }
        (false, Some(id)) => shared.lists.remove(id),
        (false, None) => {}
    }
    let mut out: Vec<Value> = page
        .into_iter()
        .map(|o| convert::from_storage(req.def, &req.version, (**o).clone()))
        .collect();
    if start == 0 {
        for mut bad in shared.faults.malformed_for(req.def) {
            convert::set_type_meta(req.def, &req.version, &mut bad);
            out.push(bad);
        }
    }
    if let Some(t) = view {
        let now = shared.opts.now_ms();
        return Ok((
            StatusCode::OK,
            table::table(req.def, &req.version, t, &out, meta, now),
        ));
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

/// One watch line, `type` first as the real server writes it (a `json!` map would sort
/// `object` first, which makes clients decoding the adjacently tagged event buffer the
/// whole object before reading it), serialized without copying the object.
fn line(event_type: &str, object: &Value) -> Bytes {
    let mut v = Vec::with_capacity(1024);
    v.extend_from_slice(b"{\"type\":");
    let _ = serde_json::to_writer(&mut v, event_type);
    v.extend_from_slice(b",\"object\":");
    let _ = serde_json::to_writer(&mut v, object);
    v.extend_from_slice(b"}\n");
    Bytes::from(v)
}

fn expired_status(e: &StoreError) -> Value {
    ApiError::new(410, "Expired", e.to_string()).status_body()
}

fn truthy(params: &Params, k: &str) -> bool {
    params.get(k).is_some_and(|v| v == "true" || v == "1")
}

/// A watch that is accepted and then never sends a byte (fault injection): the
/// stream stays open until the client hangs up or the server stops.
pub(crate) fn hung_watch(shared: &Shared) -> Response {
    let stop = shared.shutdown.clone();
    let body = Body::from_stream(futures::stream::once(async move {
        stop.cancelled_owned().await;
        Ok::<_, Infallible>(Bytes::new())
    }));
    let mut resp = (StatusCode::OK, body).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

/// `GET …?watch=true`: a chunked stream of JSON watch events.
pub(crate) fn watch(
    shared: Arc<Shared>,
    req: ResourceRequest,
    params: Params,
    in_stream_error: Option<ApiError>,
    view: Option<TableRequest>,
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
    // A resourceVersion this store has not reached: the client watched another
    // incarnation of the server (one restarted with other data). kube-apiserver answers
    // 504 "Too large resource version" (cause ResourceVersionTooLarge); the client must
    // relist rather than wait for versions that may never mean the same objects.
    let current = shared.store.resource_version();
    if let Some(r) = start_rv.filter(|&r| r > current) {
        let mut e = ApiError::new(
            504,
            "Timeout",
            format!("Too large resource version: {r}, current: {current}"),
        );
        e.details = Some(serde_json::json!({
            "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
            "retryAfterSeconds": 1
        }));
        return e.into_response();
    }
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
    let key = req.def.store_key();
    let (initial, sub, initial_rv) = if send_initial || start_rv.is_none() {
        let (snap, sub) = shared
            .store
            .list_and_subscribe(&key, req.namespace.as_deref());
        let mut items = if send_initial { snap.items } else { Vec::new() };
        if is_crd(&req) && send_initial {
            items = crds::all().to_vec();
        }
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
        view,
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
    view: Option<TableRequest>,
}

impl WatchTask {
    /// The object as the client sees it: converted to its version, or a one-row Table.
    fn shown(&self, obj: Value) -> Value {
        let obj = convert::from_storage(self.req.def, &self.req.version, obj);
        match self.view {
            Some(t) => {
                let rv = obj
                    .pointer("/metadata/resourceVersion")
                    .cloned()
                    .unwrap_or(json!(""));
                let now = self.shared.opts.now_ms();
                let meta = json!({"resourceVersion": rv});
                table::table(self.req.def, &self.req.version, t, &[obj], meta, now)
            }
            None => obj,
        }
    }

    async fn send(&self, event_type: &str, obj: Value) -> bool {
        let obj = self.shown(obj);
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

    /// Appends one store event to `buf`, translating selector transitions into
    /// ADDED/DELETED as the real server does.
    fn encode(&self, ev: &StoreEvent, buf: &mut Vec<u8>) {
        let now = self.filter.matches(&ev.object);
        let before = ev.old.as_deref().is_some_and(|o| self.filter.matches(o));
        let t = match ev.event_type {
            EventType::Added if now => "ADDED",
            EventType::Deleted if before || now => "DELETED",
            EventType::Modified if now && before => "MODIFIED",
            EventType::Modified if now => "ADDED",
            EventType::Modified if before => "DELETED",
            _ => return,
        };
        let obj = self.shown((*ev.object).clone());
        buf.extend_from_slice(&line(t, &obj));
    }

    /// Sends a backlog of events in chunks of up to [`CHUNK`] bytes, not one write
    /// per event: the real server also flushes only when its queue is empty.
    async fn deliver_all(&self, evs: &[StoreEvent]) -> bool {
        let mut buf = Vec::new();
        for ev in evs {
            self.encode(ev, &mut buf);
            if buf.len() >= CHUNK
                && self
                    .tx
                    .send(Bytes::from(std::mem::take(&mut buf)))
                    .await
                    .is_err()
            {
                return false;
            }
        }
        buf.is_empty() || self.tx.send(Bytes::from(buf)).await.is_ok()
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
                            if !self.deliver_all(&evs).await { return; }
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
                        if !self.deliver_all(&evs).await { return; }
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
