//! Query-side indices derived from a chain's thoughts, built on first use
//! and then kept up incrementally.
//!
//! Appends and opening a chain only verify and store thoughts; the indices
//! that serve queries (the `text` filter's signatures, the ranked-retrieval
//! index) are not needed for that. A [`Derived`] index
//! records how many thoughts it covers and, when a query asks for it, first
//! adds the thoughts committed since (in chain order, once each), so no query
//! ever rebuilds it and an append never pays for it. The first query after
//! opening a chain pays for indexing the whole chain once.

use crate::thought::Thought;
use crate::thought_list::ThoughtList;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// An index grown one thought at a time, in chain order.
pub(crate) trait Derive: Default {
    /// How many thoughts (a prefix of the chain) are indexed.
    fn indexed(&self) -> usize;
    /// Indexes the next thought (`t.index == self.indexed()`).
    fn add(&mut self, t: &Thought);
}

/// A [`Derive`] index behind a lock, caught up on access.
#[derive(Debug, Default)]
pub(crate) struct Derived<T>(RwLock<T>);

impl<T: Derive> Derived<T> {
    /// An index that starts from `empty` (for example one keyed by the host).
    pub(crate) fn new(empty: T) -> Self {
        Derived(RwLock::new(empty))
    }

    /// The index, after adding every thought of `thoughts` it does not yet
    /// cover. `thoughts` must be the chain the index was built from.
    pub(crate) fn get(&self, thoughts: &ThoughtList) -> RwLockReadGuard<'_, T> {
        {
            let index = self.read();
            if index.indexed() == thoughts.len() {
                return index;
            }
        }
        {
            let mut index = self.0.write().unwrap_or_else(|e| e.into_inner());
            let from = index.indexed();
            for t in thoughts.range(from..) {
                index.add(t);
            }
        }
        // Thoughts are committed only through `&mut Chain`, so none can
        // arrive between the catch-up above and this read.
        self.read()
    }

    /// Whether a read of the index would answer at once: it covers every
    /// thought of `thoughts` and no one holds it to add more. Asked while the
    /// chain is read-locked (no thought can be committed meanwhile), it stays
    /// true until that lock is let go: only a catch-up writes the index.
    pub(crate) fn ready_now(&self, thoughts: &ThoughtList) -> bool {
        self.0.try_read().is_ok_and(|index| index.indexed() == thoughts.len())
    }

    /// How many thoughts the index covers now (nothing is added).
    pub(crate) fn covered(&self) -> usize {
        self.read().indexed()
    }

    /// Adds at most `max` of the thoughts the index does not cover yet;
    /// returns whether it now covers them all (lets a host warm the index in
    /// steps, releasing the chain between them).
    pub(crate) fn catch_up_some(&self, thoughts: &ThoughtList, max: usize) -> bool {
        if self.read().indexed() == thoughts.len() {
            return true;
        }
        let mut index = self.write();
        let from = index.indexed();
        let to = thoughts.len().min(from.saturating_add(max));
        for t in thoughts.range(from..to) {
            index.add(t);
        }
        to == thoughts.len()
    }

    /// Exclusive access without catching up (for settings that apply to the index itself).
    pub(crate) fn get_mut(&mut self) -> &mut T {
        self.0.get_mut().unwrap_or_else(|e| e.into_inner())
    }

    /// Exclusive access through a shared reference.
    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, T> {
        self.0.write().unwrap_or_else(|e| e.into_inner())
    }

    fn read(&self) -> RwLockReadGuard<'_, T> {
        self.0.read().unwrap_or_else(|e| e.into_inner())
    }
}

impl Derive for crate::text_filter::TextSignatures {
    fn indexed(&self) -> usize {
        self.len()
    }

    fn add(&mut self, t: &Thought) {
        crate::text_filter::TextSignatures::add(self, t);
    }
}

impl Derive for crate::ranked::RankedIndex {
    fn indexed(&self) -> usize {
        self.len()
    }

    fn add(&mut self, t: &Thought) {
        crate::ranked::RankedIndex::add(self, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::tests::golden_thought;

    /// The indices of the thoughts added, in the order they were added.
    #[derive(Debug, Default)]
    struct Seen(Vec<u64>);

    impl Derive for Seen {
        fn indexed(&self) -> usize {
            self.0.len()
        }

        fn add(&mut self, t: &Thought) {
            self.0.push(t.index);
        }
    }

    fn thoughts(n: u64) -> ThoughtList {
        (0..n).map(|i| Thought { index: i, ..golden_thought() }).collect()
    }

    #[test]
    fn catches_up_once_with_new_thoughts() {
        let thoughts = thoughts(3);
        let seen: Derived<Seen> = Derived::default();
        assert_eq!(seen.get(&ThoughtList::new()).indexed(), 0);
        assert_eq!(seen.get(&thoughts.range(..2).cloned().collect()).0, [0, 1]);
        assert_eq!(seen.get(&thoughts).0, [0, 1, 2], "only the new thought is added, once");
        let steps: Derived<Seen> = Derived::default();
        assert!(!steps.catch_up_some(&thoughts, 2));
        assert!(steps.catch_up_some(&thoughts, 2));
        assert!(steps.catch_up_some(&thoughts, 2));
        assert_eq!(steps.get(&thoughts).0, [0, 1, 2]);
    }

    #[test]
    fn ready_now_only_when_caught_up_and_not_held_for_writing() {
        let thoughts = thoughts(2);
        let seen: Derived<Seen> = Derived::default();
        assert!(!seen.ready_now(&thoughts), "nothing indexed yet");
        drop(seen.get(&thoughts));
        assert!(seen.ready_now(&thoughts));
        let held = seen.write();
        assert!(!seen.ready_now(&thoughts), "a catch-up holds it: a read would wait");
        drop(held);
        let _reading = seen.get(&thoughts);
        assert!(seen.ready_now(&thoughts), "readers do not wait for each other");
    }
}
