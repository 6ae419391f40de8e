//! Provable memory on a [`MentisDb`]: tree heads, signed checkpoints,
//! inclusion and consistency proofs of its chains.
//!
//! Contract: the tree of chain `k` at size `n` is the RFC 9162 tree over its
//! first `n` thoughts ([`crate::merkle`]); proofs are for sizes up to the
//! chain's current length. Checkpoints ([`crate::checkpoint`]) are signed
//! with the key the host hands over with [`MentisDb::set_checkpoint_signer`];
//! without one, asking for a checkpoint is [`ToolError::Unavailable`].
//! With an interval set, an append that wrote a thought also makes the
//! chain's checkpoint when the latest one is at least that old
//! ([`MentisDb::latest_checkpoint`]); those are kept in memory only (one a
//! chain), since any checkpoint can be made again from the chain.

use crate::checkpoint::{self, CheckpointSigner, LatestCheckpoint, TreeHead};
use crate::db::MentisDb;
use crate::error::ToolError;
use crate::merkle::{Hash, ProofError};

/// An inclusion proof with what a verifier checks it against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InclusionProof {
    /// The leaf hash of the thought (`SHA-256(0x00 || chain hash)`).
    pub leaf_hash: Hash,
    /// The root of the tree of `tree_size` thoughts.
    pub root: Hash,
    /// The audit path, in the order RFC 9162 §2.1.3.2 consumes it.
    pub hashes: Vec<Hash>,
}

/// A consistency proof with the two roots it links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsistencyProof {
    /// The root of the first `first` thoughts.
    pub first_root: Hash,
    /// The root of the first `second` thoughts.
    pub second_root: Hash,
    /// The proof, in the order RFC 9162 §2.1.4.2 consumes it.
    pub hashes: Vec<Hash>,
}

fn proof_error(tool: &str, e: ProofError) -> ToolError {
    ToolError::invalid(tool, e)
}

impl MentisDb {
    /// Hands the core the key that signs checkpoints (the host keeps the
    /// seed), and the least time between automatic checkpoints of one chain
    /// (`None`: only on request). `None` as signer removes the key.
    pub fn set_checkpoint_signer(&self, signer: Option<CheckpointSigner>, auto_interval_ms: Option<i64>) {
        *self.checkpoints.signer.write().unwrap_or_else(|e| e.into_inner()) = signer.map(|s| (s, auto_interval_ms));
    }

    /// The checkpoint signer the host set, if any.
    pub fn checkpoint_signer(&self) -> Option<CheckpointSigner> {
        self.checkpoints.signer.read().unwrap_or_else(|e| e.into_inner()).as_ref().map(|(s, _)| s.clone())
    }

    /// Chain `key`'s tree head now (size and root) under the signer's origin;
    /// a chain that does not exist yet (the default one) has the empty tree.
    pub fn tree_head(&self, key: &str, signer_name: &str) -> Result<TreeHead, ToolError> {
        let (tree_size, root) = self.read_chain(key, |c| match c {
            Some(c) => {
                let t = c.merkle();
                (t.len(), t.root(t.len()).expect("the tree's own size"))
            }
            None => (0, crate::merkle::empty_root()),
        })?;
        Ok(TreeHead { origin: checkpoint::origin(signer_name, key), tree_size, root })
    }

    /// A freshly signed checkpoint of chain `key`, which also becomes its latest.
    pub fn checkpoint(&self, key: &str) -> Result<LatestCheckpoint, ToolError> {
        let signer = self.checkpoint_signer().ok_or_else(|| ToolError::Unavailable("this daemon has no checkpoint signing key".to_string()))?;
        let head = self.tree_head(key, signer.name())?;
        let made = LatestCheckpoint { checkpoint: signer.sign(&head), tree_size: head.tree_size, made_at_ms: self.now_millis() };
        let mut latest = self.checkpoints.latest.write().unwrap_or_else(|e| e.into_inner());
        // Never replace a checkpoint of a larger tree (a racing request).
        if latest.get(key).is_none_or(|l| l.tree_size <= made.tree_size) {
            latest.insert(key.to_string(), made.clone());
        }
        Ok(made)
    }

    /// Chain `key`'s most recent checkpoint (made on request or after an append).
    pub fn latest_checkpoint(&self, key: &str) -> Option<LatestCheckpoint> {
        self.checkpoints.latest.read().unwrap_or_else(|e| e.into_inner()).get(key).cloned()
    }

    /// After an append: the chain's checkpoint, when automatic checkpoints
    /// are on and its latest is older than the interval. Never fails an append.
    pub(crate) fn auto_checkpoint(&self, key: &str) {
        let interval = match &*self.checkpoints.signer.read().unwrap_or_else(|e| e.into_inner()) {
            Some((_, Some(ms))) => *ms,
            _ => return,
        };
        let due = self.latest_checkpoint(key).is_none_or(|l| self.now_millis().saturating_sub(l.made_at_ms) >= interval);
        if due {
            let _ = self.checkpoint(key);
        }
    }

    /// Runs `f` on chain `key`'s Merkle tree (an empty tree for a chain
    /// that does not exist yet, so sizes past it are the proof's error).
    fn with_tree<R>(&self, key: &str, f: impl FnOnce(&crate::merkle::MerkleTree) -> Result<R, ToolError>) -> Result<R, ToolError> {
        self.read_chain(key, |c| match c {
            Some(c) => f(&c.merkle()),
            None => f(&crate::merkle::MerkleTree::new()),
        })?
    }

    /// The inclusion proof of thought `index` in the tree of the first
    /// `tree_size` thoughts of chain `key` (`tree_size` defaults to the chain's length).
    pub fn inclusion_proof(&self, key: &str, index: u64, tree_size: Option<u64>) -> Result<(u64, InclusionProof), ToolError> {
        const TOOL: &str = "mentisdb_inclusion_proof";
        self.with_tree(key, |t| {
            let size = tree_size.unwrap_or(t.len());
            let hashes = t.inclusion_proof(index, size).map_err(|e| proof_error(TOOL, e))?;
            let leaf_hash = t.leaf(index).expect("index < size <= len");
            Ok((size, InclusionProof { leaf_hash, root: t.root(size).map_err(|e| proof_error(TOOL, e))?, hashes }))
        })
    }

    /// The consistency proof that the first `first` thoughts of chain `key`
    /// are a prefix of its first `second` (`second` defaults to its length).
    pub fn consistency_proof(&self, key: &str, first: u64, second: Option<u64>) -> Result<(u64, ConsistencyProof), ToolError> {
        const TOOL: &str = "mentisdb_consistency_proof";
        self.with_tree(key, |t| {
            let second = second.unwrap_or(t.len());
            let hashes = t.consistency_proof(first, second).map_err(|e| proof_error(TOOL, e))?;
            let roots = (t.root(first).map_err(|e| proof_error(TOOL, e))?, t.root(second).map_err(|e| proof_error(TOOL, e))?);
            Ok((second, ConsistencyProof { first_root: roots.0, second_root: roots.1, hashes }))
        })
    }
}
