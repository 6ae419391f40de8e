//! `mentisdbd import-reference DIR`: takes the memories of a reference
//! MentisDB 0.9.x (or 0.10.x) data directory into an open store.
//!
//! Contract: the source directory is only read. Each chain named by its
//! chain registry (`mentisdb-registry.json`; without one, every `*.tcbin`
//! and `*.jsonl` file) is decoded (binary: `[u64 LE length][bincode
//! payload]` records of schema 2 or 3; legacy JSONL: one thought per line),
//! its own hash chain is checked (every thought whose stored hash or
//! `prev_hash` does not match is reported, and the import goes on), and it
//! becomes one of our chains with the same thought ids, indices,
//! timestamps, sessions, agents, types, roles, scores, tags, concepts,
//! refs, relations and signatures, rehashed with our canonical hash and
//! stored through [`mentisdb_core::MentisDb::import_chain`] (which verifies it). The
//! chain's agent registry sidecar (`<chain>.agents.json`) follows: display
//! names, owners, descriptions, aliases, public keys and disabled status.
//! Then the skill registry (`mentisdb-skills.bin`): every version's text,
//! uploader, format and the skill's status and reason.
//! Every write goes through a [`Target`]: the store opened here, or a
//! running daemon's REST API (`--url`, or the daemon that holds the data
//! directory), where chains arrive through `POST /v1/chains/{chain_key}/import`
//! (each within the daemon's `MENTISDB_MAX_BODY_BYTES`) and agents and skills
//! through their tools.
//! A chain key the store already has is skipped, so a second run adds
//! nothing. Not carried over: relation `valid_at`/`invalid_at` (ours have
//! no validity window), `source_episode`, the vector sidecars (derived;
//! rebuilt), skill version ids and upload times (ours are assigned at
//! upload; see [`import_reference_skills`]).
//!
//! Decoding is ours, written from the reference's documented layout: the
//! reference's structs are mirrored only as serde shapes (`thought.rs`).
//! One file per source format: `binary.rs` (`.tcbin`), `jsonl.rs`,
//! `agents.rs` (agent registries), `skills.rs` (the skill registry),
//! `webhooks.rs`, `tokens.rs` (`bearer-tokens.json`) and `archive.rs` (a
//! `.mentis` backup); `chain.rs` builds our chain object from decoded
//! thoughts, and this file finds the chains and runs the import.

mod agents;
mod archive;
mod binary;
mod chain;
mod jsonl;
mod skills;
mod synthetic;
mod thought;
mod tokens;
mod webhooks;

pub use archive::unpack_mentis_archive;
pub use binary::decode_binary;
pub use jsonl::decode_jsonl;
pub use skills::{import_reference_skills, SkillOutcome};
pub use synthetic::synthetic_reference_chain;
pub use thought::{check_reference_chain, HashMismatch, RefThoughtPub};
pub use tokens::{import_reference_tokens, TokenOutcome};
pub use webhooks::import_reference_webhooks;

use crate::target::{Target, TargetError};
use crate::tokens::TokenError;
use agents::{import_agents, parse_agents};
use chain::build_chain;
use mentisdb_core::ChainFormat;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One chain found in the source directory.
#[derive(Debug, Clone)]
pub struct SourceChain {
    pub chain_key: String,
    pub file: PathBuf,
    pub jsonl: bool,
    pub agents_file: PathBuf,
}

/// The chains of a reference data directory: from its chain registry, else
/// every `*.tcbin` / `*.jsonl` file (key = file stem without its `-<hash>`).
pub fn find_chains(dir: &Path) -> Result<Vec<SourceChain>, ReferenceError> {
    let registry = dir.join("mentisdb-registry.json");
    let mut out = Vec::new();
    if let Ok(bytes) = std::fs::read(&registry) {
        let v: Value = serde_json::from_slice(&bytes).map_err(|e| ReferenceError::Json(e).in_file(&registry))?;
        for (key, entry) in v.get("chains").and_then(Value::as_object).into_iter().flatten() {
            let location = entry.get("storage_location").and_then(Value::as_str).unwrap_or_default();
            let name = Path::new(location).file_name().map(PathBuf::from).ok_or_else(|| ReferenceError::NoStorageLocation { chain_key: key.clone() }.in_file(&registry))?;
            let file = dir.join(&name);
            let jsonl = name.extension().is_some_and(|e| e == "jsonl");
            let stem = name.to_string_lossy().rsplit_once('.').map(|(s, _)| s.to_string()).unwrap_or_default();
            out.push(SourceChain { chain_key: key.clone(), file, jsonl, agents_file: dir.join(format!("{stem}.agents.json")) });
        }
        return Ok(out);
    }
    let entries = std::fs::read_dir(dir).map_err(|e| ReferenceError::Io(e).in_file(dir))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let Some((stem, ext)) = name.rsplit_once('.') else { continue };
        if ext != "tcbin" && ext != "jsonl" {
            continue;
        }
        let key = match stem.rsplit_once('-') {
            Some((k, h)) if h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()) => k.to_string(),
            _ => stem.to_string(),
        };
        out.push(SourceChain { chain_key: key, file: entry.path(), jsonl: ext == "jsonl", agents_file: dir.join(format!("{stem}.agents.json")) });
    }
    out.sort_by(|a, b| a.chain_key.cmp(&b.chain_key));
    Ok(out)
}

/// What one chain's import did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainOutcome {
    Imported { thoughts: usize, agents: usize },
    /// The store already had the key: nothing was added.
    AlreadyPresent,
}

/// The whole run's report.
#[derive(Debug, Clone, Default)]
pub struct ImportSummary {
    pub chains: Vec<(String, ChainOutcome)>,
    pub mismatches: Vec<HashMismatch>,
    /// Agent records our rules refused (the rest of the import went on).
    pub warnings: Vec<String>,
    /// The skill registry's import.
    pub skills: SkillOutcome,
    /// Webhooks registered: (0.10 id, new id).
    pub webhooks: Vec<(String, String)>,
}

impl ImportSummary {
    /// Thoughts added by this run.
    pub fn thoughts_added(&self) -> usize {
        self.chains.iter().map(|(_, o)| if let ChainOutcome::Imported { thoughts, .. } = o { *thoughts } else { 0 }).sum()
    }
}

/// Imports every chain of `dir` into `db` (a store or a daemon); `progress(done, total)` is told
/// after each chain's thoughts are stored. Fails only on a source it cannot
/// read or decode, or a store that refuses.
pub fn import_reference_dir(db: &Target, dir: &Path, mut progress: impl FnMut(&str, u64)) -> Result<ImportSummary, ReferenceError> {
    let mut summary = ImportSummary::default();
    for source in find_chains(dir)? {
        let bytes = std::fs::read(&source.file).map_err(|e| ReferenceError::Io(e).in_file(&source.file))?;
        let thoughts = if source.jsonl { decode_jsonl(&bytes) } else { decode_binary(&bytes) }.map_err(|e| e.in_file(&source.file))?;
        summary.mismatches.extend(check_reference_chain(&source.chain_key, &thoughts));
        if db.chain_exists(&source.chain_key)? {
            progress(&source.chain_key, thoughts.len() as u64);
            summary.chains.push((source.chain_key, ChainOutcome::AlreadyPresent));
            continue;
        }
        let agents = match std::fs::read(&source.agents_file) {
            Ok(b) => parse_agents(&b).map_err(|e| e.in_file(&source.agents_file))?,
            Err(_) => Vec::new(),
        };
        let format = if source.jsonl { ChainFormat::Jsonl } else { ChainFormat::Binary };
        let object = build_chain(&source.chain_key, format, &thoughts, &agents)?;
        let thought_count = db.import_chain(&source.chain_key, &object).map_err(|source_error| ReferenceError::ChainRefused { chain_key: source.chain_key.clone(), source: Box::new(source_error) })?;
        let agent_count = import_agents(db, &source.chain_key, &agents, &mut summary.warnings);
        progress(&source.chain_key, thoughts.len() as u64);
        summary.chains.push((source.chain_key, ChainOutcome::Imported { thoughts: thought_count, agents: agent_count }));
    }
    let keys: Vec<String> = summary.chains.iter().map(|(k, _)| k.clone()).collect();
    summary.skills = import_reference_skills(db, dir, &keys, &mut summary.warnings)?;
    summary.webhooks = import_reference_webhooks(db, dir, &mut summary.warnings)?;
    Ok(summary)
}

/// Why an import stopped: a source that cannot be read or decoded, or a
/// store that refuses. Problems of one record that the import goes on past
/// (a refused agent key, a webhook, a hash mismatch) are warnings instead.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReferenceError {
    /// What is wrong in the file (or directory) at `path`.
    #[error("{}: {problem}", path.display())]
    InFile { path: PathBuf, problem: Box<ReferenceError> },
    /// A file or directory cannot be read (or a temporary one made).
    #[error("{0}")]
    Io(std::io::Error),
    /// The chain registry or the webhook file is not the JSON 0.10 writes.
    #[error("{0}")]
    Json(serde_json::Error),
    /// The chain registry names a chain without a file.
    #[error("chain '{chain_key}' has no storage_location")]
    NoStorageLocation { chain_key: String },
    /// A binary chain file ends inside a record's length.
    #[error("torn record header at byte {at}")]
    TornHeader { at: usize },
    /// A binary record's length runs past the file (or over the limit).
    #[error("record {record} at byte {at}: length {len} runs past the file")]
    RecordPastEnd { record: usize, at: usize, len: u64 },
    /// A binary record does not decode.
    #[error("record {record}: {source}")]
    Record { record: usize, source: bincode::error::DecodeError },
    /// A binary record of a schema before 2.
    #[error("record {record}: thought schema {schema} (MentisDB before 0.8) is not supported; open the directory once with a reference 0.9 daemon to migrate it")]
    OldSchema { record: usize, schema: u32 },
    /// A JSONL chain file is not UTF-8.
    #[error("not UTF-8: {0}")]
    NotUtf8(std::str::Utf8Error),
    /// A JSONL line is not a reference thought.
    #[error("line {line}: {source}")]
    Line { line: usize, source: serde_json::Error },
    /// An agent registry sidecar is not the JSON the reference writes.
    #[error("agent registry: {0}")]
    AgentRegistry(serde_json::Error),
    /// The skill registry decodes in neither layout.
    #[error("{0}")]
    SkillRegistry(bincode::error::DecodeError),
    /// A skill version's delta is not a unified diff.
    #[error("skill '{skill_id}' version {version}: {source}")]
    SkillPatch { skill_id: String, version: usize, source: diffy::ParsePatchError },
    /// A skill version's delta does not apply to the version before it.
    #[error("skill '{skill_id}' version {version}: {source}")]
    SkillDelta { skill_id: String, version: usize, source: diffy::ApplyError },
    /// The store refused a skill version.
    #[error("skill '{skill_id}' version {version}: {source}")]
    SkillUpload { skill_id: String, version: usize, source: Box<TargetError> },
    /// The store refused a skill's deprecation or revocation.
    #[error("skill '{skill_id}': {tool}: {source}")]
    SkillStatus { skill_id: String, tool: &'static str, source: Box<TargetError> },
    /// No random bytes for a typed thought's content salt.
    #[error("no random source for a content salt: {0}")]
    NoSalt(getrandom::Error),
    /// The store refused a chain object.
    #[error("chain '{chain_key}': {source}")]
    ChainRefused { chain_key: String, source: Box<TargetError> },
    /// The store (or daemon) could not be asked.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// 0.10's bearer tokens could not be taken into the token file.
    #[error(transparent)]
    Tokens(#[from] TokenError),
    /// A `.mentis` file that is not a zip archive.
    #[error("not a .mentis backup (a zip archive): {0}")]
    NotZip(zip::result::ZipError),
    /// A zip archive without 0.10's manifest.
    #[error("no mentisdb.manifest.json: not a MentisDB 0.10 backup")]
    NoManifest,
    /// The archive's manifest does not parse.
    #[error("mentisdb.manifest.json: {0}")]
    Manifest(serde_json::Error),
    /// The manifest names a path, not a file of the data directory.
    #[error("the manifest names '{0}', which is not a plain file name")]
    NotPlainName(String),
    /// A file larger than the import takes.
    #[error("{name} is {bytes} bytes, more than this import takes")]
    FileTooLarge { name: String, bytes: u64 },
    /// The manifest lists a file the archive lacks.
    #[error("the manifest lists {0} but the archive lacks it")]
    FileMissing(String),
    /// A file could not be unpacked.
    #[error("{name}: {source}")]
    Unpack { name: String, source: std::io::Error },
    /// A file's size or SHA-256 is not the manifest's.
    #[error("{name} does not match the manifest (SHA-256 {sha256}, {bytes} bytes; the manifest says {listed_sha256}, {listed_bytes} bytes): nothing was imported")]
    FileMismatch { name: String, sha256: String, bytes: u64, listed_sha256: String, listed_bytes: u64 },
}

impl ReferenceError {
    /// This problem, said of the file (or directory) at `path`.
    fn in_file(self, path: &Path) -> ReferenceError {
        ReferenceError::InFile { path: path.to_path_buf(), problem: Box::new(self) }
    }
}
