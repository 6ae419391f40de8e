//! Replies of the replication tools (`dispatch/sync_tools.rs`).

use crate::redact::Redaction;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `mentisdb_chain_records`: thoughts `from..from + count` of a chain as
/// chain-file records (the bytes its file holds for them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChainRecordsReply {
    /// The chain.
    pub chain_key: String,
    /// The record format: `binary` or `jsonl` (the chain's storage adapter).
    pub storage_adapter: String,
    /// Index of the first record.
    pub from: u64,
    /// How many records `records_base64` holds.
    pub count: u64,
    /// The records, one after another, standard base64.
    pub records_base64: String,
    /// Where the next page starts, when records up to `to` remain.
    pub next: Option<u64>,
    /// The chain's length now.
    pub thought_count: u64,
}

/// One thought of `mentisdb_append_batch`, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BatchItemReply {
    /// Its index in the chain.
    pub index: u64,
    /// Its id (the request's `thought_id`, or a fresh one).
    pub thought_id: String,
    /// Its chain hash.
    pub hash: String,
    /// True when an earlier request stored it already (same id and fields): nothing was written.
    pub replay: bool,
    /// Secrets replaced before hashing (see `mentisdb_append`).
    pub redactions: Vec<Redaction>,
}

/// `mentisdb_append_batch`: every thought of the batch, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AppendBatchReply {
    /// The chain.
    pub chain_key: String,
    /// One entry per requested thought, in request order.
    pub thoughts: Vec<BatchItemReply>,
    /// Hash of the chain's last thought after the batch.
    pub head_hash: Option<String>,
    /// The chain's length after the batch.
    pub thought_count: u64,
}
