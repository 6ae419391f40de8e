//! Whole-chain tools of MentisDB 0.10: branch a chain off a thought, merge
//! one chain into another (`crate::chain_ops` holds the semantics), delete
//! a chain; and
//! moving a whole chain object out and in (`crate::import`): export gives
//! the stored bytes (what the browser's `exportChain` gives), import
//! verifies them before anything is stored.

use crate::args::read_args;
use crate::args::ChainKey;
use super::replies::{BranchReply, CatchUpReply, DeleteChainReply, ExportChainReply, ImportChainReply, ImportMarkdownReply, MergeReply};
use crate::error::ImportError;
use base64::Engine as _;
use super::tools;
use crate::db::MentisDb;
use crate::error::ToolError;
use crate::limits;
use schemars::JsonSchema;

tools! {
    tool!("mentisdb_branch_from", "Create a chain branching off one thought of another (a StateSnapshot with a BranchesFrom relation to it). The source is unchanged.", BranchArgs => BranchReply, branch).many_chains(),
    tool!(admin "mentisdb_merge_chains", "Append every thought of source_chain_key to target_chain_key (without refs, relations or signatures), then delete the source.", MergeArgs => MergeReply, merge).many_chains(),
    tool!(admin "mentisdb_delete_chain", "Delete a chain for good: its thoughts and agent registry leave storage and its key may be used again.", DeleteChainArgs => DeleteChainReply, delete_chain),
    tool!(read "mentisdb_catch_up", "Take in what other daemons sharing the store appended; answer the chain's count and head.", CatchUpArgs => CatchUpReply, catch_up).blocking(),
    tool!(read "mentisdb_export_chain", "A chain's stored object as base64 with its SHA-256; mentisdb_import_chain takes it back.", ExportChainArgs => ExportChainReply, export_chain).blocking(),
    tool!(admin "mentisdb_import_chain", "Add a chain object (base64, from mentisdb_export_chain), verified first; never overwrites a chain.", ImportChainArgs => ImportChainReply, import_chain, caller),
    tool!("mentisdb_import_memory_markdown", "Append a MEMORY.md's thoughts (ours or 0.10's) to a chain in order (without refs, relations or times).", ImportMarkdownArgs => ImportMarkdownReply, import_markdown),
}

/// Arguments of `mentisdb_branch_from`.
#[derive(Debug, JsonSchema)]
pub(super) struct BranchArgs {
    /// The chain holding the thought to branch from.
    pub source_chain_key: ChainKey,
    /// Id of the thought the branch starts at.
    pub branch_thought_id: String,
    /// The new chain's key (must not exist).
    pub branch_chain_key: ChainKey,
}
read_args!(BranchArgs { source_chain_key, branch_thought_id, branch_chain_key });

/// Arguments of `mentisdb_merge_chains`.
#[derive(Debug, JsonSchema)]
pub(super) struct MergeArgs {
    /// The chain to move and delete.
    pub source_chain_key: ChainKey,
    /// The chain that receives them (created when absent).
    pub target_chain_key: ChainKey,
}
read_args!(MergeArgs { source_chain_key, target_chain_key });

/// Arguments of `mentisdb_delete_chain`.
#[derive(Debug, JsonSchema)]
pub(super) struct DeleteChainArgs {
    /// The chain to delete (no default).
    pub chain_key: ChainKey,
}
read_args!(DeleteChainArgs { chain_key });

/// Arguments of `mentisdb_catch_up`.
#[derive(Debug, JsonSchema)]
pub(super) struct CatchUpArgs {
    /// Chain to use; the daemon's default chain when omitted.
    pub chain_key: Option<ChainKey>,
    /// The index of a thought that must be served here.
    pub min_index: Option<u64>,
}
read_args!(CatchUpArgs { chain_key, min_index });

/// Arguments of `mentisdb_export_chain`.
#[derive(Debug, JsonSchema)]
pub(super) struct ExportChainArgs {
    /// Chain to use; the daemon's default chain when omitted.
    pub chain_key: Option<ChainKey>,
}
read_args!(ExportChainArgs { chain_key });

/// Arguments of `mentisdb_import_chain`.
#[derive(Debug, JsonSchema)]
pub(super) struct ImportChainArgs {
    /// The key the object names (a new chain).
    pub chain_key: ChainKey,
    /// The chain object, base64.
    pub chain_base64: String,
}
read_args!(ImportChainArgs { chain_key, chain_base64 });

fn export_chain(db: &MentisDb, a: ExportChainArgs) -> Result<ExportChainReply, ToolError> {
    let (chain_key, format, bytes) = db.export_chain(a.chain_key.as_deref())?;
    Ok(ExportChainReply { chain_key, storage_adapter: format.adapter_name().to_string(), byte_count: bytes.len(), sha256: crate::sha256::to_hex(&crate::sha256::digest(&[&bytes])), chain_base64: base64::engine::general_purpose::STANDARD.encode(&bytes) })
}

fn import_chain(db: &MentisDb, caller: Option<super::Caller<'_>>, a: ImportChainArgs) -> Result<ImportChainReply, ToolError> {
    let engine = base64::engine::GeneralPurpose::new(&base64::alphabet::STANDARD, base64::engine::GeneralPurposeConfig::new().with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent));
    let bytes = engine.decode(a.chain_base64.trim()).map_err(|e| ToolError::invalid(IMPORT_TOOL, format!("chain_base64: {e}")))?;
    db.import_chain_object(caller, &a.chain_key, &bytes)
}

const IMPORT_TOOL: &str = "mentisdb_import_chain";

impl MentisDb {
    /// `mentisdb_import_chain` on the object's bytes themselves (what a host
    /// that receives them raw, `POST /v1/chains/{key}/import`, calls instead
    /// of encoding them as base64 for the tool): `chain_key` must be the
    /// key the object names; the reply is the tool's.
    pub fn import_chain_object(&self, caller: Option<super::Caller<'_>>, chain_key: &str, bytes: &[u8]) -> Result<ImportChainReply, ToolError> {
        const TOOL: &str = IMPORT_TOOL;
        let want = key(TOOL, "chain_key", chain_key)?;
        match crate::record::peek_chain_key(bytes) {
            Some(named) if named != want => return Err(ToolError::invalid(TOOL, format!("the object is chain '{}', not '{want}'", crate::text::truncate_chars(&named, 64)))),
            _ => {}
        }
        let report = self.import_chain(bytes).map_err(|e| match e {
            ImportError::ChainExists { .. } => ToolError::Conflict(e.to_string()),
            ImportError::Storage(s) => ToolError::Storage(s),
            other => ToolError::invalid(TOOL, other.to_string()),
        })?;
        Ok(ImportChainReply {
            chain_key: report.chain_key,
            storage_adapter: report.format.adapter_name().to_string(),
            thought_count: report.thought_count,
            torn_tail_bytes: report.torn_tail_bytes,
            head_hash: report.head_hash,
            storage_location: crate::caller::shown_location(caller, report.storage_location),
        })
    }
}

fn key(tool: &str, field: &'static str, v: &str) -> Result<String, ToolError> {
    let k = v.trim();
    limits::check_key(field, k).map_err(|m| ToolError::invalid(tool, format!("{field}: {m}")))?;
    Ok(k.to_string())
}

fn branch(db: &MentisDb, a: BranchArgs) -> Result<BranchReply, ToolError> {
    const TOOL: &str = "mentisdb_branch_from";
    let source = key(TOOL, "source_chain_key", &a.source_chain_key)?;
    let branch = key(TOOL, "branch_chain_key", &a.branch_chain_key)?;
    let thought = key(TOOL, "branch_thought_id", &a.branch_thought_id)?;
    let made = db.branch_from(&source, &thought, &branch)?;
    Ok(BranchReply { branch_chain_key: branch, genesis_thought_id: made.genesis_thought_id, source_chain_key: source, branch_thought_id: thought })
}

fn merge(db: &MentisDb, a: MergeArgs) -> Result<MergeReply, ToolError> {
    const TOOL: &str = "mentisdb_merge_chains";
    let source = key(TOOL, "source_chain_key", &a.source_chain_key)?;
    let target = key(TOOL, "target_chain_key", &a.target_chain_key)?;
    let merged = db.merge_chains(&source, &target)?;
    Ok(MergeReply { thoughts_copied: merged.thoughts_copied, agents_remapped: merged.agents_remapped, source_deleted: true })
}

fn catch_up(db: &MentisDb, a: CatchUpArgs) -> Result<CatchUpReply, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let taken_in = db.catch_up(&key)?;
    let (thought_count, head_hash) = db.read_chain(&key, |c| c.map(|c| (c.len() as u64, c.head().map(|t| t.hash.to_hex()))).unwrap_or((0, None)))?;
    let reached = a.min_index.is_none_or(|i| i < thought_count);
    Ok(CatchUpReply { chain_key: key, taken_in, thought_count, head_hash, reached })
}

fn delete_chain(db: &MentisDb, a: DeleteChainArgs) -> Result<DeleteChainReply, ToolError> {
    let chain = key("mentisdb_delete_chain", "chain_key", &a.chain_key)?;
    let thought_count = db.delete_chain(&chain)?;
    Ok(DeleteChainReply { chain_key: chain, deleted: true, thought_count })
}

/// Arguments of `mentisdb_import_memory_markdown`.
#[derive(Debug, JsonSchema)]
pub(super) struct ImportMarkdownArgs {
    /// Chain to use; the daemon's default chain when omitted.
    pub chain_key: Option<ChainKey>,
    /// The MEMORY.md text.
    pub markdown: String,
    /// Agent of thoughts that name none (default `default`).
    pub default_agent_id: Option<String>,
}
read_args!(ImportMarkdownArgs { chain_key, markdown, default_agent_id });

fn import_markdown(db: &MentisDb, a: ImportMarkdownArgs) -> Result<ImportMarkdownReply, ToolError> {
    const TOOL: &str = "mentisdb_import_memory_markdown";
    let chain = db.resolve_key(a.chain_key.as_deref())?;
    let agent = match a.default_agent_id.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        Some(agent) => key(TOOL, "default_agent_id", agent)?,
        None => "default".to_string(),
    };
    let imported = db.import_memory_markdown(&chain, &a.markdown, &agent)?;
    Ok(ImportMarkdownReply { count: imported.len(), imported })
}
