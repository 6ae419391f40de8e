//! The chain's side of coordination ([`crate::claims`], [`crate::facts`],
//! [`crate::reviews`]): the derived tables of leases, facts and reviews,
//! and the checks every new thought passes when it is prepared (after its
//! replay check: a retry of a stored thought is answered as such) and again
//! whenever it is re-based: reserved tags only on the engine's own claim
//! records, a claim record only while the decision it came from holds, a
//! fenced append only while its token's holder holds the key and is the
//! agent writing. (A review decision is stored as written and counts only
//! if its review takes it where it stands: `crate::reviews`.)

use super::{Chain, Fencing};
use crate::claims::{self, ClaimRecord, ClaimTable, CLAIM_TAG, RESERVED_TAG_PREFIX};
use crate::error::AppendError;
use crate::thought::Thought;
use std::sync::RwLockReadGuard;

impl Chain {
    /// Every key's lease and last fencing token, from the chain's claim records.
    pub fn claims(&self) -> RwLockReadGuard<'_, ClaimTable> {
        self.claims.get(&self.thoughts)
    }

    /// Every fact and its validity window, from the chain's fact records.
    pub fn facts(&self) -> RwLockReadGuard<'_, crate::facts::FactTable> {
        self.facts.get(&self.thoughts)
    }

    /// Every review and its decision, from the chain's review records.
    pub fn reviews(&self) -> RwLockReadGuard<'_, crate::reviews::ReviewTable> {
        self.reviews.get(&self.thoughts)
    }

    /// The tags the engine adds to a new thought: the claim tag on a claim
    /// record, the fence tag on a fenced append (unless the thought lists
    /// it: a signed one must, its signature covers the tags). Whether the
    /// fence tag was added.
    pub(super) fn coordination_tags(&self, tags: &mut Vec<String>, fencing: Option<&Fencing>, claim: bool) -> bool {
        if claim {
            tags.push(CLAIM_TAG.to_string());
        }
        let Some(f) = fencing else { return false };
        let tag = claims::fence_tag(&f.key, f.token);
        let added = !tags.contains(&tag);
        if added {
            tags.push(tag);
        }
        added
    }

    /// The checks of a new thought of `agent_id` stamped `at_ms` whose tags
    /// (with [`Chain::coordination_tags`] added; `fence_added` when it added
    /// the fence tag) are `tags`.
    pub(super) fn check_coordination(&self, agent_id: &str, tags: &[String], fencing: Option<&Fencing>, claim: Option<&ClaimRecord>, signed_fence_added: bool, at_ms: i64) -> Result<(), AppendError> {
        let fence = fencing.map(|f| claims::fence_tag(&f.key, f.token));
        if claim.is_none() {
            if let Some(t) = tags.iter().find(|t| t.starts_with(RESERVED_TAG_PREFIX) && Some(*t) != fence.as_ref()) {
                return Err(AppendError::InvalidField { field: "tags", message: format!("'{t}': tags starting with '{RESERVED_TAG_PREFIX}' are written by MentisDB itself (claims, fencing)") });
            }
        }
        if let Some(record) = claim {
            if !claims::check(&self.claims(), record, at_ms) {
                return Err(AppendError::ClaimChanged { key: record.key.clone() });
            }
        }
        if let (Some(f), Some(tag)) = (fencing, fence) {
            if signed_fence_added {
                return Err(AppendError::InvalidField { field: "tags", message: format!("a signed fenced append lists its fence tag '{tag}' in the tags it signs") });
            }
            claims::check_fence(&self.claims(), &f.key, f.token, agent_id, at_ms).map_err(|message| AppendError::Fenced { message })?;
        }
        Ok(())
    }

    /// The same checks for a thought already prepared, placed again after
    /// other writers' appends (its tags name its claim record or fence).
    pub(super) fn recheck_coordination(&self, thought: &Thought) -> Result<(), AppendError> {
        let Some(at_ms) = thought.parsed_timestamp_ms() else { return Ok(()) };
        if let Some(record) = ClaimRecord::of(thought) {
            if !claims::check(&self.claims(), &record, at_ms) {
                return Err(AppendError::ClaimChanged { key: record.key });
            }
        }
        for (key, token) in thought.tags.iter().filter_map(|t| claims::parse_fence_tag(t)) {
            claims::check_fence(&self.claims(), key, token, &thought.agent_id, at_ms).map_err(|message| AppendError::Fenced { message })?;
        }
        Ok(())
    }
}
