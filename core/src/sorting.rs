//! One stable sort for the core's small, cold sorts, and ordered sets and
//! maps built without a sort of their own.
//!
//! `slice::sort_by` is generic over the element and the comparison, so
//! every call site with its own element type adds its own copy of the whole
//! sort (about 4 KB of wasm each; sorts were 6.6% of the browser build's
//! code). [`sort_by`] sorts positions with one non-generic sort and
//! then moves the elements into place, so each element type adds only the
//! few instructions of that move. The result is exactly `slice::sort_by`'s
//! (stable: equal elements keep their order).
//!
//! For sorts of at most a few thousand elements off the hot path (listings,
//! replies, imports). Ranking's hot sorts of `(score, id)` pairs call the
//! standard sort directly: they share one instantiation already, and an
//! indirect comparison would slow them.
//!
//! Collecting an iterator into a `BTreeSet` or `BTreeMap` also sorts: it
//! sorts a copy of the items and builds the tree in bulk, a sort and a bulk
//! builder per element type. [`set_from`] and [`map_from`] insert one item
//! at a time instead (same result: for a repeated key the last value wins).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// The set of `items`, like `items.into_iter().collect::<BTreeSet<T>>()`.
pub(crate) fn set_from<T: Ord>(items: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    let mut set = BTreeSet::new();
    set.extend(items);
    set
}

/// The map of `pairs`, like `pairs.into_iter().collect::<BTreeMap<K, V>>()`.
pub(crate) fn map_from<K: Ord, V>(pairs: impl IntoIterator<Item = (K, V)>) -> BTreeMap<K, V> {
    let mut map = BTreeMap::new();
    map.extend(pairs);
    map
}

/// Sorts `v` by `compare`, stably, like `v.sort_by(compare)`.
pub(crate) fn sort_by<T>(v: &mut [T], compare: impl Fn(&T, &T) -> Ordering) {
    let order = sorted_positions(v.len(), &|a, b| compare(&v[a], &v[b]));
    move_into_order(v, &order);
}

/// Sorts `v` by `key`, stably, like `v.sort_by_key(key)`.
pub(crate) fn sort_by_key<T, K: Ord>(v: &mut [T], key: impl Fn(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `v` in ascending order, stably, like `v.sort()`.
pub(crate) fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, T::cmp);
}

/// The positions `0..len` ordered by `compare` (ties in position order).
/// Not generic: the one place the sort itself is compiled.
fn sorted_positions(len: usize, compare: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|a, b| compare(*a, *b));
    order
}

/// Puts the element at `order[i]` at position `i`, following each cycle of
/// the permutation with swaps: O(len), no copies of the elements.
fn move_into_order<T>(v: &mut [T], order: &[usize]) {
    let mut placed = vec![false; v.len()];
    for start in 0..v.len() {
        let mut at = start;
        while !placed[at] {
            placed[at] = true;
            let from = order[at];
            if from == start {
                break;
            }
            // `at` gets its element; the one carried along the cycle moves on to `from`.
            v.swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The same order as the standard stable sort, ties included.
        #[test]
        fn sorts_exactly_as_the_standard_stable_sort(v in proptest::collection::vec((0u8..8, any::<u16>()), 0..300)) {
            let mut ours = v.clone();
            sort_by(&mut ours, |a, b| a.0.cmp(&b.0));
            let mut standard = v;
            standard.sort_by_key(|a| a.0);
            prop_assert_eq!(ours, standard);
        }
    }

    #[test]
    fn sets_and_maps_without_a_sort_are_the_collected_ones() {
        let words = ["pear", "fig", "apple", "fig"];
        assert_eq!(set_from(words), words.into_iter().collect::<BTreeSet<_>>());
        let pairs = [(2, "b"), (1, "a"), (2, "c")];
        assert_eq!(map_from(pairs), pairs.into_iter().collect::<BTreeMap<_, _>>(), "the last value of a repeated key wins");
    }

    #[test]
    fn keys_and_plain_order() {
        let mut words = vec!["pear".to_string(), "fig".into(), "apple".into(), "fig".into()];
        sort(&mut words);
        assert_eq!(words, ["apple", "fig", "fig", "pear"]);
        let mut by_len = vec!["ccc", "a", "bb", "d"];
        sort_by_key(&mut by_len, |w| w.len());
        assert_eq!(by_len, ["a", "d", "bb", "ccc"]);
    }
}
