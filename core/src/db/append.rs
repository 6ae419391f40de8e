//! The append path every tool takes: redaction, the chain's write lock,
//! idempotent replays, re-basing onto another engine's appends on a shared
//! store, and the sync that makes an append acknowledged.

use super::append_group::{Written, MAX_REBASES};
use super::{write_lock, ChainSlot, MentisDb};
use crate::chain::{Appended, Chain, NewThought, Prepared};
use crate::error::{AppendError, ToolError};
use crate::record::{self, ChainFormat};
use crate::storage::StorageError;
use crate::thought::Thought;
use crate::timestamp::format_rfc3339_millis;


impl MentisDb {
    /// Appends a thought to chain `key` (created on first use) and returns it
    /// once it is durable (for a replayed `thought_id`, the stored thought).
    pub fn append(&self, key: &str, input: NewThought) -> Result<Thought, ToolError> {
        self.append_reporting(key, input).map(|a| a.thought)
    }

    /// The path of every unconditional append ([`MentisDb::append`], the
    /// append tools): redacts secrets (when [`DbConfig::redact_secrets`]),
    /// answers a replayed `thought_id` with the stored thought or writes the
    /// new one together with the appends queued on the chain at the same
    /// moment (`append_group.rs`), and returns once it is durable, with
    /// whether it was a replay and what was redacted.
    ///
    /// [`DbConfig::redact_secrets`]: super::DbConfig::redact_secrets
    pub fn append_reporting(&self, key: &str, mut input: NewThought) -> Result<Appended, ToolError> {
        let redactions = self.redact(&mut input)?;
        let slot = self.slot_for_write(key, None)?;
        let written = self.append_in_group(key, &slot, input)?;
        self.acknowledge(key, &slot, written, redactions)
    }

    /// Appends only when `condition` holds for the chain under its write lock
    /// (bootstrap appends only into an empty chain). `Ok(None)` when it did not hold.
    pub fn append_when(&self, key: &str, format: Option<ChainFormat>, input: NewThought, condition: impl FnOnce(&Chain) -> bool) -> Result<Option<Thought>, ToolError> {
        Ok(self.append_reporting_when(key, format, input, condition)?.map(|a| a.thought))
    }

    /// [`MentisDb::append_reporting`] for a conditional append: alone (not
    /// in a group), under the chain's write lock, only when `condition`
    /// holds (`Ok(None)` otherwise). `format` applies when it creates the chain.
    pub fn append_reporting_when(&self, key: &str, format: Option<ChainFormat>, mut input: NewThought, condition: impl FnOnce(&Chain) -> bool) -> Result<Option<Appended>, ToolError> {
        let redactions = self.redact(&mut input)?;
        let slot = self.slot_for_write(key, format)?;
        let written = 'locked: {
            let mut state = write_lock(&slot.state);
            state.live()?;
            if !condition(&state.chain) {
                return Ok(None);
            }
            if let Some(threshold) = self.config.dedup_threshold {
                state.chain.add_dedup_relation(&mut input, threshold, self.config.dedup_scan_window);
            }
            // Parsed back from `timestamp` this is `now_ms`: the append path parses it once.
            let now_ms = crate::timestamp::renderable_millis(self.clock.now_millis());
            let timestamp = format_rfc3339_millis(now_ms);
            let mut prepared = state.chain.prepare_append_with_payload(input, timestamp, self.fresh_id(), self.ids.next_id_bytes())?;
            let mut rebases = 0;
            loop {
                let (thought, payload) = match prepared {
                    Prepared::New { thought, payload } => (thought, payload),
                    // Synced below all the same: the original append may not have been.
                    Prepared::Replay(stored) => break 'locked Written { head_hash: state.chain.head().map(|t| t.hash.clone()), thought: stored, replay: true },
                };
                let bytes = record::encode_thought_with_payload(state.chain.format(), &thought, Some(payload));
                match self.storage.append_at(&slot.object, state.byte_len, &bytes) {
                    Ok(()) => {
                        state.byte_len += bytes.len() as u64;
                        state.chain.commit_at(thought.clone(), now_ms);
                        break 'locked Written { head_hash: Some(thought.hash.clone()), thought, replay: false };
                    }
                    // Another engine on the shared store appended first: take
                    // its records in (verified) and re-base onto the new tip.
                    Err(StorageError::Conflict { .. }) if rebases < MAX_REBASES => {
                        rebases += 1;
                        self.catch_up_locked(key, &slot, &mut state)?;
                        prepared = state.chain.rebase(thought)?;
                    }
                    Err(e) => {
                        // Roll back a partial write so the object stays a valid chain.
                        if !matches!(e, StorageError::Conflict { .. }) {
                            let _ = self.storage.truncate(&slot.object, state.byte_len);
                        }
                        return Err(AppendError::Storage(e).into());
                    }
                }
            }
        };
        self.acknowledge(key, &slot, written, redactions).map(Some)
    }

    fn redact(&self, input: &mut NewThought) -> Result<Vec<crate::redact::Redaction>, ToolError> {
        Ok(if self.config.redact_secrets { crate::redact::redact_new_thought(input)? } else { Vec::new() })
    }

    /// After the write: the sync that makes the append durable (a replay
    /// is synced too: the original append may not have been), then the
    /// checkpoint, observers and memory budget for a new thought.
    fn acknowledge(&self, key: &str, slot: &ChainSlot, written: Written, redactions: Vec<crate::redact::Redaction>) -> Result<Appended, ToolError> {
        let Written { thought, replay, head_hash } = written;
        self.storage.sync(&slot.object).map_err(|e| {
            AppendError::Storage(StorageError::Unavailable(format!("thought {} was written but could not be made durable: {e}", thought.index)))
        })?;
        if !replay {
            self.auto_checkpoint(key);
            self.notify_appended(key, std::slice::from_ref(&thought));
            self.appended_to(key);
        }
        Ok(Appended { thought, replay, redactions, head_hash })
    }
}
