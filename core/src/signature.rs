//! Ed25519 thought signatures.
//!
//! The **signable payload** binds the chain, a client-chosen unique thought id
//! and every content field, so a signature can be replayed neither into
//! another chain nor as a second thought (ids are unique per chain):
//!
//! ```text
//! "mentisdb/thought-signature/v1\0"
//! str chain_key, str thought_id, str agent_id, opt<str> session_id,
//! str thought_type, str role, str content, opt<f64> confidence, f64 importance,
//! list<str> tags, list<str> concepts, list<u64> refs,
//! list<(str kind, str target_id, opt<u64> target_index, opt<str> chain_key)> relations,
//! str signing_key_id
//! [str entity_type]    only when the thought has one (schema 3)
//! ```
//! using the primitives of [`crate::canonical`], with values as they will be
//! stored (importance and confidence already clamped, importance defaulting to 0.5,
//! role defaulting to `Memory`, relations with their target ids resolved).

use crate::canonical::Encoder;
use crate::thought::{Thought, ThoughtExtras};
use ed25519_dalek::{Signature, VerifyingKey};

/// Domain-separation prefix of the signable payload.
pub const SIGNATURE_DOMAIN: &[u8] = b"mentisdb/thought-signature/v1\0";

/// The bytes an agent signs for a thought in `chain_key`. `thought` must
/// carry its final field values; `hash`, `index`, `timestamp` and
/// `prev_hash` are assigned by the chain and are not signed.
pub fn signable_payload(chain_key: &str, thought: &Thought, signing_key_id: &str) -> Vec<u8> {
    // Every field is named, so a new one does not compile until it is
    // decided here: signed (appended when set, like `entity_type`) or not.
    let Thought {
        id,
        agent_id,
        thought_type,
        role,
        content,
        tags,
        concepts,
        importance: _,
        extras,
        // Assigned by the chain, or the signature itself.
        schema_version: _,
        index: _,
        timestamp_ms: _,
        timestamp_fraction: _,
        agent_name: _,
        prev_hash: _,
        hash: _,
        content_salt: _,
        source_episode: _,
    } = thought;
    let default = ThoughtExtras::default();
    let ThoughtExtras {
        session_id,
        entity_type,
        confidence: _,
        refs: _,
        relations: _,
        // The signature's own fields, and an owner the chain may fill in.
        agent_owner: _,
        signing_key_id: _,
        thought_signature: _,
        // Assigned by the chain.
        timestamp_text: _,
        forgotten: _,
    } = extras.as_deref().unwrap_or(&default);
    let mut e = Encoder::with_capacity(256 + content.len());
    e.buf.extend_from_slice(SIGNATURE_DOMAIN);
    e.str(chain_key);
    e.str(&id.as_text());
    e.str(agent_id);
    e.opt_str(session_id.as_deref());
    e.str(thought_type.as_str());
    e.str(role.as_str());
    e.str(content);
    crate::canonical::encode_scores(thought, &mut e);
    e.str_list(tags);
    e.str_list(concepts);
    crate::canonical::encode_links(thought, &mut e);
    e.str(signing_key_id);
    // Appended only when set, so every signature over a thought without one is unchanged.
    if let Some(entity_type) = entity_type {
        e.str(entity_type);
    }
    e.buf
}

/// Why a key or a signature was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// The public key is not 32 bytes long.
    #[error("an ed25519 public key is 32 bytes, got {0}")]
    KeyLength(usize),
    /// The 32 bytes are not an Ed25519 point.
    #[error("not a valid ed25519 public key")]
    InvalidKey,
    /// The signature is not 64 bytes long.
    #[error("an ed25519 signature is 64 bytes, got {0}")]
    SignatureLength(usize),
    /// The signature does not verify.
    #[error("signature does not verify against the registered key")]
    Mismatch,
}

/// Checks that `public_key` is a valid 32-byte Ed25519 key.
pub(crate) fn parse_public_key(public_key: &[u8]) -> Result<VerifyingKey, SignatureError> {
    let bytes: [u8; 32] = public_key.try_into().map_err(|_| SignatureError::KeyLength(public_key.len()))?;
    VerifyingKey::from_bytes(&bytes).map_err(|_| SignatureError::InvalidKey)
}

/// Verifies a detached signature (strict: rejects malleable signatures).
pub(crate) fn verify_detached(public_key: &[u8], message: &[u8], signature: &[u8]) -> Result<(), SignatureError> {
    let key = parse_public_key(public_key)?;
    let sig_bytes: [u8; 64] = signature.try_into().map_err(|_| SignatureError::SignatureLength(signature.len()))?;
    let sig = Signature::from_bytes(&sig_bytes);
    key.verify_strict(message, &sig).map_err(|_| SignatureError::Mismatch)
}
