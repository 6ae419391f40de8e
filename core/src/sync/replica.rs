//! What a replica remembers between syncs of one chain: the last checkpoint
//! it accepted from the daemon, and the key that signed it. Stored as the
//! object `replicas/<chain stem>.json` (`naming::replica_object`), replaced
//! atomically after the thoughts it covers are stored.

use super::SyncError;
use crate::checkpoint::{self, TreeHead};
use crate::naming;
use crate::storage::Storage;
use serde::{Deserialize, Serialize};

/// The replica state's format version.
const VERSION: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
struct Stored {
    version: u32,
    chain_key: String,
    /// The verifier key that signed `checkpoint` (`<name>+<id>+<base64>`).
    verifier_key: String,
    /// The signed note last accepted.
    checkpoint: String,
}

/// A checkpoint this replica accepted: its text and what it states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    /// The signed note.
    pub note: String,
    /// Its tree head.
    pub head: TreeHead,
}

/// The checkpoint accepted for `chain_key` by an earlier sync, if any. The
/// stored note is verified again with the key stored beside it.
pub fn load(storage: &dyn Storage, chain_key: &str) -> Result<Option<Accepted>, SyncError> {
    let object = naming::replica_object(chain_key);
    let Some(bytes) = storage.read(&object)? else { return Ok(None) };
    let unusable = |why: String| SyncError::Local(format!("the replica state {object} is unusable ({why}); remove it to sync from scratch"));
    let stored: Stored = serde_json::from_slice(&bytes).map_err(|e| unusable(e.to_string()))?;
    if stored.version != VERSION || stored.chain_key != chain_key {
        return Err(unusable(format!("version {} for chain '{}'", stored.version, stored.chain_key)));
    }
    let (name, key) = checkpoint::parse_verifier_key(&stored.verifier_key).map_err(|e| unusable(e.to_string()))?;
    let head = checkpoint::verify_checkpoint(&stored.checkpoint, &name, &key).map_err(|e| unusable(e.to_string()))?;
    Ok(Some(Accepted { note: stored.checkpoint, head }))
}

/// Records `accepted` (signed by `verifier_key`) as chain `chain_key`'s last accepted checkpoint.
pub fn save(storage: &dyn Storage, chain_key: &str, verifier_key: &str, accepted: &Accepted) -> Result<(), SyncError> {
    let stored = Stored { version: VERSION, chain_key: chain_key.to_string(), verifier_key: verifier_key.to_string(), checkpoint: accepted.note.clone() };
    let bytes = serde_json::to_vec_pretty(&stored).map_err(|e| SyncError::Local(e.to_string()))?;
    storage.write_atomic(&naming::replica_object(chain_key), &bytes)?;
    Ok(())
}
