//! Replication: what a replica of a chain (the browser module, the WASI
//! component, `crate::sync`) needs from the daemon besides checkpoints and
//! proofs: the chain's records after an index, byte for byte in its file
//! format, and an idempotent batch append for the thoughts it wrote offline.

use crate::args::read_args;
use crate::args::Bounded;
use crate::args::ChainKey;
use super::replies::{AppendBatchReply, BatchItemReply, ChainRecordsReply};
use super::thought_tools::{new_thought, AppendArgs};
use super::tools;
use crate::db::MentisDb;
use crate::error::ToolError;
use crate::record;
use crate::thought::ThoughtRole;
use base64::Engine as _;
use schemars::JsonSchema;

tools! {
    tool!(read "mentisdb_chain_records", "Thoughts from..to as storage records (base64, at most `limit`, default 1000; `next` pages), for replicas.", RecordsArgs => ChainRecordsReply, records).blocking(),
    tool!("mentisdb_append_batch", "Append up to 1000 thoughts (mentisdb_append's fields) in order; idempotent by thought_id, not atomic.", AppendBatchArgs => AppendBatchReply, append_batch),
}

/// Most records one `mentisdb_chain_records` page holds.
const MAX_RECORDS_PAGE: u64 = 10_000;
/// Records a page holds when the request names no `limit`.
const DEFAULT_RECORDS_PAGE: u64 = 1_000;
/// A page stops after the record that reaches this many bytes.
const PAGE_BYTES: usize = 8 << 20;
/// Most thoughts one `mentisdb_append_batch` takes.
const MAX_BATCH: usize = 1_000;

/// Arguments of `mentisdb_chain_records`.
#[derive(Debug, JsonSchema)]
pub(super) struct RecordsArgs {
    /// Chain to use; the daemon's default chain when omitted.
    pub chain_key: Option<ChainKey>,
    /// Index of the first record (default 0).
    pub from: Option<u64>,
    /// Index after the last record (default: the end).
    pub to: Option<u64>,
    /// Most records in this page (default 1000).
    pub limit: Option<Bounded<1, MAX_RECORDS_PAGE>>,
}
read_args!(RecordsArgs { chain_key, from, to, limit });

/// Arguments of `mentisdb_append_batch`.
#[derive(Debug, JsonSchema)]
pub(super) struct AppendBatchArgs {
    /// Chain to use; the daemon's default chain when omitted.
    pub chain_key: Option<ChainKey>,
    /// 1 to 1000 thoughts, each as mentisdb_append's arguments.
    pub thoughts: Vec<AppendArgs>,
}
read_args!(AppendBatchArgs { chain_key, thoughts });

fn records(db: &MentisDb, a: RecordsArgs) -> Result<ChainRecordsReply, ToolError> {
    const TOOL: &str = "mentisdb_chain_records";
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let limit = a.limit.map_or(DEFAULT_RECORDS_PAGE, |l| l.get() as u64);
    db.read_chain(&key, |chain| {
        let chain = chain.ok_or_else(|| ToolError::NotFound(format!("chain '{key}' does not exist")))?;
        let len = chain.len() as u64;
        let to = a.to.unwrap_or(len);
        let from = a.from.unwrap_or(0);
        if to > len {
            return Err(ToolError::invalid(TOOL, format!("to ({to}) is past the chain's length ({len})")));
        }
        if from > to {
            return Err(ToolError::invalid(TOOL, format!("from ({from}) is after to ({to})")));
        }
        let mut bytes = Vec::new();
        let mut end = from;
        while end < to && end - from < limit && bytes.len() < PAGE_BYTES {
            bytes.extend_from_slice(&record::encode_thought(chain.format(), &chain.thoughts()[end as usize]));
            end += 1;
        }
        Ok(ChainRecordsReply {
            chain_key: key.clone(),
            storage_adapter: chain.format().adapter_name().to_string(),
            from,
            count: end - from,
            records_base64: base64::engine::general_purpose::STANDARD.encode(&bytes),
            next: (end < to).then_some(end),
            thought_count: len,
        })
    })?
}

fn append_batch(db: &MentisDb, a: AppendBatchArgs) -> Result<AppendBatchReply, ToolError> {
    const TOOL: &str = "mentisdb_append_batch";
    let key = db.resolve_key(a.chain_key.as_deref())?;
    if a.thoughts.is_empty() || a.thoughts.len() > MAX_BATCH {
        return Err(ToolError::invalid(TOOL, format!("thoughts must hold 1 to {MAX_BATCH} thoughts, got {}", a.thoughts.len())));
    }
    if let Some(pos) = a.thoughts.iter().position(|t| t.fields.chain_key.as_deref().is_some_and(|k| k != key)) {
        return Err(ToolError::invalid(TOOL, format!("thoughts[{pos}].chain_key is not the batch's chain '{key}'")));
    }
    let mut out = Vec::with_capacity(a.thoughts.len());
    for (pos, t) in a.thoughts.into_iter().enumerate() {
        let input = new_thought(&key, t.thought_type, t.role.unwrap_or(ThoughtRole::Memory), t.fields);
        let stored = db.append_reporting(&key, input).map_err(|e| e.at_item(pos))?;
        out.push(BatchItemReply { index: stored.thought.index, thought_id: stored.thought.id.to_string(), hash: stored.thought.hash.to_hex(), replay: stored.replay, redactions: stored.redactions });
    }
    let (thought_count, head_hash) = db.with_chain(&key, |c| c.map(|c| (c.len() as u64, c.head().map(|t| t.hash.to_hex()))).unwrap_or((0, None)))?;
    Ok(AppendBatchReply { chain_key: key, thoughts: out, head_hash, thought_count })
}
