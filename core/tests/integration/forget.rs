//! Forgetting a thought: its content leaves every stored byte, reads show it
//! as forgotten, search no longer finds it, and the chain still verifies,
//! other signatures included; schema-1 chains are migrated first.

use crate::common;
use common::*;
use ed25519_dalek::{Signer, SigningKey};
use mentisdb_core::canonical::compute_thought_hash;
use mentisdb_core::signature::signable_payload;
use mentisdb_core::{naming, record, ChainFormat, ErrorKind, MemoryStorage, Storage, Thought};
use serde_json::{json, Value};
use std::sync::Arc;

const SECRET: &str = "the vault code is 7391-alpha";

/// Every stored object's bytes contain `needle` somewhere.
fn stored_anywhere(storage: &MemoryStorage, needle: &str) -> bool {
    storage.list("").unwrap().iter().any(|name| storage.read(name).unwrap().unwrap_or_default().windows(needle.len()).any(|w| w == needle.as_bytes()))
}

fn append(db: &mentisdb_core::MentisDb, chain: &str, content: &str, tags: Value) -> Value {
    ok(db, "mentisdb_append", json!({"chain_key": chain, "agent_id": "ada", "thought_type": "FactLearned", "content": content, "tags": tags}))["thought"].clone()
}

#[test]
fn a_forgotten_thought_leaves_storage_search_and_rendering_and_the_chain_verifies() {
    for format in ["binary", "jsonl"] {
        let (db, storage) = fresh();
        ok(&db, "mentisdb_bootstrap", json!({"chain_key": "c", "content": "start", "storage_adapter": format}));
        let secret = append(&db, "c", SECRET, json!(["vault-7391"]));
        let after = append(&db, "c", "the deploy finished", json!([]));
        assert!(stored_anywhere(&storage, "7391"));

        let reply = ok(&db, "mentisdb_forget_thought", json!({"chain_key": "c", "thought_id": secret["id"], "reason": "a secret was written", "agent_id": "ops"}));
        assert_eq!(reply["forgotten_now"], true);
        assert_eq!(reply["migrated_thoughts"], 0);
        let t = &reply["thought"];
        assert_eq!((&t["index"], &t["id"], &t["hash"], &t["timestamp"]), (&secret["index"], &secret["id"], &secret["hash"], &secret["timestamp"]));
        assert_eq!((t["content"].as_str(), t["tags"].as_array().map(Vec::len)), (Some(""), Some(0)));
        assert!(t.get("content_salt").is_none());
        assert_eq!(t["forgotten"]["reason"], "a secret was written");
        assert_eq!(t["forgotten"]["forgotten_by"], "ops");
        // Later thoughts keep their hashes: nothing was re-linked.
        assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": "c"}))["head_hash"], after["hash"]);

        assert!(!stored_anywhere(&storage, "7391"), "{format}: the content is still stored");
        assert!(ok(&db, "mentisdb_search", json!({"chain_key": "c", "text": "vault"}))["thoughts"].as_array().unwrap().is_empty());
        assert!(ok(&db, "mentisdb_search", json!({"chain_key": "c", "tags_any": ["vault-7391"]}))["thoughts"].as_array().unwrap().is_empty());
        assert!(ok(&db, "mentisdb_ranked_search", json!({"chain_key": "c", "text": "vault code"}))["results"].as_array().unwrap().is_empty());
        let prompt = ok(&db, "mentisdb_recent_context", json!({"chain_key": "c"}))["prompt"].as_str().unwrap().to_string();
        assert!(prompt.contains("(forgotten)") && !prompt.contains("7391"), "{prompt}");
        let md = ok(&db, "mentisdb_memory_markdown", json!({"chain_key": "c"}))["markdown"].as_str().unwrap().to_string();
        assert!(!md.contains("7391"));

        // Re-opened, the chain verifies and the thought is still forgotten.
        let db = reopen(storage.clone());
        let got = ok(&db, "mentisdb_get_thought", json!({"chain_key": "c", "thought_index": 1}))["thought"].clone();
        assert_eq!(got, *t);
        assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": "c"}))["integrity_ok"], true);
        // New appends go on after it.
        append(&db, "c", "one more", json!([]));
        let db = reopen(storage);
        assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": "c"}))["thought_count"], 4);
    }
}

#[test]
fn forgetting_twice_changes_nothing_and_bad_requests_change_nothing() {
    let (db, storage) = fresh();
    let t = append(&db, "c", SECRET, json!([]));
    let first = ok(&db, "mentisdb_forget_thought", json!({"chain_key": "c", "thought_index": 0, "reason": "leak"}));
    assert_eq!(first["thought"]["forgotten"]["forgotten_by"], "anonymous");
    let again = ok(&db, "mentisdb_forget_thought", json!({"chain_key": "c", "thought_hash": t["hash"], "reason": "again"}));
    assert_eq!(again["forgotten_now"], false);
    assert_eq!(again["thought"], first["thought"], "the first forget record stays");

    append(&db, "c", "keep me", json!([]));
    let before: Vec<Vec<u8>> = storage.list("").unwrap().iter().map(|n| storage.read(n).unwrap().unwrap()).collect();
    for (args, kind) in [
        (json!({"chain_key": "c", "thought_index": 1}), ErrorKind::InvalidArguments),
        (json!({"chain_key": "c", "thought_index": 1, "reason": "  "}), ErrorKind::InvalidArguments),
        (json!({"chain_key": "c", "reason": "r"}), ErrorKind::InvalidArguments),
        (json!({"chain_key": "c", "thought_index": 1, "thought_id": "x", "reason": "r"}), ErrorKind::InvalidArguments),
        (json!({"chain_key": "c", "thought_index": 9, "reason": "r"}), ErrorKind::NotFound),
        (json!({"chain_key": "nope", "thought_index": 0, "reason": "r"}), ErrorKind::NotFound),
        (json!({"chain_key": "c", "thought_index": 1, "reason": "x".repeat(600)}), ErrorKind::InvalidArguments),
    ] {
        assert_eq!(err(&db, "mentisdb_forget_thought", args.clone()).kind(), kind, "{args}");
    }
    // A retry of the forgotten thought's append cannot bring it back.
    let retry = json!({"chain_key": "c", "agent_id": "ada", "thought_type": "FactLearned", "content": SECRET, "thought_id": t["id"]});
    let e = err(&db, "mentisdb_append", retry);
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert!(e.to_string().contains("forgotten"), "{e}");
    let after: Vec<Vec<u8>> = storage.list("").unwrap().iter().map(|n| storage.read(n).unwrap().unwrap()).collect();
    assert_eq!(before, after);
    assert_eq!(contents(&ok(&db, "mentisdb_search", json!({"chain_key": "c"}))["thoughts"]), vec!["", "keep me"]);
}

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

/// Appends a thought signed by `signer` (key id `k`), as a client would.
fn signed_append(db: &mentisdb_core::MentisDb, chain: &str, id: &str, content: &str) -> Value {
    let mut t: Thought = serde_json::from_value(json!({
        "schema_version": 2, "id": id, "index": 0, "timestamp": "", "session_id": null, "agent_id": "signer", "agent_name": "signer",
        "agent_owner": null, "signing_key_id": "k", "thought_signature": null, "thought_type": "Decision", "role": "Memory",
        "content": content, "confidence": null, "importance": 0.5, "tags": [], "concepts": [], "refs": [], "relations": [],
        "prev_hash": null, "hash": "0".repeat(64)
    }))
    .unwrap();
    let sig = key(7).sign(&signable_payload(chain, &t, "k")).to_bytes().to_vec();
    t.extras_mut().thought_signature = Some(sig.clone().into());
    ok(db, "mentisdb_append", json!({"chain_key": chain, "agent_id": "signer", "thought_type": "Decision", "content": content, "thought_id": id, "signing_key_id": "k", "thought_signature": sig}))["thought"].clone()
}

/// Whether a stored thought's signature verifies against `signer`'s key.
fn signature_verifies(chain: &str, t: &Value) -> bool {
    let t: Thought = serde_json::from_value(t.clone()).unwrap();
    let Some(sig) = t.thought_signature() else { return false };
    let sig = ed25519_dalek::Signature::from_slice(sig).unwrap();
    key(7).verifying_key().verify_strict(&signable_payload(chain, &t, "k"), &sig).is_ok()
}

#[test]
fn other_signatures_still_verify_after_a_signed_thought_is_forgotten() {
    let (db, storage) = fresh();
    ok(&db, "mentisdb_upsert_agent", json!({"chain_key": "s", "agent_id": "signer"}));
    ok(&db, "mentisdb_add_agent_key", json!({"chain_key": "s", "agent_id": "signer", "key_id": "k", "algorithm": "ed25519", "public_key_bytes": key(7).verifying_key().to_bytes().to_vec()}));
    let a = signed_append(&db, "s", "t-a", "signed and kept");
    let b = signed_append(&db, "s", "t-b", SECRET);
    let c = signed_append(&db, "s", "t-c", "signed after");
    assert!([&a, &b, &c].iter().all(|t| signature_verifies("s", t)));
    let forgotten = ok(&db, "mentisdb_forget_thought", json!({"chain_key": "s", "thought_id": "t-b", "reason": "leak"}))["thought"].clone();
    assert!(forgotten["thought_signature"].is_null() && forgotten["signing_key_id"] == "k");
    let db = reopen(storage.clone());
    for t in [&a, &c] {
        let now = ok(&db, "mentisdb_get_thought", json!({"chain_key": "s", "thought_id": t["id"]}))["thought"].clone();
        assert_eq!(now, *t);
        assert!(signature_verifies("s", &now));
    }
    assert!(!stored_anywhere(&storage, "7391"));
}

/// Writes a schema-1 chain object (as a version before forgetting did) with
/// `contents`, each thought signed by `signer` when `signed`.
fn write_schema_1_chain(storage: &MemoryStorage, chain: &str, contents: &[&str]) -> Vec<Thought> {
    let mut bytes = record::encode_header(ChainFormat::Binary, chain);
    let mut thoughts: Vec<Thought> = Vec::new();
    for (i, content) in contents.iter().enumerate() {
        let mut t: Thought = serde_json::from_value(json!({
            "schema_version": 1, "id": format!("v1-{i}"), "index": i, "timestamp": format!("2025-01-01T00:00:0{i}.000Z"), "session_id": null,
            "agent_id": "signer", "agent_name": "signer", "agent_owner": null, "signing_key_id": "k", "thought_signature": null,
            "thought_type": "Decision", "role": "Memory", "content": content, "confidence": null, "importance": 0.5, "tags": ["old"],
            "concepts": [], "refs": [], "relations": [], "prev_hash": thoughts.last().map(|p| p.hash), "hash": "0".repeat(64)
        }))
        .unwrap();
        t.extras_mut().thought_signature = Some(key(7).sign(&signable_payload(chain, &t, "k")).to_bytes().into());
        t.hash = compute_thought_hash(&t);
        bytes.extend_from_slice(&record::encode_thought(ChainFormat::Binary, &t));
        thoughts.push(t);
    }
    storage.write_atomic(&naming::chain_object(chain, ChainFormat::Binary), &bytes).unwrap();
    thoughts
}

#[test]
fn a_schema_1_chain_is_migrated_when_one_of_its_thoughts_is_forgotten() {
    let storage = Arc::new(MemoryStorage::new());
    let old = write_schema_1_chain(&storage, "legacy", &["first", SECRET, "third"]);
    let db = reopen(storage.clone());
    // Schema-1 thoughts are read and verified as they are.
    let t0 = ok(&db, "mentisdb_get_thought", json!({"chain_key": "legacy", "thought_index": 0}))["thought"].clone();
    assert_eq!((t0["schema_version"].as_u64(), t0["hash"].as_str()), (Some(1), Some(old[0].hash.to_hex().as_str())));
    // New thoughts are schema 2, linked to the schema-1 head.
    let fourth = append(&db, "legacy", "fourth", json!([]));
    assert_eq!((fourth["schema_version"].as_u64(), fourth["prev_hash"].as_str()), (Some(2), Some(old[2].hash.to_hex().as_str())));

    let reply = ok(&db, "mentisdb_forget_thought", json!({"chain_key": "legacy", "thought_index": 1, "reason": "leak"}));
    assert_eq!(reply["migrated_thoughts"], 3);
    let db = reopen(storage.clone());
    let all = ok(&db, "mentisdb_search", json!({"chain_key": "legacy"}))["thoughts"].clone();
    assert_eq!(contents(&all), vec!["first", "", "third", "fourth"]);
    for (i, t) in all.as_array().unwrap().iter().enumerate() {
        assert_eq!(t["schema_version"], 2);
        assert_ne!(t["hash"].as_str(), old.get(i).map(|o| o.hash.to_hex()).as_deref(), "hashes change once, in the migration");
        if i != 1 && i != 3 {
            assert!(signature_verifies("legacy", t), "thought {i}'s signature survives the migration");
        }
    }
    assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": "legacy"}))["integrity_ok"], true);
    assert!(!stored_anywhere(&storage, "7391"));
}

#[test]
fn migrate_chain_rewrites_schema_1_thoughts_once() {
    let storage = Arc::new(MemoryStorage::new());
    write_schema_1_chain(&storage, "legacy", &["a", "b"]);
    let db = reopen(storage.clone());
    assert_eq!(db.migrate_chain("legacy").unwrap(), 2);
    assert_eq!(db.migrate_chain("legacy").unwrap(), 0);
    let db = reopen(storage);
    let all = ok(&db, "mentisdb_search", json!({"chain_key": "legacy"}))["thoughts"].clone();
    assert!(all.as_array().unwrap().iter().all(|t| t["schema_version"] == 2 && signature_verifies("legacy", t)));
}

#[test]
fn a_jsonl_line_that_claims_a_schema_1_thought_was_forgotten_is_refused() {
    let (db, storage) = fresh();
    ok(&db, "mentisdb_bootstrap", json!({"chain_key": "j", "content": "start", "storage_adapter": "jsonl"}));
    let object = naming::chain_object("j", ChainFormat::Jsonl);
    let bytes = String::from_utf8(storage.read(&object).unwrap().unwrap()).unwrap();
    // Rewrite the thought as schema 1 with a forget record added (and its hash recomputed as schema 1).
    let line = bytes.lines().nth(1).unwrap();
    let mut t: Thought = serde_json::from_str(line).unwrap();
    t.schema_version = 1;
    t.content_salt = None;
    t.hash = compute_thought_hash(&t);
    let t = t.with_forgotten(mentisdb_core::Forgotten { content_digest: "00".repeat(32), forgotten_at: String::new(), forgotten_by: String::new(), reason: String::new() });
    let forged = format!("{}\n{}", bytes.lines().next().unwrap(), String::from_utf8(mentisdb_core::record::encode_thought(ChainFormat::Jsonl, &t)).unwrap());
    storage.write_atomic(&object, forged.as_bytes()).unwrap();
    let (_, report) = mentisdb_core::MentisDb::open(storage, Arc::new(mentisdb_core::FixedClock::new(T0, 1000)), ids(), Default::default()).unwrap();
    assert!(report.refused.iter().any(|(_, why)| why.contains("cannot be forgotten")), "{:?}", report.refused);
}
