//! Several engines on one store: taking in what others appended
//! ([`MentisDb::catch_up`]), chains they created or rewrote, and a replica's
//! pulled tail ([`MentisDb::replace_tail`], `crate::sync`).

use super::{read_lock, write_lock, ChainSlot, ChainState, MentisDb};
use crate::agents::AgentRegistry;
use crate::chain::Chain;
use crate::error::{ToolError, VerifyError};
use crate::naming;
use crate::record::{self, ChainFormat};
use crate::storage::StorageError;
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, TryLockError};

impl MentisDb {
    /// Takes in what other engines on a shared store appended to chain `key`
    /// since this one last looked (every record verified as opening verifies
    /// it), loading the chain when another engine created it. Returns how
    /// many thoughts were added. A host calls it when told of new appends
    /// (e.g. PostgreSQL `NOTIFY`); appends call it themselves when they lose
    /// a race.
    pub fn catch_up(&self, key: &str) -> Result<usize, ToolError> {
        let Some(slot) = self.slot_or_load(key)? else { return Ok(0) };
        let mut state = write_lock(&slot.state);
        self.catch_up_locked(key, &slot, &mut state)
    }

    /// [`MentisDb::catch_up`] for the chain whose storage object is
    /// `object` (what a shared store's notification names), or the skill
    /// log's new events. A chain object
    /// this engine does not serve yet (another engine created it) is loaded
    /// and verified now, and its thoughts are told to the observers, so that
    /// event streams and webhooks here hear of chains made elsewhere. Any
    /// other object needs nothing: `Ok(0)`.
    pub fn catch_up_object(&self, object: &str) -> Result<usize, ToolError> {
        if object == naming::SKILLS_LOG {
            return Ok(self.skills.catch_up(self.storage.as_ref())?);
        }
        let found = self.resident_slot_of(|slot| slot.object == object);
        let Some((key, slot)) = found else { return self.load_announced_chain(object) };
        let mut state = write_lock(&slot.state);
        self.catch_up_locked(&key, &slot, &mut state)
    }

    /// The resident chain (key and slot) whose slot `is` picks.
    fn resident_slot_of(&self, is: impl Fn(&ChainSlot) -> bool) -> Option<(String, std::sync::Arc<ChainSlot>)> {
        read_lock(&self.chains).iter().find(|(_, slot)| is(slot)).map(|(key, slot)| (key.clone(), slot.clone()))
    }

    /// A shared store delivered what another engine appended: `bytes` written
    /// at `offset` of `object` (a store that announces appends with their
    /// bytes, such as PostgreSQL notifications, saves a read per engine this
    /// way). Right after what this engine holds they are verified and taken
    /// in; bytes it already holds (its own appends) are ignored; after a gap
    /// (an announcement missed) it reads the store as
    /// [`MentisDb::catch_up_object`] does. Returns how many thoughts it took in.
    ///
    /// When the chain is busy (an append of this engine is writing, a query
    /// is reading) the bytes are kept on the chain instead of waiting: the
    /// next append takes them in before it prepares (or when it loses the
    /// race they explain, saving a read), and
    /// [`MentisDb::take_in_announced`] takes in what is left. So one busy
    /// chain never holds up the announcements of the others.
    pub fn take_in_appended(&self, object: &str, offset: u64, bytes: &[u8]) -> Result<usize, ToolError> {
        let found = self.resident_slot_of(|slot| slot.object == object);
        let Some((key, slot)) = found else { return self.catch_up_object(object) };
        let mut state = match slot.state.try_write() {
            Ok(state) => state,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => {
                if slot.announced.keep(offset, bytes, true) {
                    return Ok(0);
                }
                write_lock(&slot.state)
            }
        };
        if state.deleted {
            return Ok(0);
        }
        slot.announced.keep(offset, bytes, false);
        self.take_in_kept(&key, &slot, &mut state, true)
    }

    /// Takes in the announced bytes kept on busy chains
    /// ([`MentisDb::take_in_appended`]), waiting for each chain's lock. A
    /// host calls it after each batch of announcements (PostgreSQL's
    /// `Event::Told`), on a thread of its own so that the thread announcing
    /// never waits for a chain, and nothing announced stays unserved.
    /// Returns how many thoughts it took in; a refusal is reported after
    /// every chain was tried.
    pub fn take_in_announced(&self) -> Result<usize, ToolError> {
        let kept: Vec<_> = read_lock(&self.chains).iter().filter(|(_, slot)| !slot.announced.is_empty()).map(|(key, slot)| (key.clone(), slot.clone())).collect();
        let (mut added, mut refused) = (0, None);
        for (key, slot) in kept {
            let mut state = write_lock(&slot.state);
            if !state.deleted {
                match self.take_in_kept(&key, &slot, &mut state, true) {
                    Ok(n) => added += n,
                    Err(e) => refused = refused.or(Some(e)),
                }
            }
        }
        refused.map_or(Ok(added), Err)
    }

    /// Takes in the kept announcements that continue what this engine holds,
    /// in order, dropping those it holds already (its own appends). With
    /// `fill_gaps`, kept bytes past a gap (an announcement missed or too big
    /// to carry its bytes) make it read the store from what it holds.
    pub(super) fn take_in_kept(&self, key: &str, slot: &ChainSlot, state: &mut ChainState, fill_gaps: bool) -> Result<usize, ToolError> {
        let mut added = 0;
        loop {
            match slot.announced.next_after(state.byte_len) {
                Next::Continues(bytes) => match self.take_in_locked(key, state, &bytes) {
                    Ok(n) => added += n,
                    Err(e) => {
                        slot.announced.clear();
                        return Err(e);
                    }
                },
                Next::Gap if fill_gaps => {
                    slot.announced.clear();
                    return Ok(added + self.catch_up_locked(key, slot, state)?);
                }
                Next::Gap | Next::Nothing => return Ok(added),
            }
        }
    }

    /// Reads again the daemon-wide objects a shared store replaces as a
    /// whole (the skill log; with `daemon-tools`, the webhook registry):
    /// for a host whose notifications may have been missed (a listener that
    /// just connected or reconnected), so a registration another engine made
    /// meanwhile is not missed for good. Chains catch up on their own
    /// ([`MentisDb::catch_up`]).
    pub fn reload_daemon_wide_objects(&self) -> Result<(), ToolError> {
        self.reload_object(naming::SKILLS_LOG)?;
        #[cfg(feature = "daemon-tools")]
        self.reload_object(naming::WEBHOOKS_OBJECT)?;
        Ok(())
    }

    /// A shared store says `object` was replaced as a whole by some engine
    /// (this one too): a chain rewritten by a forget or a migration is read
    /// again, verified and served from the new copy; an edited agent
    /// registry is read again (activity rebuilt from the chain); a replaced
    /// skill log (a deletion) is replayed; the webhook registry is read
    /// again. Returns whether `object` is one
    /// this engine serves.
    pub fn reload_object(&self, object: &str) -> Result<bool, ToolError> {
        if object == naming::SKILLS_LOG {
            self.skills.reload(self.storage.as_ref())?;
            return Ok(true);
        }
        #[cfg(feature = "daemon-tools")]
        if object == naming::WEBHOOKS_OBJECT {
            self.webhooks.reload(self.storage.as_ref())?;
            return Ok(true);
        }
        let found = self.resident_slot_of(|slot| slot.object == object || slot.agents_object == object);
        let Some((key, slot)) = found else { return Ok(false) };
        let mut state = write_lock(&slot.state);
        if state.deleted {
            return Ok(false);
        }
        let refused = |e: VerifyError| ToolError::ChainRefused { chain_key: key.clone(), error: e };
        if object == slot.agents_object {
            let Some(bytes) = self.storage.read(object)? else { return Ok(true) };
            let mut registry = AgentRegistry::from_sidecar(&bytes).map_err(|e| ToolError::Storage(StorageError::io(object, e)))?;
            state.chain.thoughts().iter().for_each(|t| registry.observe(t));
            *state.chain.agents_mut() = registry;
            return Ok(true);
        }
        let Some(bytes) = self.storage.read(object)? else { return Ok(true) };
        let decoded = record::decode_chain_with(&bytes, self.config.parallelism.as_ref(), self.hasher).map_err(|e| refused(VerifyError::Record(e)))?;
        let byte_len = decoded.valid_len as u64;
        let agents = state.chain.agents().clone();
        let mut chain = Chain::load_with(decoded, agents, self.hasher, self.config.parallelism.as_ref()).map_err(refused)?;
        chain.set_embedding_provider(self.embedding_provider());
        let added = chain.len().saturating_sub(state.chain.len());
        state.chain = chain;
        state.byte_len = byte_len;
        // Appends that came with the rewrite are new here.
        let thoughts = state.chain.thoughts();
        self.notify_appended(&key, thoughts.range(thoughts.len() - added..));
        Ok(true)
    }

    /// Makes chain `key` hold its first `keep` thoughts followed by `tail`
    /// (thoughts of another copy of the chain: a daemon's records pulled by a
    /// replica, `crate::sync`), creating the chain in `format` when it does
    /// not exist. `tail` is verified as opening verifies a chain before
    /// anything is written. When the chain holds exactly `keep` thoughts the
    /// tail is appended (one sync); otherwise the object is replaced
    /// atomically. Returns `Ok(false)`, changing nothing, when the chain no
    /// longer holds `expect_len` thoughts (the caller raced a local append).
    pub fn replace_tail(&self, key: &str, format: ChainFormat, keep: usize, expect_len: usize, tail: record::DecodedChain) -> Result<bool, ToolError> {
        let slot = self.slot_for_write(key, Some(format))?;
        let mut state = write_lock(&slot.state);
        state.live()?;
        self.catch_up_locked(key, &slot, &mut state)?;
        if state.chain.len() != expect_len || keep > expect_len {
            return Ok(false);
        }
        let refused = |e: VerifyError| ToolError::ChainRefused { chain_key: key.to_string(), error: e };
        let added = tail.thoughts.len();
        let format = state.chain.format();
        if keep == state.chain.len() {
            state.chain.verify_extension(&tail).map_err(refused)?;
            let bytes: Vec<u8> = tail.thoughts.iter().flat_map(|t| record::encode_thought(format, t)).collect();
            self.storage.append_at(&slot.object, state.byte_len, &bytes)?;
            self.storage.sync(&slot.object)?;
            state.chain.extend_verified(tail).map_err(refused)?;
            state.byte_len += bytes.len() as u64;
        } else {
            let mut thoughts: crate::ThoughtList = state.chain.thoughts().range(..keep).cloned().collect();
            thoughts.extend(tail.thoughts);
            let mut bytes = record::encode_header(format, key);
            thoughts.iter().for_each(|t| bytes.extend_from_slice(&record::encode_thought(format, t)));
            let decoded = record::DecodedChain { format, chain_key: key.to_string(), thoughts, valid_len: bytes.len(), body_hash_mismatches: None, label_sets: Vec::new() };
            let mut chain = Chain::load_with(decoded, state.chain.agents().clone(), self.hasher, self.config.parallelism.as_ref()).map_err(refused)?;
            self.storage.write_atomic(&slot.object, &bytes)?;
            chain.set_embedding_provider(self.embedding_provider());
            state.chain = chain;
            state.byte_len = bytes.len() as u64;
        }
        let thoughts = state.chain.thoughts();
        self.notify_appended(key, thoughts.range(thoughts.len() - added..));
        Ok(true)
    }

    /// The new-chain half of [`MentisDb::catch_up_object`].
    fn load_announced_chain(&self, object: &str) -> Result<usize, ToolError> {
        if !naming::is_chain_object(object) {
            return Ok(0);
        }
        // A chain parked here: its observers heard of its first thoughts already.
        let parked = read_lock(&self.residency.parked).iter().find(|(_, p)| p.object == object).map(|(k, p)| (k.clone(), p.thought_count as usize));
        let (key, known) = match parked {
            Some(found) => found,
            None => match self.storage.read(object)?.as_deref().and_then(record::peek_chain_key) {
                Some(key) => (key, 0),
                None => return Ok(0),
            },
        };
        let mut chains = write_lock(&self.chains);
        if chains.contains_key(&key) {
            // Loaded meanwhile (a read or an append here): only catch up.
            drop(chains);
            return self.catch_up(&key);
        }
        let Some(slot) = self.load_chain(&mut chains, &key)? else { return Ok(0) };
        drop(chains);
        let added = {
            let state = read_lock(&slot.state);
            let thoughts = state.chain.thoughts();
            let new = thoughts.range(known.min(thoughts.len())..);
            let added = new.len();
            self.notify_appended(&key, new);
            added
        };
        drop(slot);
        self.enforce_budget(&key);
        Ok(added)
    }

    /// [`MentisDb::catch_up`] under the chain's write lock.
    pub(super) fn catch_up_locked(&self, key: &str, slot: &ChainSlot, state: &mut ChainState) -> Result<usize, ToolError> {
        let Some(bytes) = self.storage.read_from(&slot.object, state.byte_len)? else { return Ok(0) };
        self.take_in_locked(key, state, &bytes)
    }

    /// Takes in `bytes`, records another writer appended right after what
    /// this engine holds: verified as opening verifies, then served and told
    /// to the observers.
    fn take_in_locked(&self, key: &str, state: &mut ChainState, bytes: &[u8]) -> Result<usize, ToolError> {
        if bytes.is_empty() {
            return Ok(0);
        }
        let refused = |e: VerifyError| ToolError::ChainRefused { chain_key: key.to_string(), error: e };
        let suffix = record::decode_suffix(state.chain.format(), bytes).map_err(|e| refused(VerifyError::Record(e)))?;
        let valid_len = suffix.valid_len as u64;
        let added = state.chain.extend_verified(suffix).map_err(refused)?;
        state.byte_len += valid_len;
        // Another engine acknowledged these only after they were durable.
        let thoughts = state.chain.thoughts();
        self.notify_appended(key, thoughts.range(thoughts.len() - added..));
        Ok(added)
    }
}

/// Most announcements kept on one busy chain; past it the announcer waits
/// for the chain (bounds the memory a long-held chain can gather).
const MAX_KEPT: usize = 1024;

/// Bytes other engines appended to one chain, announced while the chain was
/// busy here: offset -> bytes, taken in by whoever next holds the chain.
#[derive(Debug, Default)]
pub(super) struct Announced {
    kept: Mutex<BTreeMap<u64, Vec<u8>>>,
}

/// What the kept announcements hold right after a chain's `byte_len`.
enum Next {
    /// Bytes that start exactly there.
    Continues(Vec<u8>),
    /// Only bytes that start past it.
    Gap,
    Nothing,
}

impl Announced {
    fn kept(&self) -> MutexGuard<'_, BTreeMap<u64, Vec<u8>>> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps `bytes` announced at `offset`; false when `bounded` and full.
    fn keep(&self, offset: u64, bytes: &[u8], bounded: bool) -> bool {
        let mut kept = self.kept();
        if bounded && kept.len() >= MAX_KEPT {
            return false;
        }
        kept.insert(offset, bytes.to_vec());
        true
    }

    fn is_empty(&self) -> bool {
        self.kept().is_empty()
    }

    fn clear(&self) {
        self.kept().clear();
    }

    /// Drops what ends at or before `byte_len` (held already) and takes the
    /// bytes that start at it.
    fn next_after(&self, byte_len: u64) -> Next {
        let mut kept = self.kept();
        while let Some(entry) = kept.first_entry() {
            let start = *entry.key();
            if start + entry.get().len() as u64 <= byte_len {
                entry.remove();
                continue;
            }
            if start == byte_len {
                return Next::Continues(entry.remove());
            }
            if start < byte_len {
                // Straddles what this engine holds: not record-aligned with it.
                entry.remove();
            }
            return Next::Gap;
        }
        Next::Nothing
    }
}
