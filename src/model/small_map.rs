//! [`SmallMap`]: a map kept as one sorted vector, with the part of `BTreeMap`'s API
//! the model's users call.
//!
//! The model's small maps (labels, a pod's requests, a node's allocatable, an
//! admission's flavors) hold a handful of entries, and a live cluster holds hundreds
//! of thousands of them. A `BTreeMap` allocates a whole node (11 slots) for its first
//! entry: ≈ 0.5 KB for a pod's three labels, as much again for its three requests. One
//! vector of exactly the entries costs a quarter of that, and is as fast or faster to
//! search at these sizes. Iteration is in key order, as a `BTreeMap`'s, so every
//! output that walks a map is unchanged; `Debug`, equality and ordering are a
//! `BTreeMap`'s too.

use std::borrow::Borrow;
use std::fmt;

/// A map from `K` to `V` sorted by key (see the module docs).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SmallMap<K, V> {
    entries: Vec<(K, V)>,
}

impl<K, V> Default for SmallMap<K, V> {
    fn default() -> Self {
        SmallMap {
            entries: Vec::new(),
        }
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for SmallMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.entries.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}

impl<K, V> SmallMap<K, V> {
    pub const fn new() -> Self {
        SmallMap {
            entries: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    pub fn iter(&self) -> Iter<'_, K, V> {
        Iter {
            inner: self.entries.iter(),
        }
    }

    pub fn iter_mut(&mut self) -> IterMut<'_, K, V> {
        IterMut {
            inner: self.entries.iter_mut(),
        }
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator + Clone {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator + Clone {
        self.entries.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> + ExactSizeIterator {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    pub fn into_keys(self) -> impl DoubleEndedIterator<Item = K> + ExactSizeIterator {
        self.entries.into_iter().map(|(k, _)| k)
    }

    pub fn into_values(self) -> impl DoubleEndedIterator<Item = V> + ExactSizeIterator {
        self.entries.into_iter().map(|(_, v)| v)
    }

    pub fn first_key_value(&self) -> Option<(&K, &V)> {
        self.entries.first().map(|(k, v)| (k, v))
    }

    pub fn last_key_value(&self) -> Option<(&K, &V)> {
        self.entries.last().map(|(k, v)| (k, v))
    }

    pub fn pop_first(&mut self) -> Option<(K, V)> {
        if self.entries.is_empty() {
            None
        } else {
            Some(self.entries.remove(0))
        }
    }

    pub fn pop_last(&mut self) -> Option<(K, V)> {
        self.entries.pop()
    }

    /// Keeps the entries for which `f` is true, in order.
    pub fn retain(&mut self, mut f: impl FnMut(&K, &mut V) -> bool) {
        self.entries.retain_mut(|(k, v)| f(k, v));
    }

    /// Frees spare capacity (after the map is built).
    pub fn shrink_to_fit(&mut self) {
        self.entries.shrink_to_fit();
    }
}

impl<K: Ord, V> SmallMap<K, V> {
    fn find<Q>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.entries.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| &self.entries[i].1)
    }

    pub fn get_key_value<Q>(&self, key: &Q) -> Option<(&K, &V)>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).ok().map(|i| {
            let (k, v) = &self.entries[i];
            (k, v)
        })
    }

    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        match self.find(key) {
            Ok(i) => Some(&mut self.entries[i].1),
            Err(_) => None,
        }
    }

    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.find(key).is_ok()
    }

    /// Inserts `value` at `key`; returns the value it replaced.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        match self.find(key) {
            Ok(i) => Some(self.entries.remove(i).1),
            Err(_) => None,
        }
    }

    pub fn entry(&mut self, key: K) -> Entry<'_, K, V> {
        match self.find(&key) {
            Ok(i) => Entry::Occupied(OccupiedEntry {
                map: self,
                index: i,
            }),
            Err(i) => Entry::Vacant(VacantEntry {
                map: self,
                index: i,
                key,
            }),
        }
    }

    /// Moves every entry of `other` into `self` (later values win, as `BTreeMap`'s).
    pub fn append(&mut self, other: &mut Self) {
        for (k, v) in std::mem::take(&mut other.entries) {
            self.insert(k, v);
        }
    }

    /// Builds from entries in any order; for equal keys the last one wins.
    fn from_unsorted(mut entries: Vec<(K, V)>) -> Self {
        // Stable: among equal keys the input order is kept, so the last is the last.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(K, V)> = Vec::with_capacity(entries.len());
        for (k, v) in entries {
            match out.last_mut() {
                Some(last) if last.0 == k => last.1 = v,
                _ => out.push((k, v)),
            }
        }
        out.shrink_to_fit();
        SmallMap { entries: out }
    }
}

/// A view into one place of a [`SmallMap`], as `btree_map::Entry`.
pub enum Entry<'a, K, V> {
    Vacant(VacantEntry<'a, K, V>),
    Occupied(OccupiedEntry<'a, K, V>),
}

pub struct VacantEntry<'a, K, V> {
    map: &'a mut SmallMap<K, V>,
    index: usize,
    key: K,
}

pub struct OccupiedEntry<'a, K, V> {
    map: &'a mut SmallMap<K, V>,
    index: usize,
}

impl<'a, K, V> VacantEntry<'a, K, V> {
    pub fn key(&self) -> &K {
        &self.key
    }

    pub fn insert(self, value: V) -> &'a mut V {
        self.map.entries.insert(self.index, (self.key, value));
        &mut self.map.entries[self.index].1
    }
}

impl<'a, K, V> OccupiedEntry<'a, K, V> {
    pub fn key(&self) -> &K {
        &self.map.entries[self.index].0
    }

    pub fn get(&self) -> &V {
        &self.map.entries[self.index].1
    }

    pub fn get_mut(&mut self) -> &mut V {
        &mut self.map.entries[self.index].1
    }

    pub fn into_mut(self) -> &'a mut V {
        &mut self.map.entries[self.index].1
    }

    pub fn insert(&mut self, value: V) -> V {
        std::mem::replace(self.get_mut(), value)
    }

    pub fn remove(self) -> V {
        self.map.entries.remove(self.index).1
    }
}

impl<'a, K, V> Entry<'a, K, V> {
    pub fn or_insert(self, default: V) -> &'a mut V {
        self.or_insert_with(|| default)
    }

    pub fn or_insert_with(self, default: impl FnOnce() -> V) -> &'a mut V {
        match self {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => v.insert(default()),
        }
    }

    pub fn or_default(self) -> &'a mut V
    where
        V: Default,
    {
        self.or_insert_with(V::default)
    }

    pub fn and_modify(mut self, f: impl FnOnce(&mut V)) -> Self {
        if let Entry::Occupied(o) = &mut self {
            f(o.get_mut());
        }
        self
    }

    pub fn key(&self) -> &K {
        match self {
            Entry::Occupied(o) => o.key(),
            Entry::Vacant(v) => v.key(),
        }
    }
}

/// Iterator over `(&K, &V)` in key order.
#[derive(Clone, Debug)]
pub struct Iter<'a, K, V> {
    inner: std::slice::Iter<'a, (K, V)>,
}

impl<'a, K, V> Iterator for Iter<'a, K, V> {
    type Item = (&'a K, &'a V);
    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next().map(|(k, v)| (k, v))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<K, V> DoubleEndedIterator for Iter<'_, K, V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.inner.next_back().map(|(k, v)| (k, v))
    }
}

impl<K, V> ExactSizeIterator for Iter<'_, K, V> {}

/// Iterator over `(&K, &mut V)` in key order.
#[derive(Debug)]
pub struct IterMut<'a, K, V> {
    inner: std::slice::IterMut<'a, (K, V)>,
}

impl<'a, K, V> Iterator for IterMut<'a, K, V> {
    type Item = (&'a K, &'a mut V);
    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next().map(|(k, v)| (&*k, v))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<K, V> DoubleEndedIterator for IterMut<'_, K, V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.inner.next_back().map(|(k, v)| (&*k, v))
    }
}

impl<K, V> ExactSizeIterator for IterMut<'_, K, V> {}

impl<'a, K, V> IntoIterator for &'a SmallMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Iter<'a, K, V>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, K, V> IntoIterator for &'a mut SmallMap<K, V> {
    type Item = (&'a K, &'a mut V);
    type IntoIter = IterMut<'a, K, V>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl<K, V> IntoIterator for SmallMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for SmallMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Self::from_unsorted(iter.into_iter().collect())
    }
}

impl<K: Ord, V> Extend<(K, V)> for SmallMap<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl<'a, K: Ord + Copy, V: Copy> Extend<(&'a K, &'a V)> for SmallMap<K, V> {
    fn extend<I: IntoIterator<Item = (&'a K, &'a V)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(*k, *v);
        }
    }
}

impl<K: Ord, V, const N: usize> From<[(K, V); N]> for SmallMap<K, V> {
    fn from(entries: [(K, V); N]) -> Self {
        Self::from_unsorted(entries.into())
    }
}

impl<K: Ord, V> From<std::collections::BTreeMap<K, V>> for SmallMap<K, V> {
    fn from(map: std::collections::BTreeMap<K, V>) -> Self {
        // Already sorted and unique.
        SmallMap {
            entries: map.into_iter().collect(),
        }
    }
}

impl<K: Ord, V> From<SmallMap<K, V>> for std::collections::BTreeMap<K, V> {
    fn from(map: SmallMap<K, V>) -> Self {
        map.entries.into_iter().collect()
    }
}

impl<K, Q, V> std::ops::Index<&Q> for SmallMap<K, V>
where
    K: Borrow<Q> + Ord,
    Q: Ord + ?Sized,
{
    type Output = V;
    fn index(&self, key: &Q) -> &V {
        self.get(key).expect("no entry found for key")
    }
}

impl<K: serde::Serialize, V: serde::Serialize> serde::Serialize for SmallMap<K, V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.entries.iter().map(|(k, v)| (k, v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn behaves_as_a_btree_map() {
        let ops: Vec<(u8, i32)> = (0..200u32)
            .map(|i| (((i * 37) % 23) as u8, i as i32))
            .collect();
        let mut a = SmallMap::new();
        let mut b = BTreeMap::new();
        for (i, (k, v)) in ops.iter().enumerate() {
            match i % 5 {
                0 => assert_eq!(a.remove(k), b.remove(k)),
                1 => *a.entry(*k).or_insert(0) += v,
                _ => assert_eq!(a.insert(*k, *v), b.insert(*k, *v)),
            }
            if i % 5 == 1 {
                *b.entry(*k).or_insert(0) += v;
            }
            assert_eq!(a.get(k), b.get(k));
            assert!(a.iter().eq(b.iter()));
        }
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        let c: SmallMap<u8, i32> = ops.iter().copied().collect();
        let d: BTreeMap<u8, i32> = ops.iter().copied().collect();
        assert!(c.iter().eq(d.iter()));
        a.retain(|k, _| k % 2 == 0);
        b.retain(|k, _| k % 2 == 0);
        assert!(a.into_iter().eq(b));
    }

    #[test]
    fn looks_up_strings_by_str() {
        let m: SmallMap<String, String> =
            [("b".to_string(), "2".to_string()), ("a".into(), "1".into())].into();
        assert_eq!(m.get("a").map(String::as_str), Some("1"));
        assert_eq!(m["b"], "2");
        assert!(!m.contains_key("c"));
        assert_eq!(serde_json::to_string(&m).unwrap(), r#"{"a":"1","b":"2"}"#);
    }
}
