//! The ranked index's term dictionary: each distinct term once, with an id
//! (its place in the order terms were first seen) and the word it was first
//! seen as (what an embedding provider embeds for it).
//!
//! Built for chains where most terms occur once (numbers, names, typos, ids
//! in chat turns): no allocation per term. Term texts and surface words
//! live one after another in two shared buffers ([`Strings`]); the lookup
//! table holds only `(id, 32 bits of the term's hash)`, 8 bytes, and reads
//! the term's text from the buffer to compare. Before, each term was a
//! `HashMap<Box<str>, u32>` entry and a `Box<str>` surface: two allocations
//! and about 90 bytes more per term (docs/performance.md, the memory row).

use crate::keyed_hash::{table_hash, KeyedState};
use hashbrown::HashTable;

/// Strings kept one after another in one buffer, by position (4 bytes a
/// string beside its text; the buffer stays under 4 GiB).
#[derive(Debug, Clone, Default)]
pub(crate) struct Strings {
    text: String,
    /// Where string `i` ends in `text`.
    ends: Vec<u32>,
}

impl Strings {
    /// Adds `s` as the last string.
    pub(crate) fn push(&mut self, s: &str) {
        self.text.reserve_exact(crate::growth::an_eighth_more(self.text.len(), self.text.capacity(), s.len()));
        self.text.push_str(s);
        crate::growth::push(&mut self.ends, u32::try_from(self.text.len()).expect("under 4 GiB of distinct term text"));
    }

    /// String `i`.
    pub(crate) fn get(&self, i: usize) -> &str {
        let start = i.checked_sub(1).map_or(0, |p| self.ends[p] as usize);
        &self.text[start..self.ends[i] as usize]
    }

    /// How many strings there are.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }
}

/// The term dictionary (see the module docs).
#[derive(Debug, Clone, Default)]
pub(crate) struct Terms {
    /// `(term id, high 32 bits of its keyed hash)` per term.
    table: HashTable<(u32, u32)>,
    hasher: KeyedState,
    /// Term `id`'s text.
    texts: Strings,
    /// The word term `id` was first seen as, or `""` when that is the
    /// term's text (most words: the analyzer lower-cases and stems, and
    /// numbers, names and ids come out as they went in).
    surfaces: Strings,
}

impl Terms {
    /// An empty dictionary hashing terms with `hasher`.
    pub(crate) fn with_hasher(hasher: KeyedState) -> Self {
        Terms { hasher, ..Terms::default() }
    }

    /// The id of `term`, if it was seen.
    pub(crate) fn get(&self, term: &str) -> Option<u32> {
        let high = self.hasher.short_hash(term);
        self.table.find(table_hash(high), |&(id, h)| h == high && self.texts.get(id as usize) == term).map(|&(id, _)| id)
    }

    /// The id of `term`, added (first seen as `surface`) if new; and
    /// whether it was new. A term is never seen as the empty word (the
    /// analyzer drops empty words): an empty surface stands for the term's
    /// own text.
    pub(crate) fn intern(&mut self, term: &str, surface: &str) -> (u32, bool) {
        debug_assert!(!surface.is_empty() || term.is_empty(), "a term seen as the empty word");
        let high = self.hasher.short_hash(term);
        let texts = &self.texts;
        if let Some(&(id, _)) = self.table.find(table_hash(high), |&(id, h)| h == high && texts.get(id as usize) == term) {
            return (id, false);
        }
        let id = u32::try_from(self.texts.len()).expect("fewer than 2^32 distinct terms");
        self.texts.push(term);
        self.surfaces.push(if surface == term { "" } else { surface });
        self.table.insert_unique(table_hash(high), (id, high), |&(_, h)| table_hash(h));
        (id, true)
    }

    /// How many distinct terms there are.
    pub(crate) fn len(&self) -> usize {
        self.texts.len()
    }

    /// Term `id`'s text.
    pub(crate) fn text(&self, id: u32) -> &str {
        self.texts.get(id as usize)
    }

    /// The word term `id` was first seen as.
    pub(crate) fn surface(&self, id: u32) -> &str {
        match self.surfaces.get(id as usize) {
            "" => self.text(id),
            surface => surface,
        }
    }

    /// The surface words of terms `from..`, in id order.
    pub(crate) fn surfaces_from(&self, from: usize) -> impl ExactSizeIterator<Item = &str> {
        (from..self.len()).map(|id| self.surface(id as u32))
    }
}

/// Words seen before and their term's id, so that the stemmer runs once
/// per distinct word rather than once per occurrence (it was half the work
/// of indexing a thought). Words holding a digit are left out: numbers and
/// ids are mostly seen once, and would only grow the table.
#[derive(Debug, Clone, Default)]
pub(crate) struct WordTerms {
    /// `(word position, high 32 bits of its keyed hash)` per word.
    table: HashTable<(u32, u32)>,
    hasher: KeyedState,
    words: Strings,
    /// The term id of each word, by position.
    terms: Vec<u32>,
}

/// The most words [`WordTerms`] keeps (about 30 MB at English word lengths);
/// past it, new words are stemmed each time they occur.
const MAX_WORDS: usize = 1 << 20;

impl WordTerms {
    /// An empty table hashing words with `hasher`.
    pub(crate) fn with_hasher(hasher: KeyedState) -> Self {
        WordTerms { hasher, ..WordTerms::default() }
    }

    /// The term id of `word`, if it was seen.
    pub(crate) fn get(&self, word: &str) -> Option<u32> {
        let high = self.hasher.short_hash(word);
        self.table.find(table_hash(high), |&(at, h)| h == high && self.words.get(at as usize) == word).map(|&(at, _)| self.terms[at as usize])
    }

    /// Remembers that `word` (not seen before) is term `term`.
    pub(crate) fn remember(&mut self, word: &str, term: u32) {
        if self.terms.len() >= MAX_WORDS || word.bytes().any(|b| b.is_ascii_digit()) {
            return;
        }
        let high = self.hasher.short_hash(word);
        let at = self.terms.len() as u32;
        self.words.push(word);
        crate::growth::push(&mut self.terms, term);
        self.table.insert_unique(table_hash(high), (at, high), |&(_, h)| table_hash(h));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interns_each_term_once_across_growth_and_keeps_its_first_surface() {
        let mut terms = Terms::with_hasher(KeyedState::from_key([3; 16]));
        for i in 0..5000u32 {
            assert_eq!(terms.intern(&format!("t{i}"), &format!("T{i}s")), (i, true));
        }
        assert_eq!(terms.intern("t42", "other"), (42, false), "a known term keeps its id");
        assert_eq!(terms.surface(42), "T42s", "and the word it was first seen as");
        assert_eq!(terms.intern("same", "same"), (5000, true));
        assert_eq!(terms.surface(5000), "same", "a surface that is the term's text reads back too");
        for i in 0..5000u32 {
            assert_eq!(terms.get(&format!("t{i}")), Some(i));
        }
        assert_eq!(terms.get("t5000"), None);
        assert_eq!(terms.get(""), None);
        assert_eq!(terms.len(), 5001);
        assert_eq!(terms.surfaces_from(4998).collect::<Vec<_>>(), ["T4998s", "T4999s", "same"]);
        assert_eq!(terms.intern("", ""), (5001, true), "the empty term is a term like any other");
        assert_eq!(terms.get(""), Some(5001));
        assert_eq!(terms.surface(5001), "");
    }

    #[test]
    fn strings_come_back_by_position() {
        let mut s = Strings::default();
        for w in ["", "zürich", "a", ""] {
            s.push(w);
        }
        assert_eq!((0..s.len()).map(|i| s.get(i)).collect::<Vec<_>>(), ["", "zürich", "a", ""]);
    }
}
