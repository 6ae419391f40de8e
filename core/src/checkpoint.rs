//! Signed checkpoints: a chain's tree head in the C2SP `tlog-checkpoint`
//! form, signed as a C2SP `signed-note` with Ed25519.
//!
//! Contract: a checkpoint is the text
//!
//! ```text
//! <origin>\n
//! <tree size, decimal>\n
//! <base64 of the 32-byte RFC 9162 root>\n
//! \n
//! — <signer name> <base64(key id (4 bytes) || Ed25519 signature (64 bytes))>\n
//! ```
//!
//! where the signature covers the first three lines (newlines included),
//! the key id is the first 4 bytes of `SHA-256(name || 0x0A || 0x01 || public key)`
//! (signed-note's Ed25519 key id), and the origin is
//! `<signer name>/<chain key>` (see [`origin`]). The core signs with key
//! bytes the host hands it ([`CheckpointSigner`]): Ed25519 signing is
//! deterministic, so the core needs no randomness.

use crate::base64;
use crate::merkle::Hash;
use std::collections::BTreeMap;
use std::sync::RwLock;
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};

/// The signed-note signature type byte of Ed25519.
const ED25519_TYPE: u8 = 0x01;
/// The em dash that opens a signature line.
const SIG_PREFIX: &str = "\u{2014} ";

/// A tree head a checkpoint states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeHead {
    /// The log's origin line: `<signer name>/<chain key>`.
    pub origin: String,
    /// The number of thoughts the tree covers.
    pub tree_size: u64,
    /// The RFC 9162 root of those thoughts.
    pub root: Hash,
}

/// Why a checkpoint was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckpointError {
    /// Not a note: no blank line, a line that is not UTF-8 text, bad numbers.
    #[error("malformed checkpoint: {0}")]
    Malformed(&'static str),
    /// No signature line by that name and key id.
    #[error("no signature by key '{0}'")]
    NotSigned(String),
    /// A signature line by that key whose signature does not verify.
    #[error("the signature by key '{0}' does not verify")]
    BadSignature(String),
}

/// The origin line of `chain_key`'s log under the signer `name`.
pub fn origin(name: &str, chain_key: &str) -> String {
    format!("{name}/{chain_key}")
}

/// The signed-note key id of an Ed25519 key: the first 4 bytes of
/// `SHA-256(name || "\n" || 0x01 || public_key)`.
pub fn key_id(name: &str, public_key: &[u8; 32]) -> [u8; 4] {
    let h = crate::sha256::digest(&[name.as_bytes(), b"\n", &[ED25519_TYPE], public_key]);
    [h[0], h[1], h[2], h[3]]
}

/// The signed-note verifier key text `<name>+<hex key id>+<base64(0x01 || key)>`,
/// the form Go's `note` package and other verifiers take.
pub fn verifier_key(name: &str, public_key: &[u8; 32]) -> String {
    let mut typed = vec![ED25519_TYPE];
    typed.extend_from_slice(public_key);
    format!("{name}+{}+{}", hex::encode(key_id(name, public_key)), base64::encode(&typed))
}

/// Reads a verifier key text ([`verifier_key`]'s form): the signer's name and
/// Ed25519 public key, after checking that the key id matches them.
pub fn parse_verifier_key(text: &str) -> Result<(String, [u8; 32]), CheckpointError> {
    let bad = CheckpointError::Malformed("a verifier key is <name>+<8 hex digits>+<base64 of 0x01 and a 32-byte Ed25519 key>");
    // Split from the left: names hold no '+', but base64 keys may.
    let mut parts = text.trim().splitn(3, '+');
    let (Some(name), Some(id), Some(key)) = (parts.next(), parts.next(), parts.next()) else { return Err(bad) };
    let typed = base64::decode(key).ok_or(CheckpointError::Malformed("the verifier key's key is not base64"))?;
    let public_key: [u8; 32] = match typed.split_first() {
        Some((&ED25519_TYPE, rest)) => rest.try_into().map_err(|_| CheckpointError::Malformed("the verifier key's Ed25519 key is not 32 bytes"))?,
        _ => return Err(CheckpointError::Malformed("the verifier key is not an Ed25519 key (type 0x01)")),
    };
    if name.is_empty() || hex::encode(key_id(name, &public_key)) != id {
        return Err(CheckpointError::Malformed("the verifier key's id does not match its name and key"));
    }
    Ok((name.to_string(), public_key))
}

/// The body a checkpoint's signature covers.
pub fn body(head: &TreeHead) -> String {
    format!("{}\n{}\n{}\n", head.origin, head.tree_size, base64::encode(&head.root))
}

/// A key that signs checkpoints, from the 32-byte Ed25519 seed the host keeps.
#[derive(Clone)]
pub struct CheckpointSigner {
    name: String,
    key: SigningKey,
}

impl std::fmt::Debug for CheckpointSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckpointSigner").field("name", &self.name).field("public_key", &hex::encode(self.public_key())).finish_non_exhaustive()
    }
}

impl CheckpointSigner {
    /// A signer named `name` (a signed-note key name: non-empty, no
    /// whitespace, no `+`) with the Ed25519 secret seed `seed`.
    pub fn new(name: &str, seed: &[u8; 32]) -> Result<Self, CheckpointError> {
        if !valid_name(name) {
            return Err(CheckpointError::Malformed("a signer name is non-empty, without whitespace or '+'"));
        }
        Ok(CheckpointSigner { name: name.to_string(), key: SigningKey::from_bytes(seed) })
    }

    /// The signer's name (the signature line's and the origin's first part).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The Ed25519 public key.
    pub fn public_key(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }

    /// The signed checkpoint of `head`.
    pub fn sign(&self, head: &TreeHead) -> String {
        let body = body(head);
        let sig = self.key.sign(body.as_bytes()).to_bytes();
        let mut blob = key_id(&self.name, &self.public_key()).to_vec();
        blob.extend_from_slice(&sig);
        format!("{body}\n{SIG_PREFIX}{} {}\n", self.name, base64::encode(&blob))
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('+') && !name.chars().any(char::is_whitespace)
}

/// Parses a checkpoint and checks its signature by the key `name` with
/// `public_key` (other signature lines are ignored, as signed-note allows);
/// returns the tree head it states.
pub fn verify_checkpoint(text: &str, name: &str, public_key: &[u8; 32]) -> Result<TreeHead, CheckpointError> {
    let split = text.find("\n\n").ok_or(CheckpointError::Malformed("no blank line before the signatures"))?;
    let (body_text, sigs) = (&text[..split + 1], &text[split + 2..]);
    let mut lines = body_text.split_terminator('\n');
    let origin = lines.next().filter(|l| !l.is_empty()).ok_or(CheckpointError::Malformed("no origin line"))?;
    let size_line = lines.next().ok_or(CheckpointError::Malformed("no tree size line"))?;
    if size_line.is_empty() || !size_line.bytes().all(|b| b.is_ascii_digit()) || (size_line.len() > 1 && size_line.starts_with('0')) {
        return Err(CheckpointError::Malformed("the tree size is not a decimal number"));
    }
    let tree_size: u64 = size_line.parse().map_err(|_| CheckpointError::Malformed("the tree size is too large"))?;
    let root_line = lines.next().ok_or(CheckpointError::Malformed("no root hash line"))?;
    let root: Hash = base64::decode(root_line).and_then(|v| v.try_into().ok()).ok_or(CheckpointError::Malformed("the root hash is not base64 of 32 bytes"))?;
    if !sigs.ends_with('\n') || sigs.is_empty() {
        return Err(CheckpointError::Malformed("the signatures do not end with a newline"));
    }
    let want_id = key_id(name, public_key);
    let key = VerifyingKey::from_bytes(public_key).map_err(|_| CheckpointError::Malformed("the public key is not an Ed25519 point"))?;
    for line in sigs.split_terminator('\n') {
        let rest = line.strip_prefix(SIG_PREFIX).ok_or(CheckpointError::Malformed("a signature line does not start with '\u{2014} '"))?;
        let (line_name, blob) = rest.rsplit_once(' ').ok_or(CheckpointError::Malformed("a signature line has no signature"))?;
        let blob = base64::decode(blob).ok_or(CheckpointError::Malformed("a signature is not base64"))?;
        if line_name != name || blob.len() < 4 || blob[..4] != want_id {
            continue;
        }
        let sig: [u8; 64] = blob[4..].try_into().map_err(|_| CheckpointError::BadSignature(name.to_string()))?;
        key.verify(body_text.as_bytes(), &Signature::from_bytes(&sig)).map_err(|_| CheckpointError::BadSignature(name.to_string()))?;
        return Ok(TreeHead { origin: origin.to_string(), tree_size, root });
    }
    Err(CheckpointError::NotSigned(name.to_string()))
}
/// The checkpoint key, the automatic-checkpoint interval and each chain's
/// latest checkpoint.
#[derive(Debug, Default)]
pub(crate) struct Checkpoints {
    pub(crate) signer: RwLock<Option<(CheckpointSigner, Option<i64>)>>,
    pub(crate) latest: RwLock<BTreeMap<String, LatestCheckpoint>>,
}

/// A chain's most recent checkpoint and when it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatestCheckpoint {
    /// The signed note.
    pub checkpoint: String,
    /// The tree size it states.
    pub tree_size: u64,
    /// When it was made, in epoch milliseconds (host clock).
    pub made_at_ms: i64,
}

