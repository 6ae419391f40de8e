//! `GET /v1/chains/{chain_key}/export` and `POST /v1/chains/{chain_key}/import`
//! on the real daemon, and the same operations as MCP tools: the export is
//! the stored chain object byte for byte; an import is verified before it is
//! stored, refuses an existing chain and a tampered object, and the imported
//! chain serves the same thoughts.

use crate::common;
use base64::Engine as _;
use common::{client, Daemon, McpSession};
use reqwest::StatusCode;
use serde_json::{json, Value};

fn post(d: &Daemon, path: &str, body: Value) -> Value {
    let r = client().post(format!("{}{path}", d.rest)).json(&body).send().unwrap();
    assert!(r.status().is_success(), "{path}: {}", r.status());
    r.json().unwrap()
}

fn export(d: &Daemon, key: &str) -> (StatusCode, Vec<u8>) {
    let r = client().get(format!("{}/v1/chains/{key}/export", d.rest)).send().unwrap();
    (r.status(), r.bytes().unwrap().to_vec())
}

fn import(d: &Daemon, key: &str, bytes: Vec<u8>) -> (StatusCode, Value) {
    let r = client().post(format!("{}/v1/chains/{key}/import", d.rest)).header("content-type", "application/octet-stream").body(bytes).send().unwrap();
    (r.status(), r.json().unwrap())
}

#[test]
fn a_chain_moves_between_daemons_as_its_stored_bytes_and_a_bad_object_is_refused() {
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = Daemon::start(a_dir.path(), &[], &[]);
    for n in 0..5 {
        post(&a, "/v1/thoughts", json!({ "chain_key": "moving", "thought_type": "Finding", "content": format!("fact {n}: caf\u{e9} \"quoted\"") }));
    }
    let (status, bytes) = export(&a, "moving");
    assert_eq!(status, StatusCode::OK);
    // Byte for byte the object the daemon stores (what the browser's exportChain also reads out).
    let stored: Vec<Vec<u8>> = std::fs::read_dir(a_dir.path().join("chains")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "mdb")).map(|p| std::fs::read(p).unwrap()).collect();
    assert_eq!(stored, vec![bytes.clone()]);
    let (status, body) = export(&a, "never-written");
    assert_eq!(status, StatusCode::NOT_FOUND, "{body:?}");

    let b = Daemon::start(b_dir.path(), &[], &[]);
    let mut tampered = bytes.clone();
    let at = tampered.windows(6).position(|w| w == b"fact 3").unwrap();
    tampered[at] = b'F';
    let (status, body) = import(&b, "moving", tampered);
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = import(&b, "other-name", bytes.clone());
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["error"].as_str().unwrap().contains("not 'other-name'"), "{body}");
    let (status, _) = export(&b, "moving");
    assert_eq!(status, StatusCode::NOT_FOUND, "a refused import stored nothing");

    let (status, body) = import(&b, "moving", bytes.clone());
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["thought_count"], 5);
    assert_eq!(body["head_hash"], post(&a, "/v1/head", json!({ "chain_key": "moving" }))["head_hash"]);
    assert_eq!(export(&b, "moving").1, bytes, "export(import(x)) == x");
    let (status, body) = import(&b, "moving", bytes.clone());
    assert_eq!(status, StatusCode::CONFLICT, "{body}");

    // The same operations as MCP tools.
    let (mcp, _) = McpSession::open(format!("{}/", a.mcp));
    let r = mcp.call(2, "tools/call", json!({ "name": "mentisdb_export_chain", "arguments": { "chain_key": "moving" } }));
    let out: Value = serde_json::from_str(r["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(base64::engine::general_purpose::STANDARD.decode(out["chain_base64"].as_str().unwrap()).unwrap(), bytes);
    assert_eq!(out["byte_count"], bytes.len());
    let r = mcp.call(3, "tools/call", json!({ "name": "mentisdb_import_chain", "arguments": { "chain_key": "moving", "chain_base64": out["chain_base64"] } }));
    assert_eq!(r["result"]["isError"], true, "{r}");
}

#[test]
fn the_import_route_takes_chains_larger_than_the_body_limit_up_to_its_own() {
    use mentisdb_core::{naming, ChainFormat, DbConfig, FixedClock, MemoryStorage, MentisDb, SequentialIds, Storage};
    use std::sync::Arc;
    let memory = Arc::new(MemoryStorage::new());
    let (db, _) = MentisDb::open(memory.clone(), Arc::new(FixedClock::new(1_795_000_000_000, 1)), Arc::new(SequentialIds::default()), DbConfig::default()).unwrap();
    for i in 0..3_000 {
        db.call("mentisdb_append", json!({"chain_key": "big", "thought_type": "Finding", "content": format!("{i} {}", "a long note about the system ".repeat(16))})).unwrap();
    }
    let bytes = memory.read(&naming::chain_object("big", ChainFormat::Binary)).unwrap().unwrap();
    assert!(bytes.len() > 1 << 20, "bigger than the default body limit: {}", bytes.len());
    let tmp = tempfile::tempdir().unwrap();
    let d = Daemon::start(&tmp.path().join("a"), &[], &[]);
    let (status, reply) = import(&d, "big", bytes.clone());
    assert_eq!((status, reply["thought_count"].as_u64()), (StatusCode::OK, Some(3_000)), "{reply}");
    let small = Daemon::start(&tmp.path().join("b"), &[("MENTISDB_MAX_IMPORT_BYTES", "100000")], &[]);
    let (status, reply) = import(&small, "big", bytes);
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{reply}");
    assert!(reply["error"].is_string(), "{reply}");
}
