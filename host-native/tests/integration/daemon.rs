//! The real `mentisdbd` binary on free loopback ports: REST contract and
//! errors, restart durability (the daemon is SIGKILLed, not shut down),
//! torn tails cut on restart, a damaged chain refused while others serve,
//! hostile chain keys, body limits, auth, the non-loopback refusal, and one
//! shared service behind REST and MCP.

use crate::common;
use common::{client, command, initialize, Daemon, McpSession};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

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

fn append(d: &Daemon, chain: &str, content: &str) -> Value {
    ok(d, "/v1/thoughts", json!({"chain_key": chain, "thought_type": "Finding", "content": content}))
}

fn data_dir() -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("data");
    (root, dir)
}

#[test]
fn rest_contract_errors_and_restart_after_sigkill() {
    let (_root, dir) = data_dir();
    let d = Daemon::start(&dir, &[], &[]);
    let health: Value = client().get(format!("{}/health", d.rest)).send().unwrap().json().unwrap();
    // The spec's two fields, plus the storage backend's state.
    assert_eq!(health, json!({"status": "ok", "service": "mentisdb", "storage": {"backend": "file", "reachable": true, "group_writes": 0, "lost_races": 0}}));
    let boot = ok(&d, "/v1/bootstrap", json!({"chain_key": "r", "content": "purpose"}));
    assert_eq!(boot["bootstrapped"], true);
    for i in 0..20 {
        append(&d, "r", &format!("durable fact {i}"));
    }
    let found = ok(&d, "/v1/search", json!({"chain_key": "r", "text": "fact 7"}));
    assert!(found["thoughts"].as_array().unwrap().iter().any(|t| t["content"] == "durable fact 7"), "{found}");
    let health: Value = client().get(format!("{}/health", d.rest)).send().unwrap().json().unwrap();
    let storage = &health["storage"];
    assert_eq!(storage["group_writes"], 21, "one write per append made one after another, the bootstrap too: {health}");
    assert_eq!(storage["lost_races"], 0, "a daemon alone on its files never races: {health}");
    // The spec's listed errors: 400 with {"error"}.
    for (body, needle) in [
        (json!({"chain_key": "r", "thought_type": "Insigth", "content": "x"}), "thought_type"),
        (json!({"chain_key": "r", "thought_type": "Insight", "role": "Boss", "content": "x"}), "role"),
        (json!({"chain_key": "r", "text": "x", "since": "yesterday"}), "RFC 3339"),
    ] {
        let path = if body.get("thought_type").is_some() { "/v1/thoughts" } else { "/v1/search" };
        let (status, v) = post(&d, path, body);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
        assert!(v["error"].as_str().unwrap().contains(needle), "{v}");
    }
    let r = client().post(format!("{}/v1/head", d.rest)).header("content-type", "application/json").body("{oops").send().unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert!(r.json::<Value>().unwrap()["error"].as_str().unwrap().contains("malformed JSON"));
    let r = client().post(format!("{}/v1/head", d.rest)).header("content-type", "text/plain").body("{}").send().unwrap();
    assert_eq!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert!(r.json::<Value>().unwrap()["error"].is_string());
    let r = client().get(format!("{}/v1/nope", d.rest)).send().unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    assert!(r.json::<Value>().unwrap()["error"].is_string());
    // The ranked and context routes reach their tools.
    let ranked = ok(&d, "/v1/ranked-search", json!({"chain_key": "r", "text": "fact 7"}));
    assert!(ranked.to_string().contains("durable fact 7"), "{ranked}");
    let bundles = ok(&d, "/v1/context-bundles", json!({"chain_key": "r", "text": "fact 7"}));
    assert!(bundles.to_string().contains("durable fact 7"), "{bundles}");
    let context = ok(&d, "/v1/context", json!({"chain_key": "r", "thought_index": 3}));
    assert!(context.is_object());
    let before = ok(&d, "/v1/head", json!({"chain_key": "r"}));
    d.kill();

    let d = Daemon::start(&dir, &[], &[]);
    let after = ok(&d, "/v1/head", json!({"chain_key": "r"}));
    assert_eq!(after["thought_count"], 21);
    assert_eq!(after["head_hash"], before["head_hash"]);
    assert_eq!(after["integrity_ok"], true);
    let chains: Value = client().get(format!("{}/v1/chains", d.rest)).send().unwrap().json().unwrap();
    assert_eq!(chains["chain_keys"], json!(["r"]));
}

/// Every file under `dir`, recursively, whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_containing(&path, needle));
        } else if std::fs::read(&path).unwrap().windows(needle.len()).any(|w| w == needle) {
            found.push(path);
        }
    }
    found
}

#[test]
fn a_forgotten_thought_is_in_no_file_after_a_restart() {
    let (_root, dir) = data_dir();
    let log = dir.join("mentisdbd.log");
    std::fs::create_dir_all(&dir).unwrap();
    let log_env = log.to_str().unwrap();
    let d = Daemon::start(&dir, &[("MENTISDB_LOG_FILE", log_env), ("MENTISDB_VERBOSE", "true")], &[]);
    let secret = "customer card 4929-1234-5678-0007";
    append(&d, "f", "before");
    let t = ok(&d, "/v1/thoughts", json!({"chain_key": "f", "thought_type": "Finding", "content": secret, "tags": ["card-0007"]}))["thought"].clone();
    append(&d, "f", "after");
    assert!(!files_containing(&dir, b"5678-0007").is_empty());
    let forgotten = ok(&d, "/v1/thoughts/forget", json!({"chain_key": "f", "thought_id": t["id"], "reason": "personal data", "agent_id": "dpo"}));
    assert_eq!(forgotten["thought"]["forgotten"]["forgotten_by"], "dpo");
    let (status, v) = post(&d, "/v1/thoughts/forget", json!({"chain_key": "f", "thought_index": 1}));
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    assert!(v["error"].as_str().unwrap().contains("reason"), "{v}");
    d.kill();

    let d = Daemon::start(&dir, &[("MENTISDB_LOG_FILE", log_env)], &[]);
    assert_eq!(files_containing(&dir, b"5678-0007"), Vec::<PathBuf>::new());
    assert_eq!(files_containing(&dir, b"card-0007"), Vec::<PathBuf>::new());
    let head = ok(&d, "/v1/head", json!({"chain_key": "f"}));
    assert_eq!((head["thought_count"].as_u64(), head["integrity_ok"].as_bool()), (Some(3), Some(true)));
    let got = ok(&d, "/v1/thought", json!({"chain_key": "f", "thought_index": 1}))["thought"].clone();
    assert_eq!((got["content"].as_str(), got["hash"].as_str()), (Some(""), t["hash"].as_str()));
    assert!(ok(&d, "/v1/search", json!({"chain_key": "f", "text": "card"}))["thoughts"].as_array().unwrap().is_empty());
    assert!(ok(&d, "/v1/ranked-search", json!({"chain_key": "f", "text": "customer card"}))["results"].as_array().unwrap().is_empty());
}

/// Appends arriving together are written on the daemon's event loop and
/// acknowledged after a drain's fsync (`core/src/db/append_now.rs`): each
/// gets one thought, none is lost to a SIGKILL right after the replies.
#[test]
fn concurrent_appends_are_each_acknowledged_once_and_survive_a_sigkill() {
    let (_root, dir) = data_dir();
    let d = Daemon::start(&dir, &[], &[]);
    append(&d, "busy", "first, creating the chain");
    let (threads, each) = (8, 25);
    let indices: Vec<u64> = std::thread::scope(|s| {
        let d = &d;
        let handles: Vec<_> = (0..threads)
            .map(|t| s.spawn(move || (0..each).map(|i| append(d, "busy", &format!("thread {t} append {i}"))["thought"]["index"].as_u64().unwrap()).collect::<Vec<_>>()))
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let mut sorted = indices.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (1..=(threads * each) as u64).collect::<Vec<_>>(), "one thought per acknowledged append");
    d.kill();
    let d = Daemon::start(&dir, &[], &[]);
    let head = ok(&d, "/v1/head", json!({"chain_key": "busy"}));
    assert_eq!(head["thought_count"], 1 + threads * each, "every acknowledged append survived the SIGKILL: {head}");
}

#[test]
fn a_retried_append_replays_across_a_restart_and_redaction_is_switchable() {
    let (_root, dir) = data_dir();
    let key = concat!("AKIA", "IOSFODNN7EXAMPLE");
    let req = json!({"chain_key": "idem", "thought_type": "Decision", "content": format!("use key {key}"), "thought_id": "client-42"});
    let d = Daemon::start(&dir, &[], &[]);
    let first = ok(&d, "/v1/thoughts", req.clone());
    assert_eq!(first["replay"], false);
    assert_eq!(first["thought"]["content"], "use key [REDACTED:aws_access_key_id]");
    assert_eq!(first["redactions"][0]["kind"], "aws_access_key_id");
    d.kill();
    let d = Daemon::start(&dir, &[], &[]);
    let again = ok(&d, "/v1/thoughts", req.clone());
    assert_eq!((again["replay"].clone(), again["thought"].clone()), (json!(true), first["thought"].clone()));
    let mut changed = req.clone();
    changed["content"] = json!("another decision");
    let (status, e) = post(&d, "/v1/thoughts", changed);
    assert_eq!(status, StatusCode::CONFLICT, "a conflict is 409, as 0.10.10 answers");
    assert!(e["error"].as_str().unwrap().contains("thought_id 'client-42' already names a different thought"), "{e}");
    assert_eq!(ok(&d, "/v1/head", json!({"chain_key": "idem"}))["thought_count"], 1, "one thought");
    d.kill();
    // Switched off per daemon, content is stored as sent.
    let d = Daemon::start(&dir, &[("MENTISDB_REDACT_SECRETS", "0")], &[]);
    let raw = ok(&d, "/v1/thoughts", json!({"chain_key": "idem", "thought_type": "Decision", "content": format!("raw {key}")}));
    assert_eq!((raw["thought"]["content"].clone(), raw["redactions"].clone()), (json!(format!("raw {key}")), json!([])));
}

#[test]
fn entity_types_scopes_and_dedup_of_mentisdb_0_10_over_rest() {
    let (_root, dir) = data_dir();
    let d = Daemon::start(&dir, &[("MENTISDB_DEDUP_THRESHOLD", "0.8"), ("MENTISDB_DEDUP_SCAN_WINDOW", "8")], &[]);
    let person = ok(&d, "/v1/thoughts", json!({"chain_key": "et", "thought_type": "fact-learned", "content": "Ada lives in Lisbon", "entity_type": "person", "scope": "user"}));
    let t = &person["thought"];
    assert_eq!((t["thought_type"].as_str(), t["entity_type"].as_str(), t["schema_version"].as_u64()), (Some("FactLearned"), Some("person"), Some(3)));
    assert_eq!(t["tags"], json!(["scope:user"]));
    let up = ok(&d, "/v1/entity-types/upsert", json!({"chain_key": "et", "entity_type": "service"}));
    assert_eq!((up["chain_key"].as_str(), up["entity_type"]["entity_type"].as_str(), up["entity_type"]["thought_count"].as_u64()), (Some("et"), Some("service"), Some(0)));
    let (status, e) = post(&d, "/v1/entity-types/upsert", json!({"chain_key": "et", "entity_type": " "}));
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(e["error"].as_str().unwrap().contains("must not be empty"), "{e}");
    // A near-duplicate is written with a Supersedes relation to the original.
    let dup = ok(&d, "/v1/thoughts", json!({"chain_key": "et", "thought_type": "FactLearned", "content": "Ada lives in Lisbon."}));
    assert_eq!(dup["thought"]["relations"], json!([{"kind": "Supersedes", "target_id": t["id"], "target_index": 0, "chain_key": null, "valid_at": dup["thought"]["timestamp"]}]));
    // The original is now superseded, so hidden unless asked for (as in 0.10).
    let found = ok(&d, "/v1/search", json!({"chain_key": "et", "entity_type": "person", "scope": "user"}));
    assert_eq!(found["thoughts"].as_array().unwrap().len(), 0);
    let found = ok(&d, "/v1/search", json!({"chain_key": "et", "entity_type": "person", "scope": "user", "include_invalidated": true}));
    assert_eq!(found["thoughts"].as_array().unwrap().len(), 1);
    d.kill();
    // After a restart: the chain verifies, the declared type is kept, the list covers both.
    let d = Daemon::start(&dir, &[], &[]);
    assert_eq!(ok(&d, "/v1/head", json!({"chain_key": "et"}))["integrity_ok"], true);
    let list = ok(&d, "/v1/entity-types", json!({"chain_key": "et"}));
    let rows: Vec<(String, u64)> = list["entity_types"].as_array().unwrap().iter().map(|r| (r["entity_type"].as_str().unwrap().to_string(), r["thought_count"].as_u64().unwrap())).collect();
    assert_eq!(rows, [("person".to_string(), 1), ("service".to_string(), 0)]);
    let ranked = ok(&d, "/v1/ranked-search", json!({"chain_key": "et", "text": "Ada Lisbon", "entity_type": "person", "include_superseded": true}));
    assert_eq!(ranked["results"][0]["thought"]["id"], t["id"]);
    // Dedup is off without the variable.
    let again = ok(&d, "/v1/thoughts", json!({"chain_key": "et", "thought_type": "FactLearned", "content": "Ada lives in Lisbon."}));
    assert_eq!(again["thought"]["relations"], json!([]));
}

#[test]
fn torn_tail_is_cut_on_restart() {
    let (_root, dir) = data_dir();
    let d = Daemon::start(&dir, &[], &["--default-storage-adapter", "binary"]);
    for i in 0..3 {
        append(&d, "torn", &format!("fact {i}"));
    }
    d.kill();
    let file = std::fs::read_dir(dir.join("chains")).unwrap().map(|e| e.unwrap().path()).find(|p| p.extension().is_some_and(|e| e == "mdb")).unwrap();
    let len = std::fs::metadata(&file).unwrap().len();
    let mut f = std::fs::OpenOptions::new().append(true).open(&file).unwrap();
    std::io::Write::write_all(&mut f, &[200, 0, 0, 0, 9, 9, 9, 9, 1, 2, 3]).unwrap();
    drop(f);
    let d = Daemon::start(&dir, &[], &[]);
    assert!(d.logs().contains("torn tail"), "startup logs the cut");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), len);
    assert_eq!(ok(&d, "/v1/head", json!({"chain_key": "torn"}))["thought_count"], 3);
    append(&d, "torn", "after the cut");
    assert_eq!(ok(&d, "/v1/head", json!({"chain_key": "torn"}))["integrity_ok"], true);
}

#[test]
fn damaged_chain_is_refused_while_others_serve() {
    let (_root, dir) = data_dir();
    let d = Daemon::start(&dir, &[], &["--default-storage-adapter", "jsonl"]);
    for i in 0..3 {
        append(&d, "bad", &format!("bad chain fact {i}"));
        append(&d, "good", &format!("good chain fact {i}"));
    }
    d.kill();
    let bad = std::fs::read_dir(dir.join("chains")).unwrap().map(|e| e.unwrap().path()).find(|p| p.file_name().unwrap().to_string_lossy().starts_with("bad.") && p.extension().is_some_and(|e| e == "jsonl")).unwrap();
    let text = std::fs::read_to_string(&bad).unwrap();
    std::fs::write(&bad, text.replacen("bad chain fact 1", "bad chain fakt 1", 1)).unwrap();
    let d = Daemon::start(&dir, &[], &[]);
    let logs = d.logs();
    assert!(logs.contains("chain refused") && logs.contains("bad"), "{logs}");
    assert_eq!(ok(&d, "/v1/head", json!({"chain_key": "good"}))["thought_count"], 3);
    append(&d, "good", "still serving");
    let (status, v) = post(&d, "/v1/head", json!({"chain_key": "bad"}));
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "a chain refused at open is a server-side fault");
    assert!(v["error"].as_str().unwrap().contains("failed verification"), "{v}");
    let (status, _) = post(&d, "/v1/thoughts", json!({"chain_key": "bad", "thought_type": "Finding", "content": "x"}));
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert!(std::fs::read_to_string(&bad).unwrap().contains("bad chain fakt 1"), "the refused file is left as found");
}

#[test]
fn hostile_chain_keys_stay_inside_the_data_directory() {
    let (root, dir) = data_dir();
    let d = Daemon::start(&dir, &[], &[]);
    let keys = ["../../escape", "/etc/passwd", "..", "a/b\\c", "chains/../../x", "ünï code", "nul\0byte"];
    for key in keys {
        let (status, v) = post(&d, "/v1/thoughts", json!({"chain_key": key, "thought_type": "Finding", "content": "x"}));
        assert!(status == StatusCode::OK || status == StatusCode::BAD_REQUEST, "{key:?}: {status} {v}");
        if status == StatusCode::OK {
            let loc = ok(&d, "/v1/head", json!({"chain_key": key}))["storage_location"].as_str().unwrap().to_string();
            assert!(Path::new(&loc).starts_with(std::fs::canonicalize(dir.join("chains")).unwrap()), "{key:?} stored at {loc}");
        }
    }
    let top: Vec<_> = std::fs::read_dir(root.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(top, vec![std::ffi::OsString::from("data")], "nothing was written outside the data directory");
}

#[test]
fn oversized_bodies_get_413_json() {
    let (_root, dir) = data_dir();
    let d = Daemon::start(&dir, &[], &["--max-body-bytes", "2000"]);
    let big = "x".repeat(5000);
    let (status, v) = post(&d, "/v1/thoughts", json!({"thought_type": "Finding", "content": big}));
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(v["error"].as_str().unwrap().contains("too large"), "{v}");
    // A client that writes its whole (32 MiB) body before it reads gets the
    // 413 and its message, not a connection reset mid-body, on both ports.
    let rest = post_whole_body_then_read(&d.rest, "/v1/thoughts", 32 << 20);
    assert!(rest.starts_with("HTTP/1.1 413"), "{rest:.300}");
    assert!(rest.contains(r#"{"error":"request body is too large"#), "{rest:.300}");
    let mcp = post_whole_body_then_read(&d.mcp, "/mcp", 32 << 20);
    assert!(mcp.starts_with("HTTP/1.1 413"), "{mcp:.300}");
    assert!(mcp.contains("request body exceeds 2000 bytes"), "{mcp:.300}");
    append(&d, "small", "fits");
}

/// Answers given without reading the request body (`POST /tools/list`, a
/// refused token, an unknown path) reach a client that writes its whole body
/// before reading, in full: the daemon reads the unread body to its end
/// before closing, since closing with unread input resets the connection
/// and drops the part of the answer still unsent (the 153 KB tool list lost
/// its tail that way, now and then, under load).
#[test]
fn answers_that_ignore_the_body_arrive_whole() {
    let (_root, dir) = data_dir();
    let d = Daemon::start(&dir, &[("MENTISDB_API_TOKEN", "s3cret")], &[]);
    for (base, path, expected) in [(&d.mcp, "/tools/list", "HTTP/1.1 401"), (&d.rest, "/v1/head", "HTTP/1.1 401")] {
        let answer = post_whole_body_then_read(base, path, 4 << 20);
        assert!(answer.starts_with(expected), "{path}: {answer:.300}");
        assert!(answer.ends_with("}"), "{path}: the JSON answer is whole: {answer:.300}");
    }
    drop(d);
    let d = Daemon::start(&dir, &[], &[]);
    let answer = post_whole_body_then_read(&d.mcp, "/tools/list", 4 << 20);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:.300}");
    let body = &answer[answer.find("\r\n\r\n").unwrap() + 4..];
    let tools: Value = serde_json::from_str(body).expect("the whole tool list");
    assert!(tools["tools"].as_array().unwrap().len() >= 29);
    let answer = post_whole_body_then_read(&d.rest, "/v1/no-such-route", 4 << 20);
    assert!(answer.starts_with("HTTP/1.1 404") && answer.ends_with("}"), "{answer:.300}");
}

/// POSTs `len` bytes to `path` over a plain connection, writing all of them
/// before reading the answer (as most clients do); the whole answer.
fn post_whole_body_then_read(base: &str, path: &str, len: usize) -> String {
    use std::io::Write;
    let addr = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let head = format!("POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    let chunk = vec![b' '; 64 << 10];
    for _ in 0..len / chunk.len() {
        stream.write_all(&chunk).expect("the daemon reads the whole body before it answers");
    }
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn api_token_is_required_on_rest_and_mcp_when_set() {
    let (_root, dir) = data_dir();
    let d = Daemon::start(&dir, &[("MENTISDB_API_TOKEN", "s3cret")], &[]);
    let (status, v) = post(&d, "/v1/head", json!({}));
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(v["error"].as_str().unwrap().contains("token"));
    let r = client().post(format!("{}/v1/head", d.rest)).bearer_auth("wrong").json(&json!({})).send().unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let r = client().post(format!("{}/v1/head", d.rest)).bearer_auth("s3cret").json(&json!({})).send().unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let r = client().post(format!("{}/mcp", d.mcp)).header("accept", "application/json, text/event-stream").json(&initialize()).send().unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let r = client().post(format!("{}/mcp", d.mcp)).bearer_auth("s3cret").header("accept", "application/json, text/event-stream").json(&initialize()).send().unwrap();
    assert_eq!(r.status(), StatusCode::OK);
}

#[test]
fn non_loopback_bind_without_token_is_refused() {
    let (_root, dir) = data_dir();
    let out = command(&dir, &[], &["--bind-host", "0.0.0.0"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("MENTISDB_API_TOKEN"), "the refusal says how to set the token: {err}");
    assert!(!dir.join("chains").exists(), "nothing was opened");
}

/// A session through the shared harness, checking what the daemon says it is.
fn mcp_session(url: String) -> McpSession {
    let (s, init) = McpSession::open(url);
    assert_eq!(init["result"]["serverInfo"]["name"], "mentisdb");
    assert!(init["result"]["instructions"].as_str().unwrap().contains("mentisdb_skill_md"));
    s
}

#[test]
fn rest_and_mcp_share_one_service_and_mcp_maps_errors() {
    let (_root, dir) = data_dir();
    let d = Daemon::start(&dir, &[], &[]);
    for path in ["/mcp", "/"] {
        let s = mcp_session(format!("{}{path}", d.mcp));
        let tools = s.call(2, "tools/list", json!({}));
        let names: Vec<&str> = tools["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names.len(), mentisdb_core::tool_specs().len());
        assert!(names.contains(&"mentisdb_append") && names.contains(&"mentisdb_head"));
        assert!(tools["result"]["tools"].as_array().unwrap().iter().all(|t| t["inputSchema"]["type"] == "object"));
    }
    let s = mcp_session(format!("{}/mcp", d.mcp));
    append(&d, "shared", "written over REST");
    let head = s.call(3, "tools/call", json!({"name": "mentisdb_head", "arguments": {"chain_key": "shared"}}));
    assert_eq!(head["result"]["structuredContent"]["thought_count"], 1, "{head}");
    let text: Value = serde_json::from_str(head["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["thought_count"], 1);
    let appended = s.call(4, "tools/call", json!({"name": "mentisdb_append", "arguments": {"chain_key": "shared", "thought_type": "Decision", "content": "written over MCP"}}));
    assert_eq!(appended["result"]["isError"], false, "{appended}");
    assert_eq!(ok(&d, "/v1/head", json!({"chain_key": "shared"}))["latest_thought"]["content"], "written over MCP");
    let failed = s.call(5, "tools/call", json!({"name": "mentisdb_append", "arguments": {"chain_key": "shared", "thought_type": "Insigth", "content": "x"}}));
    assert_eq!(failed["result"]["isError"], true, "{failed}");
    assert!(failed["result"]["content"][0]["text"].as_str().unwrap().contains("unknown thought_type"));
    let unknown = s.call(6, "tools/call", json!({"name": "mentisdb_nope", "arguments": {}}));
    assert!(unknown["error"]["code"].is_i64(), "unknown tools are JSON-RPC errors: {unknown}");
    let r = client().post(format!("{}/mcp", d.mcp)).header("origin", "http://evil.example").header("accept", "application/json, text/event-stream").json(&initialize()).send().unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN, "a foreign browser Origin is refused (DNS rebinding)");
    let r = client().post(format!("{}/mcp", d.mcp)).header("origin", "http://localhost:3000").header("accept", "application/json, text/event-stream").json(&initialize()).send().unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN, "another local web server's page is refused too (unless listed in MENTISDB_ALLOWED_ORIGINS)");
    let r = client().post(format!("{}/mcp", d.mcp)).header("origin", d.mcp.as_str()).header("accept", "application/json, text/event-stream").json(&initialize()).send().unwrap();
    assert_eq!(r.status(), StatusCode::OK, "the daemon's own origin is accepted");
    let r = client().post(format!("{}/mcp", d.mcp)).header("host", "evil.example").header("accept", "application/json, text/event-stream").json(&initialize()).send().unwrap();
    assert_eq!(r.status(), StatusCode::MISDIRECTED_REQUEST, "a non-loopback Host is refused on a loopback bind (DNS rebinding)");
}

/// A one-request OpenAI-compatible chat-completions server on a loopback
/// port: answers `reply` as the assistant's message and hands back the
/// request line, headers and JSON body it received.
fn chat_completions_server(reply: &'static str) -> (String, std::thread::JoinHandle<(String, Value)>) {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut head = String::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
            head.push_str(&line);
        }
        let len: usize = head.lines().find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap())).expect("content-length");
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        let answer = json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "local-test-model",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150},
        })
        .to_string();
        let mut stream = stream;
        write!(stream, "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}", answer.len()).unwrap();
        (head, serde_json::from_slice(&body).unwrap())
    });
    (url, handle)
}

#[test]
fn extract_memories_calls_the_configured_chat_completions_endpoint() {
    let (_tmp, dir) = data_dir();
    // Without OPENAI_API_KEY: a clear error, and the daemon keeps serving.
    let d = Daemon::start(&dir, &[], &[]);
    let (status, body) = post(&d, "/v1/extract-memories", json!({"text": "I prefer tea."}));
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(body["error"].as_str().unwrap().contains("OPENAI_API_KEY"), "{body}");
    append(&d, "still-serving", "yes");
    drop(d);

    let reply = "```json\n{\"thoughts\": [{\"thought_type\": \"PreferenceUpdate\", \"content\": \"The user prefers tea over coffee.\", \"importance\": 0.7, \"confidence\": 0.9, \"tags\": [\"drinks\"], \"concepts\": [\"tea\"]}]}\n```";
    let (url, server) = chat_completions_server(reply);
    let d = Daemon::start(&dir, &[("OPENAI_API_KEY", "sk-test-123"), ("LLM_BASE_URL", &url), ("LLM_MODEL", "tiny-model")], &[]);
    let got = ok(&d, "/v1/extract-memories", json!({"text": "I prefer tea to coffee, honestly."}));
    let (head, sent) = server.join().unwrap();
    assert!(head.starts_with("POST /v1/chat/completions "), "{head}");
    assert!(head.lines().any(|l| l.eq_ignore_ascii_case("authorization: Bearer sk-test-123")), "{head}");
    assert_eq!(sent["model"], "tiny-model");
    assert_eq!(sent["messages"][0]["role"], "system");
    assert!(sent["messages"][1]["content"].as_str().unwrap().ends_with("I prefer tea to coffee, honestly."));
    assert_eq!(got["model"], "local-test-model");
    assert_eq!(got["usage"]["total_tokens"], 150);
    let t = &got["thoughts"][0];
    assert_eq!((t["thought_type"].as_str(), t["content"].as_str(), t["role"].as_str()), (Some("PreferenceUpdate"), Some("The user prefers tea over coffee."), Some("Memory")));
    assert_eq!((t["importance"].as_f64(), t["confidence"].as_f64()), (Some(0.7), Some(0.9)));
    // Nothing was appended: the agent decides.
    assert_eq!(ok(&d, "/v1/head", json!({}))["thought_count"], 0);
    // The endpoint gone: a clear error naming it.
    let (status, body) = post(&d, "/v1/extract-memories", json!({"text": "again"}));
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert!(body["error"].as_str().unwrap().contains("language model call failed"), "{body}");
}

#[test]
fn reads_answer_with_0_10_10_statuses() {
    let (_root, dir) = data_dir();
    let d = Daemon::start(&dir, &[], &[]);
    append(&d, "s", "a stored fact");
    // A read of a chain that does not exist is 404 on every read route.
    for (path, body) in [
        ("/v1/head", json!({"chain_key": "missing"})),
        ("/v1/search", json!({"chain_key": "missing", "text": "x"})),
        ("/v1/ranked-search", json!({"chain_key": "missing", "text": "x"})),
        ("/v1/recent-context", json!({"chain_key": "missing"})),
        ("/v1/lexical-search", json!({"chain_key": "missing", "text": "x"})),
        ("/v1/summary-candidates", json!({"chain_key": "missing"})),
        ("/v1/thought", json!({"chain_key": "s", "thought_index": 99})),
        ("/v1/agent", json!({"chain_key": "s", "agent_id": "nobody"})),
    ] {
        let (status, v) = post(&d, path, body.clone());
        assert_eq!(status, StatusCode::NOT_FOUND, "{path} {body}: {v}");
        assert!(v["error"].is_string(), "{v}");
    }
    let (_, v) = post(&d, "/v1/head", json!({"chain_key": "missing"}));
    assert_eq!(v["error"], "chain 'missing' not found");
    // The default chain reads as empty; nothing was created by the reads.
    assert_eq!(ok(&d, "/v1/head", json!({}))["thought_count"], 0);
    let chains: Value = client().get(format!("{}/v1/chains", d.rest)).send().unwrap().json().unwrap();
    assert_eq!(chains["chain_keys"], json!(["s"]));
    // Bad input stays 400, a malformed chain key included.
    let (status, v) = post(&d, "/v1/head", json!({"chain_key": "k".repeat(1000)}));
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    let (status, _) = post(&d, "/v1/ranked-search", json!({"chain_key": "s", "text": "x", "offset": "two"}));
    assert_eq!(status, StatusCode::BAD_REQUEST);
    // A refused skill change (here: another owner's skill) is 403.
    for (agent, owner) in [("alice", "team-a"), ("mallory", "team-b")] {
        ok(&d, "/v1/agents/upsert", json!({"chain_key": "s", "agent_id": agent, "agent_owner": owner}));
    }
    ok(&d, "/v1/skills/upload", json!({"chain_key": "s", "agent_id": "alice", "skill_id": "deploy", "content": "# Deploy\n\nRun it.\n"}));
    let (status, v) = post(&d, "/v1/skills/upload", json!({"chain_key": "s", "agent_id": "mallory", "skill_id": "deploy", "content": "# pwned\n"}));
    assert_eq!(status, StatusCode::FORBIDDEN, "{v}");
    assert!(v["error"].as_str().unwrap().contains("agent_owner"), "{v}");
}

#[test]
fn retired_thoughts_are_hidden_and_the_0_10_10_search_routes_answer() {
    let (_root, dir) = data_dir();
    let d = Daemon::start(&dir, &[], &[]);
    let old = append(&d, "fa", "the release train leaves on tuesday")["thought"]["index"].clone();
    ok(&d, "/v1/thoughts", json!({"chain_key": "fa", "thought_type": "Correction", "content": "the release train leaves on friday", "relations": [{"kind": "Supersedes", "target_index": old}]}));
    append(&d, "fb", "the release train in chain b");
    let contents = |v: &Value| -> Vec<String> { v["results"].as_array().unwrap().iter().map(|h| h["thought"]["content"].as_str().unwrap().to_string()).collect() };

    let hidden = ok(&d, "/v1/ranked-search", json!({"chain_key": "fa", "text": "release train"}));
    assert_eq!(contents(&hidden), vec!["the release train leaves on friday"]);
    let shown = ok(&d, "/v1/ranked-search", json!({"chain_key": "fa", "text": "release train", "include_invalidated": true}));
    assert_eq!(contents(&shown).len(), 2);
    let searched = ok(&d, "/v1/search", json!({"chain_key": "fa", "text": "release", "include_superseded": true}));
    assert_eq!(searched["thoughts"].as_array().unwrap().len(), 2);
    assert_eq!(ok(&d, "/v1/search", json!({"chain_key": "fa", "text": "release"}))["thoughts"].as_array().unwrap().len(), 1);

    let lexical = ok(&d, "/v1/lexical-search", json!({"chain_key": "fa", "text": "release train", "include_invalidated": true, "limit": 1, "offset": 1}));
    assert_eq!((lexical["total"].as_u64(), lexical["results"].as_array().unwrap().len()), (Some(2), 1), "{lexical}");
    let hit = &lexical["results"][0];
    assert!(hit["score"].as_f64().unwrap() > 0.0 && hit["matched_terms"].is_array() && hit["match_sources"].is_array(), "{hit}");

    let fed = ok(&d, "/v1/federated-search", json!({"chain_keys": ["fa", "fb", "nowhere"], "text": "release train"}));
    let labels: Vec<(String, String)> = fed["results"].as_array().unwrap().iter().map(|h| (h["chain_key"].as_str().unwrap().to_string(), h["thought"]["content"].as_str().unwrap().to_string())).collect();
    assert_eq!(labels.len(), 2, "the superseded thought is hidden, the unknown chain skipped: {fed}");
    assert!(labels.contains(&("fa".into(), "the release train leaves on friday".into())) && labels.contains(&("fb".into(), "the release train in chain b".into())), "{labels:?}");
    let page = ok(&d, "/v1/federated-search", json!({"chain_keys": ["fa", "fb"], "text": "release train", "limit": 1, "offset": 1, "enable_reranking": true}));
    assert_eq!(page["results"].as_array().unwrap().len(), 1);
    assert!(page["results"][0]["score"]["rrf"].as_f64().unwrap() > 0.0, "{page}");
    let (status, v) = post(&d, "/v1/federated-search", json!({"text": "x"}));
    assert_eq!(status, StatusCode::BAD_REQUEST, "chain_keys is required: {v}");

    let cands = ok(&d, "/v1/summary-candidates", json!({"chain_key": "fa", "include_invalidated": true, "config": {"window_size": 1}}));
    assert_eq!(cands["chain_key"], "fa");
    assert_eq!(cands["total"], 2);
    assert_eq!(cands["candidates"][0]["source_indices"], json!([0]));
    assert_eq!(cands["candidates"][1]["group"], json!({"session_id": null, "agent_id": null, "entity_type": null}));
    assert_eq!(ok(&d, "/v1/summary-candidates", json!({"chain_key": "fa"}))["candidates"][0]["source_indices"], json!([1]), "the superseded thought is no source");
}

#[test]
fn under_a_small_memory_budget_every_chain_stays_readable_across_a_restart() {
    let (_root, dir) = data_dir();
    let budget = [("MENTISDB_MAX_RESIDENT_MB", "1")];
    let d = Daemon::start(&dir, &budget, &[]);
    // 12 chains of ~330 KB each by the estimate: about three fit in 1 MiB.
    let chains: Vec<String> = (0..12).map(|i| format!("team-{i:02}")).collect();
    for (i, chain) in chains.iter().enumerate() {
        let thoughts: Vec<Value> = (0..150).map(|n| json!({"thought_type": "Finding", "content": format!("{chain} note {n}: {}", "the build cache misses on the release branch ".repeat(8)), "tags": [format!("t{i}")]})).collect();
        ok(&d, "/v1/thoughts/batch", json!({"chain_key": chain, "thoughts": thoughts}));
    }
    let check_all = |d: &Daemon| {
        let list: Value = client().get(format!("{}/v1/chains", d.rest)).send().unwrap().json().unwrap();
        let listed: Vec<(String, u64)> = list["chains"].as_array().unwrap().iter().map(|c| (c["chain_key"].as_str().unwrap().to_string(), c["thought_count"].as_u64().unwrap())).collect();
        assert_eq!(listed, chains.iter().map(|c| (c.clone(), 150)).collect::<Vec<_>>());
        for chain in &chains {
            let head = ok(d, "/v1/head", json!({"chain_key": chain}));
            assert_eq!((head["thought_count"].clone(), head["integrity_ok"].clone()), (json!(150), json!(true)), "{chain}");
            let found = ok(d, "/v1/search", json!({"chain_key": chain, "text": format!("{chain} note 149:")}));
            assert_eq!(found["thoughts"].as_array().unwrap().len(), 1, "{chain}");
        }
    };
    check_all(&d);
    d.kill();
    let d = Daemon::start(&dir, &budget, &[]);
    let logs = d.logs();
    let line = logs.lines().find(|l| l.starts_with("mentisdbd memory budget 1 MiB:")).unwrap_or_else(|| panic!("no budget line in {logs}"));
    let parked: usize = line.split(", ").nth(1).and_then(|p| p.split(' ').next()).and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{line}"));
    assert!(parked >= 6, "most chains are parked at start: {line}");
    check_all(&d);
    // Appends to parked chains continue their history.
    for chain in &chains {
        assert_eq!(append(&d, chain, "after the restart")["thought"]["index"], 150);
    }
}

#[test]
fn a_static_model_makes_ranked_search_hybrid_and_a_bad_one_stops_the_start() {
    let (_root, dir) = data_dir();
    let model_file = _root.path().join("static.bin");
    let tokens = ["[PAD]", "[UNK]", "car", "automobile", "banana", "fruit", "bought", "ate"];
    let rows: Vec<Vec<f32>> = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.1, 0.0], [0.9, 0.2, 0.0], [0.0, 0.0, 1.0], [0.0, 0.1, 0.9], [0.2, 0.9, 0.0], [0.0, 0.9, 0.2]].iter().map(|r| r.to_vec()).collect();
    std::fs::write(&model_file, mentisdb_embed_static::write_model("tiny", &tokens, &rows).unwrap()).unwrap();
    let d = Daemon::start(&dir, &[("MENTISDB_STATIC_MODEL", model_file.to_str().unwrap())], &[]);
    append(&d, "meaning", "I bought a new automobile");
    append(&d, "meaning", "I ate a banana");
    let r = ok(&d, "/v1/ranked-search", json!({"chain_key": "meaning", "text": "car", "limit": 5}));
    assert_eq!(r["backend"], "hybrid", "{r}");
    assert_eq!(r["results"][0]["thought"]["content"], "I bought a new automobile", "found by meaning: {r}");
    drop(d);

    std::fs::write(&model_file, b"not a model").unwrap();
    let out = command(&dir, &[("MENTISDB_STATIC_MODEL", model_file.to_str().unwrap())], &[]).output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Log lines (written by a background writer) may land after it: find the reason line.
    let reason = stderr.lines().find(|l| l.starts_with("mentisdbd: ")).unwrap_or("");
    assert!(reason.contains("--static-model") && reason.contains("not a model file"), "one line naming the flag and why: {stderr}");
}
