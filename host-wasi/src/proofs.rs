//! The component's `proofs` export: the core's proof and checkpoint
//! verifiers ([`mentisdb_core::merkle`], [`mentisdb_core::checkpoint`])
//! over hex text, for a plugin host that checks a daemon's answers.

use crate::bindings::exports::mentisdb::memory::proofs::{CheckpointHead, Guest};
use crate::exports::Component;
use mentisdb_core::checkpoint::{parse_verifier_key, verify_checkpoint};
use mentisdb_core::merkle::{self, Hash};

fn hash(field: &str, text: &str) -> Result<Hash, String> {
    let mut h = [0u8; 32];
    hex::decode_to_slice(text.trim(), &mut h).map_err(|_| format!("{field} is not 64 hex digits"))?;
    Ok(h)
}

fn hashes(list: &[String]) -> Result<Vec<Hash>, String> {
    list.iter().map(|h| hash("a proof hash", h)).collect()
}

impl Guest for Component {
    fn verify_inclusion(leaf_hash: String, index: u64, tree_size: u64, proof: Vec<String>, root: String) -> Result<bool, String> {
        Ok(merkle::verify_inclusion(&hash("leaf-hash", &leaf_hash)?, index, tree_size, &hashes(&proof)?, &hash("root", &root)?))
    }

    fn verify_consistency(first: u64, second: u64, proof: Vec<String>, first_root: String, second_root: String) -> Result<bool, String> {
        Ok(merkle::verify_consistency(first, second, &hash("first-root", &first_root)?, &hash("second-root", &second_root)?, &hashes(&proof)?))
    }

    fn verify_checkpoint(checkpoint: String, verifier_key: String) -> Result<CheckpointHead, String> {
        let (name, key) = parse_verifier_key(&verifier_key).map_err(|e| e.to_string())?;
        let head = verify_checkpoint(&checkpoint, &name, &key).map_err(|e| e.to_string())?;
        Ok(CheckpointHead { origin: head.origin, tree_size: head.tree_size, root: hex::encode(head.root) })
    }
}
