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
//! **Schema 1** (chains written before forgetting existed). A thought body is,
//! in order: `u32 schema_version=1`, `u64 index`, `str id`,
//! `str timestamp`, `opt<str> session_id`, `str agent_id`, `str agent_name`,
//! `opt<str> agent_owner`, `opt<str> signing_key_id`, `opt<bytes> thought_signature`,
//! `str thought_type`, `str role`, `str content`, `opt<f64> confidence`,
//! `f64 importance`, `list<str> tags`, `list<str> concepts`, `list<u64> refs`,
//! `list<relation>` where relation = `str kind, str target_id, opt<u64> target_index,
//! opt<str> chain_key`, and `opt<str> prev_hash`.
//! `hash = SHA-256("mentisdb/thought/v1\0" || body)`, rendered as lowercase hex.
//!
//! **Schema 2** (every new thought). The *erasable part* (what forgetting
//! removes) is `bytes salt` (16 random bytes from the host), `opt<bytes>
//! thought_signature`, `str content`, `list<str> tags`, `list<str> concepts`.
//! The *fields* are the schema-1 sequence without those four: `u32
//! schema_version=2, u64 index, str id, str timestamp, opt<str> session_id, str
//! agent_id, str agent_name, opt<str> agent_owner, opt<str> signing_key_id, str
//! thought_type, str role, opt<f64> confidence, f64 importance, list<u64> refs,
//! list<relation> relations, opt<str> prev_hash`.
//! `content_digest = SHA-256("mentisdb/thought-content/v2\0" || erasable part)` and
//! `hash = SHA-256("mentisdb/thought/v2\0" || fields || content_digest)`.
//! The stored body is the fields, then `u8 0` and the erasable part, or (once
//! forgotten) `u8 1, bytes content_digest (32), str forgotten_at, str
//! forgotten_by, str reason`; the forget record is not covered by the hash.
//!
//! **Schema 3** (a new thought with an `entity_type`; every other new thought
//! stays schema 2, so no existing or future hash without one changes). It is
//! schema 2 with one more covered field: the *fields* are the schema-2 fields
//! with `u32 schema_version=3`, followed by `str entity_type` (after
//! `prev_hash`). The erasable part and `content_digest` are schema 2's
//! (same domain), and `hash = SHA-256("mentisdb/thought/v3\0" || fields ||
//! content_digest)`. The stored body and forgetting are as in schema 2:
//! forgetting keeps the entity type (it is a field, not erasable content).
//! A schema-3 thought must have a non-empty `entity_type`; schema 1 and 2
//! thoughts have none.

use crate::thought::{Forgotten, RelationKind, Thought, ThoughtExtras, ThoughtRelation, ThoughtRole, ThoughtType, THOUGHT_SCHEMA_V1, THOUGHT_SCHEMA_V3, THOUGHT_SCHEMA_VERSION};
use crate::hex_bytes::{ContentSalt, HexBytes, ThoughtHash};

/// Domain-separation prefix of the schema-1 thought hash.
pub const THOUGHT_HASH_DOMAIN: &[u8] = b"mentisdb/thought/v1\0";

/// Domain-separation prefix of the schema-2 thought hash.
pub const THOUGHT_HASH_DOMAIN_V2: &[u8] = b"mentisdb/thought/v2\0";

/// Domain-separation prefix of the schema-3 thought hash (schema 2 + entity type).
pub const THOUGHT_HASH_DOMAIN_V3: &[u8] = b"mentisdb/thought/v3\0";

/// Domain-separation prefix of the schema-2 (and schema-3) content digest.
pub const CONTENT_DIGEST_DOMAIN: &[u8] = b"mentisdb/thought-content/v2\0";

mod primitives;

pub use primitives::DecodeError;
pub(crate) use primitives::{Decoder, Encoder};

/// Tag of the erasable section in a stored schema-2 body: present.
const SECTION_PRESENT: u8 = 0;
/// Tag of the erasable section in a stored schema-2 body: forgotten.
const SECTION_FORGOTTEN: u8 = 1;

/// The stored canonical body of a thought (everything but `hash`): the
/// schema-1 body, or the schema-2 body (fields, then the erasable section).
pub(crate) fn encode_thought_body(t: &Thought) -> Vec<u8> {
    encode_and_hash(t).0
}

/// The stored body and the raw 32-byte hash of a thought, encoding it once.
pub(crate) fn encode_and_hash(t: &Thought) -> (Vec<u8>, [u8; 32]) {
    let mut e = Encoder::with_capacity(256 + t.content.len());
    if t.schema_version == THOUGHT_SCHEMA_V1 {
        encode_v1(t, &mut e);
        let digest = body_digest(&e.buf);
        return (e.buf, digest);
    }
    encode_v2_fields(t, &mut e);
    let fields_end = e.buf.len();
    let content_digest = match t.forgotten() {
        Some(f) => {
            let digest = digest_from_hex(&f.content_digest);
            e.u8(SECTION_FORGOTTEN);
            e.bytes(&digest);
            e.str(&f.forgotten_at);
            e.str(&f.forgotten_by);
            e.str(&f.reason);
            digest
        }
        None => {
            e.u8(SECTION_PRESENT);
            let section_start = e.buf.len();
            encode_erasable(t, &mut e);
            content_digest(&e.buf[section_start..])
        }
    };
    let digest = fields_digest(t.schema_version, &e.buf[..fields_end], &content_digest);
    (e.buf, digest)
}

/// The fields both schemas start with, schema version to signing key id.
fn encode_head(t: &Thought, e: &mut Encoder) {
    e.u32(u32::from(t.schema_version));
    e.u64(t.index);
    e.str(&t.id.as_text());
    e.str(&t.timestamp());
    e.opt_str(t.session_id());
    e.str(&t.agent_id);
    e.str(&t.agent_name);
    e.opt_str(t.agent_owner());
    e.opt_str(t.signing_key_id());
}

/// The previous thought's hash, as the hex text the encoding has always held.
fn encode_prev_hash(t: &Thought, e: &mut Encoder) {
    let mut hex = [0u8; 64];
    e.opt_str(t.prev_hash.as_ref().map(|h| h.hex_in(&mut hex)));
}

/// The schema-1 body: every field in one sequence, content included.
fn encode_v1(t: &Thought, e: &mut Encoder) {
    encode_head(t, e);
    encode_signature(t, e);
    e.str(t.thought_type.as_str());
    e.str(t.role.as_str());
    e.str(&t.content);
    encode_scores(t, e);
    e.str_list(&t.tags);
    e.str_list(&t.concepts);
    encode_links(t, e);
    encode_prev_hash(t, e);
}

/// The schema-2 (or 3) fields the chain hash covers directly (everything
/// but the erasable part); schema 3 adds the entity type at the end.
fn encode_v2_fields(t: &Thought, e: &mut Encoder) {
    encode_head(t, e);
    e.str(t.thought_type.as_str());
    e.str(t.role.as_str());
    encode_scores(t, e);
    encode_links(t, e);
    encode_prev_hash(t, e);
    if t.schema_version == THOUGHT_SCHEMA_V3 {
        e.str(t.entity_type().unwrap_or(""));
    }
}

/// The schema-2 erasable section: salt, signature, content, tags, concepts.
fn encode_erasable(t: &Thought, e: &mut Encoder) {
    e.bytes(t.content_salt.as_ref().map_or(&[], |salt| salt.as_bytes()));
    encode_signature(t, e);
    e.str(&t.content);
    e.str_list(&t.tags);
    e.str_list(&t.concepts);
}

fn encode_signature(t: &Thought, e: &mut Encoder) {
    match &t.thought_signature() {
        Some(sig) => {
            e.u8(1);
            e.bytes(sig);
        }
        None => e.u8(0),
    }
}

/// `opt<f64> confidence, f64 importance`: in the hashed body and the signable payload.
pub(crate) fn encode_scores(t: &Thought, e: &mut Encoder) {
    match t.confidence() {
        Some(c) => {
            e.u8(1);
            e.f64(c);
        }
        None => e.u8(0),
    }
    e.f64(t.importance);
}

/// `list<u64> refs, list<relation> relations`: in the hashed body and the signable payload.
pub(crate) fn encode_links(t: &Thought, e: &mut Encoder) {
    e.u32(t.refs().len() as u32);
    for r in t.refs() {
        e.u64(*r);
    }
    e.u32(t.relations().len() as u32);
    for rel in t.relations() {
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
}

/// 32 bytes from lowercase hex; zeros when malformed (verification's
/// [`check_form`] refuses such a thought before its hash matters).
fn digest_from_hex(s: &str) -> [u8; 32] {
    hex::decode(s).ok().and_then(|b| <[u8; 32]>::try_from(b).ok()).unwrap_or([0; 32])
}

/// SHA-256 of a schema-2 erasable section, with its domain prefix.
fn content_digest(section: &[u8]) -> [u8; 32] {
    crate::sha256::digest(&[CONTENT_DIGEST_DOMAIN, section])
}

/// The schema-2 or schema-3 thought hash: the covered fields, then the
/// content digest, under the schema's domain.
fn fields_digest(schema_version: u8, fields: &[u8], content_digest: &[u8; 32]) -> [u8; 32] {
    let domain = if schema_version == THOUGHT_SCHEMA_V3 { THOUGHT_HASH_DOMAIN_V3 } else { THOUGHT_HASH_DOMAIN_V2 };
    crate::sha256::digest(&[domain, fields, content_digest])
}

/// The raw 32-byte schema-1 thought hash of a canonical body.
pub(crate) fn body_digest(body: &[u8]) -> [u8; 32] {
    crate::sha256::digest(&[THOUGHT_HASH_DOMAIN, body])
}

/// The hash a thought must carry.
pub fn compute_thought_hash(t: &Thought) -> ThoughtHash {
    ThoughtHash::from(encode_and_hash(t).1)
}

/// The content digest (lowercase hex) a thought's erasable part has: what
/// remains of it once forgotten. `None` for schema 1, which has none.
pub fn compute_content_digest(t: &Thought) -> Option<String> {
    if t.schema_version == THOUGHT_SCHEMA_V1 {
        return None;
    }
    if let Some(f) = t.forgotten() {
        return Some(f.content_digest.clone());
    }
    let mut e = Encoder::with_capacity(64 + t.content.len());
    encode_erasable(t, &mut e);
    Some(crate::sha256::to_hex(&content_digest(&e.buf)))
}

/// Why a thought's fields are not a form its schema version allows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FormError(&'static str);

/// The fields a schema version requires: schema 1 has no salt and cannot
/// be forgotten; schema 2 has a 16-byte salt, or, once forgotten, no salt,
/// signature, content, tags or concepts and a 32-byte content digest.
pub fn check_form(t: &Thought) -> Result<(), FormError> {
    match (t.schema_version, t.entity_type()) {
        (THOUGHT_SCHEMA_V3, Some(e)) if !e.trim().is_empty() => {}
        (THOUGHT_SCHEMA_V3, _) => return Err(FormError("a schema 3 thought has a non-empty entity_type")),
        (_, Some(_)) => return Err(FormError("only a schema 3 thought has an entity_type")),
        _ => {}
    }
    // Schema 3 follows schema 2's rules for the erasable part.
    let version = if t.schema_version == THOUGHT_SCHEMA_V3 { THOUGHT_SCHEMA_VERSION } else { t.schema_version };
    match (version, t.forgotten()) {
        (THOUGHT_SCHEMA_V1, _) if t.content_salt.is_some() || t.forgotten().is_some() => Err(FormError("a schema 1 thought has no content_salt and cannot be forgotten")),
        (THOUGHT_SCHEMA_V1, _) => Ok(()),
        (THOUGHT_SCHEMA_VERSION, None) if t.content_salt.is_some() => Ok(()),
        (THOUGHT_SCHEMA_VERSION, None) => Err(FormError("a schema 2 thought needs content_salt: 16 bytes in lowercase hex")),
        (THOUGHT_SCHEMA_VERSION, Some(f)) => {
            if t.content_salt.is_some() || t.thought_signature().is_some() || !t.content.is_empty() || !t.tags.is_empty() || !t.concepts.is_empty() {
                Err(FormError("a forgotten thought keeps no content_salt, signature, content, tags or concepts"))
            } else if HexBytes::<32>::parse(&f.content_digest).is_err() {
                Err(FormError("a forgotten thought's content_digest is 32 bytes in lowercase hex"))
            } else {
                Ok(())
            }
        }
        _ => Err(FormError("unknown thought schema_version")),
    }
}

/// Bytes of a schema-2 content salt.
pub const SALT_BYTES: usize = 16;

/// Decodes a stored body; `hash` is supplied by the caller (it is stored
/// beside the body). Also returns the raw hash the body really has.
pub(crate) fn decode_thought_body(body: &[u8], hash: ThoughtHash, mut labels: Option<&mut crate::label::LabelSet>) -> Result<(Thought, [u8; 32]), DecodeError> {
    let mut d = Decoder::new(body);
    let stored_version = d.u32()?;
    let schema_version = u8::try_from(stored_version).unwrap_or(u8::MAX);
    let v1 = match schema_version {
        THOUGHT_SCHEMA_V1 => true,
        THOUGHT_SCHEMA_VERSION | THOUGHT_SCHEMA_V3 => false,
        _ => return Err(d.err(format!("unknown thought schema_version {stored_version}"))),
    };
    let index = d.u64()?;
    let id = crate::ThoughtId::new(d.str_ref()?);
    let (timestamp_ms, timestamp_fraction, timestamp_text) = crate::timestamp::timestamp_parts(d.str_ref()?);
    let session_id = d.opt_str()?;
    let agent_id = d.label(labels.as_deref_mut())?;
    let agent_name = d.label(labels.as_deref_mut())?;
    let agent_owner = d.opt_str()?;
    let signing_key_id = d.opt_str()?;
    let mut thought_signature = if v1 { d.opt_bytes()? } else { None };
    let thought_type: ThoughtType = d.named()?;
    let role: ThoughtRole = d.named()?;
    let mut content = if v1 { d.str()? } else { String::new() };
    let confidence = if d.present()? { Some(d.f64()?) } else { None };
    let importance = d.f64()?;
    let (mut tags, mut concepts) = if v1 { (d.label_list(labels.as_deref_mut())?, d.label_list(labels.as_deref_mut())?) } else { Default::default() };
    let nrefs = d.count(8)?;
    let refs = (0..nrefs).map(|_| d.u64()).collect::<Result<Vec<_>, _>>()?;
    let nrel = d.count(9)?;
    let mut relations = Vec::with_capacity(nrel);
    for _ in 0..nrel {
        let kind: RelationKind = d.named()?;
        let target_id = d.str()?;
        let target_index = if d.present()? { Some(d.u64()?) } else { None };
        let chain_key = d.opt_str()?;
        relations.push(ThoughtRelation { kind, target_id, target_index, chain_key, valid_at: None });
    }
    let prev_hash = match d.opt_str()? {
        Some(hex) => Some(ThoughtHash::parse(&hex).map_err(|e| d.err(format!("prev_hash: {e}")))?),
        None => None,
    };
    let entity_type = if schema_version == THOUGHT_SCHEMA_V3 { Some(d.str()?) } else { None };
    let (mut content_salt, mut forgotten) = (None, None);
    let actual = if v1 {
        body_digest(body)
    } else {
        let fields_end = d.pos;
        let digest = match d.u8()? {
            SECTION_PRESENT => {
                let section_start = d.pos;
                let salt: [u8; SALT_BYTES] = d.bytes()?.try_into().map_err(|_| d.err("a content salt is 16 bytes"))?;
                content_salt = Some(ContentSalt::from(salt));
                thought_signature = d.opt_bytes()?;
                content = d.str()?;
                tags = d.label_list(labels.as_deref_mut())?;
                concepts = d.label_list(labels)?;
                content_digest(&body[section_start..d.pos])
            }
            SECTION_FORGOTTEN => {
                let digest: [u8; 32] = d.bytes()?.try_into().map_err(|_| d.err("a forgotten thought's content digest is 32 bytes"))?;
                forgotten = Some(Forgotten { content_digest: hex::encode(digest), forgotten_at: d.str()?, forgotten_by: d.str()?, reason: d.str()? });
                digest
            }
            tag => return Err(d.err(format!("bad erasable-section tag {tag}"))),
        };
        fields_digest(schema_version, &body[..fields_end], &digest)
    };
    if !d.rest().is_empty() {
        return Err(d.err("trailing bytes after thought body"));
    }
    let mut thought = Thought {
        schema_version,
        timestamp_fraction,
        index,
        id,
        timestamp_ms,
        agent_id,
        agent_name,
        thought_type,
        role,
        content: content.into(),
        importance,
        tags,
        concepts,
        extras: ThoughtExtras {
            session_id: session_id.map(Into::into),
            agent_owner: agent_owner.map(Into::into),
            signing_key_id: signing_key_id.map(Into::into),
            thought_signature: thought_signature.map(Into::into),
            confidence,
            refs,
            relations,
            entity_type: entity_type.map(Into::into),
            timestamp_text,
            forgotten: forgotten.map(Box::new),
        }
        .boxed(),
        source_episode: Default::default(),
        prev_hash,
        hash,
        content_salt,
    };
    thought.stamp_relations();
    Ok((thought, actual))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A fixed thought used by the golden vectors here and in `record`.
    pub(crate) fn golden_thought() -> Thought {
        Thought {
            schema_version: 1,
            timestamp_fraction: Default::default(),
            index: 1,
            id: "00000000-0000-4000-8000-000000000002".into(),
            timestamp_ms: 1_795_339_800_000, // 2026-11-22T09:30:00.000Z
            agent_id: "agent-42".into(),
            agent_name: "Planner".into(),
            thought_type: ThoughtType::Constraint,
            role: ThoughtRole::Memory,
            content: "This deployment path must work without external APIs.".into(),
            importance: 0.95,
            tags: crate::labels(["security", "ops"]),
            concepts: crate::labels(["offline-mode"]),
            extras: ThoughtExtras {
                session_id: Some("s-1".into()),
                agent_owner: Some("ops-team".into()),
                signing_key_id: None,
                thought_signature: None,
                confidence: Some(0.98),
                refs: vec![0],
                relations: vec![ThoughtRelation {
                    kind: RelationKind::Supports,
                    target_id: "00000000-0000-4000-8000-000000000001".into(),
                    target_index: Some(0),
                    chain_key: None,
                    valid_at: Some("2026-11-22T09:30:00.000Z".into()),
                }],
                entity_type: None,
                timestamp_text: None,
                forgotten: None,
            }
            .boxed(),
            source_episode: Default::default(),
            prev_hash: Some(ThoughtHash::from([0xab; 32])),
            hash: ThoughtHash::default(),
            content_salt: None,
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

    /// The golden thought in schema 2, with a fixed salt.
    pub(crate) fn golden_thought_v2() -> Thought {
        Thought { schema_version: 2, content_salt: Some(ContentSalt::parse("00112233445566778899aabbccddeeff").unwrap()), ..golden_thought() }
    }

    #[test]
    fn golden_vector_v2() {
        // Computed independently by scripts/thought_hash.py (which also
        // reproduces the schema-1 vector above).
        let t = golden_thought_v2();
        let expected = "3dc432f9c8339d71e02197fa3ff57a5e5bd800bb46cbb45f13e6cd86c6720637";
        assert_eq!(compute_thought_hash(&t), expected);
        // Forgotten, the thought keeps its hash: the digest stands in for the erased part.
        let forgotten = Thought {
            content: Box::default(),
            tags: Default::default(),
            concepts: Default::default(),
            content_salt: None,
            ..t.clone()
        }.with_forgotten(Forgotten {
                content_digest: compute_content_digest(&t).unwrap(),
                forgotten_at: "2026-11-23T00:00:00.000Z".into(),
                forgotten_by: "ops".into(),
                reason: "leaked key".into(),
            });
        assert_eq!(check_form(&forgotten), Ok(()));
        assert_eq!(compute_thought_hash(&forgotten), expected);
        // The digest, also from scripts/thought_hash.py's encoding of the erasable part.
        assert_eq!(forgotten.forgotten().unwrap().content_digest, "626cef589b0ab60dbcd35cc58c29b8522c89c8ffd20b268be1ada6928385aca6");
        let (back, actual) = decode_thought_body(&encode_thought_body(&forgotten), ThoughtHash::default(), None).unwrap();
        assert_eq!((back, crate::sha256::to_hex(&actual)), (forgotten, expected.to_string()));
        // Any other content gives another digest and so another hash.
        let other = Thought { content: "This deployment path may use external APIs.".into(), ..t };
        assert_ne!(compute_thought_hash(&other), expected);
    }

    #[test]
    fn golden_vector_v3() {
        // Computed independently by scripts/thought_hash.py. Schema 3 is
        // used only when an entity type is set: the same thought without one
        // is schema 2 with golden_vector_v2's hash.
        let t = Thought { schema_version: 3, ..golden_thought_v2() }.with_extras(|e| e.entity_type = Some("service".into()));
        let expected = "89be70c98176f03ba2168b25822f95fb5fb980bb07392c9220cd42df6bdbfa29";
        assert_eq!(check_form(&t), Ok(()));
        assert_eq!(compute_thought_hash(&t), expected);
        // The entity type is covered: another label is another hash.
        assert_ne!(compute_thought_hash(&t.clone().with_extras(|e| e.entity_type = Some("person".into()))), expected);
        let (back, actual) = decode_thought_body(&encode_thought_body(&t), ThoughtHash::parse(expected).unwrap(), None).unwrap();
        assert_eq!((crate::sha256::to_hex(&actual), &back), (expected.to_string(), &Thought { hash: ThoughtHash::parse(expected).unwrap(), ..t.clone() }));
        // Forgotten, it keeps its hash and its entity type.
        let forgotten = Thought {
            content: Box::default(),
            tags: Default::default(),
            concepts: Default::default(),
            content_salt: None,
            ..t.clone()
        }.with_forgotten(Forgotten {
                content_digest: compute_content_digest(&t).unwrap(),
                forgotten_at: "2026-11-23T00:00:00.000Z".into(),
                forgotten_by: "ops".into(),
                reason: "pii".into(),
            });
        assert_eq!(check_form(&forgotten), Ok(()));
        assert_eq!(compute_thought_hash(&forgotten), expected);
        let (back, actual) = decode_thought_body(&encode_thought_body(&forgotten), ThoughtHash::default(), None).unwrap();
        assert_eq!((back.entity_type(), crate::sha256::to_hex(&actual)), (Some("service"), expected.to_string()));
        // Forms: schema 3 needs the label, the others must not carry one.
        assert!(check_form(&t.clone().with_extras(|e| e.entity_type = None)).is_err());
        assert!(check_form(&t.clone().with_extras(|e| e.entity_type = Some(" ".into()))).is_err());
        assert!(check_form(&Thought { schema_version: 2, ..t }).is_err());
    }

    #[test]
    fn forms_are_checked() {
        let v1 = golden_thought();
        assert_eq!(check_form(&v1), Ok(()));
        assert!(check_form(&Thought { content_salt: Some(ContentSalt::default()), ..v1.clone() }).is_err());
        let v2 = golden_thought_v2();
        assert_eq!(check_form(&v2), Ok(()));
        assert!(check_form(&Thought { content_salt: None, ..v2.clone() }).is_err());
        let forgotten = Forgotten { content_digest: "00".repeat(32), forgotten_at: String::new(), forgotten_by: String::new(), reason: String::new() };
        let with_content = Thought { content_salt: None, ..v2 }.with_forgotten(forgotten);
        assert!(check_form(&with_content).is_err(), "a forgotten thought that kept its content");
    }

    #[test]
    fn body_round_trips() {
        let mut t = golden_thought();
        t.extras_mut().thought_signature = Some(vec![1, 2, 3].into());
        t.extras_mut().signing_key_id = Some("k1".into());
        t.hash = compute_thought_hash(&t);
        for t in [t.clone(), Thought { schema_version: 2, content_salt: Some(ContentSalt::from([0xab; 16])), ..t }] {
            let (back, actual) = decode_thought_body(&encode_thought_body(&t), t.hash, None).unwrap();
            assert_eq!(crate::sha256::to_hex(&actual), compute_thought_hash(&t));
            assert_eq!(back, t);
        }
    }

    #[test]
    fn truncated_bodies_are_errors_not_panics() {
        for t in [golden_thought(), golden_thought_v2()] {
            let body = encode_thought_body(&t);
            for cut in 0..body.len() {
                assert!(decode_thought_body(&body[..cut], ThoughtHash::default(), None).is_err());
            }
        }
    }
}
