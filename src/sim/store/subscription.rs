//! Cursors over the store's event history.

use tokio::sync::watch;

use super::{ObjectStore, StoreError, StoreEvent};
use crate::sim::resources::ResourceKey;

/// A cursor over the store's event history.
pub struct Subscription {
    pub(super) store: ObjectStore,
    pub(super) resource: Option<ResourceKey>,
    pub(super) cursor: u64,
    pub(super) rx: watch::Receiver<u64>,
}

impl Subscription {
    /// The resourceVersion up to which this subscription has seen every event
    /// (including events of other resources that it skipped).
    pub fn cursor(&self) -> u64 {
        self.cursor
    }

    /// Events after the cursor that are available now (possibly none).
    /// Fails with `Expired` if the subscriber fell behind the history.
    pub fn try_next(&mut self) -> Result<Vec<StoreEvent>, StoreError> {
        let st = self.store.state();
        if self.cursor < st.compacted_rv {
            return Err(StoreError::Expired {
                requested: self.cursor,
                oldest: st.compacted_rv,
            });
        }
        // History is sorted by resourceVersion.
        let start = st
            .history
            .partition_point(|e| e.resource_version <= self.cursor);
        let out = st
            .history
            .range(start..)
            .filter(|e| self.resource.as_ref().is_none_or(|r| *r == e.resource))
            .cloned()
            .collect();
        self.cursor = self.cursor.max(st.rv);
        Ok(out)
    }

    /// Waits until at least one matching event is available and returns all
    /// available ones.
    pub async fn next(&mut self) -> Result<Vec<StoreEvent>, StoreError> {
        loop {
            // Mark the current value as seen *before* reading, so a write that
            // lands in between still wakes us.
            self.rx.borrow_and_update();
            let batch = self.try_next()?;
            if !batch.is_empty() {
                return Ok(batch);
            }
            if self.rx.changed().await.is_err() {
                // The store is gone; nothing will ever arrive.
                std::future::pending::<()>().await;
            }
        }
    }
}
