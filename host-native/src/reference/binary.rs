//! The reference's binary chain file (`.tcbin`): `[u64 LE length][bincode
//! payload]` records, each a thought of schema 2 or 3.

use super::thought::{RefThought, RefThoughtPub, RefThoughtV2};
use super::ReferenceError;

/// Largest record the decoder accepts (the reference's own limit is smaller).
const MAX_RECORD_BYTES: u64 = 64 * 1024 * 1024;

/// Decodes a reference binary chain file (`.tcbin`).
pub fn decode_binary(bytes: &[u8]) -> Result<Vec<RefThoughtPub>, ReferenceError> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        if bytes.len() - at < 8 {
            return Err(ReferenceError::TornHeader { at });
        }
        let len = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        if len > MAX_RECORD_BYTES || (bytes.len() - at - 8) as u64 > 0 && len > (bytes.len() - at - 8) as u64 {
            return Err(ReferenceError::RecordPastEnd { record: out.len(), at, len });
        }
        let payload = &bytes[at + 8..at + 8 + len as usize];
        at += 8 + len as usize;
        let config = bincode::config::standard();
        let (version, _): (u32, usize) = bincode::decode_from_slice(payload, config).map_err(|source| ReferenceError::Record { record: out.len(), source })?;
        let thought = match version {
            3.. => match bincode::serde::decode_from_slice::<RefThought, _>(payload, config) {
                Ok((t, used)) if used == payload.len() => t,
                _ => v2(payload, out.len())?,
            },
            2 => v2(payload, out.len())?,
            schema => return Err(ReferenceError::OldSchema { record: out.len(), schema }),
        };
        out.push(RefThoughtPub(thought));
    }
    Ok(out)
}

fn v2(payload: &[u8], n: usize) -> Result<RefThought, ReferenceError> {
    bincode::serde::decode_from_slice::<RefThoughtV2, _>(payload, bincode::config::standard()).map(|(t, _)| t.into()).map_err(|source| ReferenceError::Record { record: n, source })
}
