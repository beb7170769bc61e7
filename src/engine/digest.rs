//! Running digests of the scheduling state, read by the plan's loop detector after
//! every cycle (`plan.rs`, `fingerprint`).
//!
//! Hashing the whole state after each cycle read every workload record and every queue
//! (~0.5 ms per cycle on 70,000 workloads, half a second over a plan). Instead each
//! workload's part and each queue's members are summed (wrapping) into a digest kept up
//! to date where they change: a sum does not depend on the order of the changes, so the
//! digest after a cycle is the digest of the state it ends in, whatever path led there.

use std::collections::BTreeSet;
use std::hash::{BuildHasher, Hasher};
use std::ops::Deref;

use super::quota::FrId;
use super::state::{CqIdx, QKey, WlIdx, WlState};

/// A ClusterQueue's queue (its heap or its inadmissible set) with a digest of its
/// members. Read through `Deref`; every write goes through the methods below, which
/// keep the digest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueSet {
    keys: BTreeSet<QKey>,
    digest: u64,
}

impl QueueSet {
    /// Sum of the members' words. A workload's key is fixed for a whole plan (priority,
    /// queue-order timestamp and tie-break do not change when it is requeued), so the
    /// set of indexes decides the order, and the digest needs only the indexes.
    pub fn digest(&self) -> u64 {
        self.digest
    }

    pub fn insert(&mut self, k: QKey) -> bool {
        let added = self.keys.insert(k);
        if added {
            self.digest = self.digest.wrapping_add(member_word(k.idx));
        }
        added
    }

    pub fn remove(&mut self, k: &QKey) -> bool {
        let removed = self.keys.remove(k);
        if removed {
            self.digest = self.digest.wrapping_sub(member_word(k.idx));
        }
        removed
    }

    /// Empties the set and returns its members.
    pub fn take(&mut self) -> BTreeSet<QKey> {
        self.digest = 0;
        std::mem::take(&mut self.keys)
    }

    pub fn extend(&mut self, keys: impl IntoIterator<Item = QKey>) {
        for k in keys {
            self.insert(k);
        }
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&QKey) -> bool) {
        let mut digest = self.digest;
        self.keys.retain(|k| {
            let kept = keep(k);
            if !kept {
                digest = digest.wrapping_sub(member_word(k.idx));
            }
            kept
        });
        self.digest = digest;
    }

    /// The digest recomputed from the members (debug checks).
    pub fn recomputed(&self) -> u64 {
        self.keys
            .iter()
            .fold(0, |d: u64, k| d.wrapping_add(member_word(k.idx)))
    }
}

impl Deref for QueueSet {
    type Target = BTreeSet<QKey>;

    fn deref(&self) -> &BTreeSet<QKey> {
        &self.keys
    }
}

impl FromIterator<QKey> for QueueSet {
    fn from_iter<I: IntoIterator<Item = QKey>>(iter: I) -> Self {
        let keys: BTreeSet<QKey> = iter.into_iter().collect();
        let mut set = QueueSet { keys, digest: 0 };
        set.digest = set.recomputed();
        set
    }
}

/// A queue member's word: the index through a bijective mixer (splitmix64's
/// finalizer), so that sums of different sets rarely meet.
fn member_word(idx: WlIdx) -> u64 {
    let mut z = (idx as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The hasher of the plan's state digests: fixed seed (plans are deterministic) and
/// foldhash's quality variant (no key here comes from an adversary).
pub fn state_hasher() -> impl Hasher {
    foldhash::quality::FixedState::with_seed(0x6761_6e67_706c_616e).build_hasher()
}

/// One workload's part of the state digest: index, state, ClusterQueue and, while
/// admitted, the quota it holds.
pub fn workload_word(w: WlIdx, state: WlState, cq: Option<CqIdx>, usage: &[(FrId, i128)]) -> u64 {
    let cq_word = |cq: Option<usize>| cq.map_or(0, |c| c as u64 + 1);
    let (tag, cq) = match state {
        WlState::Admitted => (1u64, cq_word(cq)),
        WlState::Queued => (2, cq_word(cq)),
        WlState::NotQueued(_) => (3, 0),
        WlState::Gone => (4, 0),
    };
    let mut h = state_hasher();
    // indexes fit: fewer than 2^32 workloads and 2^28 ClusterQueues
    h.write_u64((w as u64) << 32 | tag << 28 | cq);
    if tag == 1 {
        for &(fr, q) in usage {
            h.write_u64(fr as u64);
            h.write_u128(q as u128);
        }
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(idx: WlIdx) -> QKey {
        QKey {
            neg_priority: 0,
            ts: idx as i64,
            tie: 0,
            idx,
        }
    }

    #[test]
    fn queue_digest_depends_on_members_not_on_history() {
        let mut a: QueueSet = [1, 2, 3].map(key).into_iter().collect();
        let mut b = QueueSet::default();
        b.insert(key(3));
        b.insert(key(9));
        b.insert(key(1));
        b.remove(&key(9));
        assert_ne!(a.digest(), b.digest(), "{{1,2,3}} and {{1,3}} differ");
        b.extend([key(2), key(2)]);
        assert_eq!(a.digest(), b.digest());
        a.retain(|k| k.idx != 2);
        b.remove(&key(2));
        assert_eq!(a.digest(), b.digest());
        assert_eq!(a.digest(), a.recomputed());
        let moved = a.take();
        assert_eq!((moved.len(), a.digest()), (2, 0));
    }

    #[test]
    fn workload_word_changes_with_state_queue_and_usage() {
        let queued = workload_word(7, WlState::Queued, Some(1), &[]);
        assert_ne!(queued, workload_word(7, WlState::Queued, Some(2), &[]));
        assert_ne!(queued, workload_word(8, WlState::Queued, Some(1), &[]));
        let admitted = workload_word(7, WlState::Admitted, Some(1), &[(0, 4000)]);
        assert_ne!(
            admitted,
            workload_word(7, WlState::Admitted, Some(1), &[(0, 8000)])
        );
        assert_ne!(admitted, queued);
        // a queued workload's stale usage is not part of its word
        assert_eq!(
            queued,
            workload_word(7, WlState::Queued, Some(1), &[(0, 1)])
        );
    }
}
