//! [`SkillStore`]: the registry persisted as an append-only log through the
//! [`Storage`] trait. Opening replays the log once into a [`SkillRegistry`]
//! (linear in the log size); afterwards every read is served from memory.
//!
//! A write validates, appends one framed event, calls `sync` and only then
//! updates memory, all under the registry's write lock; when the append or
//! the sync fails the object is cut back and the registry is unchanged.
//! On a store shared by several engines, a write first takes in what the
//! others appended ([`SkillStore::catch_up`], also run when the store
//! announces an append) and appends only at the length it read
//! (`Storage::append_at`); a replaced log (a deletion) is read again
//! ([`SkillStore::reload`]).

use super::error::SkillError;
use super::log::{decode_log, LOG_MAGIC};
use super::registry::{SkillRegistry, SkillWrite};
use crate::naming::SKILLS_LOG;
use crate::storage::{Storage, StorageError};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

#[derive(Debug, Default)]
struct State {
    registry: SkillRegistry,
    /// Bytes of the log object that hold valid events (0: not yet created).
    byte_len: u64,
    /// Set when the log is damaged: writes are refused so nothing is appended after garbage.
    read_only: Option<String>,
}

/// What opening the store found, for the host to log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillOpenReport {
    /// Events replayed.
    pub events: usize,
    /// Bytes of a torn tail that were cut.
    pub torn_tail_bytes: usize,
    /// A problem that made the registry read-only, or events that were skipped.
    pub problems: Vec<String>,
}

/// The persisted, daemon-wide skill registry.
#[derive(Debug, Default)]
pub struct SkillStore {
    state: RwLock<State>,
}

impl SkillStore {
    /// Loads the registry by replaying [`SKILLS_LOG`], cutting a torn tail.
    pub fn open(storage: &dyn Storage) -> Result<(Self, SkillOpenReport), StorageError> {
        let bytes = storage.read(SKILLS_LOG)?.unwrap_or_default();
        let (state, report) = Self::replay(&bytes);
        if state.read_only.is_none() && report.torn_tail_bytes > 0 {
            storage.truncate(SKILLS_LOG, state.byte_len)?;
        }
        Ok((SkillStore { state: RwLock::new(state) }, report))
    }

    /// The registry a whole log holds (nothing is written).
    fn replay(bytes: &[u8]) -> (State, SkillOpenReport) {
        let decoded = decode_log(bytes);
        let mut report = SkillOpenReport { events: decoded.events.len(), ..Default::default() };
        let mut state = State { byte_len: decoded.valid_len as u64, ..Default::default() };
        match decoded.corruption {
            Some(problem) => {
                let msg = format!("{problem}; {} events before it are served, uploads and status changes are refused until the log is repaired", decoded.events.len());
                report.problems.push(msg.clone());
                state.read_only = Some(msg);
            }
            None => report.torn_tail_bytes = bytes.len() - decoded.valid_len,
        }
        for ev in decoded.events {
            if let Err(e) = state.registry.apply(ev, None) {
                report.problems.push(format!("skipped a skill event: {e}"));
            }
        }
        (state, report)
    }

    /// Takes in the events other engines on a shared store appended to the
    /// log since this one last read it (applied as at open). Returns how
    /// many. With one writer there are none.
    pub fn catch_up(&self, storage: &dyn Storage) -> Result<usize, StorageError> {
        Self::catch_up_locked(storage, &mut self.write_state())
    }

    fn catch_up_locked(storage: &dyn Storage, state: &mut State) -> Result<usize, StorageError> {
        let Some(tail) = storage.read_from(SKILLS_LOG, state.byte_len)? else { return Ok(0) };
        if tail.is_empty() {
            return Ok(0);
        }
        // The frames after the magic decode as a log of their own.
        let magic = if state.byte_len == 0 { 0 } else { LOG_MAGIC.len() };
        let decoded = decode_log(&[&LOG_MAGIC[..magic], &tail].concat());
        let taken = decoded.events.len();
        for ev in decoded.events {
            // Applied by the engine that wrote it; skipped here as at open if not.
            let _ = state.registry.apply(ev, None);
        }
        state.byte_len += (decoded.valid_len - magic) as u64;
        Ok(taken)
    }

    /// Reads the whole log again: another engine replaced it (a deletion).
    pub fn reload(&self, storage: &dyn Storage) -> Result<(), StorageError> {
        let bytes = storage.read(SKILLS_LOG)?.unwrap_or_default();
        *self.write_state() = Self::replay(&bytes).0;
        Ok(())
    }

    fn read_state(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write_state(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` over the registry under a read lock.
    pub fn read<R>(&self, f: impl FnOnce(&SkillRegistry) -> R) -> R {
        f(&self.read_state().registry)
    }

    /// Validates and persists one event: `prepare` sees the registry under
    /// the write lock and returns the event (and the upload's parsed
    /// document, when it has one) or that nothing is to be written. Returns
    /// `view` of the registry after the event was made durable and applied.
    pub fn commit<R>(
        &self,
        storage: &dyn Storage,
        prepare: impl FnOnce(&SkillRegistry) -> Result<SkillWrite, SkillError>,
        view: impl FnOnce(&SkillRegistry, &str) -> R,
    ) -> Result<R, SkillError> {
        let mut state = self.write_state();
        if let Some(why) = &state.read_only {
            return Err(SkillError::ReadOnly(why.clone()));
        }
        // Another engine on a shared store may have written since: judge on the latest registry.
        Self::catch_up_locked(storage, &mut state)?;
        let (event, parsed) = match prepare(&state.registry)? {
            SkillWrite::Event(event, parsed) => (event, parsed),
            // Every applied event was durable before it was applied.
            SkillWrite::Unchanged { skill_id } => return Ok(view(&state.registry, &skill_id)),
        };
        let mut bytes = Vec::new();
        if state.byte_len == 0 {
            bytes.extend_from_slice(LOG_MAGIC);
        }
        bytes.extend(event.encode());
        let rollback = |state: &State| {
            let _ = storage.truncate(SKILLS_LOG, state.byte_len);
        };
        match storage.append_at(SKILLS_LOG, state.byte_len, &bytes) {
            Ok(()) => {}
            // Another engine wrote between the catch-up and this append: nothing was written.
            Err(StorageError::Conflict { .. }) => {
                Self::catch_up_locked(storage, &mut state)?;
                return Err(SkillError::Storage(StorageError::Unreachable("the skill registry changed through another daemon at the same moment; retry".into())));
            }
            Err(e) => {
                rollback(&state);
                return Err(e.into());
            }
        }
        if let Err(e) = storage.sync(SKILLS_LOG) {
            rollback(&state);
            return Err(SkillError::Storage(StorageError::Unavailable(format!("the skill event was written but could not be made durable, so it was withdrawn: {e}"))));
        }
        state.byte_len += bytes.len() as u64;
        let skill_id = event.skill_id().to_string();
        state.registry.apply(event, parsed).map_err(|e| SkillError::InvalidField { field: "skill_id", message: e.to_string() })?;
        Ok(view(&state.registry, &skill_id))
    }

    /// The log as committed, read under the registry's read lock (no event
    /// is half-written meanwhile); `None` when there is none. For backups.
    pub(crate) fn copy_log(&self, storage: &dyn Storage) -> Result<Option<Vec<u8>>, StorageError> {
        let state = self.read_state();
        Ok(storage.read(SKILLS_LOG)?.map(|mut log| {
            log.truncate(state.byte_len as usize);
            log
        }).filter(|log| !log.is_empty()))
    }

    /// Deletes skill `skill_id` for good: the log is rewritten (with
    /// `write_atomic`) holding every other skill's events byte for byte and
    /// none of this one's, so no version of it is left in storage, and the
    /// id may be uploaded again as a new skill. `view` reads the skill as it
    /// was just before (the reply names what was deleted). Linear in the
    /// log size; deletions are rare.
    pub fn delete<R>(&self, storage: &dyn Storage, skill_id: &str, view: impl FnOnce(&SkillRegistry) -> R) -> Result<R, SkillError> {
        let mut state = self.write_state();
        if let Some(why) = &state.read_only {
            return Err(SkillError::ReadOnly(why.clone()));
        }
        Self::catch_up_locked(storage, &mut state)?;
        state.registry.require(skill_id)?;
        let before = view(&state.registry);
        let bytes = storage.read(SKILLS_LOG)?.unwrap_or_default();
        let decoded = decode_log(&bytes[..(state.byte_len as usize).min(bytes.len())]);
        let kept: Vec<_> = decoded.events.into_iter().filter(|ev| ev.skill_id() != skill_id).collect();
        let mut log = LOG_MAGIC.to_vec();
        for ev in &kept {
            log.extend(ev.encode());
        }
        storage.write_atomic(SKILLS_LOG, &log)?;
        let mut registry = SkillRegistry::default();
        for ev in kept {
            // Every kept event applied before; a failure here would mean the
            // registry and its log disagreed, and the log is the truth.
            let _ = registry.apply(ev, None);
        }
        state.registry = registry;
        state.byte_len = log.len() as u64;
        Ok(before)
    }
}
