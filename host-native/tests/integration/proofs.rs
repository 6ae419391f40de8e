//! Provable memory against the real `mentisdbd`: the identity key (created
//! once, 0600, kept across restarts, printed at startup), signed checkpoints
//! that verify with the served key, and inclusion / consistency proofs over
//! REST and MCP that verify with the core's pure verifiers.

use crate::common;
use common::{client, Daemon, McpSession};
use mentisdb_core::checkpoint::verify_checkpoint;
use mentisdb_core::merkle::{verify_consistency, verify_inclusion, Hash};
use reqwest::StatusCode;
use serde_json::{json, Value};

fn post(d: &Daemon, path: &str, body: Value) -> (StatusCode, Value) {
    let r = client().post(format!("{}{path}", d.rest)).json(&body).send().unwrap();
    let status = r.status();
    (status, r.json().unwrap_or(Value::Null))
}

fn ok(d: &Daemon, path: &str, body: Value) -> Value {
    let (status, v) = post(d, path, body.clone());
    assert_eq!(status, StatusCode::OK, "{path} {body}: {v}");
    v
}

fn h(v: &Value) -> Hash {
    hex::decode(v.as_str().unwrap()).unwrap().try_into().unwrap()
}

fn hashes(v: &Value) -> Vec<Hash> {
    v.as_array().unwrap().iter().map(h).collect()
}

#[test]
fn checkpoints_and_proofs_verify_with_the_daemons_identity_across_a_restart() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("data");
    let d = Daemon::start(&dir, &[], &[]);
    let id: Value = client().get(format!("{}/v1/identity", d.rest)).send().unwrap().json().unwrap();
    let (name, pk) = (id["name"].as_str().unwrap().to_string(), h(&id["public_key"]));
    assert!(d.logs().contains(id["verifier_key"].as_str().unwrap()), "the startup log names the key");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(dir.join("identity.ed25519")).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let appended: Vec<Value> = (0..7).map(|i| ok(&d, "/v1/thoughts", json!({"chain_key": "pv", "thought_type": "Finding", "content": format!("fact {i}")}))).collect();
    let cp = ok(&d, "/v1/checkpoint", json!({"chain_key": "pv"}));
    let head = verify_checkpoint(cp["checkpoint"].as_str().unwrap(), &name, &pk).expect("signed by the served key");
    assert_eq!((head.origin, head.tree_size), (format!("{name}/pv"), 7));
    for (i, a) in appended.iter().enumerate() {
        let p = ok(&d, "/v1/proofs/inclusion", json!({"chain_key": "pv", "index": a["thought"]["index"], "tree_size": 7}));
        assert_eq!(p["leaf_hash"], a["leaf_hash"]);
        assert!(verify_inclusion(&h(&a["leaf_hash"]), i as u64, 7, &hashes(&p["hashes"]), &head.root));
    }
    let (status, v) = post(&d, "/v1/proofs/inclusion", json!({"chain_key": "pv", "index": 7, "tree_size": 7}));
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    assert!(v["error"].as_str().unwrap().contains("index 7"), "{v}");
    let (status, _) = post(&d, "/v1/proofs/consistency", json!({"chain_key": "nope", "first": 1, "second": 1}));
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Restart: same key; the tree of 7 is a prefix of the grown one, also over MCP.
    d.kill();
    let d = Daemon::start(&dir, &[], &[]);
    let again: Value = client().get(format!("{}/v1/identity", d.rest)).send().unwrap().json().unwrap();
    assert_eq!(again, id);
    for i in 7..12 {
        ok(&d, "/v1/thoughts", json!({"chain_key": "pv", "thought_type": "Finding", "content": format!("fact {i}")}));
    }
    let (s, _) = McpSession::open(format!("{}/mcp", d.mcp));
    let r = s.call(2, "tools/call", json!({"name": "mentisdb_checkpoint", "arguments": {"chain_key": "pv"}}));
    let text = r["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{r}"));
    let newer = verify_checkpoint(serde_json::from_str::<Value>(text).unwrap()["checkpoint"].as_str().unwrap(), &name, &pk).unwrap();
    assert_eq!(newer.tree_size, 12);
    let c = ok(&d, "/v1/proofs/consistency", json!({"chain_key": "pv", "first": 7, "second": 12}));
    assert!(verify_consistency(7, 12, &head.root, &newer.root, &hashes(&c["hashes"])));
    let r = s.call(3, "tools/call", json!({"name": "mentisdb_inclusion_proof", "arguments": {"chain_key": "pv", "index": 3}}));
    assert_ne!(r["result"]["isError"], true, "{r}");
}

/// Runs one whole sync of `chain` from the core's session over the
/// daemon's REST API, as a replica host does.
fn sync_over_rest(d: &Daemon, replica: &mentisdb_core::MentisDb, chain: &str, verifier: &str) -> Result<mentisdb_core::sync::SyncReport, mentisdb_core::sync::SyncError> {
    use mentisdb_core::sync::{SyncReply, SyncSession, SyncStep};
    let mut session = SyncSession::new(replica, chain, verifier)?;
    let mut reply: Option<(u16, String)> = None;
    loop {
        match session.step(replica, reply.as_ref().map(|(status, body)| SyncReply { status: *status, body }))? {
            SyncStep::Done(report) => return Ok(report),
            SyncStep::Send(request) => {
                let r = client().post(format!("{}{}", d.rest, request.path)).json(&request.body).send().unwrap();
                reply = Some((r.status().as_u16(), r.text().unwrap()));
            }
        }
    }
}

#[test]
fn a_replica_syncs_over_rest_and_cors_answers_only_the_allowed_origin() {
    let root = tempfile::tempdir().unwrap();
    let d = Daemon::start(&root.path().join("data"), &[("MENTISDB_ALLOWED_ORIGINS", "http://app.example:8080")], &[]);
    let id: Value = client().get(format!("{}/v1/identity", d.rest)).send().unwrap().json().unwrap();
    let verifier = id["verifier_key"].as_str().unwrap();
    for i in 0..3 {
        ok(&d, "/v1/thoughts", json!({"chain_key": "shared", "thought_type": "Finding", "content": format!("daemon {i}")}));
    }
    let (replica, _) = mentisdb_core::MentisDb::open(
        std::sync::Arc::new(mentisdb_core::MemoryStorage::new()),
        std::sync::Arc::new(mentisdb_core::FixedClock::new(1_795_339_800_000, 1000)),
        std::sync::Arc::new(mentisdb_core::SequentialIds::starting_at(1 << 40)),
        mentisdb_core::DbConfig::default(),
    )
    .unwrap();
    replica.call("mentisdb_append", json!({"chain_key": "shared", "thought_type": "Idea", "content": "written offline"})).unwrap();
    let report = sync_over_rest(&d, &replica, "shared", verifier).unwrap();
    assert_eq!((report.pushed, report.pulled, report.tree_size), (1, 4, 4));
    let head = ok(&d, "/v1/head", json!({"chain_key": "shared"}));
    assert_eq!(Some(report.head_hash.clone().unwrap().as_str()), head["head_hash"].as_str());
    assert_eq!(replica.call("mentisdb_head", json!({"chain_key": "shared"})).unwrap()["head_hash"], head["head_hash"]);

    // Bad pages are 400s in the spec's format; the daemon keeps serving.
    let (status, v) = post(&d, "/v1/chains/records", json!({"chain_key": "shared", "from": 3, "to": 2}));
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    assert!(v["error"].as_str().unwrap().contains("after to"), "{v}");
    let (status, v) = post(&d, "/v1/thoughts/batch", json!({"chain_key": "shared", "thoughts": []}));
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");

    // CORS: the allowed origin's preflight is answered, another origin's is not.
    let preflight = |origin: &str| {
        client()
            .request(reqwest::Method::OPTIONS, format!("{}/v1/checkpoint", d.rest))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "authorization,content-type")
            .send()
            .unwrap()
    };
    let allowed = preflight("http://app.example:8080");
    assert_eq!(allowed.headers().get("access-control-allow-origin").map(|v| v.to_str().unwrap()), Some("http://app.example:8080"));
    assert!(preflight("http://evil.example").headers().get("access-control-allow-origin").is_none());
}
