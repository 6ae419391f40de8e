//! A term's postings: where it occurs, thought by thought and field by
//! field, in chain order.
//!
//! Most terms of a chat occur once, so a list of one posting is kept inline
//! in the slot a `Vec` would take (no allocation: an 8-byte block costs 32
//! with glibc's header and rounding, and a call into the allocator with
//! any); it moves to the heap when the term is seen again.

/// One occurrence list entry: term frequency of a term in one field of one thought.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Posting {
    /// Document number of the thought in the index.
    pub doc: u32,
    /// The field, as a `Field` discriminant.
    pub field: u8,
    /// How often the term occurs in that field.
    pub tf: u16,
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
        let p = |doc| Posting { doc, field: 0, tf: 1 };
        let mut list = PostingList::One(p(0));
        assert!(matches!(list, PostingList::One(_)));
        list.last_mut().tf += 1;
        assert_eq!(list.as_slice(), &[Posting { doc: 0, field: 0, tf: 2 }]);
        for doc in 1..300 {
            list.push(p(doc));
        }
        assert_eq!(list.as_slice().len(), 300);
        assert!(list.as_slice().windows(2).all(|w| w[0].doc + 1 == w[1].doc));
        assert_eq!(list.as_slice()[0].tf, 2);
    }
}
