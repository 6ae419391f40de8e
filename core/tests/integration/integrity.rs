//! Hash-chain integrity: append -> reopen -> verify round trips, and any
//! single-byte change to a stored thought is detected on open.

use crate::common;
use common::*;
use mentisdb_core::naming::chain_object;
use mentisdb_core::{ChainFormat, DbConfig, FixedClock, MemoryStorage, MentisDb, Storage};
use proptest::prelude::*;
use serde_json::json;
use std::sync::Arc;

fn open_report(storage: Arc<MemoryStorage>) -> (MentisDb, mentisdb_core::OpenReport) {
    MentisDb::open(storage as Arc<dyn Storage>, Arc::new(FixedClock::new(T0, 7)), ids(), DbConfig::default()).unwrap()
}

#[derive(Debug, Clone)]
struct Row {
    content: String,
    tt: usize,
    importance: f64,
    tags: Vec<String>,
    refs_back: Vec<u8>,
}

fn row() -> impl Strategy<Value = Row> {
    ("\\PC{1,80}", 0usize..28, 0.0f64..1.0, proptest::collection::vec("[a-z]{1,8}", 0..4), proptest::collection::vec(any::<u8>(), 0..3))
        .prop_map(|(content, tt, importance, tags, refs_back)| Row { content, tt, importance, tags, refs_back })
}

fn write_rows(db: &MentisDb, key: &str, rows: &[Row]) {
    for (i, r) in rows.iter().enumerate() {
        let refs: Vec<u64> = if i == 0 { vec![] } else { r.refs_back.iter().map(|b| (*b as u64) % i as u64).collect() };
        let content = if r.content.trim().is_empty() { "x".to_string() } else { r.content.clone() };
        ok(db, "mentisdb_append", json!({"chain_key": key, "thought_type": mentisdb_core::ThoughtType::ALL[r.tt].as_str(),
            "content": content, "importance": r.importance, "tags": r.tags, "refs": refs, "agent_id": format!("a{}", i % 3)}));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn append_then_reopen_verifies_and_round_trips(rows in proptest::collection::vec(row(), 1..24), jsonl in any::<bool>()) {
        let storage = Arc::new(MemoryStorage::new());
        let (db, _) = open_report(storage.clone());
        let adapter = if jsonl { "jsonl" } else { "binary" };
        ok(&db, "mentisdb_bootstrap", json!({"chain_key": "p", "content": "start", "storage_adapter": adapter}));
        write_rows(&db, "p", &rows);
        let before = ok(&db, "mentisdb_search", json!({"chain_key": "p"}));
        drop(db);
        let (db, report) = open_report(storage);
        prop_assert!(report.refused.is_empty(), "{:?}", report.refused);
        prop_assert_eq!(report.chains[0].torn_tail_bytes, 0);
        let after = ok(&db, "mentisdb_search", json!({"chain_key": "p"}));
        prop_assert_eq!(before, after);
        prop_assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": "p"}))["integrity_ok"].as_bool(), Some(true));
    }

    #[test]
    fn any_single_byte_change_is_detected(rows in proptest::collection::vec(row(), 1..8), pos_seed in any::<u64>(), xor in 1u8..=255, jsonl in any::<bool>()) {
        let storage = Arc::new(MemoryStorage::new());
        let (db, _) = open_report(storage.clone());
        let format = if jsonl { ChainFormat::Jsonl } else { ChainFormat::Binary };
        ok(&db, "mentisdb_bootstrap", json!({"chain_key": "p", "content": "start", "storage_adapter": format.adapter_name()}));
        write_rows(&db, "p", &rows);
        let before = ok(&db, "mentisdb_search", json!({"chain_key": "p"}))["thoughts"].clone();
        drop(db);
        let object = chain_object("p", format);
        let mut bytes = storage.read(&object).unwrap().unwrap();
        let header_len = mentisdb_core::record::encode_header(format, "p").len();
        let pos = header_len + (pos_seed as usize % (bytes.len() - header_len));
        bytes[pos] ^= xor;
        storage.write_atomic(&object, &bytes).unwrap();
        let (db, report) = open_report(storage);
        let refused = !report.refused.is_empty();
        let cut = report.chains.first().is_some_and(|c| c.torn_tail_bytes > 0);
        prop_assert!(refused || cut, "a flipped byte at {} went unnoticed", pos);
        if !refused {
            // A damaged last record is indistinguishable from a torn write: it is
            // cut (and reported), never served with altered content.
            let after = ok(&db, "mentisdb_search", json!({"chain_key": "p"}))["thoughts"].clone();
            let n = after.as_array().unwrap().len();
            prop_assert!(n < before.as_array().unwrap().len());
            prop_assert_eq!(&after.as_array().unwrap()[..], &before.as_array().unwrap()[..n]);
        } else {
            let e = db.call("mentisdb_head", json!({"chain_key": "p"})).unwrap_err();
            prop_assert!(e.to_string().contains("failed verification"), "{}", e);
        }
    }
}

#[test]
fn a_refused_chain_does_not_stop_the_others() {
    let storage = Arc::new(MemoryStorage::new());
    let (db, _) = open_report(storage.clone());
    for k in ["good", "bad"] {
        for i in 0..3 {
            ok(&db, "mentisdb_append", json!({"chain_key": k, "thought_type": "Idea", "content": format!("{k} {i}")}));
        }
    }
    drop(db);
    let object = chain_object("bad", ChainFormat::Binary);
    let mut bytes = storage.read(&object).unwrap().unwrap();
    let header_len = mentisdb_core::record::encode_header(ChainFormat::Binary, "bad").len();
    bytes[header_len + 30] ^= 1; // inside the first thought, with valid records after it
    storage.write_atomic(&object, &bytes).unwrap();
    let (db, report) = open_report(storage);
    assert_eq!(report.refused.len(), 1, "{:?}", report.refused);
    assert!(report.refused[0].1.contains("corrupt record"), "{:?}", report.refused);
    assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": "good"}))["thought_count"], 3);
    let e = db.call("mentisdb_append", json!({"chain_key": "bad", "thought_type": "Idea", "content": "x"})).unwrap_err();
    assert!(e.to_string().contains("refusing to overwrite") || e.to_string().contains("failed verification"), "{e}");
    ok(&db, "mentisdb_append", json!({"chain_key": "good", "thought_type": "Idea", "content": "still serving"}));
}

#[test]
fn hash_mismatch_names_index_expected_and_found() {
    let storage = Arc::new(MemoryStorage::new());
    let (db, _) = open_report(storage.clone());
    ok(&db, "mentisdb_bootstrap", json!({"chain_key": "j", "content": "start", "storage_adapter": "jsonl"}));
    ok(&db, "mentisdb_append", json!({"chain_key": "j", "thought_type": "Idea", "content": "original"}));
    ok(&db, "mentisdb_append", json!({"chain_key": "j", "thought_type": "Idea", "content": "later"}));
    drop(db);
    let object = chain_object("j", ChainFormat::Jsonl);
    let text = String::from_utf8(storage.read(&object).unwrap().unwrap()).unwrap();
    storage.write_atomic(&object, text.replace("original", "tampered").as_bytes()).unwrap();
    let (db, report) = open_report(storage);
    assert!(report.refused[0].1.starts_with("hash mismatch at index 1: stored "), "{:?}", report.refused);
    let e = db.call("mentisdb_search", json!({"chain_key": "j"})).unwrap_err();
    assert_eq!(e.kind(), "chain_refused");
}

#[test]
fn torn_tail_is_cut_and_the_chain_keeps_growing() {
    let storage = Arc::new(MemoryStorage::new());
    let (db, _) = open_report(storage.clone());
    ok(&db, "mentisdb_append", json!({"chain_key": "t", "thought_type": "Idea", "content": "kept"}));
    drop(db);
    let object = chain_object("t", ChainFormat::Binary);
    storage.append(&object, &[0x40, 0, 0, 0, 1, 2]).unwrap(); // half a frame header
    let (db, report) = open_report(storage.clone());
    assert_eq!(report.chains[0].torn_tail_bytes, 6);
    ok(&db, "mentisdb_append", json!({"chain_key": "t", "thought_type": "Idea", "content": "after"}));
    drop(db);
    let (db, report) = open_report(storage);
    assert_eq!(report.chains[0].torn_tail_bytes, 0);
    assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": "t"}))["thought_count"], 2);
}

#[test]
fn a_malformed_timestamp_is_refused_at_open() {
    for format in [ChainFormat::Binary, ChainFormat::Jsonl] {
        let storage = Arc::new(MemoryStorage::new());
        let (db, _) = open_report(storage.clone());
        ok(&db, "mentisdb_append", json!({"chain_key": "ts", "thought_type": "Idea", "content": "when?"}));
        let stored = ok(&db, "mentisdb_search", json!({"chain_key": "ts"}))["thoughts"][0].clone();
        drop(db);
        // A correctly hashed thought whose timestamp is not RFC 3339 (as a
        // foreign or buggy writer might store it): only the timestamp check catches it.
        let mut thought: mentisdb_core::Thought = serde_json::from_value(stored).unwrap();
        thought.set_timestamp("yesterday at noon");
        thought.hash = mentisdb_core::canonical::compute_thought_hash(&thought);
        let mut bytes = mentisdb_core::record::encode_header(format, "ts");
        bytes.extend(mentisdb_core::record::encode_thought(format, &thought));
        let object = chain_object("ts", format);
        storage.remove(&chain_object("ts", ChainFormat::Binary)).unwrap();
        storage.write_atomic(&object, &bytes).unwrap();
        let (db, report) = open_report(storage);
        let expected = mentisdb_core::VerifyError::BadTimestamp { index: 0, timestamp: "yesterday at noon".into() };
        assert_eq!(report.refused, vec![("ts".to_string(), expected.to_string())], "{format:?}");
        match db.call("mentisdb_search", json!({"chain_key": "ts", "since": "2020-01-01T00:00:00Z"})) {
            Err(mentisdb_core::ToolError::ChainRefused { chain_key, error }) => assert_eq!((chain_key.as_str(), error), ("ts", expected)),
            other => panic!("{format:?}: expected the chain to be refused, got {other:?}"),
        }
    }
}

/// A JSONL chain written by an earlier version of this engine (before
/// thought replies grew `entity_type: null`, `source_episode` and relations'
/// `valid_at`) opens, verifies and takes appends: the line format is its
/// own (`jsonl_record.rs`), so reply fields never change stored bytes.
#[test]
fn a_jsonl_chain_written_before_the_reply_fields_grew_still_opens_and_grows() {
    let legacy = include_bytes!("../fixtures/legacy-0.1-chain.jsonl");
    let storage = Arc::new(MemoryStorage::new());
    let object = mentisdb_core::naming::chain_object("old", mentisdb_core::ChainFormat::Jsonl);
    storage.write_atomic(&object, legacy).unwrap();
    let (db, report) = MentisDb::open(storage.clone(), Arc::new(FixedClock::new(1_795_339_800_000, 1000)), Arc::new(mentisdb_core::SequentialIds::starting_at(77)), DbConfig::default()).unwrap();
    assert!(report.refused.is_empty(), "{:?}", report.refused);
    let head = db.call("mentisdb_head", serde_json::json!({"chain_key": "old"})).unwrap();
    assert_eq!((head["thought_count"].clone(), head["integrity_ok"].clone()), (serde_json::json!(2), serde_json::json!(true)));
    db.call("mentisdb_append", serde_json::json!({"chain_key": "old", "thought_type": "Finding", "content": "a new line", "relations": [{"kind": "Supports", "target_index": 1}]})).unwrap();
    let bytes = storage.read(&object).unwrap().unwrap();
    assert!(bytes.starts_with(legacy), "stored lines are never rewritten");
    let added = std::str::from_utf8(&bytes[legacy.len()..]).unwrap();
    assert!(!added.contains("source_episode") && !added.contains("valid_at") && !added.contains("entity_type"), "{added}");
    drop(db);
    let (again, report) = MentisDb::open(storage, Arc::new(FixedClock::new(1_795_339_900_000, 1000)), Arc::new(mentisdb_core::SequentialIds::starting_at(99)), DbConfig::default()).unwrap();
    assert!(report.refused.is_empty(), "{:?}", report.refused);
    let t = again.call("mentisdb_get_thought", serde_json::json!({"chain_key": "old", "thought_index": 2})).unwrap();
    assert_eq!(t["thought"]["relations"][0]["valid_at"], t["thought"]["timestamp"], "derived when read");
}
