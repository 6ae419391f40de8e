//! Replies of the proof tools: checkpoints, inclusion and consistency
//! proofs, the daemon's identity. Hashes are lowercase hex.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `mentisdb_checkpoint`: a freshly signed checkpoint of the chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckpointReply {
    /// The C2SP tlog-checkpoint signed note (origin, size, base64 root, blank line, signature line).
    pub checkpoint: String,
    /// The chain it covers.
    pub chain_key: String,
    /// The number of thoughts it covers.
    pub tree_size: u64,
    /// The RFC 9162 root of those thoughts.
    pub root: String,
}

/// `mentisdb_inclusion_proof`: thought `index` is leaf `index` of the tree of `tree_size`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InclusionProofReply {
    /// The chain proved.
    pub chain_key: String,
    /// The thought's index (its leaf).
    pub index: u64,
    /// The tree size the proof is for.
    pub tree_size: u64,
    /// The leaf hash: SHA-256(0x00 || the thought's 32-byte chain hash).
    pub leaf_hash: String,
    /// The root of the tree of `tree_size` thoughts.
    pub root: String,
    /// The audit path, in the order RFC 9162 §2.1.3.2 consumes it.
    pub hashes: Vec<String>,
}

/// `mentisdb_consistency_proof`: the tree of `first` thoughts is a prefix of the tree of `second`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConsistencyProofReply {
    /// The chain proved.
    pub chain_key: String,
    /// The older tree size.
    pub first: u64,
    /// The newer tree size.
    pub second: u64,
    /// The root of the tree of `first` thoughts.
    pub first_root: String,
    /// The root of the tree of `second` thoughts.
    pub second_root: String,
    /// The proof, in the order RFC 9162 §2.1.4.2 consumes it.
    pub hashes: Vec<String>,
}

/// `mentisdb_identity`: the key that signs this daemon's checkpoints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IdentityReply {
    /// The signer name on checkpoint signature lines (and the origins' first part).
    pub name: String,
    /// The Ed25519 public key, hex.
    pub public_key: String,
    /// The signed-note key id, hex (first 4 bytes of SHA-256(name || 0x0A || 0x01 || key)).
    pub key_id: String,
    /// The signed-note verifier key: `<name>+<key id>+<base64(0x01 || key)>`.
    pub verifier_key: String,
}
