//! The append path every tool takes: redaction, the chain's write lock,
//! idempotent replays, re-basing onto another engine's appends on a shared
//! store, and the sync that makes an append acknowledged.

use super::append_group::Written;
use super::{write_lock, ChainSlot, MentisDb};
use crate::chain::{Appended, Chain, NewThought};
use crate::error::ToolError;
use crate::record::ChainFormat;
use crate::thought::Thought;


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
        let written = {
            let mut state = write_lock(&slot.state);
            state.live()?;
            if !condition(&state.chain) {
                return Ok(None);
            }
            self.write_alone(key, &slot, &mut state, input)?
        };
        self.acknowledge(key, &slot, written, redactions).map(Some)
    }

    pub(super) fn redact(&self, input: &mut NewThought) -> Result<Vec<crate::redact::Redaction>, ToolError> {
        Ok(if self.config.redact_secrets { crate::chain::redact_new_thought(input)? } else { Vec::new() })
    }

    /// After the write: the sync that makes the append durable (a replay
    /// is synced too: the original append may not have been), then the
    /// checkpoint, observers and memory budget for a new thought.
    pub(super) fn acknowledge(&self, key: &str, slot: &ChainSlot, written: Written, redactions: Vec<crate::redact::Redaction>) -> Result<Appended, ToolError> {
        let Written { thought, replay, head_hash } = written;
        self.storage.sync(&slot.object).map_err(|e| super::append_now::not_durable(thought.index, &e))?;
        self.after_durable(key, &thought, replay);
        Ok(Appended { thought, replay, redactions, head_hash })
    }

    /// Once `thought` is durable: for a new thought (not a replay) the
    /// checkpoint, the observers and the memory budget.
    pub(super) fn after_durable(&self, key: &str, thought: &Thought, replay: bool) {
        if !replay {
            self.auto_checkpoint(key);
            self.notify_appended(key, std::iter::once(thought));
            self.appended_to(key);
        }
    }
}
