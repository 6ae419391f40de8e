//! What a ranked search reads of the chain it searches, as two traits the
//! engine's higher layers implement: the chain is a [`Corpus`]
//! (`crate::chain`), a compiled search filter a [`ThoughtMatch`]
//! (`crate::query`). So the ranker sits below the chain that stores its
//! index, and knows nothing of how chains or filters are made.

use super::index::RankedIndex;
use crate::thought::Thought;
use crate::thought_list::ThoughtList;
use std::sync::RwLockReadGuard;

/// A chain as a ranked search reads it.
pub trait Corpus {
    /// The chain's ranked index (held while the search runs).
    fn ranked_index(&self) -> RwLockReadGuard<'_, RankedIndex>;
    /// Its thoughts, in append order (document `d` is thought `d`).
    fn thoughts(&self) -> &ThoughtList;
    /// Whether any thought was forgotten (has nothing left to match).
    fn has_forgotten(&self) -> bool;
    /// Which thoughts a ranked read leaves out: the engine's claim records,
    /// and retired ones (superseded, corrected or invalidated, as of
    /// `as_of_ms`) unless `include_retired` (the chain's one visibility rule).
    fn retired_filter(&self, include_retired: bool, as_of_ms: Option<i64>) -> Box<dyn Fn(usize) -> bool + Sync + '_>;
}

/// Which thoughts a ranked query may return, besides visibility.
pub trait ThoughtMatch: std::fmt::Debug + Sync {
    /// Whether thought `t`, stamped `timestamp_ms`, matches.
    fn matches(&self, t: &Thought, timestamp_ms: i64) -> bool;

    /// Whether [`ThoughtMatch::matches`] is true of every thought (no
    /// filter is set): the ranker then reads no candidate's thought for it.
    fn matches_every_thought(&self) -> bool {
        false
    }
}
