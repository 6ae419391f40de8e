//! [`MentisDb`]: many chains over one [`Storage`], with the host's clock and
//! id source. Every tool of the dispatcher ends up here.
//!
//! Concurrency: each chain sits behind its own `RwLock`. An append holds the
//! write lock only while it validates, writes its bytes (no fsync) and
//! updates memory; it then releases the lock and calls [`Storage::sync`], so
//! readers never wait on a writer's fsync and concurrent appends can share
//! one fsync inside the backend (group commit). An append is acknowledged
//! (returns `Ok`) only after its `sync` returned.

use crate::agents::AgentRegistry;
use crate::chain::{Appended, Chain, NewThought, Prepared};
use crate::error::{AgentError, AppendError, ToolError, VerifyError};
use crate::host::{format_uuid_v4, AppendObserver, Clock, IdSource, Parallelism, Sequential};
use crate::error::ImportError;
use crate::keyed_hash::KeyedState;
use crate::limits;
use crate::naming;
use crate::record::{self, ChainFormat};
use crate::storage::{Storage, StorageError};
use crate::ranked::EmbeddingProvider;
use crate::thought::Thought;
use crate::timestamp::format_rfc3339_millis;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

mod residency;
pub use residency::ResidencyReport;

/// Daemon-level settings.
#[derive(Debug, Clone)]
pub struct DbConfig {
    /// Chain used when a call omits `chain_key`.
    pub default_chain_key: String,
    /// Format of chains created without an explicit `storage_adapter`.
    pub default_format: ChainFormat,
    /// Where opening decodes and hashes chain records ([`Sequential`] unless
    /// the host offers threads).
    pub parallelism: Arc<dyn Parallelism>,
    /// Replace credentials in appended thoughts with `[REDACTED:<kind>]`
    /// before hashing (see `redact/`); on by default.
    pub redact_secrets: bool,
    /// Append-time dedup (MentisDB 0.10's `MENTISDB_DEDUP_THRESHOLD`): when
    /// set, a new thought whose content has at least this Jaccard word
    /// similarity (0.0..=1.0) to one of the last [`DbConfig::dedup_scan_window`]
    /// thoughts gets a `Supersedes` relation to the most similar one
    /// (`chain/dedup.rs`). `None` (the default) turns it off.
    pub dedup_threshold: Option<f64>,
    /// How many of the latest thoughts dedup compares with (default 64, at least 1).
    pub dedup_scan_window: usize,
    /// Memory budget for resident chains, in bytes (estimated, see
    /// `db/residency.rs`): past it, the least recently used chains nobody is
    /// using are parked (dropped from memory, loaded again on next use).
    /// `None` (the default): every chain stays resident.
    pub max_resident_bytes: Option<u64>,
}

/// Default of [`DbConfig::dedup_scan_window`] (MentisDB 0.10's).
pub const DEFAULT_DEDUP_SCAN_WINDOW: usize = 64;

impl Default for DbConfig {
    fn default() -> Self {
        DbConfig { default_chain_key: "borganism-brain".to_string(), default_format: ChainFormat::Binary, parallelism: Arc::new(Sequential), redact_secrets: true, dedup_threshold: None, dedup_scan_window: DEFAULT_DEDUP_SCAN_WINDOW, max_resident_bytes: None }
    }
}

/// What [`MentisDb::rebuild_vectors`] left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RebuiltVectors {
    /// Thoughts in the chain.
    pub thoughts: usize,
    /// Thoughts with a vector.
    pub indexed: usize,
    /// The provider's name and its vectors' length, when there is a provider.
    pub model: Option<(String, usize)>,
}

/// What opening the store found, for the host to log.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpenReport {
    /// Chains opened and verified: key, thought count, torn-tail bytes cut.
    pub chains: Vec<OpenedChain>,
    /// Objects refused: name or chain key, and why.
    pub refused: Vec<(String, String)>,
}

/// One chain opened at startup.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenedChain {
    /// The chain's key.
    pub chain_key: String,
    /// Thoughts verified and served.
    pub thought_count: usize,
    /// Bytes of a torn tail cut from the chain object (0 when none).
    pub torn_tail_bytes: usize,
    /// Where the backend keeps the chain object (e.g. a file path), for logs.
    pub storage_location: String,
}

/// One chain as [`MentisDb::copy_chain`] copied it under its lock (for `backup.rs`).
pub(crate) struct ChainCopy {
    pub(crate) object: String,
    pub(crate) bytes: Vec<u8>,
    pub(crate) agents: Option<(String, Vec<u8>)>,
    pub(crate) thought_count: u64,
    pub(crate) head_hash: Option<String>,
}

/// How many times one append re-bases onto another writer's appends before
/// it gives up (each re-base means another engine won the race meanwhile).
const MAX_REBASES: usize = 64;

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
}

impl ChainSlot {
    fn new(object: String, agents_object: String, state: ChainState) -> Self {
        ChainSlot { object, agents_object, state: RwLock::new(state), last_used: Default::default() }
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
    /// Webhook registrations and delivery cursors (`webhooks.rs`).
    webhooks: crate::webhooks::WebhookStore,
    /// Told of every durable thought ([`MentisDb::add_observer`]).
    observers: RwLock<Vec<Arc<dyn AppendObserver>>>,
    /// Chains parked under the memory budget (`residency.rs`).
    residency: residency::Residency,
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
            let decoded = match record::decode_chain_with(&bytes, config.parallelism.as_ref()) {
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
        let (webhooks, webhooks_problem) = crate::webhooks::WebhookStore::open(storage.as_ref())?;
        report.refused.extend(webhooks_problem.map(|p| (naming::WEBHOOKS_OBJECT.to_string(), p)));
        let db = MentisDb { storage, clock, ids, config, hasher, chains: RwLock::new(chains), refused: RwLock::new(refused), skills, embedder: RwLock::new(None), chat_model: RwLock::new(None), checkpoints: Default::default(), webhooks, observers: RwLock::new(Vec::new()), residency };
        Ok((db, report))
    }

    /// Registers (or with `None` clears) the host's embedding provider.
    /// Every thought of every open chain is embedded now, and every later
    /// thought when it is committed; ranked search then fuses vector
    /// similarity with the lexical score (`backend: "hybrid"`).
    pub fn set_embedding_provider(&self, provider: Option<Arc<dyn EmbeddingProvider>>) {
        *write_lock(&self.embedder) = provider.clone();
        let slots: Vec<Arc<ChainSlot>> = read_lock(&self.chains).values().cloned().collect();
        for slot in slots {
            write_lock(&slot.state).chain.set_embedding_provider(provider.clone());
        }
    }

    /// Embeds every thought of chain `key` again with the registered
    /// provider (the chain's ranked index is built first, whole) and says
    /// how many thoughts have a vector now; without a provider the vectors
    /// are dropped. Vectors are derived, in memory: nothing is written.
    pub fn rebuild_vectors(&self, key: &str) -> Result<RebuiltVectors, ToolError> {
        let slot = self.slot_or_load(key)?.ok_or_else(|| ToolError::NotFound(format!("chain '{key}' not found")))?;
        let provider = self.embedding_provider();
        let mut state = write_lock(&slot.state);
        state.live()?;
        while !state.chain.warm_indexes(usize::MAX) {}
        state.chain.set_embedding_provider(provider.clone());
        let index = state.chain.ranked_index();
        let vectors: Vec<usize> = (0..index.len() as u32).filter_map(|d| index.vector(d).map(<[f32]>::len)).collect();
        let model = provider.map(|p| (p.name().to_string(), vectors.first().copied().unwrap_or(0)));
        Ok(RebuiltVectors { thoughts: state.chain.len(), indexed: vectors.len(), model })
    }

    /// The registered embedding provider.
    pub fn embedding_provider(&self) -> Option<Arc<dyn EmbeddingProvider>> {
        read_lock(&self.embedder).clone()
    }

    /// The daemon settings.
    pub fn config(&self) -> &DbConfig {
        &self.config
    }

    /// The storage backend.
    pub fn storage(&self) -> &dyn Storage {
        self.storage.as_ref()
    }

    /// The current time as the host reports it, in epoch milliseconds.
    pub fn now_millis(&self) -> i64 {
        self.clock.now_millis()
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

    /// Keys of every served chain (resident or parked), sorted.
    pub fn chain_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = read_lock(&self.chains).keys().cloned().collect();
        keys.extend(read_lock(&self.residency.parked).keys().cloned());
        keys.sort();
        keys.dedup();
        keys
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

    /// Whether chain `key` exists (is served or stored); a refused chain is an error.
    pub fn chain_exists(&self, key: &str) -> Result<bool, ToolError> {
        Ok(self.slot_or_load(key)?.is_some())
    }

    /// Builds every chain's query indices (text filter, ranked retrieval) now
    /// instead of on the first query, a few thousand thoughts at a time so
    /// appends are never held up for long. A host calls this in the
    /// background after opening; queries work (and catch up) meanwhile.
    pub fn warm_indexes(&self) {
        // Lexical indexing takes ~10 us a thought; a model may take tens of
        // milliseconds per text, so steps are then much shorter.
        let step = if self.embedding_provider().is_some() { 32 } else { 4096 };
        // Resident chains only: warming must not load parked ones.
        let resident: Vec<String> = read_lock(&self.chains).keys().cloned().collect();
        for key in resident {
            while let Ok(false) = self.with_chain(&key, |c| c.is_none_or(|c| c.warm_indexes(step))) {}
        }
    }

    /// Storage location of a chain (or where it would be created).
    pub fn storage_location(&self, key: &str) -> String {
        match self.slot(key) {
            Some(slot) => self.storage.location(&slot.object),
            None => match self.parked(key) {
                Some(p) => self.storage.location(&p.object),
                None => self.storage.location(&naming::chain_object(key, self.config.default_format)),
            },
        }
    }

    /// Returns the slot for `key`, creating the chain (header written and
    /// synced) in `format` or the default format when it does not exist.
    fn slot_for_write(&self, key: &str, format: Option<ChainFormat>) -> Result<Arc<ChainSlot>, ToolError> {
        // A refused chain never has a slot.
        if let Some(slot) = self.slot(key) {
            return Ok(slot);
        }
        if let Some(e) = self.refused_error(key) {
            return Err(e);
        }
        let mut chains = write_lock(&self.chains);
        if let Some(slot) = chains.get(key) {
            return Ok(slot.clone());
        }
        // Parked here, or created by another engine on a shared store since this one opened.
        if let Some(slot) = self.load_chain(&mut chains, key)? {
            drop(chains);
            self.enforce_budget(key);
            return Ok(slot);
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
        let found = read_lock(&self.chains).iter().find(|(_, slot)| slot.object == object).map(|(key, slot)| (key.clone(), slot.clone()));
        let Some((key, slot)) = found else { return self.load_announced_chain(object) };
        let mut state = write_lock(&slot.state);
        self.catch_up_locked(&key, &slot, &mut state)
    }

    /// A shared store says `object` was replaced as a whole by some engine
    /// (this one too): a chain rewritten by a forget or a migration is read
    /// again, verified and served from the new copy; an edited agent
    /// registry is read again (activity rebuilt from the chain); a replaced
    /// skill log (a deletion) is replayed. Returns whether `object` is one
    /// this engine serves.
    pub fn reload_object(&self, object: &str) -> Result<bool, ToolError> {
        if object == naming::SKILLS_LOG {
            self.skills.reload(self.storage.as_ref())?;
            return Ok(true);
        }
        let found = read_lock(&self.chains).iter().find(|(_, slot)| slot.object == object || slot.agents_object == object).map(|(key, slot)| (key.clone(), slot.clone()));
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
        let decoded = record::decode_chain_with(&bytes, self.config.parallelism.as_ref()).map_err(|e| refused(VerifyError::Record(e)))?;
        let byte_len = decoded.valid_len as u64;
        let agents = state.chain.agents().clone();
        let mut chain = Chain::load_with(decoded, agents, self.hasher, self.config.parallelism.as_ref()).map_err(refused)?;
        chain.set_embedding_provider(self.embedding_provider());
        let added = chain.len().saturating_sub(state.chain.len());
        state.chain = chain;
        state.byte_len = byte_len;
        // Appends that came with the rewrite are new here.
        let thoughts = state.chain.thoughts();
        self.notify_appended(&key, &thoughts[thoughts.len() - added..]);
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
            let mut thoughts = state.chain.thoughts()[..keep].to_vec();
            thoughts.extend(tail.thoughts);
            let mut bytes = record::encode_header(format, key);
            thoughts.iter().for_each(|t| bytes.extend_from_slice(&record::encode_thought(format, t)));
            let decoded = record::DecodedChain { format, chain_key: key.to_string(), thoughts, valid_len: bytes.len(), body_hash_mismatches: None };
            let mut chain = Chain::load_with(decoded, state.chain.agents().clone(), self.hasher, self.config.parallelism.as_ref()).map_err(refused)?;
            self.storage.write_atomic(&slot.object, &bytes)?;
            chain.set_embedding_provider(self.embedding_provider());
            state.chain = chain;
            state.byte_len = bytes.len() as u64;
        }
        let thoughts = state.chain.thoughts();
        self.notify_appended(key, &thoughts[thoughts.len() - added..]);
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
            let new = &thoughts[known.min(thoughts.len())..];
            self.notify_appended(&key, new);
            new.len()
        };
        drop(slot);
        self.enforce_budget(&key);
        Ok(added)
    }

    /// [`MentisDb::catch_up`] under the chain's write lock.
    fn catch_up_locked(&self, key: &str, slot: &ChainSlot, state: &mut ChainState) -> Result<usize, ToolError> {
        let Some(bytes) = self.storage.read_from(&slot.object, state.byte_len)? else { return Ok(0) };
        if bytes.is_empty() {
            return Ok(0);
        }
        let refused = |e: VerifyError| ToolError::ChainRefused { chain_key: key.to_string(), error: e };
        let suffix = record::decode_suffix(state.chain.format(), &bytes).map_err(|e| refused(VerifyError::Record(e)))?;
        let valid_len = suffix.valid_len as u64;
        let added = state.chain.extend_verified(suffix).map_err(refused)?;
        state.byte_len += valid_len;
        // Another engine acknowledged these only after they were durable.
        let thoughts = state.chain.thoughts();
        self.notify_appended(key, &thoughts[thoughts.len() - added..]);
        Ok(added)
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
    /// either format), if there is one; a damaged one is refused.
    fn load_chain(&self, chains: &mut BTreeMap<String, Arc<ChainSlot>>, key: &str) -> Result<Option<Arc<ChainSlot>>, ToolError> {
        for format in [ChainFormat::Binary, ChainFormat::Jsonl] {
            let object = naming::chain_object(key, format);
            let Some(bytes) = self.storage.read(&object)? else { continue };
            let refuse = |error: VerifyError| {
                write_lock(&self.refused).insert(object.clone(), (key.to_string(), error.clone()));
                write_lock(&self.residency.parked).remove(key);
                ToolError::ChainRefused { chain_key: key.to_string(), error }
            };
            let decoded = record::decode_chain_with(&bytes, self.config.parallelism.as_ref()).map_err(|e| refuse(VerifyError::Record(e)))?;
            let agents = match self.storage.read(&naming::agents_object(key))? {
                Some(b) => AgentRegistry::from_sidecar(&b).unwrap_or_default(),
                None => AgentRegistry::default(),
            };
            // A torn tail of another writer is left alone: its records arrive complete.
            let byte_len = decoded.valid_len as u64;
            let mut chain = Chain::load_with(decoded, agents, self.hasher, self.config.parallelism.as_ref()).map_err(refuse)?;
            chain.set_embedding_provider(self.embedding_provider());
            let slot = Arc::new(ChainSlot::new(object, naming::agents_object(key), ChainState::new(chain, byte_len)));
            self.touch(&slot);
            chains.insert(key.to_string(), slot.clone());
            write_lock(&self.residency.parked).remove(key);
            return Ok(Some(slot));
        }
        Ok(None)
    }

    /// Forgets the thought of chain `key` that `locate` picks (its position):
    /// its signature, content, tags and concepts leave memory and storage,
    /// the chain object is replaced atomically, and the chain still verifies
    /// (`forget.rs`). Forgetting a thought already forgotten changes nothing.
    pub(crate) fn forget_thought(&self, key: &str, locate: impl FnOnce(&Chain) -> Result<usize, ToolError>, by: String, reason: String) -> Result<ForgetOutcome, ToolError> {
        let at = format_rfc3339_millis(crate::timestamp::renderable_millis(self.clock.now_millis()));
        self.rewrite_chain(key, |chain| {
            let pos = locate(chain)?;
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
            thoughts: rewrite.thoughts,
            valid_len: rewrite.bytes.len(),
            body_hash_mismatches: None,
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
            state.deleted = true;
            state.chain.len()
        };
        let mut chains = write_lock(&self.chains);
        if chains.get(key).is_some_and(|s| Arc::ptr_eq(s, &slot)) {
            chains.remove(key);
        }
        drop(chains);
        for observer in read_lock(&self.observers).iter() {
            observer.chain_deleted(key);
        }
        Ok(Some(thoughts))
    }

    /// The key of every chain's lookup maps (drawn from the id source at open).
    pub(crate) fn map_hasher(&self) -> KeyedState {
        self.hasher
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

    /// Whether a served chain is stored in `object`.
    pub(crate) fn serves_object(&self, object: &str) -> bool {
        read_lock(&self.chains).values().any(|slot| slot.object == object) || read_lock(&self.residency.parked).values().any(|p| p.object == object)
    }

    /// Chain objects refused at open or load, with why, sorted by object.
    pub(crate) fn refused_objects(&self) -> Vec<(String, String)> {
        read_lock(&self.refused).iter().map(|(object, (_, e))| (object.clone(), e.to_string())).collect()
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
        Ok(Some(ChainCopy { object: slot.object.clone(), bytes, agents, thought_count: thoughts.len() as u64, head_hash: thoughts.last().map(|t| t.hash.clone()) }))
    }

    /// Storage location of the object backing `key`, when it exists.
    pub fn chain_storage_info(&self, key: &str) -> Option<(ChainFormat, String)> {
        match self.peek_slot(key) {
            Some(s) => Some((read_lock(&s.state).chain.format(), self.storage.location(&s.object))),
            None => self.parked(key).map(|p| (p.format, self.storage.location(&p.object))),
        }
    }

    /// Thought and agent counts of chain `key` without loading it when it is
    /// parked (`mentisdb_list_chains`); `None` when it is not served.
    pub fn chain_counts(&self, key: &str) -> Option<(u64, u64)> {
        match self.peek_slot(key) {
            Some(s) => {
                let st = read_lock(&s.state);
                Some((st.chain.len() as u64, st.chain.agents().len() as u64))
            }
            None => self.parked(key).map(|p| (p.thought_count, p.agent_count)),
        }
    }

    /// Registers `observer` to be told of every thought that becomes durable
    /// from now on, and of deleted chains (see [`AppendObserver`]).
    pub fn add_observer(&self, observer: Arc<dyn AppendObserver>) {
        write_lock(&self.observers).push(observer);
    }

    fn notify_appended(&self, key: &str, thoughts: &[Thought]) {
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
