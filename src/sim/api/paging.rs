//! Consistent paged lists: the first page of a `limit`ed list takes a snapshot of the
//! collection (shared pointers to the stored objects, so it costs one pointer per
//! object, not a copy) at one resourceVersion, and `continue` tokens point into it.
//! Every page is then O(page) instead of a rescan of the whole collection, and the
//! pages together are the collection at the first page's resourceVersion, as with
//! etcd-backed lists.
//!
//! Snapshots are kept for [`SNAPSHOT_TTL`] after their last use and at most
//! [`MAX_SNAPSHOTS`] at once (least recently used dropped first). A token whose
//! snapshot is gone gets 410 `Expired`, as the real server answers a continue token
//! older than etcd's compaction window: the client starts a new list.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::errors::ApiError;
use crate::sim::resources::ResourceKey;
use crate::sim::store::Object;

/// How long an unused list snapshot is kept.
pub const SNAPSHOT_TTL: Duration = Duration::from_secs(300);
/// How many list snapshots are kept at once.
pub const MAX_SNAPSHOTS: usize = 64;

/// The collection a paged list walks, as of `resource_version`.
#[derive(Debug)]
pub struct ListSnapshot {
    pub resource: ResourceKey,
    pub namespace: Option<String>,
    pub resource_version: u64,
    /// Sorted by namespace, then name.
    pub items: Vec<Arc<Object>>,
}

/// Where a continue token points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub id: u64,
    /// Index of the next item to examine.
    pub offset: usize,
}

impl Cursor {
    /// The opaque token (hex, so it survives any URL encoding).
    pub fn token(self) -> String {
        hex::encode(format!("p1:{}:{}", self.id, self.offset))
    }

    /// Parses a token made by [`Cursor::token`].
    pub fn parse(token: &str) -> Result<Self, ApiError> {
        let bad = || ApiError::bad_request("invalid continue token");
        let raw = hex::decode(token).map_err(|_| bad())?;
        let s = String::from_utf8(raw).map_err(|_| bad())?;
        let mut parts = s.strip_prefix("p1:").ok_or_else(bad)?.split(':');
        let id = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
        let offset = parts.next().and_then(|p| p.parse().ok()).ok_or_else(bad)?;
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(Cursor { id, offset })
    }
}

struct Entry {
    snapshot: Arc<ListSnapshot>,
    last_used: Instant,
}

/// The server's list snapshots.
#[derive(Default)]
pub struct ListSnapshots {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    next_id: u64,
    entries: HashMap<u64, Entry>,
}

impl std::fmt::Debug for ListSnapshots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListSnapshots").finish_non_exhaustive()
    }
}

/// The 410 a client gets for a token whose snapshot is gone (Kubernetes' wording).
pub fn expired() -> ApiError {
    ApiError::new(
        410,
        "Expired",
        "The provided continue parameter is too old to display a consistent list result. \
         You can start a new list without the continue parameter.",
    )
}

impl ListSnapshots {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps `snapshot` for later pages and returns its id.
    pub fn insert(&self, snapshot: Arc<ListSnapshot>, now: Instant) -> u64 {
        let mut inner = self.lock();
        inner
            .entries
            .retain(|_, e| now.saturating_duration_since(e.last_used) < SNAPSHOT_TTL);
        while inner.entries.len() >= MAX_SNAPSHOTS {
            let oldest = inner
                .entries
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(id, _)| *id);
            match oldest {
                Some(id) => inner.entries.remove(&id),
                None => break,
            };
        }
        inner.next_id += 1;
        let id = inner.next_id;
        inner.entries.insert(
            id,
            Entry {
                snapshot,
                last_used: now,
            },
        );
        id
    }

    /// The snapshot of a token, or 410 when it expired.
    pub fn get(&self, id: u64, now: Instant) -> Result<Arc<ListSnapshot>, ApiError> {
        let mut inner = self.lock();
        let e = inner.entries.get_mut(&id).ok_or_else(expired)?;
        if now.saturating_duration_since(e.last_used) >= SNAPSHOT_TTL {
            inner.entries.remove(&id);
            return Err(expired());
        }
        e.last_used = now;
        Ok(e.snapshot.clone())
    }

    /// Forgets a snapshot whose last page has been served.
    pub fn remove(&self, id: u64) {
        self.lock().entries.remove(&id);
    }

    /// Drops every snapshot: outstanding tokens get 410 (for tests of that path).
    pub fn expire_all(&self) {
        self.lock().entries.clear();
    }

    /// How many snapshots are held.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether no snapshot is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap() -> Arc<ListSnapshot> {
        Arc::new(ListSnapshot {
            resource: ResourceKey::new("", "nodes"),
            namespace: None,
            resource_version: 7,
            items: Vec::new(),
        })
    }

    #[test]
    fn token_round_trips_and_rejects_garbage() {
        let c = Cursor { id: 3, offset: 500 };
        assert_eq!(Cursor::parse(&c.token()).expect("parse"), c);
        assert_eq!(Cursor::parse("zz").expect_err("bad").code, 400);
        assert_eq!(
            Cursor::parse(&hex::encode("n\0name"))
                .expect_err("old")
                .code,
            400
        );
    }

    #[test]
    fn unused_snapshots_expire_and_the_oldest_is_evicted() {
        let s = ListSnapshots::default();
        let t0 = Instant::now();
        let a = s.insert(snap(), t0);
        assert!(s.get(a, t0 + Duration::from_secs(1)).is_ok());
        assert_eq!(
            s.get(a, t0 + SNAPSHOT_TTL + Duration::from_secs(2))
                .expect_err("expired")
                .code,
            410
        );
        let ids: Vec<u64> = (0..MAX_SNAPSHOTS + 1)
            .map(|i| s.insert(snap(), t0 + Duration::from_millis(i as u64)))
            .collect();
        assert_eq!(s.len(), MAX_SNAPSHOTS);
        assert_eq!(s.get(ids[0], t0).expect_err("evicted").code, 410);
        assert!(s.get(ids[MAX_SNAPSHOTS], t0).is_ok());
    }
}
