//! The engine's settings ([`DbConfig`]) and what opening and re-embedding
//! report ([`OpenReport`], [`RebuiltVectors`]).

use crate::host::{Parallelism, Sequential};
use crate::record::ChainFormat;
use std::sync::Arc;

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

/// What opening the store found, for the host to log; as JSON (the
/// browser's `openReport`), `{chains: [OpenedChain], refused: [{object, reason}]}`.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct OpenReport {
    /// Chains opened and verified: key, thought count, torn-tail bytes cut.
    pub chains: Vec<OpenedChain>,
    /// Objects refused: name or chain key, and why.
    #[serde(serialize_with = "refusals")]
    pub refused: Vec<(String, String)>,
}

/// `(object, reason)` pairs as `{object, reason}` objects.
fn refusals<S: serde::Serializer>(refused: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    #[derive(serde::Serialize)]
    struct Refused<'a> {
        object: &'a str,
        reason: &'a str,
    }
    s.collect_seq(refused.iter().map(|(object, reason)| Refused { object, reason }))
}

/// One chain opened at startup.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
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
