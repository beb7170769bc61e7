//! The changes the store has applied since the last assembled state.
//!
//! Watch events land here (cheap: one map insert each); the assembler folds a frozen
//! batch of them into a copy of the previous state off the store task. Per key only
//! the latest change is kept, so a burst of updates to one object costs one apply.

use std::collections::BTreeMap;

use crate::source::objects::{Item, ObjKey};
use crate::source::resources::ResourceKind;

/// Changes of one resource.
#[derive(Debug, Default)]
pub struct KindChanges {
    /// The resource was (re)listed: its objects are exactly these, with `updates` on
    /// top (objects deleted while disconnected disappear here).
    pub replace: Option<BTreeMap<ObjKey, Item>>,
    /// key → latest object (`None`: deleted, or no longer one the console needs).
    pub updates: BTreeMap<ObjKey, Option<Item>>,
}

/// Changes of every resource.
#[derive(Debug, Default)]
pub struct Changes {
    pub kinds: BTreeMap<ResourceKind, KindChanges>,
}

/// What a batch knows about one object.
pub enum Known<'a> {
    /// Changed to this.
    Is(&'a Item),
    /// Deleted, or dropped by a relist.
    Gone,
    /// Not touched by the batch: look further back.
    Unknown,
}

impl Changes {
    /// Records the latest state of one object.
    pub fn set(&mut self, kind: ResourceKind, key: ObjKey, item: Option<Item>) {
        self.kinds
            .entry(kind)
            .or_default()
            .updates
            .insert(key, item);
    }

    /// A completed relist: supersedes every earlier change of the resource.
    pub fn replace(&mut self, kind: ResourceKind, objects: BTreeMap<ObjKey, Item>) {
        let kc = self.kinds.entry(kind).or_default();
        kc.updates.clear();
        kc.replace = Some(objects);
    }

    /// What the batch says about `key`.
    pub fn get(&self, kind: ResourceKind, key: &ObjKey) -> Known<'_> {
        let Some(kc) = self.kinds.get(&kind) else {
            return Known::Unknown;
        };
        match kc.updates.get(key) {
            Some(Some(item)) => Known::Is(item),
            Some(None) => Known::Gone,
            None => match &kc.replace {
                Some(objects) => objects.get(key).map_or(Known::Gone, Known::Is),
                None => Known::Unknown,
            },
        }
    }
}
