//! Whole-chain operations under a chain's write lock: forgetting and
//! schema migration (the object rewritten atomically), agent registry
//! edits, deletion, adopting an imported chain and copying one for a backup.

use super::{read_lock, write_lock, ChainSlot, ChainState, MentisDb};
use crate::agents::AgentRegistry;
use crate::chain::Chain;
use crate::error::{AgentError, ImportError, ToolError};
use crate::naming;
use crate::record::{self, ChainFormat};
use crate::storage::StorageError;
use crate::timestamp::format_rfc3339_millis;
use std::sync::Arc;

/// One chain as [`MentisDb::copy_chain`] copied it under its lock (for `backup.rs`).
pub(crate) struct ChainCopy {
    pub(crate) object: String,
    pub(crate) bytes: Vec<u8>,
    pub(crate) agents: Option<(String, Vec<u8>)>,
    pub(crate) thought_count: u64,
    pub(crate) head_hash: Option<String>,
}

/// What a chain rewrite did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ForgetOutcome {
    /// The position of the thought to forget, if one was named.
    pub(crate) position: Option<usize>,
    /// Whether it was forgotten by this call (not before).
    pub(crate) forgotten_now: bool,
    /// Schema-1 thoughts migrated to schema 2 (every hash from the first changed).
    pub(crate) migrated: usize,
}

impl MentisDb {
    /// Forgets the thought of chain `key` that `locate` picks (its position):
    /// its signature, content, tags and concepts leave memory and storage,
    /// the chain object is replaced atomically, and the chain still verifies
    /// (`forget.rs`). Forgetting a thought already forgotten changes nothing.
    pub(crate) fn forget_thought(&self, key: &str, locate: impl FnOnce(&Chain) -> Result<usize, ToolError>, by: String, reason: String) -> Result<ForgetOutcome, ToolError> {
        let at = format_rfc3339_millis(crate::timestamp::renderable_millis(self.clock.now_millis()));
        self.rewrite_chain(key, |chain| {
            let pos = locate(chain)?;
            // The leases are derived from the claim records: erasing one
            // would hand its fencing token out again (a record holds no
            // personal text but a key and an agent id).
            if crate::claims::ClaimRecord::of(&chain.thoughts()[pos]).is_some() {
                return Err(ToolError::Conflict(format!("thought {pos} of chain '{key}' is a claim record: the chain's leases and fencing tokens are derived from it, so it cannot be forgotten")));
            }
            // A counted decision: forgetting it would open its review again.
            let t = &chain.thoughts()[pos];
            if chain.reviews().decided_by_thought(&t.id.as_text()) {
                return Err(ToolError::Conflict(format!("thought {pos} of chain '{key}' is the decision of a review: forgetting it would open the review again, so it cannot be forgotten")));
            }
            let note = (!chain.thoughts()[pos].is_forgotten()).then_some(crate::forget::ForgetNote { at, by, reason });
            Ok(Some((pos, note)))
        })
    }

    /// Migrates every schema-1 thought of chain `key` to schema 2 (new
    /// hashes from the first of them on); returns how many were migrated.
    pub fn migrate_chain(&self, key: &str) -> Result<usize, ToolError> {
        self.rewrite_chain(key, |_| Ok(None)).map(|o| o.migrated)
    }

    /// Rewrites chain `key` under its write lock: `plan` picks the thought
    /// to forget, if any; schema-1 thoughts are migrated. The new object is
    /// verified as a chain before it replaces the stored one.
    fn rewrite_chain(&self, key: &str, plan: impl FnOnce(&Chain) -> Result<Option<(usize, Option<crate::forget::ForgetNote>)>, ToolError>) -> Result<ForgetOutcome, ToolError> {
        let slot = self.slot_or_load(key)?.ok_or_else(|| ToolError::NotFound(format!("chain '{key}' does not exist")))?;
        let mut state = write_lock(&slot.state);
        state.live()?;
        // Rewrite the latest chain (on a shared store, others may have appended).
        self.catch_up_locked(key, &slot, &mut state)?;
        let (position, note) = match plan(&state.chain)? {
            Some((pos, note)) => (Some(pos), note),
            None => (None, None),
        };
        let forgotten_now = note.is_some();
        let forget = position.zip(note);
        let needs_migration = state.chain.thoughts().iter().any(|t| t.schema_version == crate::thought::THOUGHT_SCHEMA_V1);
        if forget.is_none() && !needs_migration {
            return Ok(ForgetOutcome { position, forgotten_now, migrated: 0 });
        }
        let rewrite = crate::forget::rewrite(&state.chain, forget, || self.ids.next_id_bytes());
        let decoded = record::DecodedChain {
            format: state.chain.format(),
            chain_key: key.to_string(),
            thoughts: rewrite.thoughts.into(),
            valid_len: rewrite.bytes.len(),
            body_hash_mismatches: None,
            label_sets: Vec::new(),
        };
        let mut chain = Chain::load_with(decoded, state.chain.agents().clone(), self.hasher, self.config.parallelism.as_ref())
            .map_err(|e| ToolError::Storage(StorageError::Unavailable(format!("the rewritten chain does not verify ({e}); nothing was changed"))))?;
        self.storage.write_atomic(&slot.object, &rewrite.bytes)?;
        chain.set_embedding_provider(self.embedding_provider());
        state.chain = chain;
        state.byte_len = rewrite.bytes.len() as u64;
        Ok(ForgetOutcome { position, forgotten_now, migrated: rewrite.migrated })
    }

    /// Applies a registry edit to chain `key` (created on first use when
    /// `create` is true) and persists the sidecar atomically. On failure the
    /// registry is unchanged.
    pub fn edit_agents<R>(&self, key: &str, create: bool, edit: impl FnOnce(&mut AgentRegistry, &str) -> Result<R, AgentError>) -> Result<R, ToolError> {
        let slot = if create {
            self.slot_for_write(key, None)?
        } else {
            self.slot_or_load(key)?.ok_or_else(|| ToolError::NotFound(format!("chain '{key}' does not exist")))?
        };
        let mut state = write_lock(&slot.state);
        state.live()?;
        let mut draft = state.chain.agents().clone();
        let now = format_rfc3339_millis(self.clock.now_millis());
        let out = edit(&mut draft, &now)?;
        self.storage.write_atomic(&slot.agents_object, &draft.to_sidecar()).map_err(AgentError::Storage)?;
        *state.chain.agents_mut() = draft;
        Ok(out)
    }

    /// Deletes chain `key` for good: its chain object and agent registry
    /// leave storage and the chain is no longer served (the key may be used
    /// again). Writers that found the chain before wait for the deletion and
    /// then fail with `not_found`. Returns how many thoughts it held.
    pub fn delete_chain(&self, key: &str) -> Result<usize, ToolError> {
        self.delete_chain_when(key, |_| true).map(|n| n.expect("unconditional delete"))
    }

    /// [`MentisDb::delete_chain`] only when `condition` holds for the chain
    /// under its write lock (`Ok(None)` when it does not): a merge deletes
    /// its source only if nothing was appended since it copied it.
    pub fn delete_chain_when(&self, key: &str, condition: impl FnOnce(&Chain) -> bool) -> Result<Option<usize>, ToolError> {
        let slot = self.slot_or_load(key)?.ok_or_else(|| ToolError::NotFound(format!("chain '{key}' does not exist")))?;
        let thoughts = {
            let mut state = write_lock(&slot.state);
            state.live()?;
            if !condition(&state.chain) {
                return Ok(None);
            }
            // The chain object goes first: without it the chain does not
            // exist, whatever happens to the registry after.
            self.storage.remove(&slot.object)?;
            let _ = self.storage.remove(&slot.agents_object);
            // Its presence entries go with it (they are the chain's live state).
            for entry in self.storage.list(&naming::presence_prefix(key)).unwrap_or_default() {
                let _ = self.storage.remove(&entry);
            }
            state.deleted = true;
            state.chain.len()
        };
        let mut chains = write_lock(&self.chains);
        if chains.get(key).is_some_and(|s| Arc::ptr_eq(s, &slot)) {
            chains.remove(key);
            self.unloads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        drop(chains);
        for observer in read_lock(&self.observers).iter() {
            observer.chain_deleted(key);
        }
        Ok(Some(thoughts))
    }

    /// Stores `bytes` as the object of the verified `chain` and serves it from
    /// now on, unless its key is already served, refused or stored in either
    /// format (then nothing is written). Returns the chain's storage location.
    /// The one step of [`MentisDb::import_chain`] that needs the chain table.
    pub(crate) fn adopt_chain(&self, mut chain: Chain, bytes: &[u8]) -> Result<String, ImportError> {
        let key = chain.key().to_string();
        let mut chains = write_lock(&self.chains);
        let mut taken = chains.contains_key(&key) || self.refused_error(&key).is_some();
        for format in [ChainFormat::Binary, ChainFormat::Jsonl] {
            taken = taken || self.storage.read(&naming::chain_object(&key, format))?.is_some();
        }
        if taken {
            return Err(ImportError::ChainExists { chain_key: key });
        }
        let object = naming::chain_object(&key, chain.format());
        self.storage.write_atomic(&object, bytes)?;
        chain.set_embedding_provider(self.embedding_provider());
        let location = self.storage.location(&object);
        chains.insert(key.clone(), Arc::new(ChainSlot::new(object, naming::agents_object(&key), ChainState::new(chain, bytes.len() as u64))));
        drop(chains);
        self.enforce_budget(&key);
        Ok(location)
    }

    /// Copies chain `key` as it is now, under its read lock: the object up to
    /// the last committed thought and the agent sidecar (`backup.rs`).
    /// `None` when the chain does not exist (or was deleted meanwhile).
    pub(crate) fn copy_chain(&self, key: &str) -> Result<Option<ChainCopy>, StorageError> {
        let Ok(Some(slot)) = self.slot_or_load(key) else { return Ok(None) };
        let state = read_lock(&slot.state);
        if state.deleted {
            return Ok(None);
        }
        let Some(mut bytes) = self.storage.read(&slot.object)? else { return Ok(None) };
        // Another engine on a shared store may have appended past this one's head.
        bytes.truncate(state.byte_len as usize);
        let agents = self.storage.read(&slot.agents_object)?.map(|b| (slot.agents_object.clone(), b));
        let thoughts = state.chain.thoughts();
        Ok(Some(ChainCopy { object: slot.object.clone(), bytes, agents, thought_count: thoughts.len() as u64, head_hash: thoughts.last().map(|t| t.hash.to_hex()) }))
    }
}
