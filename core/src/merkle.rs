//! A chain's Merkle tree in RFC 9162 (Certificate Transparency v2) form:
//! tree heads, inclusion and consistency proofs, and their pure verifiers.
//!
//! Contract:
//! - leaf `i`'s input is the 32 raw bytes of thought `i`'s chain hash;
//!   a leaf hash is `SHA-256(0x00 || input)`, an interior node
//!   `SHA-256(0x01 || left || right)`, the empty tree's root `SHA-256("")`
//!   (RFC 9162 §2.1.1);
//! - [`MerkleTree`] answers the root of any size `<= len`, an inclusion
//!   proof (§2.1.3.1) and a consistency proof (§2.1.4.1) with O(log n)
//!   stored-node reads and at most O(log² n) hashes, never rehashing the chain; proof hashes are in the order
//!   the verifiers consume them;
//! - [`verify_inclusion`] (§2.1.3.2) and [`verify_consistency`] (§2.1.4.2)
//!   are pure functions a client runs without the daemon.
//!
//! Memory: the tree keeps every complete node: level 0 holds the leaf
//! hashes, level `k` the hashes of the complete aligned subtrees of `2^k`
//! leaves, so about `2n` hashes of 32 bytes, 64 bytes a thought
//! (64 MB for 1M thoughts). It is derived (built on the first proof after
//! opening a chain, then kept up as thoughts are committed), never stored.

use crate::derived::Derive;
use crate::hex_bytes::ThoughtHash;
use crate::thought::Thought;

/// A 32-byte SHA-256 hash.
pub type Hash = [u8; 32];

/// `SHA-256(0x00 || data)`: a leaf's hash (RFC 9162 §2.1.1).
pub fn leaf_hash(data: &[u8]) -> Hash {
    crate::sha256::digest(&[&[0x00], data])
}

/// `SHA-256(0x01 || left || right)`: an interior node's hash.
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    crate::sha256::digest(&[&[0x01], left, right])
}

/// The root of the empty tree: `SHA-256("")`.
pub fn empty_root() -> Hash {
    crate::sha256::digest(&[])
}

/// The leaf hash of a thought: [`leaf_hash`] of its chain hash's 32 bytes.
pub fn thought_leaf_hash(chain_hash: &ThoughtHash) -> Hash {
    leaf_hash(chain_hash.as_bytes())
}

/// Why a proof cannot be made for the asked sizes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    /// `tree_size` is larger than the tree.
    #[error("tree_size {asked} is larger than the chain ({len} thoughts)")]
    TooLarge {
        /// The size asked for.
        asked: u64,
        /// The tree's size.
        len: u64,
    },
    /// The leaf index is not below the tree size.
    #[error("index {index} is not below tree_size {tree_size}")]
    IndexOutOfRange {
        /// The leaf asked for.
        index: u64,
        /// The tree size asked for.
        tree_size: u64,
    },
    /// `first` is larger than `second`, or zero (RFC 9162 proves only `0 < m <= n`).
    #[error("consistency needs 0 < first <= second (got first {first}, second {second})")]
    BadRange {
        /// The older size.
        first: u64,
        /// The newer size.
        second: u64,
    },
}

/// Every complete node of a growing Merkle tree (see the module doc).
#[derive(Debug, Default, Clone)]
pub struct MerkleTree {
    /// `levels[k][j]` = hash of leaves `[j·2^k, (j+1)·2^k)`.
    levels: Vec<Vec<Hash>>,
}

impl MerkleTree {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of leaves.
    pub fn len(&self) -> u64 {
        self.levels.first().map_or(0, |l| l.len() as u64)
    }

    /// Whether the tree has no leaf.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends a leaf given its leaf hash; completes the nodes it closes
    /// (amortised two hashes a leaf).
    pub fn push_leaf_hash(&mut self, leaf: Hash) {
        if self.levels.is_empty() {
            self.levels.push(Vec::new());
        }
        self.levels[0].push(leaf);
        let mut k = 0;
        while self.levels[k].len().is_multiple_of(2) {
            let n = self.levels[k].len();
            let parent = node_hash(&self.levels[k][n - 2], &self.levels[k][n - 1]);
            if self.levels.len() == k + 1 {
                self.levels.push(Vec::new());
            }
            self.levels[k + 1].push(parent);
            k += 1;
        }
    }

    /// The tree of the first `size` leaves (`size` at most [`MerkleTree::len`]):
    /// its complete nodes copied, nothing hashed.
    pub fn truncated(&self, size: u64) -> MerkleTree {
        let mut levels = Vec::new();
        for (k, level) in self.levels.iter().enumerate() {
            let keep = (size >> k) as usize;
            if keep == 0 {
                break;
            }
            levels.push(level[..keep.min(level.len())].to_vec());
        }
        MerkleTree { levels }
    }

    /// Leaf `i`'s hash.
    pub fn leaf(&self, i: u64) -> Option<Hash> {
        self.levels.first().and_then(|l| l.get(i as usize).copied())
    }

    /// Bytes the tree holds in hashes (for the memory figure).
    pub fn hash_bytes(&self) -> usize {
        self.levels.iter().map(|l| l.len() * 32).sum()
    }

    /// MTH(D[start:end]) where `start` is a multiple of the largest power of
    /// two not above `end - start` or the range ends a tree (the only ranges
    /// RFC 9162's recursions visit); `start < end <= len`.
    fn range_hash(&self, start: u64, end: u64) -> Hash {
        let n = end - start;
        if n.is_power_of_two() && start.is_multiple_of(n) {
            let k = n.trailing_zeros() as usize;
            return self.levels[k][(start >> k) as usize];
        }
        let k = largest_power_below(n);
        node_hash(&self.range_hash(start, start + k), &self.range_hash(start + k, end))
    }

    /// The root of the first `size` leaves.
    pub fn root(&self, size: u64) -> Result<Hash, ProofError> {
        if size > self.len() {
            return Err(ProofError::TooLarge { asked: size, len: self.len() });
        }
        Ok(if size == 0 { empty_root() } else { self.range_hash(0, size) })
    }

    /// PATH(index, D[0:tree_size]) (RFC 9162 §2.1.3.1), leaf-side first.
    pub fn inclusion_proof(&self, index: u64, tree_size: u64) -> Result<Vec<Hash>, ProofError> {
        if tree_size > self.len() {
            return Err(ProofError::TooLarge { asked: tree_size, len: self.len() });
        }
        if index >= tree_size {
            return Err(ProofError::IndexOutOfRange { index, tree_size });
        }
        let mut out = Vec::new();
        self.path(index, 0, tree_size, &mut out);
        Ok(out)
    }

    fn path(&self, m: u64, start: u64, end: u64, out: &mut Vec<Hash>) {
        let n = end - start;
        if n == 1 {
            return;
        }
        let k = largest_power_below(n);
        if m < k {
            self.path(m, start, start + k, out);
            out.push(self.range_hash(start + k, end));
        } else {
            self.path(m - k, start + k, end, out);
            out.push(self.range_hash(start, start + k));
        }
    }

    /// PROOF(first, D[0:second]) (RFC 9162 §2.1.4.1); empty when `first == second`.
    pub fn consistency_proof(&self, first: u64, second: u64) -> Result<Vec<Hash>, ProofError> {
        if second > self.len() {
            return Err(ProofError::TooLarge { asked: second, len: self.len() });
        }
        if first == 0 || first > second {
            return Err(ProofError::BadRange { first, second });
        }
        let mut out = Vec::new();
        self.subproof(first, 0, second, true, &mut out);
        Ok(out)
    }

    fn subproof(&self, m: u64, start: u64, end: u64, whole: bool, out: &mut Vec<Hash>) {
        let n = end - start;
        if m == n {
            if !whole {
                out.push(self.range_hash(start, end));
            }
            return;
        }
        let k = largest_power_below(n);
        if m <= k {
            self.subproof(m, start, start + k, whole, out);
            out.push(self.range_hash(start + k, end));
        } else {
            self.subproof(m - k, start + k, end, false, out);
            out.push(self.range_hash(start, start + k));
        }
    }
}

/// The largest power of two strictly below `n` (`n >= 2`).
fn largest_power_below(n: u64) -> u64 {
    1u64 << (63 - (n - 1).leading_zeros())
}

impl Derive for MerkleTree {
    fn indexed(&self) -> usize {
        self.len() as usize
    }

    fn add(&mut self, t: &Thought) {
        self.push_leaf_hash(thought_leaf_hash(&t.hash));
    }
}

/// Verifies that `leaf` is leaf `index` of the tree of `tree_size` leaves
/// whose root is `root`, with `proof` (RFC 9162 §2.1.3.2).
pub fn verify_inclusion(leaf: &Hash, index: u64, tree_size: u64, proof: &[Hash], root: &Hash) -> bool {
    if index >= tree_size {
        return false;
    }
    let (mut f_n, mut s_n) = (index, tree_size - 1);
    let mut r = *leaf;
    for p in proof {
        if s_n == 0 {
            return false;
        }
        if f_n & 1 == 1 || f_n == s_n {
            r = node_hash(p, &r);
            if f_n & 1 == 0 {
                while f_n & 1 == 0 && f_n != 0 {
                    f_n >>= 1;
                    s_n >>= 1;
                }
            }
        } else {
            r = node_hash(&r, p);
        }
        f_n >>= 1;
        s_n >>= 1;
    }
    s_n == 0 && r == *root
}

/// Verifies that the tree of `first` leaves with root `first_root` is a
/// prefix of the tree of `second` leaves with root `second_root`, with
/// `proof` (RFC 9162 §2.1.4.2). Equal sizes need an empty proof and equal
/// roots; `first == 0` is consistent with anything only with an empty proof.
pub fn verify_consistency(first: u64, second: u64, first_root: &Hash, second_root: &Hash, proof: &[Hash]) -> bool {
    if first > second {
        return false;
    }
    if first == second {
        return proof.is_empty() && first_root == second_root;
    }
    if first == 0 {
        return proof.is_empty() && *first_root == empty_root();
    }
    if proof.is_empty() {
        return false;
    }
    // Step 2: a power-of-two first size starts from its own root.
    let mut path: Vec<Hash> = Vec::with_capacity(proof.len() + 1);
    if first.is_power_of_two() {
        path.push(*first_root);
    }
    path.extend_from_slice(proof);
    let (mut f_n, mut s_n) = (first - 1, second - 1);
    while f_n & 1 == 1 {
        f_n >>= 1;
        s_n >>= 1;
    }
    let mut fr = path[0];
    let mut sr = path[0];
    for c in &path[1..] {
        if s_n == 0 {
            return false;
        }
        if f_n & 1 == 1 || f_n == s_n {
            fr = node_hash(c, &fr);
            sr = node_hash(c, &sr);
            if f_n & 1 == 0 {
                while f_n & 1 == 0 && f_n != 0 {
                    f_n >>= 1;
                    s_n >>= 1;
                }
            }
        } else {
            sr = node_hash(&sr, c);
        }
        f_n >>= 1;
        s_n >>= 1;
    }
    fr == *first_root && sr == *second_root && s_n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MTH by the RFC's recursive definition, from the leaf hashes.
    fn naive_root(leaves: &[Hash]) -> Hash {
        match leaves.len() {
            0 => empty_root(),
            1 => leaves[0],
            n => {
                let k = largest_power_below(n as u64) as usize;
                node_hash(&naive_root(&leaves[..k]), &naive_root(&leaves[k..]))
            }
        }
    }

    fn tree(n: u64) -> (MerkleTree, Vec<Hash>) {
        let mut t = MerkleTree::new();
        let leaves: Vec<Hash> = (0..n).map(|i| leaf_hash(&i.to_be_bytes())).collect();
        leaves.iter().for_each(|l| t.push_leaf_hash(*l));
        (t, leaves)
    }

    #[test]
    fn roots_match_the_recursive_definition_for_every_size() {
        let (t, leaves) = tree(70);
        for n in 0..=70u64 {
            assert_eq!(t.root(n).unwrap(), naive_root(&leaves[..n as usize]), "size {n}");
        }
        assert_eq!(hex::encode(empty_root()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }

    #[test]
    fn every_inclusion_and_consistency_proof_of_small_trees_verifies() {
        let (t, _) = tree(40);
        for n in 1..=40u64 {
            let root = t.root(n).unwrap();
            for i in 0..n {
                let p = t.inclusion_proof(i, n).unwrap();
                assert!(verify_inclusion(&t.leaf(i).unwrap(), i, n, &p, &root), "i {i} n {n}");
            }
            for m in 1..=n {
                let p = t.consistency_proof(m, n).unwrap();
                assert!(verify_consistency(m, n, &t.root(m).unwrap(), &root, &p), "m {m} n {n}");
            }
        }
    }

    #[test]
    fn out_of_range_requests_are_refused() {
        let (t, _) = tree(5);
        assert_eq!(t.inclusion_proof(5, 5), Err(ProofError::IndexOutOfRange { index: 5, tree_size: 5 }));
        assert_eq!(t.inclusion_proof(0, 6), Err(ProofError::TooLarge { asked: 6, len: 5 }));
        assert_eq!(t.consistency_proof(0, 5), Err(ProofError::BadRange { first: 0, second: 5 }));
        assert_eq!(t.consistency_proof(4, 3), Err(ProofError::BadRange { first: 4, second: 3 }));
        assert_eq!(t.consistency_proof(3, 6), Err(ProofError::TooLarge { asked: 6, len: 5 }));
    }
}
