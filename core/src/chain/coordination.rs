//! The chain's side of claims ([`crate::claims`]): the derived table of
//! leases, and the checks every append passes when it is prepared and
//! whenever it is re-based: reserved tags only on the engine's own claim
//! records, a claim record only while the decision it came from holds, a
//! fenced append only while its token's holder holds the key.

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

    /// The checks of a new thought stamped `at_ms` whose tags are `tags`
    /// (the fence tag is added to them).
    pub(super) fn check_coordination(&self, tags: &mut Vec<String>, fencing: Option<Fencing>, claim: Option<&ClaimRecord>, at_ms: i64) -> Result<(), AppendError> {
        // A signed fenced append lists its fence tag itself (the signature covers the tags).
        let fence = fencing.as_ref().map(|f| claims::fence_tag(&f.key, f.token));
        if claim.is_none() {
            if let Some(t) = tags.iter().find(|t| t.starts_with(RESERVED_TAG_PREFIX) && Some(*t) != fence.as_ref()) {
                return Err(AppendError::InvalidField { field: "tags", message: format!("'{t}': tags starting with '{RESERVED_TAG_PREFIX}' are written by MentisDB itself (claims, fencing)") });
            }
        }
        if let Some(record) = claim {
            if !claims::check(&self.claims(), record, at_ms) {
                return Err(AppendError::ClaimChanged { key: record.key.clone() });
            }
            tags.push(CLAIM_TAG.to_string());
        }
        if let Some(f) = fencing {
            claims::check_fence(&self.claims(), &f.key, f.token, at_ms).map_err(|message| AppendError::Fenced { message })?;
            let tag = claims::fence_tag(&f.key, f.token);
            if !tags.contains(&tag) {
                tags.push(tag);
            }
        }
        Ok(())
    }

    /// The same checks for a thought already prepared, placed again after
    /// other writers' appends (its tags name its claim record or fence).
    pub(super) fn recheck_coordination(&self, thought: &Thought) -> Result<(), AppendError> {
        let Ok(at_ms) = crate::timestamp::parse_rfc3339_millis(&thought.timestamp) else { return Ok(()) };
        if let Some(record) = ClaimRecord::of(thought) {
            if !claims::check(&self.claims(), &record, at_ms) {
                return Err(AppendError::ClaimChanged { key: record.key });
            }
        }
        for (key, token) in thought.tags.iter().filter_map(|t| claims::parse_fence_tag(t)) {
            claims::check_fence(&self.claims(), key, token, at_ms).map_err(|message| AppendError::Fenced { message })?;
        }
        Ok(())
    }
}
