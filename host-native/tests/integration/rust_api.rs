//! The `mentisdb` crate (MentisDB 0.10.10's Rust API, `compat-mentisdb/`)
//! and the real `mentisdbd` share chains both ways: what a Rust program
//! appends in-process the daemon serves and verifies, what the daemon
//! appends opens through the crate, and the two never hold one directory
//! at once (the daemon's lock).

use crate::common;
use common::{client, command, Daemon};
use mentisdb::{MentisDb, ThoughtType};
use reqwest::StatusCode;
use serde_json::{json, Value};

fn ok(d: &Daemon, path: &str, body: Value) -> Value {
    let r = client().post(format!("{}{path}", d.rest)).json(&body).send().unwrap();
    let status = r.status();
    let v: Value = r.json().unwrap_or(Value::Null);
    assert_eq!(status, StatusCode::OK, "{path} {body}: {v}");
    v
}

#[test]
fn chains_cross_between_the_rust_api_and_mentisdbd() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("data");

    // Written in-process through the 0.10.10 API.
    let hashes: Vec<String> = {
        let mut chain = MentisDb::open_with_key(&dir, "from-rust").unwrap();
        chain.append("planner", ThoughtType::Finding, "Base finding").unwrap();
        chain.append("planner", ThoughtType::Decision, "Unrelated decision").unwrap();
        chain.append_with_refs("planner", ThoughtType::Summary, "Summary of the finding", vec![0]).unwrap();
        assert!(chain.verify_integrity());
        chain.thoughts().iter().map(|t| t.hash.clone()).collect()
    };

    // The daemon serves that chain (it verified it at open) with the same hashes.
    let d = Daemon::start(&dir, &[], &[]);
    let found = ok(&d, "/v1/search", json!({"chain_key": "from-rust"}));
    let served: Vec<&str> = found["thoughts"].as_array().unwrap().iter().map(|t| t["hash"].as_str().unwrap()).collect();
    assert_eq!(served, hashes.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(found["thoughts"][2]["refs"], json!([0]));
    let head = ok(&d, "/v1/head", json!({"chain_key": "from-rust"}));
    assert_eq!(head["integrity_ok"], json!(true), "{head}");

    // While the daemon holds the directory, the crate refuses it.
    let err = MentisDb::open_with_key(&dir, "from-rust").unwrap_err();
    assert!(err.to_string().contains("mentisdbd"), "{err}");

    // Written by the daemon, read back in-process.
    ok(&d, "/v1/thoughts", json!({"chain_key": "from-rust", "thought_type": "Decision", "content": "Daemon decision", "refs": [2]}));
    ok(&d, "/v1/thoughts", json!({"chain_key": "from-daemon", "thought_type": "Insight", "content": "Only the daemon wrote this chain"}));
    d.kill();
    let chain = MentisDb::open_with_key(&dir, "from-rust").unwrap();
    assert_eq!(chain.thoughts().len(), 4);
    assert_eq!(chain.thoughts()[3].content, "Daemon decision");
    assert_eq!(chain.thoughts()[3].prev_hash, hashes[2]);
    assert!(chain.verify_integrity());
    let indices: Vec<u64> = chain.resolve_context(3).iter().map(|t| t.index).collect();
    assert_eq!(indices, vec![0, 2, 3]);
    let other = MentisDb::open_with_key(&dir, "from-daemon").unwrap();
    assert_eq!(other.thoughts()[0].thought_type, ThoughtType::Insight);
    assert!(other.verify_integrity());

    // While the crate holds the directory, the daemon refuses it.
    let out = command(&dir, &[], &[]).output().unwrap();
    assert!(!out.status.success(), "the daemon started on a directory the crate holds");
    drop((chain, other));
}
