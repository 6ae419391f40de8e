//! [`MentisDb`]: many chains over one [`Storage`], with the host's clock and
//! id source. Every tool of the dispatcher ends up here.
//!
//! Concurrency: each chain sits behind its own `RwLock`. An append holds the
//! write lock only while it validates, writes its bytes (no fsync) and
//! updates memory; it then releases the lock and calls [`Storage::sync`], so
//! readers never wait on a writer's fsync and concurrent appends can share
//! one fsync inside the backend (group commit). An append is acknowledged
//! (returns `Ok`) only after its `sync` returned. A host with an event loop
//! may instead write an append there and have a drain sync a batch of them
//! before their replies go out (`append_now.rs`).

use crate::agents::AgentRegistry;
use crate::chain::Chain;
use crate::error::{ToolError, VerifyError};
use crate::host::{format_uuid_v4, AppendObserver, Clock, IdSource};
use crate::keyed_hash::KeyedState;
use crate::limits;
use crate::naming;
use crate::record::{self, ChainFormat};
use crate::storage::{Storage, StorageError};
use crate::ranked::EmbeddingProvider;
use crate::thought::Thought;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// How many times [`MentisDb::slot_or_load`] reads a chain with no lock
/// before it reads it under the chain table's lock (when other chains keep
/// being parked or deleted during its reads).
const UNLOCKED_LOAD_TRIES: usize = 4;

mod append;
mod append_group;
mod append_now;
pub use append_now::{Busy, Drain, NotQueued, Queued, ReplyLater};
mod config;
mod embedding;
mod listing;
mod residency;
mod rewrites;
mod shared_store;
mod claims;
mod presence;
pub use claims::ClaimOutcome;
mod skills;
mod extract;
pub use config::{DbConfig, OpenReport, OpenedChain, RebuiltVectors, DEFAULT_DEDUP_SCAN_WINDOW};
pub use append_group::WriteCounts;
pub use residency::ResidencyReport;

#[derive(Debug)]
struct ChainState {
    chain: Chain,
    /// Bytes of the chain object, for rolling back a failed write.
    byte_len: u64,
    /// Set (under the write lock) when the chain was deleted: a writer that
    /// took the slot before the deletion finds it here and writes nothing.
    deleted: bool,
}

impl ChainState {
    fn new(chain: Chain, byte_len: u64) -> Self {
        ChainState { chain, byte_len, deleted: false }
    }

    /// `Err` when the chain was deleted since the caller found its slot.
    fn live(&self) -> Result<(), ToolError> {
        if self.deleted {
            return Err(ToolError::NotFound(format!("chain '{}' was deleted", self.chain.key())));
        }
        Ok(())
    }
}

#[derive(Debug)]
struct ChainSlot {
    object: String,
    agents_object: String,
    state: RwLock<ChainState>,
    /// When it was last used ([`MentisDb::touch`]): eviction parks the least recent.
    last_used: std::sync::atomic::AtomicU64,
    /// Appends waiting to be written together (`append_group.rs`).
    queue: append_group::AppendQueue,
    /// Appends written on an event loop, waiting for their sync (`append_now.rs`).
    durable: append_now::DurableQueue,
    /// Another engine's appends announced while the chain was busy, not yet
    /// taken in (`shared_store.rs`).
    announced: shared_store::Announced,
}

impl ChainSlot {
    fn new(object: String, agents_object: String, state: ChainState) -> Self {
        ChainSlot { object, agents_object, state: RwLock::new(state), last_used: Default::default(), queue: Default::default(), durable: Default::default(), announced: Default::default() }
    }
}

fn write_lock<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

fn read_lock<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

/// The engine: chains, registries and skills over one storage backend.
pub struct MentisDb {
    storage: Arc<dyn Storage>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdSource>,
    config: DbConfig,
    /// Key of every chain's lookup maps, drawn from the host's id source at open.
    hasher: KeyedState,
    chains: RwLock<BTreeMap<String, Arc<ChainSlot>>>,
    /// Chain objects that failed decoding or verification, by object name.
    refused: RwLock<BTreeMap<String, (String, VerifyError)>>,
    pub(crate) skills: crate::skills::SkillStore,
    embedder: RwLock<Option<Arc<dyn EmbeddingProvider>>>,
    /// The host's language model for `mentisdb_extract_memories`, if any.
    pub(crate) chat_model: RwLock<Option<Arc<dyn crate::chat_model::ChatModel>>>,
    /// The host's checkpoint key and each chain's latest checkpoint (`proofs.rs`).
    pub(crate) checkpoints: crate::checkpoint::Checkpoints,
    /// Webhook registrations and delivery cursors (`webhooks.rs`; a
    /// daemon's: without `daemon-tools` there is none).
    #[cfg(feature = "daemon-tools")]
    webhooks: crate::webhooks::WebhookStore,
    /// Told of every durable thought ([`MentisDb::add_observer`]).
    observers: RwLock<Vec<Arc<dyn AppendObserver>>>,
    /// Chains parked under the memory budget (`residency.rs`).
    residency: residency::Residency,
    /// How many times a chain left the chain table (parked or deleted): a
    /// chain read from storage with no lock held is served only if none left
    /// meanwhile ([`MentisDb::slot_or_load`]).
    unloads: std::sync::atomic::AtomicU64,
    /// Group writes and lost races ([`MentisDb::write_counts`]).
    write_counters: append_group::WriteCounters,
    /// The latest time the host's clock gave this engine: appends and
    /// leases never see time run backwards (a clock stepped back by NTP).
    latest_ms: std::sync::atomic::AtomicI64,
}

impl std::fmt::Debug for MentisDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MentisDb").field("storage", &self.storage).field("config", &self.config).finish_non_exhaustive()
    }
}

impl MentisDb {
    /// Opens every chain in `storage`, cutting torn tails and verifying each
    /// chain. A chain that fails verification is refused (reported, and its
    /// key answers with [`ToolError::ChainRefused`]) while the others serve.
    pub fn open(storage: Arc<dyn Storage>, clock: Arc<dyn Clock>, ids: Arc<dyn IdSource>, config: DbConfig) -> Result<(MentisDb, OpenReport), StorageError> {
        let mut report = OpenReport::default();
        let hasher = KeyedState::from_key(ids.hash_key());
        let mut chains = BTreeMap::new();
        let mut refused = BTreeMap::new();
        // Under a memory budget, chains past it are verified and then parked.
        let residency = residency::Residency::default();
        let mut resident_bytes = 0u64;
        for object in storage.list(naming::CHAINS_PREFIX)? {
            if !naming::is_chain_object(&object) {
                continue;
            }
            let bytes = storage.read(&object)?.unwrap_or_default();
            let decoded = match record::decode_chain_with(&bytes, config.parallelism.as_ref(), hasher) {
                Ok(d) => d,
                Err(e) => {
                    let key = record::peek_chain_key(&bytes).unwrap_or_else(|| object.clone());
                    report.refused.push((key.clone(), e.to_string()));
                    refused.insert(object, (key, VerifyError::Record(e)));
                    continue;
                }
            };
            let key = decoded.chain_key.clone();
            if naming::chain_object(&key, decoded.format) != object {
                report.refused.push((object.clone(), format!("object does not match the name derived from its chain key '{key}'")));
                continue;
            }
            let torn = decoded.torn_tail_bytes(bytes.len());
            if torn > 0 {
                storage.truncate(&object, decoded.valid_len as u64)?;
            }
            let agents_object = naming::agents_object(&key);
            let agents = match storage.read(&agents_object)? {
                Some(b) => AgentRegistry::from_sidecar(&b).unwrap_or_else(|e| {
                    report.refused.push((agents_object.clone(), format!("{e}; registry edits are ignored, activity is rebuilt from the chain")));
                    AgentRegistry::default()
                }),
                None => AgentRegistry::default(),
            };
            let byte_len = decoded.valid_len as u64;
            match Chain::load_with(decoded, agents, hasher, config.parallelism.as_ref()) {
                Ok(chain) => {
                    report.chains.push(OpenedChain { chain_key: key.clone(), thought_count: chain.len(), torn_tail_bytes: torn, storage_location: storage.location(&object) });
                    resident_bytes += residency::estimate(byte_len, chain.len());
                    if config.max_resident_bytes.is_some_and(|budget| resident_bytes > budget) {
                        let parked = residency::Parked { object, format: chain.format(), thought_count: chain.len() as u64, agent_count: chain.agents().len() as u64 };
                        write_lock(&residency.parked).insert(key, parked);
                        continue;
                    }
                    let slot = ChainSlot::new(object, agents_object, ChainState::new(chain, byte_len));
                    chains.insert(key, Arc::new(slot));
                }
                Err(e) => {
                    report.refused.push((key.clone(), e.to_string()));
                    refused.insert(object, (key, e));
                }
            }
        }
        let (skills, skills_report) = crate::skills::SkillStore::open(storage.as_ref())?;
        report.refused.extend(skills_report.problems.into_iter().map(|p| (naming::SKILLS_LOG.to_string(), p)));
        #[cfg(feature = "daemon-tools")]
        let webhooks = {
            let (webhooks, problem) = crate::webhooks::WebhookStore::open(storage.as_ref())?;
            report.refused.extend(problem.map(|p| (naming::WEBHOOKS_OBJECT.to_string(), p)));
            webhooks
        };
        let db = MentisDb {
            storage,
            clock,
            ids,
            config,
            hasher,
            chains: RwLock::new(chains),
            refused: RwLock::new(refused),
            skills,
            embedder: RwLock::new(None),
            chat_model: RwLock::new(None),
            checkpoints: Default::default(),
            #[cfg(feature = "daemon-tools")]
            webhooks,
            observers: RwLock::new(Vec::new()),
            residency,
            unloads: Default::default(),
            write_counters: Default::default(),
            latest_ms: std::sync::atomic::AtomicI64::new(i64::MIN),
        };
        Ok((db, report))
    }

    /// The daemon settings.
    pub fn config(&self) -> &DbConfig {
        &self.config
    }

    /// The storage backend.
    pub fn storage(&self) -> &dyn Storage {
        self.storage.as_ref()
    }

    /// The current time as the host reports it, in epoch milliseconds,
    /// never earlier than a time this engine already read.
    pub fn now_millis(&self) -> i64 {
        let now = self.clock.now_millis();
        let before = self.latest_ms.fetch_max(now, std::sync::atomic::Ordering::SeqCst);
        now.max(before)
    }

    /// A fresh UUID from the host's id source.
    pub fn fresh_id(&self) -> String {
        format_uuid_v4(self.ids.next_id_bytes())
    }

    /// Resolves an optional `chain_key` argument (omitted or empty: the default chain).
    pub fn resolve_key(&self, chain_key: Option<&str>) -> Result<String, ToolError> {
        let invalid = |m: limits::LimitError| ToolError::InvalidArguments { tool: "this call".into(), message: format!("invalid chain_key: {m}") };
        // Control characters are refused even where trimming would drop them.
        if chain_key.is_some_and(|k| k.chars().any(char::is_control)) {
            return Err(invalid(limits::LimitError::ControlCharacters { field: "chain_key" }));
        }
        match chain_key.map(str::trim).filter(|k| !k.is_empty()) {
            None => Ok(self.config.default_chain_key.clone()),
            Some(k) => {
                limits::check_key("chain_key", k).map_err(invalid)?;
                Ok(k.to_string())
            }
        }
    }

    fn refused_error(&self, key: &str) -> Option<ToolError> {
        let refused = read_lock(&self.refused);
        if refused.is_empty() {
            return None;
        }
        [ChainFormat::Binary, ChainFormat::Jsonl]
            .into_iter()
            .find_map(|f| refused.get(&naming::chain_object(key, f)))
            .map(|(_, e)| ToolError::ChainRefused { chain_key: key.to_string(), error: e.clone() })
    }

    fn slot(&self, key: &str) -> Option<Arc<ChainSlot>> {
        let slot = self.peek_slot(key)?;
        self.touch(&slot);
        Some(slot)
    }

    /// The resident slot of `key` without counting it as a use (listings).
    fn peek_slot(&self, key: &str) -> Option<Arc<ChainSlot>> {
        read_lock(&self.chains).get(key).cloned()
    }

    /// Runs `f` with a read lock on chain `key`; `None` when the chain does
    /// not exist (a chain another engine created on a shared store is loaded).
    pub fn with_chain<R>(&self, key: &str, f: impl FnOnce(Option<&Chain>) -> R) -> Result<R, ToolError> {
        // A refused chain never has a slot.
        match self.slot_or_load(key)? {
            Some(slot) => {
                let guard = read_lock(&slot.state);
                Ok(f(Some(&guard.chain)))
            }
            None => Ok(f(None)),
        }
    }

    /// Runs `f` with a read lock on chain `key` for a read tool: a chain that
    /// does not exist is [`ToolError::NotFound`] (`chain 'k' not found`),
    /// except the daemon's default chain, which reads as empty (`f` gets
    /// `None`) until its first write. Writes use [`MentisDb::with_chain`].
    pub fn read_chain<R>(&self, key: &str, f: impl FnOnce(Option<&Chain>) -> R) -> Result<R, ToolError> {
        match self.slot_or_load(key)? {
            Some(slot) => {
                let guard = read_lock(&slot.state);
                Ok(f(Some(&guard.chain)))
            }
            None if key == self.config.default_chain_key => Ok(f(None)),
            None => Err(ToolError::NotFound(format!("chain '{key}' not found"))),
        }
    }

    /// [`MentisDb::read_chain`] where nothing may wait: `f` runs, with the
    /// chain and its size in storage (bytes), only if chain `key` is in
    /// memory and neither it nor the table of chains is held or awaited by
    /// a writer; otherwise `None`, and nothing was loaded.
    pub(crate) fn read_chain_now<R>(&self, key: &str, f: impl FnOnce(&Chain, u64) -> R) -> Option<R> {
        let slot = self.chains.try_read().ok()?.get(key).cloned()?;
        let state = slot.state.try_read().ok()?;
        state.live().ok()?;
        self.touch(&slot);
        Some(f(&state.chain, state.byte_len))
    }

    /// Whether chain `key` exists (is served or stored); a refused chain is an error.
    pub fn chain_exists(&self, key: &str) -> Result<bool, ToolError> {
        Ok(self.slot_or_load(key)?.is_some())
    }

    /// Builds every chain's query indices (text filter, ranked retrieval) now
    /// instead of on the first query, a few thousand thoughts at a time so
    /// appends are never held up for long. A host calls this in the
    /// background after opening; queries work (and catch up) meanwhile.
    pub fn warm_indexes(&self) {
        // Lexical indexing takes ~10 us a thought; a model may take
        // milliseconds per text, so steps are then much shorter.
        let step = if self.embedding_provider().is_some() { 4 } else { 4096 };
        // Resident chains only: warming must not load parked ones.
        let resident: Vec<String> = read_lock(&self.chains).keys().cloned().collect();
        for key in resident {
            while !self.warm_chain(&key, step) {}
        }
    }

    /// Adds up to `max` of chain `key`'s thoughts its query indices do not
    /// cover yet (embedding them when there is a provider) under the chain's
    /// read lock, so a query or an append of the chain waits for at most one
    /// step. Returns whether the indices now cover the whole chain; a chain
    /// that is not resident (or was deleted) is left alone (`true`). A host
    /// calls it in the background after appends, so that queries find the
    /// work done ([`MentisDb::unindexed_texts`] lets it embed ahead).
    pub fn warm_chain(&self, key: &str, max: usize) -> bool {
        let Some(slot) = self.peek_slot(key) else { return true };
        let state = read_lock(&slot.state);
        state.deleted || state.chain.warm_indexes(max)
    }

    /// How the host runs independent jobs ([`DbConfig::parallelism`]).
    pub(crate) fn parallelism(&self) -> &dyn crate::host::Parallelism {
        self.config.parallelism.as_ref()
    }

    /// Returns the slot for `key`, creating the chain (header written and
    /// synced) in `format` or the default format when it does not exist.
    fn slot_for_write(&self, key: &str, format: Option<ChainFormat>) -> Result<Arc<ChainSlot>, ToolError> {
        // Resident, parked here, or created by another engine on a shared store since this one opened.
        if let Some(slot) = self.slot_or_load(key)? {
            return Ok(slot);
        }
        let mut chains = write_lock(&self.chains);
        if let Some(slot) = chains.get(key) {
            return Ok(slot.clone());
        }
        // A new chain's key names its file and is written in every record:
        // a credential in it is refused, as in any other id or label (a
        // chain that already has one keeps being served).
        if self.config.redact_secrets {
            crate::redact::refuse_secret("chain_key", key)?;
        }
        let format = format.unwrap_or(self.config.default_format);
        let object = naming::chain_object(key, format);
        let header = record::encode_header(format, key);
        match self.storage.append_at(&object, 0, &header).and_then(|_| self.storage.sync(&object)) {
            Ok(()) => {}
            // Another engine created it at this moment: serve that one.
            Err(StorageError::Conflict { .. }) => return self.load_chain(&mut chains, key)?.ok_or_else(|| StorageError::Unavailable(format!("chain '{key}' was created and removed at once")).into()),
            Err(e) => {
                let _ = self.storage.remove(&object);
                return Err(e.into());
            }
        }
        let mut chain = Chain::with_hasher(key, format, self.hasher);
        chain.set_embedding_provider(self.embedding_provider());
        let slot = Arc::new(ChainSlot::new(object, naming::agents_object(key), ChainState::new(chain, header.len() as u64)));
        chains.insert(key.to_string(), slot.clone());
        drop(chains);
        self.enforce_budget(key);
        Ok(slot)
    }

    /// The slot of chain `key`, loading it from storage when another engine
    /// on a shared store created it after this one opened. `None` when the
    /// chain exists nowhere.
    fn slot_or_load(&self, key: &str) -> Result<Option<Arc<ChainSlot>>, ToolError> {
        if let Some(slot) = self.slot(key) {
            return Ok(Some(slot));
        }
        if let Some(e) = self.refused_error(key) {
            return Err(e);
        }
        for _ in 0..UNLOCKED_LOAD_TRIES {
            let unloads = self.unloads.load(Ordering::SeqCst);
            // Read and verify with no lock held: every other chain keeps serving meanwhile.
            // What fails here is read again under the lock below before it is
            // refused: this engine may be creating the chain right now (a
            // file store shows the new object empty until its header lands).
            let Ok(stored) = self.read_stored_chain(key, false) else { break };
            let mut chains = write_lock(&self.chains);
            if let Some(slot) = chains.get(key) {
                return Ok(Some(slot.clone()));
            }
            if self.unloads.load(Ordering::SeqCst) != unloads {
                // A chain was parked or deleted while this one was read: it may be
                // this one, newer (parked after appends) or gone; read it again.
                continue;
            }
            let Some((object, state)) = stored else { return Ok(None) };
            let slot = self.serve_loaded(&mut chains, key, object, state);
            drop(chains);
            self.enforce_budget(key);
            return Ok(Some(slot));
        }
        // Chains keep leaving the table (heavy parking): load under its lock, as before.
        let mut chains = write_lock(&self.chains);
        if let Some(slot) = chains.get(key) {
            return Ok(Some(slot.clone()));
        }
        let loaded = self.load_chain(&mut chains, key)?;
        drop(chains);
        if loaded.is_some() {
            self.enforce_budget(key);
        }
        Ok(loaded)
    }

    /// Loads, verifies and serves the stored object of chain `key` (in
    /// either format), if there is one, with the chain table locked by the
    /// caller; a damaged one is refused.
    fn load_chain(&self, chains: &mut BTreeMap<String, Arc<ChainSlot>>, key: &str) -> Result<Option<Arc<ChainSlot>>, ToolError> {
        Ok(self.read_stored_chain(key, true)?.map(|(object, state)| self.serve_loaded(chains, key, object, state)))
    }

    /// Reads and verifies the stored object of chain `key` (in either
    /// format), if there is one: its object name and state, not yet served.
    /// A damaged one is an error, and with `remember` refused (remembered,
    /// and no longer parked): only a read under the chain table's lock may
    /// refuse, since a chain being created holds that lock.
    fn read_stored_chain(&self, key: &str, remember: bool) -> Result<Option<(String, ChainState)>, ToolError> {
        for format in [ChainFormat::Binary, ChainFormat::Jsonl] {
            let object = naming::chain_object(key, format);
            let Some(bytes) = self.storage.read(&object)? else { continue };
            let refuse = |error: VerifyError| {
                if remember {
                    write_lock(&self.refused).insert(object.clone(), (key.to_string(), error.clone()));
                    write_lock(&self.residency.parked).remove(key);
                }
                ToolError::ChainRefused { chain_key: key.to_string(), error }
            };
            let decoded = record::decode_chain_with(&bytes, self.config.parallelism.as_ref(), self.hasher).map_err(|e| refuse(VerifyError::Record(e)))?;
            let agents = match self.storage.read(&naming::agents_object(key))? {
                Some(b) => AgentRegistry::from_sidecar(&b).unwrap_or_default(),
                None => AgentRegistry::default(),
            };
            // A torn tail of another writer is left alone: its records arrive complete.
            let byte_len = decoded.valid_len as u64;
            let mut chain = Chain::load_with(decoded, agents, self.hasher, self.config.parallelism.as_ref()).map_err(refuse)?;
            chain.set_embedding_provider(self.embedding_provider());
            return Ok(Some((object, ChainState::new(chain, byte_len))));
        }
        Ok(None)
    }

    /// Serves a chain [`MentisDb::read_stored_chain`] read (the chain table locked by the caller).
    fn serve_loaded(&self, chains: &mut BTreeMap<String, Arc<ChainSlot>>, key: &str, object: String, state: ChainState) -> Arc<ChainSlot> {
        let slot = Arc::new(ChainSlot::new(object, naming::agents_object(key), state));
        self.touch(&slot);
        chains.insert(key.to_string(), slot.clone());
        write_lock(&self.residency.parked).remove(key);
        slot
    }

    /// The key of every chain's lookup maps (drawn from the id source at open).
    pub(crate) fn map_hasher(&self) -> KeyedState {
        self.hasher
    }

    /// Registers `observer` to be told of every thought that becomes durable
    /// from now on, and of deleted chains (see [`AppendObserver`]).
    pub fn add_observer(&self, observer: Arc<dyn AppendObserver>) {
        write_lock(&self.observers).push(observer);
    }

    pub(crate) fn notify_presence(&self, presence: &crate::presence::Presence) {
        for observer in read_lock(&self.observers).iter() {
            observer.presence_updated(presence);
        }
    }

    fn notify_appended<'t>(&self, key: &str, thoughts: impl Iterator<Item = &'t Thought>) {
        let observers = read_lock(&self.observers);
        for thought in thoughts {
            for observer in observers.iter() {
                observer.appended(key, thought);
            }
        }
    }

    /// The webhook registry: a delivering host installs its URL check
    /// ([`crate::webhooks::WebhookStore::set_targets`]), reads what to
    /// deliver and advances the cursors through it.
    #[cfg(feature = "daemon-tools")]
    pub fn webhooks(&self) -> &crate::webhooks::WebhookStore {
        &self.webhooks
    }

    /// Makes every served chain object and the skill log durable now
    /// (0.10's `POST /v1/admin/flush`). Every acknowledged append already
    /// is; this only re-asserts it, e.g. before a file-level copy. Returns
    /// how many chains were synced.
    pub fn flush_all(&self) -> Result<usize, StorageError> {
        let objects: Vec<String> = read_lock(&self.chains).values().map(|slot| slot.object.clone()).collect();
        for object in &objects {
            self.storage.sync(object)?;
        }
        if self.storage.read(naming::SKILLS_LOG)?.is_some() {
            self.storage.sync(naming::SKILLS_LOG)?;
        }
        Ok(objects.len())
    }
}
