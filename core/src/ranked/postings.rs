//! A term's postings: where it occurs, thought by thought and field by
//! field, in chain order.
//!
//! Most terms of a chat occur once, so a list of one posting is kept inline
//! in the slot a `Vec` would take (no allocation: an 8-byte block costs 32
//! with glibc's header and rounding, and a call into the allocator with
//! any); it moves to the heap when the term is seen again.
//!
//! A posting is 6 bytes (postings are most of the ranked index: a thought
//! of a dozen words has a dozen or more): its thought number as two 16-bit
//! halves (so the struct needs no 4-byte alignment) and the field and the
//! count in one `u16`. A count stops at [`MAX_TF`]; BM25 has long
//! saturated by then for any field of ordinary length.

use super::index::FIELD_COUNT;

/// The highest count a posting keeps (14 bits; the field takes the other 2).
pub(crate) const MAX_TF: u16 = (1 << 14) - 1;
const _: () = assert!(FIELD_COUNT <= 4, "a posting keeps the field in 2 bits");

/// One occurrence list entry: term frequency of a term in one field of one thought.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Posting {
    /// Document number of the thought in the index (low half, high half).
    doc: [u16; 2],
    /// The field (top 2 bits, a `Field` discriminant) and the count.
    field_tf: u16,
}

impl Posting {
    /// Term `tf` times (at most [`MAX_TF`]) in field `field` of thought `doc`.
    pub fn new(doc: u32, field: u8, tf: u16) -> Posting {
        debug_assert!(usize::from(field) < FIELD_COUNT);
        Posting { doc: [doc as u16, (doc >> 16) as u16], field_tf: u16::from(field) << 14 | tf.min(MAX_TF) }
    }

    /// Document number of the thought in the index.
    pub fn doc(self) -> u32 {
        u32::from(self.doc[0]) | u32::from(self.doc[1]) << 16
    }

    /// The field, as a `Field` discriminant.
    pub fn field(self) -> u8 {
        (self.field_tf >> 14) as u8
    }

    /// How often the term occurs in that field (at most [`MAX_TF`]).
    pub fn tf(self) -> u16 {
        self.field_tf & MAX_TF
    }

    /// Counts one more occurrence (none past [`MAX_TF`]).
    pub(crate) fn count_one(&mut self) {
        if self.tf() < MAX_TF {
            self.field_tf += 1;
        }
    }
}

impl std::fmt::Debug for Posting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Posting").field("doc", &self.doc()).field("field", &self.field()).field("tf", &self.tf()).finish()
    }
}

/// The postings of one term (never empty: a term exists once seen).
#[derive(Debug, Clone)]
pub(crate) enum PostingList {
    /// Seen in one field of one thought.
    One(Posting),
    /// Seen more than that.
    Many(Vec<Posting>),
}

impl PostingList {
    /// The postings, in chain order.
    pub(crate) fn as_slice(&self) -> &[Posting] {
        match self {
            PostingList::One(p) => std::slice::from_ref(p),
            PostingList::Many(v) => v,
        }
    }

    /// The last posting, to add to its count.
    pub(crate) fn last_mut(&mut self) -> &mut Posting {
        match self {
            PostingList::One(p) => p,
            PostingList::Many(v) => v.last_mut().expect("a posting list is never empty"),
        }
    }

    /// Adds `p` at the end.
    pub(crate) fn push(&mut self, p: Posting) {
        match self {
            PostingList::One(first) => {
                // Room for four, as a first push onto an empty Vec reserves.
                let mut v = Vec::with_capacity(4);
                v.extend([*first, p]);
                *self = PostingList::Many(v);
            }
            PostingList::Many(v) => crate::growth::push_to_short_list(v, p),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_posting_stays_inline_and_more_keep_their_order() {
        assert_eq!(std::mem::size_of::<PostingList>(), std::mem::size_of::<Vec<Posting>>(), "no bigger than the Vec it replaces");
        let p = |doc| Posting::new(doc, 0, 1);
        let mut list = PostingList::One(p(0));
        assert!(matches!(list, PostingList::One(_)));
        list.last_mut().count_one();
        assert_eq!(list.as_slice(), &[Posting::new(0, 0, 2)]);
        for doc in 1..300 {
            list.push(p(doc));
        }
        assert_eq!(list.as_slice().len(), 300);
        assert!(list.as_slice().windows(2).all(|w| w[0].doc() + 1 == w[1].doc()));
        assert_eq!(list.as_slice()[0].tf(), 2);
    }

    #[test]
    fn a_posting_is_six_bytes_and_keeps_what_it_was_given() {
        assert_eq!(std::mem::size_of::<Posting>(), 6);
        for (doc, field, tf) in [(0, 0, 1), (u32::MAX, 3, MAX_TF), (70_000, 2, 300), (65_535, 1, 7)] {
            let p = Posting::new(doc, field, tf);
            assert_eq!((p.doc(), p.field(), p.tf()), (doc, field, tf));
        }
        let mut full = Posting::new(9, 3, MAX_TF + 5);
        assert_eq!(full.tf(), MAX_TF, "a count stops at MAX_TF");
        full.count_one();
        assert_eq!((full.doc(), full.field(), full.tf()), (9, 3, MAX_TF), "and never spills into the field");
    }
}
