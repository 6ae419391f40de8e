//! The canonical byte encoding of a thought: what the chain hash covers and
//! what the binary storage format stores. It must never change silently;
//! `tests::golden_vector` pins it.
//!
//! Primitives (all little-endian):
//! - `u8`, `u32`, `u64`, `i64` fixed width; `f64` as its IEEE-754 bits (`u64`);
//! - `str`/`bytes`: `u32` byte length, then the bytes (UTF-8 for strings);
//! - `opt<T>`: `u8` 0 (absent) or 1 followed by `T`;
//! - `list<T>`: `u32` count, then each `T`.
//!
//! A thought body is, in order: `u32 schema_version`, `u64 index`, `str id`,
//! `str timestamp`, `opt<str> session_id`, `str agent_id`, `str agent_name`,
//! `opt<str> agent_owner`, `opt<str> signing_key_id`, `opt<bytes> thought_signature`,
//! `str thought_type`, `str role`, `str content`, `opt<f64> confidence`,
//! `f64 importance`, `list<str> tags`, `list<str> concepts`, `list<u64> refs`,
//! `list<relation>` where relation = `str kind, str target_id, opt<u64> target_index,
//! opt<str> chain_key`, and `opt<str> prev_hash`.
//!
//! `hash = SHA-256("mentisdb/thought/v1\0" || body)`, rendered as lowercase hex.

use crate::thought::{RelationKind, Thought, ThoughtRelation, ThoughtRole, ThoughtType};

/// Domain-separation prefix of the thought hash.
pub const THOUGHT_HASH_DOMAIN: &[u8] = b"mentisdb/thought/v1\0";

/// Appends canonical primitives to a buffer.
#[derive(Debug, Default)]
pub(crate) struct Encoder {
    /// The bytes written so far.
    pub buf: Vec<u8>,
}

impl Encoder {
    /// A fresh encoder with some capacity.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self { buf: Vec::with_capacity(n) }
    }
    /// Appends one byte.
    pub(crate) fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    /// Appends a little-endian `u32`.
    pub(crate) fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// Appends a little-endian `u64`.
    pub(crate) fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// Appends an `f64` as its IEEE-754 bits (little-endian `u64`).
    pub(crate) fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    /// Appends a `u32` length, then the bytes.
    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.buf.extend_from_slice(b);
    }
    /// Appends a string as length-prefixed UTF-8 bytes.
    pub(crate) fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    /// Appends `0`, or `1` and the string.
    pub(crate) fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
            None => self.u8(0),
        }
    }
    /// Appends a `u32` count, then each string.
    pub(crate) fn str_list(&mut self, items: &[String]) {
        self.u32(items.len() as u32);
        for s in items {
            self.str(s);
        }
    }
}

/// Reads canonical primitives; every read is bounds-checked.
#[derive(Debug)]
pub(crate) struct Decoder<'a> {
    data: &'a [u8],
    pos: usize,
}

/// Why a canonical body could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed record at byte {offset}: {what}")]
pub struct DecodeError {
    /// Offset inside the body.
    pub offset: usize,
    /// What was wrong.
    pub what: String,
}

impl<'a> Decoder<'a> {
    /// A decoder at the start of `data`.
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }
    fn err(&self, what: impl Into<String>) -> DecodeError {
        DecodeError { offset: self.pos, what: what.into() }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.data.len() - self.pos < n {
            return Err(self.err(format!("needs {n} more bytes")));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    /// Reads one byte.
    pub(crate) fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    /// Reads a little-endian `u32`.
    pub(crate) fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    /// Reads a little-endian `u64`.
    pub(crate) fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    /// Reads an `f64` from its IEEE-754 bits.
    pub(crate) fn f64(&mut self) -> Result<f64, DecodeError> {
        Ok(f64::from_bits(self.u64()?))
    }
    /// Reads a `u32` length, then that many bytes (borrowed).
    pub(crate) fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    /// Reads a length-prefixed UTF-8 string.
    pub(crate) fn str(&mut self) -> Result<String, DecodeError> {
        self.str_ref().map(str::to_owned)
    }
    /// A string borrowed from the input (no allocation).
    pub(crate) fn str_ref(&mut self) -> Result<&'a str, DecodeError> {
        let b = self.bytes()?;
        std::str::from_utf8(b).map_err(|_| self.err("string is not UTF-8"))
    }
    fn present(&mut self) -> Result<bool, DecodeError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            t => Err(self.err(format!("bad option tag {t}"))),
        }
    }
    /// Reads `0`, or `1` and a string.
    pub(crate) fn opt_str(&mut self) -> Result<Option<String>, DecodeError> {
        Ok(if self.present()? { Some(self.str()?) } else { None })
    }
    fn count(&mut self, min_item_bytes: usize) -> Result<usize, DecodeError> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_item_bytes) > self.data.len() - self.pos {
            return Err(self.err(format!("list of {n} items does not fit")));
        }
        Ok(n)
    }
    /// Reads a `u32` count, then that many strings.
    pub(crate) fn str_list(&mut self) -> Result<Vec<String>, DecodeError> {
        let n = self.count(4)?;
        (0..n).map(|_| self.str()).collect()
    }
    /// Bytes not read yet.
    pub(crate) fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }
}

/// The canonical body of a thought (everything but `hash`).
pub(crate) fn encode_thought_body(t: &Thought) -> Vec<u8> {
    let mut e = Encoder::with_capacity(256 + t.content.len());
    e.u32(t.schema_version);
    e.u64(t.index);
    e.str(&t.id);
    e.str(&t.timestamp);
    e.opt_str(t.session_id.as_deref());
    e.str(&t.agent_id);
    e.str(&t.agent_name);
    e.opt_str(t.agent_owner.as_deref());
    e.opt_str(t.signing_key_id.as_deref());
    match &t.thought_signature {
        Some(sig) => {
            e.u8(1);
            e.bytes(sig);
        }
        None => e.u8(0),
    }
    e.str(t.thought_type.as_str());
    e.str(t.role.as_str());
    e.str(&t.content);
    match t.confidence {
        Some(c) => {
            e.u8(1);
            e.f64(c);
        }
        None => e.u8(0),
    }
    e.f64(t.importance);
    e.str_list(&t.tags);
    e.str_list(&t.concepts);
    e.u32(t.refs.len() as u32);
    for r in &t.refs {
        e.u64(*r);
    }
    e.u32(t.relations.len() as u32);
    for rel in &t.relations {
        e.str(rel.kind.as_str());
        e.str(&rel.target_id);
        match rel.target_index {
            Some(i) => {
                e.u8(1);
                e.u64(i);
            }
            None => e.u8(0),
        }
        e.opt_str(rel.chain_key.as_deref());
    }
    e.opt_str(t.prev_hash.as_deref());
    e.buf
}

/// SHA-256 over the domain prefix and a canonical body, as lowercase hex.
pub(crate) fn hash_body(body: &[u8]) -> String {
    crate::sha256::to_hex(&body_digest(body))
}

/// The raw 32-byte thought hash of a canonical body.
pub(crate) fn body_digest(body: &[u8]) -> [u8; 32] {
    crate::sha256::digest(&[THOUGHT_HASH_DOMAIN, body])
}

/// The hash a thought must carry.
pub fn compute_thought_hash(t: &Thought) -> String {
    hash_body(&encode_thought_body(t))
}

/// Decodes a canonical body; `hash` is supplied by the caller (it is stored beside the body).
pub(crate) fn decode_thought_body(body: &[u8], hash: String) -> Result<Thought, DecodeError> {
    let mut d = Decoder::new(body);
    let schema_version = d.u32()?;
    let index = d.u64()?;
    let id = d.str()?;
    let timestamp = d.str()?;
    let session_id = d.opt_str()?;
    let agent_id = d.str()?;
    let agent_name = d.str()?;
    let agent_owner = d.opt_str()?;
    let signing_key_id = d.opt_str()?;
    let thought_signature = if d.present()? { Some(d.bytes()?.to_vec()) } else { None };
    let tt = d.str_ref()?;
    let thought_type: ThoughtType = tt.parse().map_err(|e: crate::thought::UnknownName| d.err(e.to_string()))?;
    let role_s = d.str_ref()?;
    let role: ThoughtRole = role_s.parse().map_err(|e: crate::thought::UnknownName| d.err(e.to_string()))?;
    let content = d.str()?;
    let confidence = if d.present()? { Some(d.f64()?) } else { None };
    let importance = d.f64()?;
    let tags = d.str_list()?;
    let concepts = d.str_list()?;
    let nrefs = d.count(8)?;
    let refs = (0..nrefs).map(|_| d.u64()).collect::<Result<Vec<_>, _>>()?;
    let nrel = d.count(9)?;
    let mut relations = Vec::with_capacity(nrel);
    for _ in 0..nrel {
        let k = d.str_ref()?;
        let kind: RelationKind = k.parse().map_err(|e: crate::thought::UnknownName| d.err(e.to_string()))?;
        let target_id = d.str()?;
        let target_index = if d.present()? { Some(d.u64()?) } else { None };
        let chain_key = d.opt_str()?;
        relations.push(ThoughtRelation { kind, target_id, target_index, chain_key });
    }
    let prev_hash = d.opt_str()?;
    if !d.rest().is_empty() {
        return Err(d.err("trailing bytes after thought body"));
    }
    Ok(Thought {
        schema_version,
        index,
        id,
        timestamp,
        session_id,
        agent_id,
        agent_name,
        agent_owner,
        signing_key_id,
        thought_signature,
        thought_type,
        role,
        content,
        confidence,
        importance,
        tags,
        concepts,
        refs,
        relations,
        prev_hash,
        hash,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A fixed thought used by the golden vectors here and in `record`.
    pub(crate) fn golden_thought() -> Thought {
        Thought {
            schema_version: 1,
            index: 1,
            id: "00000000-0000-4000-8000-000000000002".into(),
            timestamp: "2026-11-22T09:30:00.000Z".into(),
            session_id: Some("s-1".into()),
            agent_id: "agent-42".into(),
            agent_name: "Planner".into(),
            agent_owner: Some("ops-team".into()),
            signing_key_id: None,
            thought_signature: None,
            thought_type: ThoughtType::Constraint,
            role: ThoughtRole::Memory,
            content: "This deployment path must work without external APIs.".into(),
            confidence: Some(0.98),
            importance: 0.95,
            tags: vec!["security".into(), "ops".into()],
            concepts: vec!["offline-mode".into()],
            refs: vec![0],
            relations: vec![ThoughtRelation {
                kind: RelationKind::Supports,
                target_id: "00000000-0000-4000-8000-000000000001".into(),
                target_index: Some(0),
                chain_key: None,
            }],
            prev_hash: Some("ab".repeat(32)),
            hash: String::new(),
        }
    }

    #[test]
    fn golden_vector() {
        // If this test fails, the canonical encoding changed: every stored
        // chain would stop verifying. Bump THOUGHT_SCHEMA_VERSION and add a
        // migration instead of editing these constants.
        let t = golden_thought();
        let body = encode_thought_body(&t);
        assert_eq!(body.len(), 414);
        assert_eq!(
            hex::encode(&body[..40]),
            "0100000001000000000000002400000030303030303030302d303030302d343030302d383030302d"
        );
        // Computed independently by a Python implementation of the documented encoding.
        assert_eq!(compute_thought_hash(&t), "936701055f412df0d6ba2ed89553c089569e79f037e7aba2b5bf002838af3edc");
    }

    #[test]
    fn body_round_trips() {
        let mut t = golden_thought();
        t.thought_signature = Some(vec![1, 2, 3]);
        t.signing_key_id = Some("k1".into());
        t.hash = compute_thought_hash(&t);
        let back = decode_thought_body(&encode_thought_body(&t), t.hash.clone()).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn truncated_bodies_are_errors_not_panics() {
        let body = encode_thought_body(&golden_thought());
        for cut in 0..body.len() {
            assert!(decode_thought_body(&body[..cut], String::new()).is_err());
        }
    }
}
