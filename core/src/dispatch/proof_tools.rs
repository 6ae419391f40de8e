//! Provable memory: signed checkpoints, inclusion and consistency proofs of
//! a chain's RFC 9162 Merkle tree, and the key that signs checkpoints
//! (`crate::proofs` holds the semantics, `crate::merkle` and
//! `crate::checkpoint` the algorithms and their verifiers).

use crate::args::read_args;
use crate::args::ChainKey;
use super::replies::{CheckpointReply, ConsistencyProofReply, IdentityReply, InclusionProofReply};
use super::{tools, NoArgs};
use crate::checkpoint;
use crate::db::MentisDb;
use crate::error::ToolError;
use schemars::JsonSchema;

tools! {
    tool!(read "mentisdb_checkpoint", "A freshly signed checkpoint (C2SP tlog note over the chain's RFC 9162 Merkle root); verify with mentisdb_identity's key.", ChainArgs => CheckpointReply, make_checkpoint),
    tool!(read "mentisdb_inclusion_proof", "Prove thought `index` is in the chain's RFC 9162 Merkle tree of `tree_size` thoughts (default all): leaf hash, root, audit path.", InclusionArgs => InclusionProofReply, inclusion),
    tool!(read "mentisdb_consistency_proof", "Prove the chain's first `first` thoughts are a prefix of its first `second` (default all): both RFC 9162 roots and the proof.", ConsistencyArgs => ConsistencyProofReply, consistency),
    tool!(read "mentisdb_identity", "The daemon's checkpoint signing identity (signer, Ed25519 public key, note key id).", NoArgs => IdentityReply, identity).daemon_wide(),
}

/// Just a chain.
#[derive(Debug, Default, JsonSchema)]
pub(super) struct ChainArgs {
    /// Chain to use; the daemon's default chain when omitted.
    pub chain_key: Option<ChainKey>,
}
read_args!(ChainArgs { chain_key });

/// Arguments of `mentisdb_inclusion_proof`.
#[derive(Debug, JsonSchema)]
pub(super) struct InclusionArgs {
    /// Chain to use; the daemon's default chain when omitted.
    pub chain_key: Option<ChainKey>,
    /// The thought's index (its leaf).
    pub index: u64,
    /// The tree size; the whole chain when omitted.
    #[schemars(range(min = 1))]
    pub tree_size: Option<u64>,
}
read_args!(InclusionArgs { chain_key, index, tree_size });

/// Arguments of `mentisdb_consistency_proof`.
#[derive(Debug, JsonSchema)]
pub(super) struct ConsistencyArgs {
    /// Chain to use; the daemon's default chain when omitted.
    pub chain_key: Option<ChainKey>,
    /// The older tree size (at least 1).
    #[schemars(range(min = 1))]
    pub first: u64,
    /// The newer size; the whole chain when omitted.
    #[schemars(range(min = 1))]
    pub second: Option<u64>,
}
read_args!(ConsistencyArgs { chain_key, first, second });

fn make_checkpoint(db: &MentisDb, a: ChainArgs) -> Result<CheckpointReply, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let made = db.checkpoint(&key)?;
    let root = root_of(&made.checkpoint);
    Ok(CheckpointReply { checkpoint: made.checkpoint, chain_key: key, tree_size: made.tree_size, root })
}

/// The root line of a checkpoint the core just made, as hex.
fn root_of(note: &str) -> String {
    let line = note.lines().nth(2).unwrap_or_default();
    hex::encode(crate::base64::decode(line).unwrap_or_default())
}

fn inclusion(db: &MentisDb, a: InclusionArgs) -> Result<InclusionProofReply, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let (tree_size, p) = db.inclusion_proof(&key, a.index, a.tree_size)?;
    Ok(InclusionProofReply { chain_key: key, index: a.index, tree_size, leaf_hash: hex::encode(p.leaf_hash), root: hex::encode(p.root), hashes: p.hashes.iter().map(hex::encode).collect() })
}

fn consistency(db: &MentisDb, a: ConsistencyArgs) -> Result<ConsistencyProofReply, ToolError> {
    let key = db.resolve_key(a.chain_key.as_deref())?;
    let (second, p) = db.consistency_proof(&key, a.first, a.second)?;
    Ok(ConsistencyProofReply {
        chain_key: key,
        first: a.first,
        second,
        first_root: hex::encode(p.first_root),
        second_root: hex::encode(p.second_root),
        hashes: p.hashes.iter().map(hex::encode).collect(),
    })
}

fn identity(db: &MentisDb, _a: NoArgs) -> Result<IdentityReply, ToolError> {
    let signer = db.checkpoint_signer().ok_or_else(|| ToolError::Unavailable("this daemon has no checkpoint signing key".to_string()))?;
    let pk = signer.public_key();
    Ok(IdentityReply { name: signer.name().to_string(), public_key: hex::encode(pk), key_id: hex::encode(checkpoint::key_id(signer.name(), &pk)), verifier_key: checkpoint::verifier_key(signer.name(), &pk) })
}
