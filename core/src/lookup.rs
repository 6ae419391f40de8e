//! Thought lookup by id or hash without a second copy of every key.
//!
//! A [`ThoughtLookup`] stores only each thought's position and key hash in a
//! hash table; the key itself is read from the thought (through a field
//! accessor) to compare on lookup. Keeping the hash means growing the table
//! never touches the thoughts. Hashing uses the host-keyed [`KeyedState`],
//! like every other map in the core.

use crate::keyed_hash::KeyedState;
use crate::thought::Thought;
use hashbrown::HashTable;
use std::hash::BuildHasher;

/// Which field of a thought a [`ThoughtLookup`] is keyed by, as bytes.
pub(crate) type KeyOf = fn(&Thought) -> &[u8];

/// Positions of thoughts by one field (unique per chain).
#[derive(Debug, Clone)]
pub(crate) struct ThoughtLookup {
    /// (key hash, position) per thought.
    table: HashTable<(u64, u32)>,
    hasher: KeyedState,
    key_of: KeyOf,
}

impl ThoughtLookup {
    /// An empty lookup over the field `key_of` returns.
    pub(crate) fn new(hasher: KeyedState, key_of: KeyOf) -> Self {
        ThoughtLookup { table: HashTable::new(), hasher, key_of }
    }

    /// Makes room for `additional` more thoughts.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.table.reserve(additional, |&(hash, _)| hash);
    }

    /// Records that `thoughts[pos]` is the thought with its key.
    pub(crate) fn insert(&mut self, thoughts: &[Thought], pos: usize) {
        let hash = self.hasher.hash_one((self.key_of)(&thoughts[pos]));
        self.table.insert_unique(hash, (hash, pos as u32), |&(hash, _)| hash);
    }

    /// The position of the thought whose key is `key`.
    pub(crate) fn get(&self, thoughts: &[Thought], key: &[u8]) -> Option<usize> {
        let hash = self.hasher.hash_one(key);
        self.table.find(hash, |&(h, p)| h == hash && (self.key_of)(&thoughts[p as usize]) == key).map(|&(_, p)| p as usize)
    }

    /// Whether a thought with key `key` exists.
    #[cfg(test)]
    pub(crate) fn contains(&self, thoughts: &[Thought], key: &[u8]) -> bool {
        self.get(thoughts, key).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::tests::golden_thought;

    #[test]
    fn finds_every_key_across_growth_and_nothing_else() {
        let mut lookup = ThoughtLookup::new(KeyedState::from_key([7; 16]), |t| t.id.as_bytes());
        let mut thoughts = Vec::new();
        for i in 0..1000 {
            let mut t = golden_thought();
            t.id = format!("id-{i}");
            thoughts.push(t);
            lookup.insert(&thoughts, i);
        }
        for i in 0..1000 {
            assert_eq!(lookup.get(&thoughts, format!("id-{i}").as_bytes()), Some(i));
        }
        assert!(!lookup.contains(&thoughts, b"id-1000"));
        assert!(!lookup.contains(&thoughts, b""));
    }
}
