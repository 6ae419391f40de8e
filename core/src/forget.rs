//! Forgetting one thought, and migrating schema-1 thoughts to schema 2.
//!
//! A schema-2 chain hash covers a salted digest of each thought's erasable
//! part (signature, content, tags, concepts: `canonical.rs`), so removing
//! that part and keeping its digest leaves every hash, link and other
//! signature as it was. Schema-1 thoughts hash their content directly: they
//! are first migrated (given a salt and re-hashed, which re-links every
//! later thought), so forgetting anything in a chain that still holds
//! schema-1 thoughts rewrites all of its hashes once. Signatures cover the
//! signable payload, not the hash, and stay valid through a migration.
//!
//! [`rewrite`] is pure: it returns the new thoughts and the new chain
//! object's bytes; `MentisDb::forget_thought` verifies them as a chain,
//! replaces the stored object atomically and serves the result.

use crate::canonical::{compute_content_digest, compute_thought_hash, SALT_BYTES};
use crate::chain::Chain;
use crate::hex_bytes::{ContentSalt, ThoughtHash};
use crate::record;
use crate::thought::{Forgotten, Thought, ThoughtExtras, THOUGHT_SCHEMA_V1, THOUGHT_SCHEMA_VERSION};

/// Who forgets a thought, when and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ForgetNote {
    /// RFC 3339 time of the forgetting.
    pub(crate) at: String,
    /// The caller (token name) or the agent the request named.
    pub(crate) by: String,
    /// The reason the request gave.
    pub(crate) reason: String,
}

/// A chain's thoughts after a rewrite, and its new object bytes.
#[derive(Debug)]
pub(crate) struct Rewrite {
    /// Every thought, in order, migrated and (one of them) forgotten.
    pub(crate) thoughts: Vec<Thought>,
    /// The whole chain object (header and records) holding them.
    pub(crate) bytes: Vec<u8>,
    /// How many schema-1 thoughts were migrated.
    pub(crate) migrated: usize,
}

/// Erases `t`'s erasable part, keeping its content digest.
fn forget_in_place(t: &mut Thought, note: ForgetNote) {
    let content_digest = compute_content_digest(t).expect("a schema 2 thought has a content digest");
    t.content = Box::default();
    t.tags = Default::default();
    t.concepts = Default::default();
    let forgotten = Some(Box::new(Forgotten { content_digest, forgotten_at: note.at, forgotten_by: note.by, reason: note.reason }));
    t.extras = ThoughtExtras { thought_signature: None, forgotten, ..t.extras.take().map(|e| *e).unwrap_or_default() }.boxed();
    t.content_salt = None;
}

/// `chain`'s thoughts with every schema-1 thought migrated to schema 2
/// (each salt drawn from `salt`) and, when `forget` names a position, that
/// thought forgotten; hashes and links are recomputed from the first
/// migrated thought on.
pub(crate) fn rewrite(chain: &Chain, forget: Option<(usize, ForgetNote)>, mut salt: impl FnMut() -> [u8; SALT_BYTES]) -> Rewrite {
    let mut thoughts = chain.thoughts().to_vec();
    let mut migrated = 0;
    let mut relink = false;
    let mut prev_hash: Option<ThoughtHash> = None;
    let (forget_at, mut note) = match forget {
        Some((pos, note)) => (Some(pos), Some(note)),
        None => (None, None),
    };
    for (pos, t) in thoughts.iter_mut().enumerate() {
        if t.schema_version == THOUGHT_SCHEMA_V1 {
            t.schema_version = THOUGHT_SCHEMA_VERSION;
            t.content_salt = Some(ContentSalt::from(salt()));
            migrated += 1;
            relink = true;
        }
        if forget_at == Some(pos) {
            if let Some(note) = note.take() {
                forget_in_place(t, note);
            }
        }
        if relink {
            t.prev_hash = prev_hash.take();
            t.hash = compute_thought_hash(t);
        }
        prev_hash = Some(t.hash);
    }
    let mut bytes = record::encode_header(chain.format(), chain.key());
    for t in &thoughts {
        bytes.extend_from_slice(&record::encode_thought(chain.format(), t));
    }
    Rewrite { thoughts, bytes, migrated }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::AgentRegistry;
    use crate::chain::NewThought;
    use crate::record::{decode_chain, ChainFormat};
    use crate::thought::ThoughtType;

    fn chain_of(n: usize, schema: u8) -> Chain {
        let mut c = Chain::new("k", ChainFormat::Binary);
        for i in 0..n {
            let mut input = NewThought::new("ada", ThoughtType::FactLearned, &format!("secret number {i}"));
            input.tags = vec![format!("tag{i}")];
            let mut t = c.prepare_append(input, format!("2026-01-01T00:00:0{i}.000Z"), format!("id-{i}"), [i as u8; 16]).unwrap();
            if schema == THOUGHT_SCHEMA_V1 {
                t.schema_version = THOUGHT_SCHEMA_V1;
                t.content_salt = None;
                t.hash = compute_thought_hash(&t);
            }
            c.commit(t);
        }
        c
    }

    fn note() -> ForgetNote {
        ForgetNote { at: "2026-02-01T00:00:00.000Z".into(), by: "ops".into(), reason: "leaked".into() }
    }

    fn reload(r: &Rewrite) -> Chain {
        Chain::load(decode_chain(&r.bytes).unwrap(), AgentRegistry::default()).expect("the rewritten chain verifies")
    }

    #[test]
    fn forgetting_a_schema_2_thought_keeps_every_hash() {
        let c = chain_of(3, THOUGHT_SCHEMA_VERSION);
        let r = rewrite(&c, Some((1, note())), || unreachable!("nothing to migrate"));
        assert_eq!(r.migrated, 0);
        let hashes = |ts: &mut dyn Iterator<Item = &Thought>| ts.map(|t| t.hash.to_hex()).collect::<Vec<_>>();
        assert_eq!(hashes(&mut r.thoughts.iter()), hashes(&mut c.thoughts().iter()));
        let back = reload(&r);
        let t = back.by_index(1).unwrap();
        assert!(t.content.is_empty() && t.tags.is_empty() && t.content_salt.is_none());
        assert_eq!(t.forgotten().unwrap().reason, "leaked");
        assert!(!r.bytes.windows(15).any(|w| w == b"secret number 1"), "the content left the bytes");
        assert!(r.bytes.windows(15).any(|w| w == b"secret number 2"));
    }

    #[test]
    fn schema_1_thoughts_are_migrated_and_relinked() {
        let c = chain_of(3, THOUGHT_SCHEMA_V1);
        let mut next = 0u8;
        let r = rewrite(&c, None, || {
            next += 1;
            [next; 16]
        });
        assert_eq!(r.migrated, 3);
        let back = reload(&r);
        assert!(back.thoughts().iter().all(|t| t.schema_version == 2 && t.content_salt.is_some()));
        assert!(back.thoughts().iter().zip(c.thoughts()).all(|(new, old)| new.hash != old.hash && new.content == old.content));
        // Then a forgotten thought in the migrated chain keeps its hash.
        let again = rewrite(&back, Some((0, note())), || unreachable!());
        assert_eq!(again.thoughts[0].hash, back.thoughts()[0].hash);
        reload(&again);
    }

    #[test]
    fn a_tampered_forget_record_still_cannot_change_the_content_digest() {
        let c = chain_of(2, THOUGHT_SCHEMA_VERSION);
        let mut r = rewrite(&c, Some((0, note())), || unreachable!());
        r.thoughts[0].extras_mut().forgotten.as_mut().unwrap().content_digest = "00".repeat(32);
        assert_ne!(compute_thought_hash(&r.thoughts[0]), r.thoughts[0].hash);
    }
}
