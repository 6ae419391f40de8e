//! # mentisdb (compatibility crate): MentisDB 0.10.10's Rust API on this engine
//!
//! **Contract.** This crate is named `mentisdb`, versioned 0.10.10, and
//! exposes the part of MentisDB 0.10.10's in-process Rust API that
//! [cloudllm](https://crates.io/crates/cloudllm) 0.16 uses, at the same paths
//! with the same signatures, so a crate written against 0.10.10 switches
//! engines with one line in its `Cargo.toml`:
//!
//! ```toml
//! [patch.crates-io]
//! mentisdb = { path = "/path/to/this/repo/compat-mentisdb" }
//! ```
//!
//! It is a thin adapter with no chain logic of its own: [`MentisDb`] opens
//! the directory with `mentisdb-fs-storage` (the storage `mentisdbd` uses),
//! hands every append to `mentisdb-core` (validation, hashing, signatures,
//! fsync before an append returns) and answers reads from a copy of the
//! chain's thoughts in 0.10.10's shapes ([`Thought`] with `Uuid` ids and
//! `DateTime<Utc>` timestamps), refreshed from the engine after each append.
//! A chain written through it is an ordinary chain of this engine
//! (`<dir>/chains/<stem>.mdb`): `mentisdbd --dir <dir>` serves it, and a
//! chain `mentisdbd` wrote in `<dir>` opens through [`MentisDb::open_with_key`].
//!
//! ## Covered (0.10.10 items)
//!
//! - [`MentisDb`]: [`open`](MentisDb::open), [`open_with_key`](MentisDb::open_with_key),
//!   [`append`](MentisDb::append), [`append_with_refs`](MentisDb::append_with_refs),
//!   [`append_thought`](MentisDb::append_thought), [`thoughts`](MentisDb::thoughts),
//!   [`resolve_context`](MentisDb::resolve_context), [`to_bootstrap_prompt`](MentisDb::to_bootstrap_prompt),
//!   [`verify_integrity`](MentisDb::verify_integrity), [`chain_key`](MentisDb::chain_key),
//!   [`chain_dir`](MentisDb::chain_dir), [`head_hash`](MentisDb::head_hash),
//!   [`genesis_thought`](MentisDb::genesis_thought), [`head_thought`](MentisDb::head_thought),
//!   [`get_thought_by_index`](MentisDb::get_thought_by_index),
//!   [`get_thought_by_id`](MentisDb::get_thought_by_id), [`storage_location`](MentisDb::storage_location).
//!   Errors are `std::io::Error`, as in 0.10.10.
//! - The model: [`Thought`] (0.10.10's public fields), [`ThoughtInput`] and its
//!   builders, [`ThoughtRelation`], [`ThoughtQuery`] (the type and its builders),
//!   [`ThoughtType`], [`ThoughtRole`], [`ThoughtRelationKind`] (this engine's
//!   enums: the same variant names, `Debug`, `Clone`, `Copy`, `PartialEq`,
//!   `Eq`, `Hash` and serde by name).
//! - [`chain_filename`] and [`chain_storage_filename`] (0.10.10's names, byte for byte),
//!   [`StorageAdapterKind`], the [`StorageAdapter`] trait and [`BinaryStorageAdapter`].
//!
//! ## Not covered
//!
//! Everything else of 0.10.10: `query`/ranked/vector search methods on
//! `MentisDb` (use `mentisdbd`'s tools), the agent and entity-type registry
//! methods, branching, `open_with_storage` with a custom adapter, the
//! `server`, `cli`, `skills`, `webhooks` and `search` modules, MEMORY.md
//! export/import, and the JSONL storage kind (only
//! [`StorageAdapterKind::Binary`] opens). [`BinaryStorageAdapter`] loads a
//! chain but cannot append a finished [`Thought`] (its hash is this
//! engine's to compute): use [`MentisDb`].
//!
//! ## Differences from 0.10.10 a caller may notice
//!
//! - Hashes are this engine's canonical SHA-256 encoding (see
//!   `docs/architecture/hashing.md`), not 0.10.10's; [`verify_integrity`](MentisDb::verify_integrity)
//!   re-reads the chain file and verifies every hash and link with the engine.
//! - The chain lives in `<dir>/chains/<stem>.mdb`, not `<dir>/<chain_filename>`:
//!   [`chain_filename`] still answers 0.10.10's name for callers that derive keys from it.
//! - Every append is fsynced before it returns (0.10.10 batches writes in a
//!   background writer).
//! - A directory a running `mentisdbd` serves is refused (the daemon holds
//!   `mentisdbd.lock`; this crate takes a shared lock on it, so the daemon
//!   also refuses a directory this crate has open).
//! - Content is stored as given: secret redaction (on in `mentisdbd`) is off,
//!   as 0.10.10's library does not redact.

#![warn(missing_docs)]

mod model;
mod naming;
mod storage;

pub use model::{Thought, ThoughtInput, ThoughtQuery, ThoughtRelation};
pub use mentisdb_core::{RelationKind as ThoughtRelationKind, ThoughtRole, ThoughtType};
pub use naming::{chain_filename, chain_storage_filename};
pub use storage::{BinaryStorageAdapter, StorageAdapter, StorageAdapterKind};

use mentisdb_core::record::decode_chain;
use mentisdb_core::{naming as core_naming, Chain, DbConfig, NewThought, RelationInput};
use mentisdb_fs_storage::FsStorage;
use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use uuid::Uuid;

/// The lock file `mentisdbd` holds exclusively in its data directory.
use mentisdb_fs_storage::DAEMON_LOCK_FILE;

/// One durable chain, opened in-process (MentisDB 0.10.10's `MentisDb`).
///
/// Reads borrow from a copy of the chain's thoughts in 0.10.10's shapes;
/// appends go through the engine and return once fsynced.
pub struct MentisDb {
    engine: mentisdb_core::MentisDb,
    chain_key: String,
    chain_dir: PathBuf,
    thoughts: Vec<Thought>,
    /// Shared lock on `mentisdbd.lock`: no daemon serves the directory meanwhile.
    _dir_lock: File,
}

impl std::fmt::Debug for MentisDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MentisDb").field("chain_key", &self.chain_key).field("chain_dir", &self.chain_dir).field("thoughts", &self.thoughts.len()).finish_non_exhaustive()
    }
}

fn io_other(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

/// An engine error as the `io::Error` 0.10.10 returns: bad input is
/// `InvalidInput`, a refused (corrupt) chain `InvalidData`, the rest `Other`.
fn tool_error(e: mentisdb_core::ToolError) -> io::Error {
    use mentisdb_core::ErrorKind as K;
    let kind = match e.kind() {
        K::InvalidArguments | K::AppendRejected | K::Conflict => io::ErrorKind::InvalidInput,
        K::ChainRefused => io::ErrorKind::InvalidData,
        K::NotFound => io::ErrorKind::NotFound,
        _ => io::ErrorKind::Other,
    };
    io::Error::new(kind, e.to_string())
}

impl MentisDb {
    /// Opens (or, on the first append, creates) the chain `agent_id` in
    /// `chain_dir`; the other arguments are ignored, as in 0.10.10.
    pub fn open(chain_dir: &PathBuf, agent_id: &str, _agent_name: &str, _expertise: Option<&str>, _personality: Option<&str>) -> io::Result<Self> {
        Self::open_with_key(chain_dir, agent_id)
    }

    /// Opens the chain `chain_key` in the data directory `chain_dir`
    /// (created when absent), verifying every chain there. Errors when the
    /// directory cannot be created, a running `mentisdbd` serves it, or this
    /// chain fails verification (`InvalidData`).
    pub fn open_with_key<P: AsRef<Path>>(chain_dir: P, chain_key: &str) -> io::Result<Self> {
        Self::open_with_key_and_storage_kind(chain_dir, chain_key, StorageAdapterKind::Binary)
    }

    /// [`open_with_key`](Self::open_with_key) with an explicit storage kind;
    /// only [`StorageAdapterKind::Binary`] is accepted (as in 0.10.10, JSONL
    /// cannot create chains).
    pub fn open_with_key_and_storage_kind<P: AsRef<Path>>(chain_dir: P, chain_key: &str, kind: StorageAdapterKind) -> io::Result<Self> {
        if kind != StorageAdapterKind::Binary {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "only the binary storage kind can open chains"));
        }
        mentisdb_core::limits::check_key("chain_key", chain_key).map_err(|m| io::Error::new(io::ErrorKind::InvalidInput, m))?;
        let chain_dir = chain_dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&chain_dir)?;
        let dir_lock = OpenOptions::new().create(true).truncate(false).read(true).write(true).open(chain_dir.join(DAEMON_LOCK_FILE))?;
        match dir_lock.try_lock_shared() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(io::Error::new(io::ErrorKind::WouldBlock, format!("{} is served by a running mentisdbd; use its REST or MCP endpoint, or stop it", chain_dir.display())))
            }
            Err(TryLockError::Error(e)) => return Err(e),
        }
        let storage = FsStorage::open(&chain_dir).map_err(io_other)?;
        let config = DbConfig { default_chain_key: chain_key.to_string(), redact_secrets: false, ..DbConfig::default() };
        let (engine, report) = mentisdb_core::MentisDb::open(Arc::new(storage), Arc::new(mentisdb_std_host::SystemClock), Arc::new(mentisdb_std_host::OsRandomIds), config).map_err(io_other)?;
        if let Some((_, why)) = report.refused.iter().find(|(k, _)| k == chain_key) {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("chain '{chain_key}' in {} fails verification: {why}", chain_dir.display())));
        }
        let mut db = MentisDb { engine, chain_key: chain_key.to_string(), chain_dir, thoughts: Vec::new(), _dir_lock: dir_lock };
        db.refresh_from(0)?;
        Ok(db)
    }

    /// Runs `f` on this chain in the engine (`None` before the first append).
    fn read<R>(&self, f: impl FnOnce(Option<&Chain>) -> R) -> io::Result<R> {
        self.engine.read_chain(&self.chain_key, f).map_err(tool_error)
    }

    /// Copies the engine's thoughts from position `from` on into the mirror.
    fn refresh_from(&mut self, from: usize) -> io::Result<()> {
        let fresh: Vec<Thought> = self.read(|c| c.map(|c| c.thoughts().range(from.min(c.len())..).map(Thought::from_core).collect()).unwrap_or_default())?;
        self.thoughts.truncate(from);
        self.thoughts.extend(fresh);
        Ok(())
    }

    /// The chain's stable key.
    pub fn chain_key(&self) -> &str {
        &self.chain_key
    }

    /// The data directory the chain lives in.
    pub fn chain_dir(&self) -> &Path {
        &self.chain_dir
    }

    /// Where the engine keeps the chain (its file path).
    pub fn storage_location(&self) -> String {
        self.engine.storage_location(&self.chain_key)
    }

    /// Appends a thought with default metadata (role `Memory`, importance 0.5).
    pub fn append(&mut self, agent_id: &str, thought_type: ThoughtType, content: &str) -> io::Result<&Thought> {
        self.append_thought(agent_id, ThoughtInput::new(thought_type, content))
    }

    /// Appends a thought referring back to earlier thoughts by index.
    pub fn append_with_refs(&mut self, agent_id: &str, thought_type: ThoughtType, content: &str, refs: Vec<u64>) -> io::Result<&Thought> {
        self.append_thought(agent_id, ThoughtInput::new(thought_type, content).with_refs(refs))
    }

    /// Appends `input` as `agent_id` and returns the committed thought once
    /// it is durable. Refs must name existing thoughts (`InvalidInput`
    /// otherwise); each ref also becomes a `References` relation, as in
    /// 0.10.10. Relations name their target by id; one naming another chain
    /// keeps its `chain_key`.
    pub fn append_thought(&mut self, agent_id: &str, input: ThoughtInput) -> io::Result<&Thought> {
        let mut new = NewThought::new(agent_id, input.thought_type, &input.content);
        new.role = input.role;
        new.agent_name = input.agent_name;
        new.agent_owner = input.agent_owner;
        new.session_id = input.session_id.map(|s| s.to_string());
        new.signing_key_id = input.signing_key_id;
        new.thought_signature = input.thought_signature;
        new.confidence = input.confidence.map(f64::from);
        new.importance = Some(f64::from(input.importance));
        new.tags = input.tags;
        new.concepts = input.concepts;
        new.entity_type = input.entity_type;
        let count = self.thoughts.len() as u64;
        if let Some(bad) = input.refs.iter().find(|r| **r >= count) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("ref {bad} names no thought: the chain has {count}")));
        }
        let mut relations: Vec<RelationInput> = input
            .relations
            .iter()
            .map(|r| RelationInput { kind: r.kind, target_id: Some(r.target_id.to_string()), target_index: None, chain_key: r.chain_key.clone() })
            .collect();
        for r in &input.refs {
            relations.push(RelationInput { kind: ThoughtRelationKind::References, target_id: None, target_index: Some(*r), chain_key: None });
        }
        new.relations = relations;
        new.refs = input.refs;
        let from = self.thoughts.len();
        self.engine.append(&self.chain_key, new).map_err(tool_error)?;
        self.refresh_from(from)?;
        self.thoughts.last().ok_or_else(|| io::Error::other("the appended thought is missing"))
    }

    /// Every thought in append order (index = position).
    pub fn thoughts(&self) -> &[Thought] {
        &self.thoughts
    }

    /// The first thought, if any.
    pub fn genesis_thought(&self) -> Option<&Thought> {
        self.thoughts.first()
    }

    /// The newest thought, if any.
    pub fn head_thought(&self) -> Option<&Thought> {
        self.thoughts.last()
    }

    /// The newest thought's hash, if any.
    pub fn head_hash(&self) -> Option<&str> {
        self.thoughts.last().map(|t| t.hash.as_str())
    }

    /// The thought at `index`, if any.
    pub fn get_thought_by_index(&self, index: u64) -> Option<&Thought> {
        self.thoughts.get(index as usize)
    }

    /// The thought with id `thought_id`, if any.
    pub fn get_thought_by_id(&self, thought_id: Uuid) -> Option<&Thought> {
        self.thoughts.iter().find(|t| t.id == thought_id)
    }

    /// The thought at `target_index` and every thought it reaches through
    /// refs and same-chain relations, transitively, in index order (empty
    /// for an unknown index): the engine's `Chain::causal_context`.
    pub fn resolve_context(&self, target_index: u64) -> Vec<&Thought> {
        let indices = self.read(|c| c.map(|c| c.causal_context(target_index).iter().map(|t| t.index).collect::<Vec<_>>()).unwrap_or_default()).unwrap_or_default();
        indices.into_iter().filter_map(|i| self.thoughts.get(i as usize)).collect()
    }

    /// [`resolve_context`](Self::resolve_context) of `target_index` rendered
    /// as 0.10.10's `=== RESTORED CONTEXT (from MentisDb) ===` prompt;
    /// empty for an unknown index.
    pub fn to_bootstrap_prompt(&self, target_index: u64) -> String {
        self.read(|c| c.map(|c| c.bootstrap_prompt(target_index)).unwrap_or_default()).unwrap_or_default()
    }

    /// Re-reads the chain file and verifies it with the engine (every
    /// hash, `prev_hash` link, index and ref), and checks it holds exactly
    /// the thoughts this handle serves. `true` for a chain not yet written.
    pub fn verify_integrity(&self) -> bool {
        let Some((format, _)) = self.engine.chain_storage_info(&self.chain_key) else {
            return self.thoughts.is_empty();
        };
        let object = core_naming::chain_object(&self.chain_key, format);
        let Ok(Some(bytes)) = self.engine.storage().read(&object) else {
            return false;
        };
        let Ok(decoded) = decode_chain(&bytes) else {
            return false;
        };
        let Ok(chain) = Chain::load(decoded, Default::default()) else {
            return false;
        };
        chain.key() == self.chain_key
            && chain.len() == self.thoughts.len()
            && chain.thoughts().iter().zip(&self.thoughts).all(|(stored, served)| stored.hash == served.hash && stored.index == served.index)
    }
}
