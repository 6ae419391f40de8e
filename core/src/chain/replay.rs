//! Idempotent appends: a client `thought_id` that is already in the chain.
//!
//! Agents retry appends after timeouts, and a retry must never create a
//! second memory. When an append names a `thought_id` the chain already
//! holds, [`Chain::prepare_append_with_payload`](super::Chain) builds the
//! new thought as usual (same validation, defaults, clamping, ref dedup and
//! relation resolution, on the already redacted text) and compares every
//! client-supplied field (`COMPARED`) with the stored thought: all equal
//! is a replay (the stored thought is answered, nothing is written); any
//! difference is [`AppendError::Conflict`] naming the first one. Both run
//! under the chain's write lock, so concurrent retries create one thought.
//! `agent_name` and `agent_owner` are not compared: they update the agent
//! registry, not the thought.

use crate::error::AppendError;
use crate::redact::Redaction;
use crate::thought::Thought;

/// What preparing an append decided.
#[derive(Debug, Clone)]
pub enum Prepared {
    /// A new thought, and its binary record payload (canonical body, then the 32 hash bytes).
    New {
        /// The thought to commit.
        thought: Thought,
        /// The record payload to frame.
        payload: Vec<u8>,
    },
    /// The request repeats the stored thought with this id: nothing to write.
    Replay(Thought),
}

/// The result of an append as the engine acknowledges it.
#[derive(Debug, Clone)]
pub struct Appended {
    /// The thought as stored (for a replay, the earlier one).
    pub thought: Thought,
    /// True when the request repeated a stored thought (same `thought_id`,
    /// same fields) and nothing was written.
    pub replay: bool,
    /// The secrets replaced in the request's content, tags and concepts.
    pub redactions: Vec<Redaction>,
    /// The chain's head hash right after the write: this thought's, or a
    /// later one's written with it in one group (for a replay, the head
    /// when it was answered).
    pub head_hash: Option<String>,
}

/// The fields a replay must repeat, in the order a conflict reports them.
const COMPARED: [&str; 14] = [
    "thought_type", "role", "content", "confidence", "importance", "tags", "concepts", "refs", "relations", "session_id",
    "agent_id", "signing_key_id", "thought_signature", "entity_type",
];

/// [`Prepared::Replay`] of `stored` when `candidate` (the request, built as a
/// new thought) repeats every field of [`COMPARED`], else the conflict.
pub(super) fn replay_of(stored: &Thought, candidate: &Thought) -> Result<Prepared, AppendError> {
    if stored.is_forgotten() {
        return Err(AppendError::Forgotten { id: stored.id.clone() });
    }
    let (s, c) = (stored, candidate);
    let same = [
        s.thought_type == c.thought_type,
        s.role == c.role,
        s.content == c.content,
        s.confidence == c.confidence,
        s.importance == c.importance,
        s.tags == c.tags,
        s.concepts == c.concepts,
        s.refs == c.refs,
        // `valid_at` is the append time of each: not part of what was asked.
        s.relations.len() == c.relations.len() && s.relations.iter().zip(&c.relations).all(|(a, b)| (a.kind, &a.target_id, a.target_index, &a.chain_key) == (b.kind, &b.target_id, b.target_index, &b.chain_key)),
        s.session_id == c.session_id,
        s.agent_id == c.agent_id,
        s.signing_key_id == c.signing_key_id,
        s.thought_signature == c.thought_signature,
        s.entity_type == c.entity_type,
    ];
    match same.iter().position(|eq| !eq) {
        None => Ok(Prepared::Replay(stored.clone())),
        Some(i) => Err(AppendError::Conflict { id: stored.id.clone(), field: COMPARED[i] }),
    }
}
