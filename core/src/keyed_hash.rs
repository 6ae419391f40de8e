//! Hash maps without hidden randomness.
//!
//! `std`'s `RandomState` seeds itself from the operating system, which the
//! core must not touch (and which makes a wasm32-wasip2 build import
//! `wasi:random`). [`KeyedState`] is SipHash-1-3 (std's `DefaultHasher`)
//! primed with a 128-bit key that the host supplies through its
//! [`crate::IdSource`] when the engine opens, so attacker-chosen keys (thought
//! ids, terms) cannot be pre-computed to collide, and tests stay deterministic
//! with [`KeyedState::default`] (key 0).

#[allow(clippy::disallowed_types, reason = "the one place std's maps are named: only with KeyedState, never RandomState (core/clippy.toml)")]
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, DefaultHasher, Hasher};

/// A `BuildHasher` keyed by the host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyedState {
    key: u128,
}

impl KeyedState {
    /// A state keyed with 16 bytes from the host's id source.
    pub fn from_key(bytes: [u8; 16]) -> Self {
        KeyedState { key: u128::from_le_bytes(bytes) }
    }
}

impl KeyedState {
    /// 32 bits of the keyed hash of `key`: what a compact table entry keeps
    /// (`lookup.rs`, `ranked/terms.rs`), handed back to the table through
    /// [`table_hash`].
    pub(crate) fn short_hash<T: std::hash::Hash + ?Sized>(&self, key: &T) -> u32 {
        (self.hash_one(key) >> 32) as u32
    }
}

/// The hash to give a `hashbrown::HashTable` for an entry that keeps only
/// its [`KeyedState::short_hash`]: hashbrown takes the bucket from the low
/// bits and its 7-bit tag from the top ones, so both halves carry them.
pub(crate) fn table_hash(short: u32) -> u64 {
    (u64::from(short) << 32) | u64::from(short)
}

impl BuildHasher for KeyedState {
    type Hasher = DefaultHasher;

    fn build_hasher(&self) -> DefaultHasher {
        let mut h = DefaultHasher::new();
        h.write_u128(self.key);
        h
    }
}

/// A `HashMap` hashed with [`KeyedState`].
#[allow(clippy::disallowed_types, reason = "std's map with the host-keyed hasher, not RandomState")]
#[allow(dead_code, reason = "the map core/clippy.toml points to instead of std's HashMap; the ranked index's terms moved to a HashTable (ranked/terms.rs)")]
pub(crate) type KeyedMap<K, V> = HashMap<K, V, KeyedState>;
/// A `HashSet` hashed with [`KeyedState`].
#[allow(clippy::disallowed_types, reason = "std's set with the host-keyed hasher, not RandomState")]
pub(crate) type KeyedSet<K> = HashSet<K, KeyedState>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn the_key_changes_hashes_and_equal_keys_agree() {
        let a = KeyedState::from_key([1; 16]);
        let b = KeyedState::from_key([2; 16]);
        assert_eq!(a.hash_one("thought-id"), KeyedState::from_key([1; 16]).hash_one("thought-id"));
        assert_ne!(a.hash_one("thought-id"), b.hash_one("thought-id"));
        let mut m: KeyedMap<String, u32> = KeyedMap::with_hasher(a);
        m.insert("x".into(), 1);
        assert_eq!(m.get("x"), Some(&1));
    }
}
