//! Issue 14, "Share one daemon safely": idempotent appends (a repeated
//! client `thought_id`) and secret redaction on write, through the dispatcher.

use crate::common;
use common::*;
use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, MentisDb, Storage};
use serde_json::{json, Value};
use std::sync::Arc;

fn count(db: &MentisDb, chain: &str) -> u64 {
    ok(db, "mentisdb_head", json!({"chain_key": chain}))["thought_count"].as_u64().unwrap()
}

fn request(id: &str, content: &str) -> Value {
    json!({"chain_key": "c", "agent_id": "a", "thought_type": "Decision", "content": content, "thought_id": id,
           "tags": ["t"], "concepts": ["k"], "importance": 0.8, "session_id": "s1"})
}

#[test]
fn a_repeated_thought_id_with_the_same_fields_answers_the_stored_thought() {
    let (db, _) = fresh();
    ok(&db, "mentisdb_append", json!({"chain_key": "c", "thought_type": "Finding", "content": "first"}));
    let first = ok(&db, "mentisdb_append", request("retry-1", "ship on Friday"));
    assert_eq!((first["replay"].clone(), first["redactions"].clone()), (json!(false), json!([])));
    let again = ok(&db, "mentisdb_append", request("retry-1", "ship on Friday"));
    assert_eq!(again["replay"], true);
    assert_eq!(again["thought"], first["thought"], "the stored thought, same index, time and hash");
    assert_eq!(again["head_hash"], first["thought"]["hash"]);
    assert_eq!(count(&db, "c"), 2, "nothing written");
    // Defaults and normalisation are applied before comparing: an explicit
    // default importance and a duplicated ref repeat the stored thought.
    let base = json!({"chain_key": "c", "thought_type": "Finding", "content": "refs", "thought_id": "retry-2", "refs": [0]});
    ok(&db, "mentisdb_append", base.clone());
    let mut same = base.clone();
    same["importance"] = json!(0.5);
    same["refs"] = json!([0, 0]);
    same["agent_name"] = json!("a new display name is not part of the thought");
    assert_eq!(ok(&db, "mentisdb_append", same)["replay"], true);
    // The retrospective tool replays the same way.
    let retro = json!({"chain_key": "c", "content": "lesson", "thought_id": "retry-3"});
    ok(&db, "mentisdb_append_retrospective", retro.clone());
    assert_eq!(ok(&db, "mentisdb_append_retrospective", retro)["replay"], true);
    assert_eq!(count(&db, "c"), 4);
}

#[test]
fn the_same_thought_id_with_other_fields_is_a_conflict() {
    let (db, _) = fresh();
    ok(&db, "mentisdb_append", request("id-1", "original"));
    let e = err(&db, "mentisdb_append", request("id-1", "changed"));
    assert_eq!(e.kind(), "conflict");
    assert!(e.to_string().contains("'id-1'") && e.to_string().contains("its content differs"), "{e}");
    for (field, value) in [("importance", json!(0.9)), ("tags", json!(["other"])), ("session_id", json!("s2")), ("thought_type", json!("Finding"))] {
        let mut r = request("id-1", "original");
        r[field] = value;
        let e = err(&db, "mentisdb_append", r);
        assert!(e.to_string().contains(&format!("its {field} differs")), "{field}: {e}");
    }
    let mut other_agent = request("id-1", "original");
    other_agent["agent_id"] = json!("b");
    assert!(err(&db, "mentisdb_append", other_agent).to_string().contains("its agent_id differs"));
    // The retrospective tool fixes role Retrospective: a Memory with that id differs.
    let e = err(&db, "mentisdb_append_retrospective", json!({"chain_key": "c", "agent_id": "a", "content": "original", "thought_id": "id-1"}));
    assert!(e.to_string().contains("differs"), "{e}");
    assert_eq!(count(&db, "c"), 1);
}

#[test]
fn a_replay_survives_reopening_the_store() {
    let (db, storage) = fresh();
    let first = ok(&db, "mentisdb_append", request("durable-1", "kept across restarts"));
    drop(db);
    let db = reopen(storage);
    let again = ok(&db, "mentisdb_append", request("durable-1", "kept across restarts"));
    assert_eq!((again["replay"].clone(), again["thought"].clone()), (json!(true), first["thought"].clone()));
    assert_eq!(err(&db, "mentisdb_append", request("durable-1", "other")).kind(), "conflict");
    assert_eq!(count(&db, "c"), 1);
}

#[test]
fn concurrent_retries_create_one_thought() {
    let (db, _) = fresh();
    let replies: Vec<Value> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8).map(|_| s.spawn(|| ok(&db, "mentisdb_append", request("race-1", "once")))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(replies.iter().filter(|r| r["replay"] == false).count(), 1);
    assert!(replies.iter().all(|r| r["thought"] == replies[0]["thought"]));
    assert_eq!(count(&db, "c"), 1);
}

const AWS_KEY: &str = concat!("AKIA", "IOSFODNN7EXAMPLE");

#[test]
fn secrets_are_redacted_before_hashing_and_listed_in_the_reply() {
    let (db, _) = fresh();
    let content = format!("deploy with {AWS_KEY} to postgres://app:hunter22@db.internal/app");
    let r = ok(&db, "mentisdb_append", json!({"chain_key": "c", "thought_type": "Finding", "content": content,
        "tags": ["ok", format!("key-{AWS_KEY}")], "thought_id": "sec-1"}));
    let stored = "deploy with [REDACTED:aws_access_key_id] to postgres://app:[REDACTED:url_password]@db.internal/app";
    assert_eq!(r["thought"]["content"], stored);
    assert_eq!(r["thought"]["tags"], json!(["ok", "key-[REDACTED:aws_access_key_id]"]));
    assert_eq!(r["redactions"], json!([
        {"field": "content", "kind": "aws_access_key_id", "start": 12, "end": 40},
        {"field": "content", "kind": "url_password", "start": 59, "end": 82},
        {"field": "tags[1]", "kind": "aws_access_key_id", "start": 4, "end": 32},
    ]));
    assert_eq!(&stored[59..82], "[REDACTED:url_password]");
    let got = ok(&db, "mentisdb_get_thought", json!({"chain_key": "c", "thought_id": "sec-1"}));
    assert_eq!(got["thought"]["content"], stored, "the stored (and hashed) text is the redacted one");
    assert_eq!(ok(&db, "mentisdb_search", json!({"chain_key": "c", "text": "hunter22"}))["thoughts"], json!([]));
    // A retry of the same request redacts the same way and is a replay.
    let again = ok(&db, "mentisdb_append", json!({"chain_key": "c", "thought_type": "Finding", "content": content,
        "tags": ["ok", format!("key-{AWS_KEY}")], "thought_id": "sec-1"}));
    assert_eq!((again["replay"].clone(), again["redactions"].clone()), (json!(true), r["redactions"].clone()));
    // Bootstrap takes the same path.
    ok(&db, "mentisdb_bootstrap", json!({"chain_key": "b", "content": format!("purpose; key {AWS_KEY}")}));
    let genesis = ok(&db, "mentisdb_get_genesis_thought", json!({"chain_key": "b"}));
    assert_eq!(genesis["thought"]["content"], "purpose; key [REDACTED:aws_access_key_id]");
}

#[test]
fn the_redaction_switch_off_stores_content_unchanged() {
    let storage = Arc::new(MemoryStorage::new());
    let config = DbConfig { redact_secrets: false, ..DbConfig::default() };
    let (db, _) = MentisDb::open(storage as Arc<dyn Storage>, Arc::new(FixedClock::new(T0, 1000)), ids(), config).unwrap();
    let content = format!("raw {AWS_KEY}");
    let r = ok(&db, "mentisdb_append", json!({"chain_key": "c", "thought_type": "Finding", "content": content}));
    assert_eq!((r["thought"]["content"].as_str(), r["redactions"].clone()), (Some(content.as_str()), json!([])));
}

#[test]
fn skill_content_is_not_redacted() {
    let (db, _) = fresh();
    ok(&db, "mentisdb_upsert_agent", json!({"chain_key": "c", "agent_id": "a"}));
    let content = format!("# Deploy skill\n\nExample key format: {AWS_KEY}\n");
    ok(&db, "mentisdb_upload_skill", json!({"chain_key": "c", "agent_id": "a", "content": content}));
    let read = ok(&db, "mentisdb_read_skill", json!({"skill_id": "deploy-skill"}));
    assert_eq!(read["content"], content);
}

#[test]
fn a_repeated_skill_upload_is_a_replay_and_new_content_a_new_version() {
    let (db, _) = fresh();
    ok(&db, "mentisdb_upsert_agent", json!({"chain_key": "c", "agent_id": "a"}));
    let upload = json!({"chain_key": "c", "agent_id": "a", "content": "# Retry skill\n\nRetry with the same id.\n"});
    let first = ok(&db, "mentisdb_upload_skill", upload.clone());
    let again = ok(&db, "mentisdb_upload_skill", upload.clone());
    assert_eq!((first["replay"].clone(), again["replay"].clone()), (json!(false), json!(true)));
    assert_eq!(again["skill"], first["skill"]);
    let versions = ok(&db, "mentisdb_skill_versions", json!({"skill_id": "retry-skill"}));
    assert_eq!(versions["versions"].as_array().unwrap().len(), 1, "nothing written");
    let mut changed = upload;
    changed["content"] = json!("# Retry skill\n\nA second version.\n");
    assert_eq!(ok(&db, "mentisdb_upload_skill", changed)["replay"], false);
    let versions = ok(&db, "mentisdb_skill_versions", json!({"skill_id": "retry-skill"}));
    assert_eq!(versions["versions"].as_array().unwrap().len(), 2);
}
