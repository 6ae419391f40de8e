//! One chain, several writers: taking in what other engines on the same
//! shared store appended, and re-basing an append that lost the race.
//!
//! Several daemons may serve one chain from one shared store. Each keeps the
//! chain in memory; the store's conditional append
//! ([`crate::Storage::append_at`]) decides which of two appends at one
//! position wins. The loser takes in the records it missed
//! ([`Chain::extend_verified`]: every record is checked as opening checks it:
//! index, `prev_hash`, hash, form, refs, timestamp) and re-bases its thought
//! onto the new tip ([`Chain::rebase`]): a new index and `prev_hash`, a new
//! hash. A signature stays valid, because it binds the chain key and the
//! thought id, never the position. A thought id that another writer stored
//! in the meantime is a replay or a conflict, exactly as on one writer.

use super::replay::{replay_of, Prepared};
use super::{verify_next, Chain};
use crate::canonical::encode_and_hash;
use crate::error::{AppendError, VerifyError};
use crate::record::DecodedChain;
use crate::hex_bytes::ThoughtHash;
use crate::thought::Thought;

impl Chain {
    /// Verifies `suffix` (records another writer appended after this chain's
    /// last thought) as opening a chain would, then commits them all; on the
    /// first bad record nothing is committed. Returns how many were added.
    pub fn extend_verified(&mut self, suffix: DecodedChain) -> Result<usize, VerifyError> {
        self.verify_extension(&suffix)?;
        let added = suffix.thoughts.len();
        for t in suffix.thoughts {
            self.commit(t);
        }
        Ok(added)
    }

    /// Checks that `suffix` continues this chain (indices, links, hashes,
    /// form: what opening checks) without changing anything.
    pub fn verify_extension(&self, suffix: &DecodedChain) -> Result<(), VerifyError> {
        let first = self.thoughts.len();
        let mut mismatches = suffix.body_hash_mismatches.as_ref().map(|m| m.iter());
        let mut prev = self.head().map(|t| &t.hash);
        for (i, t) in suffix.thoughts.iter().enumerate() {
            let mismatch = match mismatches.as_mut() {
                Some(m) => m.next().cloned().flatten(),
                None => Some(crate::canonical::compute_thought_hash(t)).filter(|h| *h != t.hash),
            };
            verify_next((first + i) as u64, prev, t, mismatch)?;
            prev = Some(&t.hash);
        }
        Ok(())
    }

    /// `thought`, prepared against an older tip of this chain, re-based onto
    /// the current tip: the next index, the head's hash as `prev_hash`, a new
    /// hash and record payload. When its id was stored meanwhile (a retry
    /// that reached another writer first), the replay or the conflict.
    pub fn rebase(&self, thought: Thought) -> Result<Prepared, AppendError> {
        self.place(thought, None)
    }

    /// `thought` placed right after `after` (a thought of the same group
    /// commit, placed but not yet committed), or at the tip when `None`:
    /// the next index, the previous thought's hash as `prev_hash`, a new hash
    /// and record payload. A thought whose id this chain holds is a replay
    /// or a conflict, as in [`Chain::rebase`].
    pub(crate) fn place(&self, mut thought: Thought, after: Option<&Thought>) -> Result<Prepared, AppendError> {
        if let Some(stored) = self.by_thought_id(&thought.id) {
            return replay_of(stored, &thought);
        }
        // Chain time never runs backwards: a thought stamped before the one
        // it now follows (written meanwhile by another engine) takes its time.
        let floor = match after {
            Some(prev) => prev.parsed_timestamp_ms(),
            None => self.thoughts.last().map(|t| t.timestamp_ms),
        };
        if let (Some(floor), Some(own)) = (floor, thought.parsed_timestamp_ms()) {
            if own < floor {
                thought.set_timestamp_ms(floor);
                // A relation holds from its thought's time (derived from it
                // when a chain is read back): as every other engine reads it.
                thought.stamp_relations();
            }
        }
        self.recheck_coordination(&thought)?;
        (thought.index, thought.prev_hash) = match after {
            Some(prev) => (prev.index + 1, Some(prev.hash)),
            None => (self.thoughts.len() as u64, self.head().map(|t| t.hash)),
        };
        let (mut payload, digest) = encode_and_hash(&thought);
        thought.hash = ThoughtHash::from(digest);
        payload.extend_from_slice(&digest);
        Ok(Prepared::New { thought, payload })
    }
}
