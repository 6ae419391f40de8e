//! Ordered traversal: walk the append-only ledger forward or backward in
//! chunks, filtered, from an anchor.
//!
//! Anchors: a concrete thought (by id, hash or index) is a position the caller
//! already has, so it is skipped unless `include_anchor` is true. The logical
//! boundaries `genesis` and `head` are where a walk *starts*, so the boundary
//! thought itself is always a candidate. With no anchor a forward walk starts
//! at genesis and a backward walk at head.
//!
//! `next_cursor` (set when `has_more`) is the last returned thought; pass its
//! `index` as `anchor_index` with the same direction to get the next chunk.
//! `previous_cursor` is the first returned thought when anything lies before
//! it in walking order; pass it with the opposite direction to page back.

use crate::chain::Chain;
use crate::named_enum::named_enum;
use crate::query::ThoughtFilter;
use crate::thought::Thought;
use serde::Serialize;

named_enum! {
    /// Walking direction (`forward` or `backward`, case-insensitive).
    pub(crate) enum Direction("direction", IgnoreCase) {
        /// Towards the head.
        Forward = "forward",
        /// Towards genesis.
        Backward = "backward",
    }
}

named_enum! {
    /// A logical starting point of a walk (`anchor_boundary`).
    pub(crate) enum AnchorBoundary("anchor_boundary", IgnoreCase) {
        /// The first thought.
        Genesis = "genesis",
        /// The newest thought.
        Head = "head",
    }
}

impl From<AnchorBoundary> for Anchor {
    fn from(b: AnchorBoundary) -> Anchor {
        match b {
            AnchorBoundary::Genesis => Anchor::Genesis,
            AnchorBoundary::Head => Anchor::Head,
        }
    }
}

/// Where a walk starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// A concrete thought, by index (ids and hashes are resolved first).
    Thought(u64),
    /// The first thought.
    Genesis,
    /// The newest thought.
    Head,
}

/// A resumable position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Cursor {
    /// Index of the thought the position is at.
    pub index: u64,
    /// That thought's id.
    pub id: String,
    /// That thought's hash.
    pub hash: String,
}

impl Cursor {
    fn of(t: &Thought) -> Self {
        Cursor { index: t.index, id: t.id.to_string(), hash: t.hash.to_hex() }
    }
}

/// One chunk of a walk.
#[derive(Debug)]
pub(crate) struct TraversePage<'c> {
    pub anchor: Option<&'c Thought>,
    pub thoughts: Vec<&'c Thought>,
    pub has_more: bool,
    pub next_cursor: Option<Cursor>,
    pub previous_cursor: Option<Cursor>,
}

/// Walks `chain` from `anchor` in `direction`, returning up to `chunk_size` matching thoughts.
pub(crate) fn traverse<'c>(chain: &'c Chain, anchor: Option<Anchor>, direction: Direction, include_anchor: bool, chunk_size: usize, filter: &ThoughtFilter) -> TraversePage<'c> {
    let len = chain.len() as i64;
    let anchor_thought = match anchor {
        Some(Anchor::Thought(i)) => chain.by_index(i),
        Some(Anchor::Genesis) => chain.thoughts().first(),
        Some(Anchor::Head) => chain.head(),
        None => None,
    };
    let step: i64 = if direction == Direction::Forward { 1 } else { -1 };
    let start: i64 = match (anchor, direction) {
        (Some(Anchor::Thought(i)), _) => i as i64 + if include_anchor { 0 } else { step },
        (Some(Anchor::Genesis), _) => 0,
        (Some(Anchor::Head), _) => len - 1,
        (None, Direction::Forward) => 0,
        (None, Direction::Backward) => len - 1,
    };
    let mut thoughts = Vec::new();
    let mut has_more = false;
    let mut pos = start;
    let mut filter = filter.bind(chain);
    while pos >= 0 && pos < len {
        if filter.may_match(pos as usize) && filter.matches(pos as usize) {
            if thoughts.len() == chunk_size {
                has_more = true;
                break;
            }
            thoughts.push(&chain.thoughts()[pos as usize]);
        }
        pos += step;
    }
    let next_cursor = if has_more { thoughts.last().map(|t| Cursor::of(t)) } else { None };
    let previous_cursor = thoughts
        .first()
        .filter(|t| match direction {
            Direction::Forward => t.index > 0,
            Direction::Backward => (t.index as i64) < len - 1,
        })
        .map(|t| Cursor::of(t));
    TraversePage { anchor: anchor_thought, thoughts, has_more, next_cursor, previous_cursor }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::NewThought;
    use crate::record::ChainFormat;
    use crate::thought::ThoughtType;

    fn chain(n: usize) -> Chain {
        let mut c = Chain::new("t", ChainFormat::Binary);
        for i in 0..n {
            let tt = if i % 2 == 0 { ThoughtType::Plan } else { ThoughtType::Idea };
            let t = c.prepare_append(NewThought::new("a", tt, &format!("thought {i}")), format!("2026-01-01T00:00:0{i}.000Z"), format!("id-{i}"), [0; 16]).unwrap();
            c.commit(t);
        }
        c
    }

    fn indices(p: &TraversePage<'_>) -> Vec<u64> {
        p.thoughts.iter().map(|t| t.index).collect()
    }

    #[test]
    fn forward_from_nothing_starts_at_genesis() {
        let c = chain(5);
        let p = traverse(&c, None, Direction::Forward, false, 2, &ThoughtFilter::default());
        assert_eq!(indices(&p), vec![0, 1]);
        assert!(p.has_more);
        assert_eq!(p.next_cursor.unwrap().index, 1);
        assert!(p.previous_cursor.is_none());
    }

    #[test]
    fn concrete_anchor_is_excluded_unless_asked() {
        let c = chain(5);
        let f = ThoughtFilter::default();
        assert_eq!(indices(&traverse(&c, Some(Anchor::Thought(2)), Direction::Backward, false, 10, &f)), vec![1, 0]);
        assert_eq!(indices(&traverse(&c, Some(Anchor::Thought(2)), Direction::Backward, true, 10, &f)), vec![2, 1, 0]);
        let end = traverse(&c, Some(Anchor::Thought(0)), Direction::Backward, false, 10, &f);
        assert!(end.thoughts.is_empty() && !end.has_more);
    }

    #[test]
    fn chunks_count_matching_thoughts_only() {
        let c = chain(7);
        let args = crate::query::FilterArgs { thought_types: Some(vec![crate::thought::ThoughtType::Plan]), ..Default::default() };
        let f = ThoughtFilter::compile(&args, None, Some(&c)).unwrap();
        let p = traverse(&c, Some(Anchor::Head), Direction::Backward, false, 2, &f);
        assert_eq!(indices(&p), vec![6, 4]);
        assert!(p.has_more);
        let p2 = traverse(&c, Some(Anchor::Thought(p.next_cursor.unwrap().index)), Direction::Backward, false, 2, &f);
        assert_eq!(indices(&p2), vec![2, 0]);
        assert!(!p2.has_more, "no Plan lies before 0");
    }

    #[test]
    fn empty_chain_walks_nowhere() {
        let c = chain(0);
        for anchor in [None, Some(Anchor::Genesis), Some(Anchor::Head)] {
            let p = traverse(&c, anchor, Direction::Forward, false, 5, &ThoughtFilter::default());
            assert!(p.thoughts.is_empty() && p.anchor.is_none() && !p.has_more);
        }
    }
}
