//! Signed appends: accepted with a registered key, rejected when missing,
//! forged, replayed, moved to another chain, or signed by a revoked key.

use crate::common;
use common::*;
use ed25519_dalek::{Signer, SigningKey};
use mentisdb_core::signature::signable_payload;
use mentisdb_core::{Thought, ThoughtRole, ThoughtType};
use serde_json::{json, Value};

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

/// What a client signs: the stored field values (see core/src/signature.rs).
fn payload(chain: &str, id: &str, agent: &str, content: &str, key_id: &str) -> Vec<u8> {
    signable_payload(chain, &payload_thought(chain, id, agent, content, key_id), key_id)
}

/// The thought whose fields a client signs.
fn payload_thought(_chain: &str, id: &str, agent: &str, content: &str, key_id: &str) -> Thought {
    Thought {
        schema_version: 1,
        timestamp_fraction: Default::default(),
        id: id.into(),
        index: 0,
        timestamp_ms: 0,
        agent_id: agent.into(),
        agent_name: agent.into(),
        thought_type: ThoughtType::Decision,
        role: ThoughtRole::Memory,
        content: content.into(),
        importance: 0.5,
        tags: Default::default(),
        concepts: Default::default(),
        extras: mentisdb_core::ThoughtExtras { signing_key_id: Some(key_id.into()), ..Default::default() }.boxed(),
        source_episode: Default::default(),
        prev_hash: None,
        hash: Default::default(),
        content_salt: None,
    }
}

fn signed_args(chain: &str, id: &str, content: &str, sk: &SigningKey, key_id: &str) -> Value {
    let sig = sk.sign(&payload(chain, id, "signer", content, key_id));
    json!({"chain_key": chain, "agent_id": "signer", "thought_type": "Decision", "content": content,
           "thought_id": id, "signing_key_id": key_id, "thought_signature": sig.to_bytes().to_vec()})
}

fn setup() -> mentisdb_core::MentisDb {
    let (db, _) = fresh();
    for chain in ["c1", "c2"] {
        ok(&db, "mentisdb_upsert_agent", json!({"chain_key": chain, "agent_id": "signer"}));
        ok(&db, "mentisdb_add_agent_key", json!({"chain_key": chain, "agent_id": "signer", "key_id": "k1", "algorithm": "ed25519",
            "public_key_bytes": key(1).verifying_key().to_bytes().to_vec()}));
    }
    db
}

#[test]
fn valid_signature_is_accepted_and_stored() {
    let db = setup();
    let r = ok(&db, "mentisdb_append", signed_args("c1", "id-1", "ship it", &key(1), "k1"));
    assert_eq!(r["thought"]["signing_key_id"], "k1");
    assert_eq!(r["thought"]["thought_signature"].as_array().unwrap().len(), 64);
    assert_eq!(r["thought"]["id"], "id-1");
}

#[test]
fn agents_with_active_keys_must_sign() {
    let db = setup();
    let e = err(&db, "mentisdb_append", json!({"chain_key": "c1", "agent_id": "signer", "thought_type": "Decision", "content": "unsigned"}));
    assert!(e.to_string().contains("has an active signing key, so appends must be signed"), "{e}");
}

#[test]
fn forged_tampered_replayed_and_cross_chain_signatures_are_rejected() {
    let db = setup();
    // Signed by a key that is not registered.
    let e = err(&db, "mentisdb_append", signed_args("c1", "id-x", "forged", &key(2), "k1"));
    assert!(e.to_string().contains("signature does not verify"), "{e}");
    // Content changed after signing.
    let mut a = signed_args("c1", "id-t", "original", &key(1), "k1");
    a["content"] = json!("tampered");
    let e = err(&db, "mentisdb_append", a);
    assert!(e.to_string().contains("signature does not verify"), "{e}");
    // Importance changed after signing (it is part of the payload).
    let mut a = signed_args("c1", "id-i", "x", &key(1), "k1");
    a["importance"] = json!(0.9);
    assert!(db.call("mentisdb_append", a).is_err());
    // A replay answers the stored thought and never writes a second one.
    let a = signed_args("c1", "id-r", "once", &key(1), "k1");
    let first = ok(&db, "mentisdb_append", a.clone());
    let again = ok(&db, "mentisdb_append", a.clone());
    assert_eq!((first["replay"].clone(), again["replay"].clone()), (json!(false), json!(true)));
    assert_eq!(again["thought"], first["thought"]);
    // The same id signed over other content is a conflict.
    let e = err(&db, "mentisdb_append", signed_args("c1", "id-r", "twice", &key(1), "k1"));
    assert_eq!(e.kind(), "conflict", "{e}");
    // Replay into another chain where the same key is registered.
    let mut moved = a;
    moved["chain_key"] = json!("c2");
    let e = err(&db, "mentisdb_append", moved);
    assert!(e.to_string().contains("signature does not verify"), "{e}");
    // Unknown key id; missing half of the pair; signed without a thought_id.
    let e = err(&db, "mentisdb_append", signed_args("c1", "id-u", "x", &key(1), "k9"));
    assert!(e.to_string().contains("no key 'k9'"), "{e}");
    let mut half = signed_args("c1", "id-h", "x", &key(1), "k1");
    half.as_object_mut().unwrap().remove("thought_signature");
    let e = err(&db, "mentisdb_append", half);
    assert!(e.to_string().contains("must be given together"), "{e}");
    let mut no_id = signed_args("c1", "id-n", "x", &key(1), "k1");
    no_id.as_object_mut().unwrap().remove("thought_id");
    assert!(db.call("mentisdb_append", no_id).is_err(), "the signature binds the id, a server-chosen id cannot match");
}

#[test]
fn revoked_keys_no_longer_verify() {
    let db = setup();
    ok(&db, "mentisdb_add_agent_key", json!({"chain_key": "c1", "agent_id": "signer", "key_id": "k2", "algorithm": "ed25519",
        "public_key_bytes": key(2).verifying_key().to_bytes().to_vec()}));
    let r = ok(&db, "mentisdb_revoke_agent_key", json!({"chain_key": "c1", "agent_id": "signer", "key_id": "k1"}));
    let k1 = r["agent"]["public_keys"].as_array().unwrap().iter().find(|k| k["key_id"] == "k1").unwrap().clone();
    assert_eq!(k1["status"], "Revoked");
    assert!(k1["revoked_at"].is_string());
    let e = err(&db, "mentisdb_append", signed_args("c1", "id-1", "old key", &key(1), "k1"));
    assert!(e.to_string().contains("key 'k1' is revoked"), "{e}");
    ok(&db, "mentisdb_append", signed_args("c1", "id-2", "new key", &key(2), "k2"));
    let e = err(&db, "mentisdb_revoke_agent_key", json!({"chain_key": "c1", "agent_id": "signer", "key_id": "nope"}));
    assert!(e.to_string().contains("has no key 'nope'"), "{e}");
}

#[test]
fn a_signed_append_carrying_a_secret_is_refused_not_redacted() {
    let db = setup();
    let secret = concat!("key AKIA", "IOSFODNN7EXAMPLE");
    let e = err(&db, "mentisdb_append", signed_args("c1", "id-s", secret, &key(1), "k1"));
    assert_eq!(e.kind(), "append_rejected");
    let m = e.to_string();
    assert!(m.contains("content carries a secret of kind aws_access_key_id at byte 4") && m.contains("redacted by the client before signing"), "{m}");
    assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": "c1"}))["thought_count"], 0, "nothing written");
    // Redacted by the client before signing, it is accepted as sent.
    let clean = "key [REDACTED:aws_access_key_id]";
    let r = ok(&db, "mentisdb_append", signed_args("c1", "id-s", clean, &key(1), "k1"));
    assert_eq!((r["thought"]["content"].as_str(), r["redactions"].clone()), (Some(clean), json!([])));
}

/// A signed append fenced by a claim lists the fence tag itself: the
/// signature covers the tags, so the engine cannot add it.
#[test]
fn a_signed_fenced_append_lists_its_fence_tag() {
    let db = setup();
    ok(&db, "mentisdb_claim", json!({"chain_key": "c1", "key": "deploy", "holder": "signer", "ttl_ms": 600000}));
    let mut unlisted = signed_args("c1", "id-f1", "deployed", &key(1), "k1");
    unlisted["fencing"] = json!({"key": "deploy", "token": 1});
    let e = err(&db, "mentisdb_append", unlisted);
    assert!(e.to_string().contains("lists its fence tag 'mentisdb:fence:1:deploy'"), "{e}");
    let tag = "mentisdb:fence:1:deploy";
    let mut t = payload_thought("c1", "id-f2", "signer", "deployed", "k1");
    t.tags = mentisdb_core::labels([tag]);
    let sig = key(1).sign(&signable_payload("c1", &t, "k1"));
    let r = ok(&db, "mentisdb_append", json!({"chain_key": "c1", "agent_id": "signer", "thought_type": "Decision", "content": "deployed", "tags": [tag],
        "thought_id": "id-f2", "signing_key_id": "k1", "thought_signature": sig.to_bytes().to_vec(), "fencing": {"key": "deploy", "token": 1}}));
    assert_eq!(r["thought"]["tags"], json!([tag]));
}

#[test]
fn an_agent_with_a_key_decides_a_review_with_a_signed_append() {
    let db = setup();
    let review = ok(&db, "mentisdb_request_review", json!({"chain_key": "c1", "subject": "ship 2.0", "reviewers": ["signer"], "agent_id": "planner"}));
    let id = review["review_id"].as_str().unwrap();
    // The tool writes unsigned; an agent with an active key must sign.
    let e = err(&db, "mentisdb_decide_review", json!({"chain_key": "c1", "review_id": id, "decision": "approved", "agent_id": "signer"}));
    assert!(e.to_string().contains("sign"), "{e}");
    let content = json!({"review": "decision", "review_id": id, "decision": "approved", "comment": "signed off"}).to_string();
    let mut t = payload_thought("c1", "decision-1", "signer", &content, "k1");
    t.tags = mentisdb_core::labels(["review"]);
    let sig = key(1).sign(&signable_payload("c1", &t, "k1"));
    ok(&db, "mentisdb_append", json!({"chain_key": "c1", "agent_id": "signer", "thought_type": "Decision", "content": content, "tags": ["review"],
        "thought_id": "decision-1", "signing_key_id": "k1", "thought_signature": sig.to_bytes().to_vec()}));
    let listed = ok(&db, "mentisdb_list_reviews", json!({"chain_key": "c1", "include_decided": true}));
    assert_eq!((listed["reviews"][0]["decided_by"].as_str(), listed["reviews"][0]["comment"].as_str()), (Some("signer"), Some("signed off")), "{listed}");
}
