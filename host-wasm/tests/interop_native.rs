//! Cross-host interop, native side, through the daemon's own code: chain
//! files are put into a data directory's `chains/` and opened with
//! `mentisdb_native::open_store` (what `mentisdbd` runs at startup:
//! `FsStorage` + `MentisDb::open`, verifying every chain).
//!
//! - `daemon_fixture_is_what_the_daemon_writes`: `fixtures/daemon-chain.mdb`
//!   is byte-for-byte the file the daemon's `FsStorage` holds after a fixed
//!   script (fixed clock and ids); the browser tests import it.
//!   `UPDATE_FIXTURES=1` rewrites it. Its last thought is forgotten.
//!   `fixtures/daemon-chain-schema1.mdb` is the same script's file as the
//!   daemon wrote it before schema 2 (three schema-1 thoughts); the browser
//!   tests read, verify, extend and forget in it.
//! - `browser_export_opens_and_verifies_natively` (ignored; run by
//!   `scripts/stages/40-wasm.sh` after the real-browser test): the chain the
//!   browser exported into `test-output/browser-export.mdb` opens in the
//!   daemon, verifies, is searchable and keeps growing.
#![cfg(not(target_arch = "wasm32"))]

use clap::Parser;
use mentisdb_core::{naming, record, ChainFormat, DbConfig, FixedClock, MentisDb, SequentialIds};
use mentisdb_native::{open_store, Config, FsStorage};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::Arc;

const FIXTURE_KEY: &str = "daemon-notes";

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Puts `bytes` into a fresh data directory as the chain file the daemon
/// would name it, and opens that directory as `mentisdbd` does.
fn open_as_daemon(bytes: &[u8]) -> (Arc<MentisDb>, String, tempfile::TempDir) {
    let decoded = record::decode_chain(bytes).expect("decodes as a chain object");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(naming::chain_object(&decoded.chain_key, decoded.format));
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, bytes).unwrap();
    let config = Config::parse_from(["mentisdbd", "--dir", dir.path().to_str().unwrap(), "--verbose", "false"]);
    let store = open_store(&config).expect("the daemon opens the data directory");
    assert!(store.report.refused.is_empty(), "the daemon refuses this chain: {:?}", store.report.refused);
    assert_eq!(store.report.chains.len(), 1);
    assert_eq!(store.report.chains[0].torn_tail_bytes, 0, "no torn tail expected");
    (store.db, decoded.chain_key, dir)
}

/// Runs the fixture script on the daemon's `FsStorage` (fixed clock and
/// ids, so the bytes are reproducible) and returns the chain file it wrote.
fn write_fixture_chain() -> (Vec<u8>, Value) {
    let dir = tempfile::tempdir().unwrap();
    let storage = Arc::new(FsStorage::open(dir.path()).unwrap());
    let (db, _) = MentisDb::open(storage, Arc::new(FixedClock::new(1_795_000_000_000, 1000)), Arc::new(SequentialIds::default()), DbConfig::default()).unwrap();
    db.call("mentisdb_bootstrap", json!({"chain_key": FIXTURE_KEY, "content": "Memory of the native daemon fixture."})).unwrap();
    db.call("mentisdb_append", json!({"chain_key": FIXTURE_KEY, "agent_id": "daemon-agent", "thought_type": "Decision", "content": "Chains move between hosts as one file.", "tags": ["interop"], "importance": 0.9})).unwrap();
    db.call("mentisdb_append", json!({"chain_key": FIXTURE_KEY, "agent_id": "daemon-agent", "thought_type": "Insight", "content": "The browser verifies imported chains like the daemon does.", "refs": [1], "concepts": ["verification"]})).unwrap();
    db.call("mentisdb_append", json!({"chain_key": FIXTURE_KEY, "agent_id": "daemon-agent", "thought_type": "FactLearned", "content": "A secret that was forgotten: zeta-5150."})).unwrap();
    db.call("mentisdb_forget_thought", json!({"chain_key": FIXTURE_KEY, "thought_index": 3, "reason": "fixture: a forgotten thought", "agent_id": "daemon-agent"})).unwrap();
    let head = db.call("mentisdb_head", json!({"chain_key": FIXTURE_KEY})).unwrap();
    let bytes = std::fs::read(dir.path().join(naming::chain_object(FIXTURE_KEY, ChainFormat::Binary))).expect("the daemon wrote the chain file");
    (bytes, head)
}

#[test]
fn daemon_fixture_is_what_the_daemon_writes() {
    let (bytes, head) = write_fixture_chain();
    let head_hash = head["head_hash"].as_str().unwrap().to_string();
    if std::env::var_os("UPDATE_FIXTURES").is_some() {
        std::fs::write(fixtures().join("daemon-chain.mdb"), &bytes).unwrap();
        std::fs::write(fixtures().join("daemon-chain.head"), &head_hash).unwrap();
    }
    let stored = std::fs::read(fixtures().join("daemon-chain.mdb")).expect("fixture present (UPDATE_FIXTURES=1 writes it)");
    assert_eq!(stored, bytes, "the daemon no longer writes the fixture's bytes; the record format changed (UPDATE_FIXTURES=1 if intended)");
    assert_eq!(std::fs::read_to_string(fixtures().join("daemon-chain.head")).unwrap(), head_hash);
    let (db, key, _dir) = open_as_daemon(&stored);
    assert_eq!(key, FIXTURE_KEY);
    let reopened = db.call("mentisdb_head", json!({"chain_key": key})).unwrap();
    assert_eq!(reopened["head_hash"], head["head_hash"]);
    assert_eq!(reopened["integrity_ok"], true);
}

#[test]
#[ignore = "needs test-output/browser-export.mdb from the real-browser test (run by scripts/stages/40-wasm.sh)"]
fn browser_export_opens_and_verifies_natively() {
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../test-output");
    let bytes = std::fs::read(out.join("browser-export.mdb")).expect("the real-browser test wrote test-output/browser-export.mdb");
    let expected: Value = serde_json::from_slice(&std::fs::read(out.join("browser-export.json")).expect("browser-export.json")).unwrap();
    let (db, key, _dir) = open_as_daemon(&bytes);
    assert_eq!(key, expected["chain_key"].as_str().unwrap());
    let head = db.call("mentisdb_head", json!({"chain_key": key})).unwrap();
    assert_eq!(head["head_hash"], expected["head_hash"], "the daemon sees the browser's head");
    assert_eq!(head["thought_count"], expected["thought_count"]);
    assert_eq!(head["integrity_ok"], true);
    let found = db.call("mentisdb_search", json!({"chain_key": key, "text": expected["search_text"]})).unwrap();
    assert!(!found["thoughts"].as_array().unwrap().is_empty(), "the thought typed in the browser is found natively");
    // The daemon can keep appending to the browser's chain.
    let next = db.call("mentisdb_append", json!({"chain_key": key, "thought_type": "Finding", "content": "appended natively"})).unwrap();
    assert_eq!(next["thought"]["prev_hash"], expected["head_hash"]);
}
