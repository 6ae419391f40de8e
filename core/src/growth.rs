//! How the engine's per-thought lists grow.
//!
//! A `Vec` doubles when full, so a list that holds much of a chain's memory
//! (the text filter's buffer, the ranked index's per-thought lists; the
//! thoughts themselves are in blocks, `thought_list.rs`) carries on average a quarter and
//! at worst half of its size unused. These lists grow by an eighth instead:
//! still geometric, so an append stays amortized O(1), with at most an eighth
//! unused. `cargo run --release -p mentisdb-core --example memory_breakdown`
//! measures what it saves.

/// What to `reserve_exact` on a list of `len` items and room for `capacity`
/// so that `additional` more fit: nothing while they fit, else an eighth
/// more (at least `additional`, at least 16).
pub(crate) fn an_eighth_more(len: usize, capacity: usize, additional: usize) -> usize {
    if capacity - len >= additional {
        0
    } else {
        (len / 8).max(additional).max(16)
    }
}

/// Pushes `item` onto a list that holds one or a few items per thought,
/// growing it by an eighth (at least 16) when full.
pub(crate) fn push<T>(list: &mut Vec<T>, item: T) {
    list.reserve_exact(an_eighth_more(list.len(), list.capacity(), 1));
    list.push(item);
}

/// Length from which [`push_to_short_list`] grows a list by an eighth.
const LONG_LIST: usize = 256;

/// Pushes `item` onto one of many lists that are mostly short (a term's
/// postings: most terms occur a few times): doubling while shorter than
/// [`LONG_LIST`], where an eighth would mean a copy every few pushes, then
/// by an eighth.
pub(crate) fn push_to_short_list<T>(list: &mut Vec<T>, item: T) {
    if list.len() == list.capacity() && list.len() >= LONG_LIST {
        list.reserve_exact(list.len() / 8);
    }
    list.push(item);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_grow_by_an_eighth_once_long() {
        let mut per_thought: Vec<u32> = Vec::new();
        let mut postings: Vec<u32> = Vec::new();
        for i in 0..100_000 {
            push(&mut per_thought, i);
            push_to_short_list(&mut postings, i);
        }
        assert!(per_thought.capacity() <= 100_000 + 100_000 / 8 + 16, "{}", per_thought.capacity());
        assert!(postings.capacity() <= 100_000 + 100_000 / 8, "{}", postings.capacity());
        let mut short: Vec<u32> = Vec::with_capacity(1);
        (0..3).for_each(|i| push_to_short_list(&mut short, i));
        assert!(short.capacity() < 16, "a short list grows as a Vec does: {}", short.capacity());
    }

    #[test]
    fn grows_by_an_eighth_only_when_full() {
        assert_eq!(an_eighth_more(10, 16, 6), 0);
        assert_eq!(an_eighth_more(16, 16, 1), 16);
        assert_eq!(an_eighth_more(80_000, 80_000, 1), 10_000);
        assert_eq!(an_eighth_more(80_000, 80_000, 20_000), 20_000);
    }
}
