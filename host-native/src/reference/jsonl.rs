//! The reference's legacy JSONL chain file: one thought per line, as serde
//! writes it.

use super::thought::{RefThought, RefThoughtPub};
use super::ReferenceError;

/// Decodes a reference legacy JSONL chain file (one thought per line).
pub fn decode_jsonl(bytes: &[u8]) -> Result<Vec<RefThoughtPub>, ReferenceError> {
    let text = std::str::from_utf8(bytes).map_err(ReferenceError::NotUtf8)?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| serde_json::from_str::<RefThought>(l).map(RefThoughtPub).map_err(|source| ReferenceError::Line { line: n + 1, source }))
        .collect()
}
