//! Thought lookup by id or hash without a second copy of every key.
//!
//! A [`ThoughtLookup`] stores only each thought's position and 32 bits of
//! its key's hash in a hash table (8 bytes a thought); the key itself is
//! read from the thought (through a field accessor) to compare on lookup.
//! Keeping the hash bits means growing the table never touches the thoughts. Hashing uses the host-keyed [`KeyedState`],
//! like every other map in the core.

use crate::keyed_hash::{table_hash, KeyedState};
use crate::thought::Thought;
use crate::thought_list::ThoughtList;
use hashbrown::HashTable;

/// Which field of a thought a [`ThoughtLookup`] is keyed by: a kind byte
/// (hashed and compared too) and bytes (see [`crate::ThoughtId::key`]).
pub(crate) type KeyOf = fn(&Thought) -> (u8, &[u8]);

/// Positions of thoughts by one field (unique per chain).
#[derive(Debug, Clone)]
pub(crate) struct ThoughtLookup {
    /// (32 bits of the key's hash, position) per thought.
    table: HashTable<(u32, u32)>,
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
        self.table.reserve(additional, |&(short, _)| table_hash(short));
    }

    /// Records that `thoughts[pos]` is the thought with its key.
    pub(crate) fn insert(&mut self, thoughts: &ThoughtList, pos: usize) {
        let short = self.hasher.short_hash(&(self.key_of)(&thoughts[pos]));
        self.table.insert_unique(table_hash(short), (short, pos as u32), |&(short, _)| table_hash(short));
    }

    /// The position of the thought whose key is `key`.
    pub(crate) fn get(&self, thoughts: &ThoughtList, key: (u8, &[u8])) -> Option<usize> {
        let short = self.hasher.short_hash(&key);
        self.table.find(table_hash(short), |&(h, p)| h == short && (self.key_of)(&thoughts[p as usize]) == key).map(|&(_, p)| p as usize)
    }

    /// Whether a thought with key `key` exists.
    #[cfg(test)]
    pub(crate) fn contains(&self, thoughts: &ThoughtList, key: (u8, &[u8])) -> bool {
        self.get(thoughts, key).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::tests::golden_thought;

    #[test]
    fn finds_every_key_across_growth_and_nothing_else() {
        let mut lookup = ThoughtLookup::new(KeyedState::from_key([7; 16]), |t| t.id.key());
        let mut thoughts = ThoughtList::new();
        for i in 0..1000 {
            let mut t = golden_thought();
            t.id = format!("id-{i}").into();
            thoughts.push(t);
            lookup.insert(&thoughts, i);
        }
        for i in 0..1000 {
            assert_eq!(lookup.get(&thoughts, (1, format!("id-{i}").as_bytes())), Some(i));
        }
        assert!(!lookup.contains(&thoughts, (1, b"id-1000")));
        assert!(!lookup.contains(&thoughts, (1, b"")));
        assert!(!lookup.contains(&thoughts, (0, b"id-1")), "the kind byte is part of the key");
    }
}
