//! The reference's legacy JSONL chain file: one thought per line, as serde
//! writes it.

use super::thought::{RefThought, RefThoughtPub};

/// Decodes a reference legacy JSONL chain file (one thought per line).
pub fn decode_jsonl(bytes: &[u8]) -> Result<Vec<RefThoughtPub>, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| serde_json::from_str::<RefThought>(l).map(RefThoughtPub).map_err(|e| format!("line {}: {e}", n + 1)))
        .collect()
}
