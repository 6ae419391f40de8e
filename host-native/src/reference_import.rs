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
//! stored through [`MentisDb::import_chain`] (which verifies it). The
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
//! reference's structs are mirrored below only as serde shapes.

use mentisdb_core::canonical::compute_thought_hash;
use mentisdb_core::record::{encode_header, encode_thought};
use crate::target::Target;
use mentisdb_core::{ChainFormat, RelationKind, Thought, ThoughtRelation, ThoughtRole, ThoughtType};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use uuid::Uuid;

/// Largest record the decoder accepts (the reference's own limit is smaller).
const MAX_RECORD_BYTES: u64 = 64 * 1024 * 1024;

/// The reference's thought types, in its declaration order (bincode writes
/// the variant index).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
enum RefType {
    PreferenceUpdate, UserTrait, RelationshipUpdate, Finding, Insight, FactLearned, PatternDetected, Hypothesis, Mistake, Correction,
    LessonLearned, AssumptionInvalidated, Constraint, Plan, Subgoal, Decision, StrategyShift, Wonder, Question, Idea, Experiment,
    ActionTaken, TaskComplete, Checkpoint, StateSnapshot, Handoff, Summary, Surprise, Reframe, Goal, LLMExtracted,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
enum RefRole {
    Memory, WorkingMemory, Summary, Compression, Checkpoint, Handoff, Audit, Retrospective,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
enum RefRelationKind {
    References, Summarizes, Corrects, Invalidates, CausedBy, Supports, Contradicts, DerivedFrom, ContinuesFrom, BranchesFrom, RelatedTo, Supersedes,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct RefRelation {
    kind: RefRelationKind,
    target_id: Uuid,
    #[serde(default)]
    chain_key: Option<String>,
    #[serde(default)]
    valid_at: Option<String>,
    #[serde(default)]
    invalid_at: Option<String>,
}

/// A reference thought of schema 2 or 3 (timestamps are chrono's serde
/// string, kept as read so the reference hash can be recomputed).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct RefThought {
    #[serde(default)]
    schema_version: u32,
    id: Uuid,
    index: u64,
    timestamp: String,
    session_id: Option<Uuid>,
    agent_id: String,
    #[serde(default)]
    signing_key_id: Option<String>,
    #[serde(default)]
    thought_signature: Option<Vec<u8>>,
    thought_type: RefType,
    role: RefRole,
    content: String,
    confidence: Option<f32>,
    importance: f32,
    tags: Vec<String>,
    concepts: Vec<String>,
    refs: Vec<u64>,
    relations: Vec<RefRelation>,
    #[serde(default)]
    entity_type: Option<String>,
    /// Read to keep the layout; not carried over (no such field here).
    #[serde(default)]
    #[allow(dead_code)]
    source_episode: Option<String>,
    prev_hash: String,
    hash: String,
}

/// Schema 2's binary layout: schema 3 without `entity_type`/`source_episode`.
#[derive(Deserialize)]
struct RefThoughtV2 {
    schema_version: u32,
    id: Uuid,
    index: u64,
    timestamp: String,
    session_id: Option<Uuid>,
    agent_id: String,
    signing_key_id: Option<String>,
    thought_signature: Option<Vec<u8>>,
    thought_type: RefType,
    role: RefRole,
    content: String,
    confidence: Option<f32>,
    importance: f32,
    tags: Vec<String>,
    concepts: Vec<String>,
    refs: Vec<u64>,
    relations: Vec<RefRelation>,
    prev_hash: String,
    hash: String,
}

impl From<RefThoughtV2> for RefThought {
    fn from(t: RefThoughtV2) -> Self {
        RefThought {
            schema_version: t.schema_version, id: t.id, index: t.index, timestamp: t.timestamp, session_id: t.session_id, agent_id: t.agent_id,
            signing_key_id: t.signing_key_id, thought_signature: t.thought_signature, thought_type: t.thought_type, role: t.role, content: t.content,
            confidence: t.confidence, importance: t.importance, tags: t.tags, concepts: t.concepts, refs: t.refs, relations: t.relations,
            entity_type: None, source_episode: None, prev_hash: t.prev_hash, hash: t.hash,
        }
    }
}

/// The reference's hash: SHA-256 (lowercase hex) of the bincode encoding of
/// these fields in this order (entity_type and source_episode excluded).
#[derive(Serialize)]
struct RefHashInput<'a> {
    schema_version: u32,
    id: Uuid,
    index: u64,
    timestamp: &'a str,
    session_id: Option<Uuid>,
    agent_id: &'a str,
    signing_key_id: Option<&'a str>,
    thought_signature: Option<&'a [u8]>,
    thought_type: RefType,
    role: RefRole,
    content: &'a str,
    confidence: Option<f32>,
    importance: f32,
    tags: &'a [String],
    concepts: &'a [String],
    refs: &'a [u64],
    relations: &'a [RefRelation],
    prev_hash: &'a str,
}

fn reference_hash(t: &RefThought) -> String {
    let input = RefHashInput {
        schema_version: t.schema_version, id: t.id, index: t.index, timestamp: &t.timestamp, session_id: t.session_id, agent_id: &t.agent_id,
        signing_key_id: t.signing_key_id.as_deref(), thought_signature: t.thought_signature.as_deref(), thought_type: t.thought_type, role: t.role,
        content: &t.content, confidence: t.confidence, importance: t.importance, tags: &t.tags, concepts: &t.concepts, refs: &t.refs,
        relations: &t.relations, prev_hash: &t.prev_hash,
    };
    let bytes = bincode::serde::encode_to_vec(&input, bincode::config::standard()).unwrap_or_default();
    hex::encode(ring::digest::digest(&ring::digest::SHA256, &bytes))
}

/// Decodes a reference binary chain file (`.tcbin`).
pub fn decode_binary(bytes: &[u8]) -> Result<Vec<RefThoughtPub>, String> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        if bytes.len() - at < 8 {
            return Err(format!("torn record header at byte {at}"));
        }
        let len = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        if len > MAX_RECORD_BYTES || (bytes.len() - at - 8) as u64 > 0 && len > (bytes.len() - at - 8) as u64 {
            return Err(format!("record {} at byte {at}: length {len} runs past the file", out.len()));
        }
        let payload = &bytes[at + 8..at + 8 + len as usize];
        at += 8 + len as usize;
        let config = bincode::config::standard();
        let (version, _): (u32, usize) = bincode::decode_from_slice(payload, config).map_err(|e| format!("record {}: {e}", out.len()))?;
        let thought = match version {
            3.. => match bincode::serde::decode_from_slice::<RefThought, _>(payload, config) {
                Ok((t, used)) if used == payload.len() => t,
                _ => v2(payload, out.len())?,
            },
            2 => v2(payload, out.len())?,
            v => return Err(format!("record {}: thought schema {v} (MentisDB before 0.8) is not supported; open the directory once with a reference 0.9 daemon to migrate it", out.len())),
        };
        out.push(RefThoughtPub(thought));
    }
    Ok(out)
}

fn v2(payload: &[u8], n: usize) -> Result<RefThought, String> {
    bincode::serde::decode_from_slice::<RefThoughtV2, _>(payload, bincode::config::standard()).map(|(t, _)| t.into()).map_err(|e| format!("record {n}: {e}"))
}

/// Decodes a reference legacy JSONL chain file (one thought per line).
pub fn decode_jsonl(bytes: &[u8]) -> Result<Vec<RefThoughtPub>, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| serde_json::from_str::<RefThought>(l).map(RefThoughtPub).map_err(|e| format!("line {}: {e}", n + 1)))
        .collect()
}

/// One decoded reference thought (opaque outside this module).
#[derive(Debug, Clone)]
pub struct RefThoughtPub(RefThought);

/// A thought whose stored hash or link does not match the reference's own
/// hash chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashMismatch {
    pub chain_key: String,
    pub index: u64,
    pub id: String,
    pub reason: String,
}

/// Checks the reference's hash chain; every mismatch is returned.
pub fn check_reference_chain(chain_key: &str, thoughts: &[RefThoughtPub]) -> Vec<HashMismatch> {
    let mut out = Vec::new();
    let mut prev = String::new();
    for (pos, RefThoughtPub(t)) in thoughts.iter().enumerate() {
        let mut reasons = Vec::new();
        if t.index != pos as u64 {
            reasons.push(format!("index {} at position {pos}", t.index));
        }
        if t.prev_hash != prev {
            reasons.push("prev_hash does not name the previous thought's hash".to_string());
        }
        let computed = reference_hash(t);
        if computed != t.hash {
            reasons.push(format!("stored hash {} but the content hashes to {computed}", t.hash));
        }
        if !reasons.is_empty() {
            out.push(HashMismatch { chain_key: chain_key.to_string(), index: t.index, id: t.id.to_string(), reason: reasons.join("; ") });
        }
        prev = t.hash.clone();
    }
    out
}

/// A reference agent record (its registry sidecar).
#[derive(Debug, Clone, Deserialize)]
struct RefAgent {
    agent_id: String,
    #[serde(default)]
    display_name: Option<String>,
    #[serde(default)]
    owner: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    aliases: Vec<String>,
    #[serde(default)]
    public_keys: Vec<RefKey>,
    #[serde(default)]
    status: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct RefKey {
    key_id: String,
    algorithm: String,
    public_key_bytes: Vec<u8>,
    #[serde(default)]
    revoked_at: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct RefAgents {
    #[serde(default)]
    agents: BTreeMap<String, RefAgent>,
}

fn parse_agents(bytes: &[u8]) -> Result<Vec<RefAgent>, String> {
    serde_json::from_slice::<RefAgents>(bytes).map(|a| a.agents.into_values().collect()).map_err(|e| format!("agent registry: {e}"))
}

/// Builds our chain object (header + records, our canonical hashes) from
/// the reference thoughts; agents' names and owners come from `agents`.
fn build_chain(chain_key: &str, format: ChainFormat, thoughts: &[RefThoughtPub], agents: &[RefAgent]) -> Result<Vec<u8>, String> {
    let by_agent: BTreeMap<&str, &RefAgent> = agents.iter().map(|a| (a.agent_id.as_str(), a)).collect();
    let index_of: BTreeMap<Uuid, u64> = thoughts.iter().map(|RefThoughtPub(t)| (t.id, t.index)).collect();
    let mut bytes = encode_header(format, chain_key);
    let mut prev: Option<String> = None;
    for RefThoughtPub(t) in thoughts {
        let agent = by_agent.get(t.agent_id.as_str());
        let name = agent.and_then(|a| a.display_name.clone()).filter(|n| !n.trim().is_empty()).unwrap_or_else(|| t.agent_id.clone());
        let entity_type = t.entity_type.clone().filter(|e| !e.trim().is_empty());
        let relations = t
            .relations
            .iter()
            .map(|r| {
                let kind: RelationKind = format!("{:?}", r.kind).parse().map_err(|e| format!("thought {}: {e}", t.index))?;
                let local = r.chain_key.as_deref().is_none_or(|k| k == chain_key);
                Ok(ThoughtRelation { valid_at: None, kind, target_id: r.target_id.to_string(), target_index: if local { index_of.get(&r.target_id).copied() } else { None }, chain_key: r.chain_key.clone() })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let mut ours = Thought {
            // Schema 1 (no salt) keeps the thought as it was; a typed thought is schema 3, which needs a salt.
            schema_version: if entity_type.is_some() { 3 } else { 1 },
            source_episode: Default::default(),
            id: t.id.to_string(),
            index: t.index,
            timestamp: t.timestamp.clone(),
            session_id: t.session_id.map(|s| s.to_string()),
            agent_id: t.agent_id.clone(),
            agent_name: name,
            agent_owner: agent.and_then(|a| a.owner.clone()),
            signing_key_id: t.signing_key_id.clone(),
            thought_signature: t.thought_signature.clone(),
            thought_type: format!("{:?}", t.thought_type).parse::<ThoughtType>().map_err(|e| format!("thought {}: {e}", t.index))?,
            role: format!("{:?}", t.role).parse::<ThoughtRole>().map_err(|e| format!("thought {}: {e}", t.index))?,
            content: t.content.clone(),
            confidence: t.confidence.map(f64::from),
            importance: f64::from(t.importance),
            tags: t.tags.clone(),
            concepts: t.concepts.clone(),
            refs: t.refs.clone(),
            relations,
            content_salt: None,
            entity_type: entity_type.clone(),
            prev_hash: prev.clone(),
            hash: String::new(),
            forgotten: None,
        };
        if entity_type.is_some() {
            // A random salt, as for any schema 3 thought: one derived from
            // the (public) id would let anyone confirm a guess of a forgotten
            // thought's content. Re-runs skip the chain, so nothing repeats it.
            let mut salt = [0u8; 16];
            getrandom::fill(&mut salt).map_err(|e| format!("no random source for a content salt: {e}"))?;
            ours.content_salt = Some(hex::encode(salt));
        }
        ours.hash = compute_thought_hash(&ours);
        prev = Some(ours.hash.clone());
        bytes.extend_from_slice(&encode_thought(format, &ours));
    }
    Ok(bytes)
}

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
pub fn find_chains(dir: &Path) -> Result<Vec<SourceChain>, String> {
    let registry = dir.join("mentisdb-registry.json");
    let mut out = Vec::new();
    if let Ok(bytes) = std::fs::read(&registry) {
        let v: Value = serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", registry.display()))?;
        for (key, entry) in v.get("chains").and_then(Value::as_object).into_iter().flatten() {
            let location = entry.get("storage_location").and_then(Value::as_str).unwrap_or_default();
            let name = Path::new(location).file_name().map(PathBuf::from).ok_or_else(|| format!("{}: chain '{key}' has no storage_location", registry.display()))?;
            let file = dir.join(&name);
            let jsonl = name.extension().is_some_and(|e| e == "jsonl");
            let stem = name.to_string_lossy().rsplit_once('.').map(|(s, _)| s.to_string()).unwrap_or_default();
            out.push(SourceChain { chain_key: key.clone(), file, jsonl, agents_file: dir.join(format!("{stem}.agents.json")) });
        }
        return Ok(out);
    }
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
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
pub fn import_reference_dir(db: &Target, dir: &Path, mut progress: impl FnMut(&str, u64)) -> Result<ImportSummary, String> {
    let mut summary = ImportSummary::default();
    for source in find_chains(dir)? {
        let bytes = std::fs::read(&source.file).map_err(|e| format!("{}: {e}", source.file.display()))?;
        let thoughts = if source.jsonl { decode_jsonl(&bytes) } else { decode_binary(&bytes) }.map_err(|e| format!("{}: {e}", source.file.display()))?;
        summary.mismatches.extend(check_reference_chain(&source.chain_key, &thoughts));
        if db.chain_exists(&source.chain_key)? {
            progress(&source.chain_key, thoughts.len() as u64);
            summary.chains.push((source.chain_key, ChainOutcome::AlreadyPresent));
            continue;
        }
        let agents = match std::fs::read(&source.agents_file) {
            Ok(b) => parse_agents(&b).map_err(|e| format!("{}: {e}", source.agents_file.display()))?,
            Err(_) => Vec::new(),
        };
        let format = if source.jsonl { ChainFormat::Jsonl } else { ChainFormat::Binary };
        let object = build_chain(&source.chain_key, format, &thoughts, &agents)?;
        let thought_count = db.import_chain(&source.chain_key, &object).map_err(|e| format!("chain '{}': {e}", source.chain_key))?;
        let agent_count = import_agents(db, &source.chain_key, &agents, &mut summary.warnings)?;
        progress(&source.chain_key, thoughts.len() as u64);
        summary.chains.push((source.chain_key, ChainOutcome::Imported { thoughts: thought_count, agents: agent_count }));
    }
    let keys: Vec<String> = summary.chains.iter().map(|(k, _)| k.clone()).collect();
    summary.skills = import_reference_skills(db, dir, &keys, &mut summary.warnings)?;
    summary.webhooks = import_reference_webhooks(db, dir, &mut summary.warnings)?;
    Ok(summary)
}

/// The manifest of a MentisDB 0.10 `.mentis` backup (a zip archive).
#[derive(Deserialize)]
struct MentisManifest {
    files: Vec<MentisFile>,
}

#[derive(Deserialize)]
struct MentisFile {
    relative_path: String,
    sha256: String,
    uncompressed_bytes: u64,
}

/// Largest file taken out of a `.mentis` archive.
const MAX_ARCHIVE_FILE: u64 = 4 << 30;

/// Unpacks MentisDB 0.10's `.mentis` backup `archive` into a new temporary
/// directory, laid out as the data directory it was made from. Every file
/// its manifest lists is checked (size and SHA-256) before anything is
/// imported; a file that does not match, a path that is not a plain name
/// in the directory, or a missing file refuses the whole archive. Its TLS
/// keys are left out. `progress(name)` is told of each file.
pub fn unpack_mentis_archive(archive: &Path, mut progress: impl FnMut(&str)) -> Result<tempfile::TempDir, String> {
    let fail = |what: String| format!("{}: {what}", archive.display());
    let file = std::fs::File::open(archive).map_err(|e| fail(e.to_string()))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| fail(format!("not a .mentis backup (a zip archive): {e}")))?;
    let manifest: MentisManifest = {
        let entry = zip.by_name("mentisdb.manifest.json").map_err(|_| fail("no mentisdb.manifest.json: not a MentisDB 0.10 backup".into()))?;
        serde_json::from_reader(entry).map_err(|e| fail(format!("mentisdb.manifest.json: {e}")))?
    };
    let out = tempfile::tempdir().map_err(|e| fail(e.to_string()))?;
    for f in &manifest.files {
        let name = f.relative_path.as_str();
        if name.starts_with("tls/") {
            continue;
        }
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') || name.len() > 255 {
            return Err(fail(format!("the manifest names '{name}', which is not a plain file name")));
        }
        if f.uncompressed_bytes > MAX_ARCHIVE_FILE {
            return Err(fail(format!("{name} is {} bytes, more than this import takes", f.uncompressed_bytes)));
        }
        let mut entry = zip.by_name(name).map_err(|_| fail(format!("the manifest lists {name} but the archive lacks it")))?;
        let mut bytes = Vec::with_capacity(f.uncompressed_bytes as usize);
        std::io::Read::read_to_end(&mut std::io::Read::take(&mut entry, MAX_ARCHIVE_FILE + 1), &mut bytes).map_err(|e| fail(format!("{name}: {e}")))?;
        let digest = hex::encode(ring::digest::digest(&ring::digest::SHA256, &bytes));
        if bytes.len() as u64 != f.uncompressed_bytes || digest != f.sha256.to_ascii_lowercase() {
            return Err(fail(format!("{name} does not match the manifest (SHA-256 {digest}, {} bytes; the manifest says {}, {} bytes): nothing was imported", bytes.len(), f.sha256, f.uncompressed_bytes)));
        }
        std::fs::write(out.path().join(name), &bytes).map_err(|e| fail(format!("{name}: {e}")))?;
        progress(name);
    }
    Ok(out)
}

/// What the token step did: names added, names already there, names skipped (revoked).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenOutcome {
    pub imported: Vec<String>,
    pub present: Vec<String>,
    pub revoked: Vec<String>,
}

/// Takes MentisDB 0.10's `bearer-tokens.json` of `dir` (if any) into the
/// token file `tokens_file`, by hash: the same secrets keep working, with
/// the same chains. A global token is admin on every chain; a chain-scoped
/// one is admin on its chains (0.10 lets it call every tool on them).
/// Revoked tokens are left out. Without a token file nothing is written and
/// a warning says how to import them.
pub fn import_reference_tokens(dir: &Path, tokens_file: Option<&Path>, warnings: &mut Vec<String>) -> Result<TokenOutcome, String> {
    let path = dir.join(crate::tokens::REFERENCE_REGISTRY);
    let Some(tokens) = crate::tokens::read_reference_tokens(&path).map_err(|e| e.to_string())? else { return Ok(TokenOutcome::default()) };
    let mut outcome = TokenOutcome::default();
    let Some(file) = tokens_file else {
        if !tokens.is_empty() {
            warnings.push(format!("{} lists {} bearer tokens: set MENTISDB_TOKENS_FILE (or --tokens-file) and run the import again to take them in", path.display(), tokens.len()));
        }
        return Ok(outcome);
    };
    for t in tokens {
        if t.revoked {
            outcome.revoked.push(t.alias);
            continue;
        }
        let chains = t.chains;
        if crate::tokens::import_token(file, &t.alias, &t.sha256_hex, mentisdb_core::dispatch::Access::Admin, &chains).map_err(|e| e.to_string())? {
            outcome.imported.push(t.alias);
        } else {
            outcome.present.push(t.alias);
        }
    }
    Ok(outcome)
}

/// MentisDB 0.10's `mentisdb-webhooks.json`.
#[derive(Deserialize)]
struct RefWebhooks {
    webhooks: Vec<RefWebhook>,
}

#[derive(Deserialize)]
struct RefWebhook {
    id: String,
    url: String,
    chain_key_filter: Option<String>,
    thought_type_filter: Option<Vec<String>>,
    active: bool,
}

/// Registers MentisDB 0.10's webhooks of `dir` (if any) through
/// `mentisdb_register_webhook`: same URL and filters, a new id and a new
/// signing secret (0.10 does not sign), deliveries from now on (the imported
/// thoughts are not sent). Inactive ones, ones registered already (same URL
/// and filters) and ones the daemon's URL rule refuses are reported in
/// `warnings`. Returns `(0.10 id, new id)` of each one registered.
pub fn import_reference_webhooks(db: &Target, dir: &Path, warnings: &mut Vec<String>) -> Result<Vec<(String, String)>, String> {
    let path = dir.join("mentisdb-webhooks.json");
    let Ok(bytes) = std::fs::read(&path) else { return Ok(Vec::new()) };
    let file: RefWebhooks = serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let existing = db.call("mentisdb_list_webhooks", json!({})).ok().and_then(|v| v["webhooks"].as_array().cloned()).unwrap_or_default();
    let mut done = Vec::new();
    for hook in file.webhooks {
        if !hook.active {
            warnings.push(format!("webhook {} ({}) is inactive in the reference: not registered", hook.id, hook.url));
            continue;
        }
        let mut types = hook.thought_type_filter.clone();
        if let Some(t) = types.as_mut() {
            t.sort();
        }
        let same = |e: &Value| {
            let mut theirs: Option<Vec<String>> = e["thought_type_filter"].as_array().map(|a| a.iter().filter_map(|t| t.as_str().map(str::to_string)).collect());
            if let Some(t) = theirs.as_mut() {
                t.sort();
            }
            e["url"].as_str() == Some(&hook.url) && e["chain_key_filter"].as_str() == hook.chain_key_filter.as_deref() && theirs == types
        };
        if existing.iter().any(same) {
            warnings.push(format!("webhook {} ({}) is registered already: skipped", hook.id, hook.url));
            continue;
        }
        let args = json!({ "url": hook.url, "chain_key_filter": hook.chain_key_filter, "thought_type_filter": hook.thought_type_filter });
        match db.call("mentisdb_register_webhook", args) {
            Ok(v) => done.push((hook.id, v["webhook"]["id"].as_str().unwrap_or_default().to_string())),
            Err(e) => warnings.push(format!("webhook {} ({}) not registered: {e}", hook.id, hook.url)),
        }
    }
    Ok(done)
}

/// Writes the reference's agent records through the agent tools. A record
/// our rules refuse (e.g. a public key that is not a valid Ed25519 point)
/// is reported in `warnings` and the rest goes on.
fn import_agents(db: &Target, chain_key: &str, agents: &[RefAgent], warnings: &mut Vec<String>) -> Result<usize, String> {
    for a in agents {
        let mut call = |tool: &str, args: Value| {
            if let Err(e) = db.call(tool, args) {
                warnings.push(format!("chain '{chain_key}', agent '{}': {tool}: {e}", a.agent_id));
            }
        };
        let mut args = json!({ "chain_key": chain_key, "agent_id": a.agent_id });
        if let Some(n) = a.display_name.as_deref().filter(|n| !n.trim().is_empty()) {
            args["display_name"] = json!(n);
        }
        if let Some(o) = a.owner.as_deref().filter(|o| !o.trim().is_empty()) {
            args["agent_owner"] = json!(o);
        }
        if let Some(d) = a.description.as_deref().filter(|d| !d.trim().is_empty()) {
            args["description"] = json!(d);
        }
        call("mentisdb_upsert_agent", args);
        // Every alias, the agent id included when the reference lists it (its first display name).
        for alias in &a.aliases {
            call("mentisdb_add_agent_alias", json!({ "chain_key": chain_key, "agent_id": a.agent_id, "alias": alias }));
        }
        for k in &a.public_keys {
            call("mentisdb_add_agent_key", json!({ "chain_key": chain_key, "agent_id": a.agent_id, "key_id": k.key_id, "algorithm": k.algorithm, "public_key_bytes": k.public_key_bytes }));
            if k.revoked_at.is_some() {
                call("mentisdb_revoke_agent_key", json!({ "chain_key": chain_key, "agent_id": a.agent_id, "key_id": k.key_id }));
            }
        }
        if matches!(a.status.as_deref(), Some("Revoked" | "Disabled" | "revoked" | "disabled")) {
            call("mentisdb_disable_agent", json!({ "chain_key": chain_key, "agent_id": a.agent_id }));
        }
    }
    Ok(agents.len())
}

/// The reference skill registry file (`mentisdb-skills.bin`: bincode of
/// `{version, skills: map skill_id -> entry}`; each version is the full
/// text or a unified diff against the previous one).
#[derive(Deserialize)]
struct RefSkillRegistry {
    #[allow(dead_code)]
    version: u32,
    skills: BTreeMap<String, RefSkill>,
}

#[derive(Deserialize)]
struct RefSkill {
    skill_id: String,
    #[allow(dead_code)]
    created_at: String,
    #[allow(dead_code)]
    updated_at: String,
    status: RefSkillStatus,
    status_reason: Option<String>,
    versions: Vec<RefSkillVersion>,
}

#[derive(Deserialize, PartialEq, Eq)]
enum RefSkillStatus {
    Active,
    Deprecated,
    Revoked,
}

#[derive(Deserialize, Clone, Copy)]
enum RefSkillFormat {
    Markdown,
    Json,
}

#[derive(Deserialize)]
enum RefSkillContent {
    Full { raw: String },
    Delta { patch: String },
}

#[derive(Deserialize)]
struct RefSkillVersion {
    #[allow(dead_code)]
    version_id: Uuid,
    #[allow(dead_code)]
    version_number: u32,
    #[allow(dead_code)]
    uploaded_at: String,
    uploaded_by_agent_id: String,
    uploaded_by_agent_name: Option<String>,
    #[allow(dead_code)]
    uploaded_by_agent_owner: Option<String>,
    source_format: RefSkillFormat,
    content_hash: String,
    content: RefSkillContent,
    signing_key_id: Option<String>,
    skill_signature: Option<Vec<u8>>,
}

/// A skill version as 0.10.6 and later write it: `schema_version` before `content`.
#[derive(Deserialize)]
struct RefSkillVersion06 {
    version_id: Uuid,
    version_number: u32,
    uploaded_at: String,
    uploaded_by_agent_id: String,
    uploaded_by_agent_name: Option<String>,
    uploaded_by_agent_owner: Option<String>,
    source_format: RefSkillFormat,
    content_hash: String,
    #[allow(dead_code)]
    schema_version: u32,
    content: RefSkillContent,
    signing_key_id: Option<String>,
    skill_signature: Option<Vec<u8>>,
}

#[derive(Deserialize)]
struct RefSkill06 {
    skill_id: String,
    created_at: String,
    updated_at: String,
    status: RefSkillStatus,
    status_reason: Option<String>,
    versions: Vec<RefSkillVersion06>,
}

#[derive(Deserialize)]
struct RefSkillRegistry06 {
    version: u32,
    skills: BTreeMap<String, RefSkill06>,
}

/// The skill registry in either layout: 0.10.6 and later (a `schema_version`
/// in each version) first, then the earlier one (0.9.x to 0.10.5). Bincode
/// is positional, so a file decodes whole in exactly one of them.
fn decode_skill_registry(bytes: &[u8]) -> Result<RefSkillRegistry, String> {
    let config = bincode::config::standard();
    if let Ok((r, used)) = bincode::serde::decode_from_slice::<RefSkillRegistry06, _>(bytes, config) {
        if used == bytes.len() {
            let skills = r.skills.into_iter().map(|(id, s)| (id, RefSkill {
                skill_id: s.skill_id,
                created_at: s.created_at,
                updated_at: s.updated_at,
                status: s.status,
                status_reason: s.status_reason,
                versions: s.versions.into_iter().map(|v| RefSkillVersion {
                    version_id: v.version_id,
                    version_number: v.version_number,
                    uploaded_at: v.uploaded_at,
                    uploaded_by_agent_id: v.uploaded_by_agent_id,
                    uploaded_by_agent_name: v.uploaded_by_agent_name,
                    uploaded_by_agent_owner: v.uploaded_by_agent_owner,
                    source_format: v.source_format,
                    content_hash: v.content_hash,
                    content: v.content,
                    signing_key_id: v.signing_key_id,
                    skill_signature: v.skill_signature,
                }).collect(),
            })).collect();
            return Ok(RefSkillRegistry { version: r.version, skills });
        }
    }
    let (r, _) = bincode::serde::decode_from_slice::<RefSkillRegistry, _>(bytes, config).map_err(|e| e.to_string())?;
    Ok(r)
}

/// What the skill step did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillOutcome {
    /// `(skill_id, versions uploaded)` of each skill added.
    pub imported: Vec<(String, usize)>,
    /// Skill ids the store already had (nothing added).
    pub skipped: Vec<String>,
}

/// Imports the reference skill registry of `dir` (if any): every version's
/// full text (deltas applied, each checked against its stored SHA-256) is
/// uploaded in order by its uploading agent (looked up in the chains just
/// imported), then a deprecated/revoked status and its reason are set. A
/// skill id the store already has is skipped. Version ids and upload times
/// are new (ours are assigned at upload).
pub fn import_reference_skills(db: &Target, dir: &Path, chain_keys: &[String], warnings: &mut Vec<String>) -> Result<SkillOutcome, String> {
    let path = dir.join("mentisdb-skills.bin");
    let Ok(bytes) = std::fs::read(&path) else { return Ok(SkillOutcome::default()) };
    let registry = decode_skill_registry(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut outcome = SkillOutcome::default();
    for skill in registry.skills.into_values() {
        let exists = db.call("mentisdb_skill_versions", json!({ "skill_id": skill.skill_id })).is_ok();
        if exists {
            outcome.skipped.push(skill.skill_id);
            continue;
        }
        let mut text = String::new();
        let mut uploaded = 0;
        for (n, v) in skill.versions.iter().enumerate() {
            text = match &v.content {
                RefSkillContent::Full { raw } => raw.clone(),
                RefSkillContent::Delta { patch } => {
                    let patch = diffy::Patch::from_str(patch).map_err(|e| format!("skill '{}' version {n}: {e}", skill.skill_id))?;
                    diffy::apply(&text, &patch).map_err(|e| format!("skill '{}' version {n}: {e}", skill.skill_id))?
                }
            };
            let digest = hex::encode(ring::digest::digest(&ring::digest::SHA256, text.as_bytes()));
            if digest != v.content_hash {
                warnings.push(format!("skill '{}' version {n}: content hashes to {digest}, the registry says {}", skill.skill_id, v.content_hash));
            }
            // The chain whose registry gives the uploader the name the reference recorded, else any that has it.
            let agent_in = |k: &String| db.call("mentisdb_get_agent", json!({ "chain_key": k, "agent_id": v.uploaded_by_agent_id })).ok();
            let named = |k: &&String| agent_in(k).is_some_and(|a| a["agent"]["display_name"].as_str() == v.uploaded_by_agent_name.as_deref());
            let chain = chain_keys.iter().find(named).or_else(|| chain_keys.iter().find(|k| agent_in(k).is_some()));
            let mut args = json!({
                "skill_id": skill.skill_id, "agent_id": v.uploaded_by_agent_id, "content": text,
                "format": match v.source_format { RefSkillFormat::Markdown => "markdown", RefSkillFormat::Json => "json" },
            });
            if let Some(k) = chain {
                args["chain_key"] = json!(k);
            }
            if let (Some(key), Some(sig)) = (&v.signing_key_id, &v.skill_signature) {
                args["signing_key_id"] = json!(key);
                args["skill_signature"] = json!(sig);
            }
            db.call("mentisdb_upload_skill", args).map_err(|e| format!("skill '{}' version {n}: {e}", skill.skill_id))?;
            uploaded += 1;
        }
        let lifecycle = match skill.status {
            RefSkillStatus::Active => None,
            RefSkillStatus::Deprecated => Some("mentisdb_deprecate_skill"),
            RefSkillStatus::Revoked => Some("mentisdb_revoke_skill"),
        };
        if let Some(tool) = lifecycle {
            let mut args = json!({ "skill_id": skill.skill_id });
            if let Some(r) = &skill.status_reason {
                args["reason"] = json!(r);
            }
            db.call(tool, args).map_err(|e| format!("skill '{}': {tool}: {e}", skill.skill_id))?;
        }
        outcome.imported.push((skill.skill_id, uploaded));
    }
    Ok(outcome)
}

/// A synthetic reference chain of `n` thoughts in the reference's own file
/// format (binary `.tcbin`, or legacy JSONL when `jsonl`), with a valid
/// reference hash chain: for the import figure and tests (no reference code
/// needed to make one).
pub fn synthetic_reference_chain(n: usize, jsonl: bool) -> Vec<u8> {
    let types = [RefType::Finding, RefType::Decision, RefType::FactLearned, RefType::Plan, RefType::LessonLearned];
    let mut out = Vec::new();
    let mut prev = String::new();
    for i in 0..n {
        let mut t = RefThought {
            schema_version: 3,
            id: Uuid::from_u128(0x5eed_0000_0000_4000_8000_0000_0000_0000 + i as u128),
            index: i as u64,
            timestamp: format!("2026-01-{:02}T{:02}:{:02}:{:02}.{:09}Z", 1 + (i / 86_400) % 28, (i / 3600) % 24, (i / 60) % 60, i % 60, i),
            session_id: None,
            agent_id: format!("agent-{}", i % 7),
            signing_key_id: None,
            thought_signature: None,
            thought_type: types[i % types.len()],
            role: RefRole::Memory,
            content: format!("Thought {i}: the service on host-{} answered in {} ms after the deploy.", i % 13, 10 + i % 500),
            confidence: Some(0.5),
            importance: 0.25 + (i % 4) as f32 * 0.25,
            tags: vec![format!("t{}", i % 20)],
            concepts: vec!["service".into()],
            refs: if i > 0 { vec![(i - 1) as u64] } else { vec![] },
            relations: if i > 0 { vec![RefRelation { kind: RefRelationKind::References, target_id: Uuid::from_u128(0x5eed_0000_0000_4000_8000_0000_0000_0000 + (i - 1) as u128), chain_key: None, valid_at: None, invalid_at: None }] } else { vec![] },
            entity_type: None,
            source_episode: None,
            prev_hash: prev.clone(),
            hash: String::new(),
        };
        t.hash = reference_hash(&t);
        prev = t.hash.clone();
        if jsonl {
            out.extend_from_slice(serde_json::to_string(&t).expect("a thought serializes").as_bytes());
            out.push(b'\n');
        } else {
            let payload = bincode::serde::encode_to_vec(&t, bincode::config::standard()).expect("a thought encodes");
            out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
            out.extend_from_slice(&payload);
        }
    }
    out
}
