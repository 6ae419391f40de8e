//! The append path every tool takes: redaction, the chain's write lock,
//! idempotent replays, re-basing onto another engine's appends on a shared
//! store, and the sync that makes an append acknowledged.

use super::{write_lock, MentisDb};
use crate::chain::{Appended, Chain, NewThought, Prepared};
use crate::error::{AppendError, ToolError};
use crate::record::{self, ChainFormat};
use crate::storage::StorageError;
use crate::thought::Thought;
use crate::timestamp::format_rfc3339_millis;

/// How many times one append re-bases onto another writer's appends before
/// it gives up (each re-base means another engine won the race meanwhile).
const MAX_REBASES: usize = 64;

impl MentisDb {
    /// Appends a thought to chain `key` (created on first use) and returns it
    /// once it is durable (for a replayed `thought_id`, the stored thought).
    pub fn append(&self, key: &str, input: NewThought) -> Result<Thought, ToolError> {
        self.append_when(key, None, input, |_| true).map(|t| t.expect("unconditional append"))
    }

    /// Appends only when `condition` holds for the chain under its write lock
    /// (bootstrap appends only into an empty chain). `Ok(None)` when it did not hold.
    pub fn append_when(&self, key: &str, format: Option<ChainFormat>, input: NewThought, condition: impl FnOnce(&Chain) -> bool) -> Result<Option<Thought>, ToolError> {
        Ok(self.append_reporting(key, format, input, condition)?.map(|a| a.thought))
    }

    /// The append path every tool takes: redacts secrets (when
    /// [`DbConfig::redact_secrets`]), then under the chain's write lock checks
    /// `condition`, answers a replayed `thought_id` with the stored thought or
    /// writes the new one, and returns once it is durable, with whether it
    /// was a replay and what was redacted.
    pub fn append_reporting(&self, key: &str, format: Option<ChainFormat>, mut input: NewThought, condition: impl FnOnce(&Chain) -> bool) -> Result<Option<Appended>, ToolError> {
        let redactions = if self.config.redact_secrets { crate::redact::redact_new_thought(&mut input)? } else { Vec::new() };
        let slot = self.slot_for_write(key, format)?;
        let (thought, replay) = 'locked: {
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
                    Prepared::Replay(stored) => break 'locked (stored, true),
                };
                let bytes = record::encode_thought_with_payload(state.chain.format(), &thought, Some(payload));
                match self.storage.append_at(&slot.object, state.byte_len, &bytes) {
                    Ok(()) => {
                        state.byte_len += bytes.len() as u64;
                        state.chain.commit_at(thought.clone(), now_ms);
                        break 'locked (thought, false);
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
        self.storage.sync(&slot.object).map_err(|e| {
            AppendError::Storage(StorageError::Unavailable(format!("thought {} was written but could not be made durable: {e}", thought.index)))
        })?;
        if !replay {
            self.auto_checkpoint(key);
            self.notify_appended(key, std::slice::from_ref(&thought));
            self.appended_to(key);
        }
        Ok(Some(Appended { thought, replay, redactions }))
    }
}
