//! Replies of the claim tools ([`crate::claims`]). Times are RFC 3339.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A lease: who holds a key of the chain, with which fencing token, until when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LeaseReply {
    /// The claimed key.
    pub key: String,
    /// Who holds it.
    pub holder: String,
    /// Grows with every new acquisition of the key; pass it as an append's
    /// `fencing` to write only while the lease holds.
    pub fencing_token: u64,
    /// When this holder acquired the key.
    pub acquired_at: String,
    /// When the lease ends unless renewed.
    pub expires_at: String,
    /// What the holder said when it claimed the key.
    #[serde(default)]
    pub metadata: Option<Value>,
}

/// `mentisdb_claim`, `mentisdb_renew_claim`, `mentisdb_release_claim`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClaimReply {
    /// Whether the request took effect. A refusal is an answer, not an error.
    pub ok: bool,
    /// The lease as it now stands (as it stood, for a release).
    #[serde(default)]
    pub claim: Option<LeaseReply>,
    /// A claim by the holder already holding the key: its lease was
    /// refreshed and its fencing token kept.
    #[serde(default)]
    pub deduped: Option<bool>,
    /// Why not: `held` (someone else holds the key), `not_held`, `wrong_holder`.
    #[serde(default)]
    pub reason: Option<String>,
    /// Who holds the key instead.
    #[serde(default)]
    pub held_by: Option<String>,
    /// When that holder's lease ends.
    #[serde(default)]
    pub expires_at: Option<String>,
    /// The index of the thought that records the change.
    #[serde(default)]
    pub record_index: Option<u64>,
}

/// `mentisdb_list_claims`: the leases held now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClaimListReply {
    /// The chain.
    pub chain_key: String,
    /// The leases held now, by key.
    pub claims: Vec<LeaseReply>,
}
