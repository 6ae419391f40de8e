//! A chain's thoughts in append order, kept in blocks of at most 512.
//!
//! The thoughts are most of a chain's memory (a [`Thought`] is 192 bytes
//! before its text). In one `Vec`, every growth copies the whole list into a
//! new block and frees the old one: for that moment both are live, and an
//! allocator that cannot hand freed memory back (a WebAssembly module's
//! memory never shrinks) keeps the old block as a hole. A [`ThoughtList`]
//! keeps the thoughts in blocks of at most [`BLOCK`], every block but the last
//! full, so a push moves at most the thoughts of the last block (a block
//! grows by doubling: from 4 thoughts for the first, so a chain of a few
//! thoughts holds room for a few, and from [`BLOCK`] / 8 for the others, so a
//! chain just past a block's size does not hold a whole block's room).
//!
//! It reads as a slice does: `len`, `list[i]`, `get`, `first`, `last`,
//! `iter` (double-ended, exact-size) and `range(a..b)`.

use crate::thought::Thought;
use std::ops::{Bound, Index, RangeBounds};

/// Thoughts per full block (a power of two, so a position splits with a
/// shift): about 96 KiB a block natively.
pub const BLOCK: usize = 512;

/// Room a block other than the first starts with.
const FIRST_ROOM: usize = BLOCK / 8;

/// A chain's thoughts, in blocks of [`BLOCK`]. Every block but the last is
/// full.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThoughtList {
    blocks: Vec<Vec<Thought>>,
    len: usize,
}

impl ThoughtList {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of thoughts.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list holds no thought.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The thought at `pos` (every block but the last being full, its block
    /// and place in it are a shift and a mask away).
    #[inline]
    pub fn get(&self, pos: usize) -> Option<&Thought> {
        self.blocks.get(pos / BLOCK)?.get(pos % BLOCK)
    }

    /// The first thought.
    pub fn first(&self) -> Option<&Thought> {
        self.blocks.first().and_then(|b| b.first())
    }

    /// The last thought.
    pub fn last(&self) -> Option<&Thought> {
        self.blocks.last().and_then(|b| b.last())
    }

    /// Appends `t`: into the last block until it holds [`BLOCK`] thoughts
    /// (doubling its room when full), then into a new block.
    pub fn push(&mut self, t: Thought) {
        match self.blocks.last_mut() {
            Some(last) if last.len() < BLOCK => {
                if last.len() == last.capacity() {
                    // Double (at least 4), never past BLOCK. A cloned list's
                    // blocks hold no spare room, so this also fills a block
                    // whose capacity is not a power of two.
                    last.reserve_exact(last.capacity().max(4).min(BLOCK - last.len()));
                }
                last.push(t);
            }
            _ => {
                let mut block = Vec::with_capacity(if self.blocks.is_empty() { 4 } else { FIRST_ROOM });
                block.push(t);
                self.blocks.push(block);
            }
        }
        self.len += 1;
    }

    /// Keeps the first `len` thoughts (no effect when there are fewer).
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        self.blocks.truncate(len.div_ceil(BLOCK));
        if let Some(last) = self.blocks.last_mut() {
            last.truncate(len - (len - 1) / BLOCK * BLOCK);
        }
        self.len = len;
    }

    /// The thoughts in order.
    pub fn iter(&self) -> Iter<'_> {
        self.range(..)
    }

    /// The thoughts in order, to change in place (before the list is a
    /// chain's: decoding, migrations).
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Thought> {
        self.blocks.iter_mut().flatten()
    }

    /// The thoughts in `range` (a position range, as a slice takes).
    ///
    /// # Panics
    /// When the range is out of bounds or decreasing, as slicing does.
    pub fn range(&self, range: impl RangeBounds<usize>) -> Iter<'_> {
        let start = match range.start_bound() {
            Bound::Included(s) => *s,
            Bound::Excluded(s) => s.checked_add(1).expect("thought range start overflows"),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(e) => e.checked_add(1).expect("thought range end overflows"),
            Bound::Excluded(e) => *e,
            Bound::Unbounded => self.len,
        };
        assert!(start <= end && end <= self.len, "thought range {start}..{end} out of bounds for {} thoughts", self.len);
        let mut it = Iter { front: [].iter(), middle: [].iter(), back: [].iter(), len: end - start };
        if start == end {
            return it;
        }
        let (first, last) = (start / BLOCK, (end - 1) / BLOCK);
        let (from, to) = (start % BLOCK, end - last * BLOCK);
        if first == last {
            it.front = self.blocks[first][from..to].iter();
        } else {
            it.front = self.blocks[first][from..].iter();
            it.middle = self.blocks[first + 1..last].iter();
            it.back = self.blocks[last][..to].iter();
        }
        it
    }

    /// Every thought, copied.
    pub fn to_vec(&self) -> Vec<Thought> {
        self.iter().cloned().collect()
    }
}

impl Index<usize> for ThoughtList {
    type Output = Thought;

    #[inline]
    fn index(&self, pos: usize) -> &Thought {
        match self.get(pos) {
            Some(t) => t,
            None => panic!("thought {pos} out of bounds for {} thoughts", self.len),
        }
    }
}

impl Extend<Thought> for ThoughtList {
    fn extend<I: IntoIterator<Item = Thought>>(&mut self, iter: I) {
        iter.into_iter().for_each(|t| self.push(t));
    }
}

impl FromIterator<Thought> for ThoughtList {
    fn from_iter<I: IntoIterator<Item = Thought>>(iter: I) -> Self {
        let mut list = ThoughtList::new();
        list.extend(iter);
        list
    }
}

impl From<Vec<Thought>> for ThoughtList {
    fn from(thoughts: Vec<Thought>) -> Self {
        thoughts.into_iter().collect()
    }
}

impl<'a> IntoIterator for &'a ThoughtList {
    type Item = &'a Thought;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl IntoIterator for ThoughtList {
    type Item = Thought;
    type IntoIter = std::iter::Flatten<std::vec::IntoIter<Vec<Thought>>>;

    fn into_iter(self) -> Self::IntoIter {
        self.blocks.into_iter().flatten()
    }
}

impl serde::Serialize for ThoughtList {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// The thoughts of a [`ThoughtList`] range: a part of one block in front,
/// whole blocks, a part of one block at the back.
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    front: std::slice::Iter<'a, Thought>,
    middle: std::slice::Iter<'a, Vec<Thought>>,
    back: std::slice::Iter<'a, Thought>,
    len: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a Thought;

    fn next(&mut self) -> Option<&'a Thought> {
        loop {
            if let Some(t) = self.front.next() {
                self.len -= 1;
                return Some(t);
            }
            match self.middle.next() {
                Some(block) => self.front = block.iter(),
                None => {
                    let t = self.back.next()?;
                    self.len -= 1;
                    return Some(t);
                }
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len, Some(self.len))
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(t) = self.back.next_back() {
                self.len -= 1;
                return Some(t);
            }
            match self.middle.next_back() {
                Some(block) => self.back = block.iter(),
                None => {
                    let t = self.front.next_back()?;
                    self.len -= 1;
                    return Some(t);
                }
            }
        }
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl std::iter::FusedIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::tests::golden_thought;

    fn numbered(n: usize) -> ThoughtList {
        (0..n as u64)
            .map(|i| {
                let mut t = golden_thought();
                t.index = i;
                t
            })
            .collect()
    }

    fn indices<'a>(it: impl Iterator<Item = &'a Thought>) -> Vec<u64> {
        it.map(|t| t.index).collect()
    }

    #[test]
    fn reads_as_a_slice_across_block_edges() {
        for n in [0, 1, 5, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK, 3 * BLOCK + 7] {
            let list = numbered(n);
            let all: Vec<u64> = (0..n as u64).collect();
            assert_eq!(list.len(), n);
            assert_eq!(indices(list.iter()), all, "n={n}");
            assert_eq!(indices(list.iter().rev()), all.iter().rev().copied().collect::<Vec<_>>(), "n={n}");
            assert_eq!(list.iter().len(), n);
            assert_eq!(list.first().map(|t| t.index), all.first().copied());
            assert_eq!(list.last().map(|t| t.index), all.last().copied());
            assert!(list.get(n).is_none());
            for (a, b) in [(0, 0), (0, n), (n / 3, n), (n / 3, 2 * n / 3), (n.saturating_sub(1), n), (n / 2, n / 2)] {
                assert_eq!(indices(list.range(a..b)), all[a..b].to_vec(), "n={n} {a}..{b}");
                assert_eq!(list.range(a..b).len(), b - a);
                assert_eq!(indices(list.range(a..b).rev()), all[a..b].iter().rev().copied().collect::<Vec<_>>());
                let mut both = list.range(a..b);
                let (mut front, mut back) = (Vec::new(), Vec::new());
                while let Some(t) = both.next() {
                    front.push(t.index);
                    match both.next_back() {
                        Some(t) => back.push(t.index),
                        None => break,
                    }
                }
                front.extend(back.into_iter().rev());
                assert_eq!(front, all[a..b].to_vec(), "from both ends: n={n} {a}..{b}");
            }
            for i in (0..n).step_by(97) {
                assert_eq!(list[i].index, i as u64);
            }
        }
    }

    /// Every block but the last holds exactly BLOCK thoughts in exactly
    /// BLOCK's room; the last is not empty and has at most about twice its
    /// thoughts' room.
    fn assert_blocks(list: &ThoughtList) {
        let (last, full) = list.blocks.split_last().expect("a list with thoughts has blocks");
        assert!(full.iter().all(|b| b.len() == BLOCK && b.capacity() == BLOCK), "every block but the last is full, with no spare room");
        assert!(!last.is_empty() && last.len() <= BLOCK && last.capacity() <= BLOCK.min(2 * last.len() + FIRST_ROOM), "last block: {} thoughts, room for {}", last.len(), last.capacity());
        assert_eq!(list.len(), full.len() * BLOCK + last.len());
    }

    #[test]
    fn full_blocks_hold_no_spare_room_and_a_small_list_stays_small() {
        let mut list = numbered(3);
        assert!(list.blocks[0].capacity() < 16, "a chain of 3 thoughts holds room for a few");
        list.extend(numbered(3 * BLOCK));
        assert_eq!(list.len(), 3 * BLOCK + 3);
        assert_blocks(&list);
        assert!(list.blocks[3].capacity() <= FIRST_ROOM, "a chain just past 3 blocks holds little more room");
    }

    #[test]
    fn an_iterator_counts_down_as_it_is_read_from_either_end() {
        let list = numbered(2 * BLOCK + 9);
        let mut it = list.range(3..2 * BLOCK + 4);
        let mut left = 2 * BLOCK + 1;
        let mut from_back = true;
        while left > 0 {
            let t = if from_back { it.next_back() } else { it.next() }.expect("items are left");
            left -= 1;
            from_back = !from_back;
            assert_eq!(it.len(), left, "after item {}", t.index);
        }
        assert!(it.next().is_none() && it.next_back().is_none());
        assert_eq!(it.len(), 0);
    }

    #[test]
    fn ranges_take_every_form_of_bound() {
        let list = numbered(BLOCK + 10);
        assert_eq!(indices(list.range(..=2)), [0, 1, 2]);
        assert_eq!(indices(list.range(BLOCK + 8..)), [BLOCK as u64 + 8, BLOCK as u64 + 9]);
        assert_eq!(indices(list.range((Bound::Excluded(BLOCK - 2), Bound::Included(BLOCK)))), [BLOCK as u64 - 1, BLOCK as u64]);
        assert_eq!(list.range(BLOCK + 10..).len(), 0, "an empty range at the end, as a slice's");
        let owned: Vec<u64> = list.clone().into_iter().map(|t| t.index).collect();
        assert_eq!(owned, indices(list.iter()));
        assert_eq!(ThoughtList::from(list.to_vec()), list);
        let json = serde_json::to_value(&list).expect("serializes");
        assert_eq!(json.as_array().map(Vec::len), Some(BLOCK + 10), "a list serializes as one flat array");
    }

    #[test]
    #[should_panic(expected = "out of bounds")]
    fn a_decreasing_range_panics_as_slicing_does() {
        let (start, end) = (2, 1);
        numbered(3).range(start..end);
    }

    #[test]
    fn a_cloned_list_grows_to_full_blocks() {
        for n in [BLOCK - 2, BLOCK + 5, 2 * BLOCK - 1] {
            let mut list = numbered(n).clone();
            list.extend(numbered(BLOCK + 3));
            assert_eq!(list.len(), n + BLOCK + 3);
            assert_blocks(&list);
            assert_eq!(list[n].index, 0, "n={n}: the pushes come after the clone's thoughts");
        }
    }

    #[test]
    fn truncate_keeps_a_prefix_across_block_edges() {
        for keep in [0, 1, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK + 3] {
            let mut list = numbered(2 * BLOCK + 5);
            list.truncate(keep);
            assert_eq!(indices(list.iter()), (0..keep as u64).collect::<Vec<_>>());
            assert_eq!(list.last().map(|t| t.index), keep.checked_sub(1).map(|k| k as u64));
            list.extend(numbered(BLOCK + 1));
            assert_eq!(list.len(), keep + BLOCK + 1);
            assert_eq!(list[keep].index, 0, "pushes after a truncate land after the kept prefix");
            assert_blocks(&list);
        }
    }

    #[test]
    #[should_panic(expected = "out of bounds")]
    fn a_range_past_the_end_panics_as_slicing_does() {
        numbered(3).range(2..4);
    }
}
