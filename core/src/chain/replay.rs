//! Idempotent appends: a client `thought_id` that is already in the chain.
//!
//! Agents retry appends after timeouts, and a retry must never create a
//! second memory. When an append names a `thought_id` the chain already
//! holds, [`Chain::prepare_append_with_payload`](super::Chain) builds the
//! new thought as usual (same validation, defaults, clamping, ref dedup and
//! relation resolution, on the already redacted text) and compares every
//! field its writer chose (`Thought::as_written`) with the stored thought:
//! all equal is a replay (the stored thought is answered, nothing is
//! written); any difference is [`AppendError::Conflict`] naming the first
//! by name. Both run
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

/// Fields of the thought a replay need not repeat: they update the agent
/// registry, not the thought.
const NOT_COMPARED: [&str; 2] = ["agent_name", "agent_owner"];

/// [`Prepared::Replay`] of `stored` when `candidate` (the request, built as a
/// new thought) repeats every field its writer chose ([`Thought::as_written`]
/// but [`NOT_COMPARED`]), else the conflict naming one that differs (the
/// first by name).
pub(super) fn replay_of(stored: &Thought, candidate: &Thought) -> Result<Prepared, AppendError> {
    if stored.is_forgotten() {
        return Err(AppendError::Forgotten { id: stored.id.to_string() });
    }
    let asked = candidate.as_written();
    let differs = stored.as_written().into_iter().find(|(name, value)| !NOT_COMPARED.contains(&name.as_str()) && asked.get(name) != Some(value));
    match differs {
        None => Ok(Prepared::Replay(stored.clone())),
        Some((field, _)) => Err(AppendError::Conflict { id: stored.id.to_string(), field }),
    }
}
