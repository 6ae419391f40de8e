//! The chain as the ranker reads it ([`crate::ranked::Corpus`]).

use super::visibility::Visibility;
use super::Chain;
use crate::ranked::{Corpus, RankedIndex};
use crate::thought::COORDINATOR;
use crate::thought_list::ThoughtList;
use std::sync::RwLockReadGuard;

impl Corpus for Chain {
    fn ranked_index(&self) -> RwLockReadGuard<'_, RankedIndex> {
        Chain::ranked_index(self)
    }

    fn thoughts(&self) -> &ThoughtList {
        Chain::thoughts(self)
    }

    fn has_forgotten(&self) -> bool {
        Chain::has_forgotten(self)
    }

    fn retired_filter(&self, include_retired: bool, as_of_ms: Option<i64>) -> Box<dyn Fn(usize) -> bool + Sync + '_> {
        let view = Visibility { include_invalidated: include_retired, as_of_ms }.over(self);
        let thoughts = Chain::thoughts(self);
        // Only the coordinator writes claim records: on a chain it never
        // wrote to (most), no candidate's thought is read for the test.
        // (Every committed or loaded thought registers its agent, and a
        // registry never drops one: `AgentRegistry::observe`.)
        if self.agents().get(COORDINATOR).is_none() {
            return Box::new(move |index| view.hides(index));
        }
        Box::new(move |index| view.hides(index) || thoughts[index].is_claim_record())
    }
}
