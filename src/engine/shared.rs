//! Copy-on-write sharing of the snapshot's large parts between nomination workers.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

/// A value shared by reference count that is copied on the first write while shared
/// (`Arc::make_mut`). The snapshot's large parts (workload records, queues, the usage
/// arena) are wrapped in it so that the workers nominating a cycle's heads in parallel
/// ([`super::EngineState::fork`]) read them without a copy. Nothing writes them during a
/// nomination, so the forks are gone, and the count is back to one, before any write.
#[derive(Default)]
pub struct Shared<T>(Arc<T>);

impl<T> Shared<T> {
    pub fn new(value: T) -> Self {
        Shared(Arc::new(value))
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Clone> DerefMut for Shared<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        Arc::make_mut(&mut self.0)
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::Shared;

    #[test]
    fn a_write_while_shared_copies_and_leaves_the_other_holder_unchanged() {
        let mut a = Shared::new(vec![1, 2, 3]);
        let b = a.clone();
        a.push(4);
        assert_eq!(*a, vec![1, 2, 3, 4]);
        assert_eq!(*b, vec![1, 2, 3]);
    }

    #[test]
    fn a_write_when_not_shared_keeps_the_same_allocation() {
        let mut a = Shared::new(vec![1, 2, 3]);
        let before = a.as_ptr();
        a[0] = 9;
        assert_eq!(a.as_ptr(), before);
    }
}
