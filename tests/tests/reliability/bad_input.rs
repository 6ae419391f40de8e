//! Bad-input matrix over the real daemon: every case is a hostile or broken
//! request over REST or MCP (streamable HTTP, JSON-RPC driven directly).
//! Each must get a clear 4xx — REST: a 4xx status with `{"error": "<text>"}`;
//! MCP: a JSON-RPC error, an `isError: true` tool result, or a transport-level
//! 4xx — and afterwards the daemon must still serve and the stored data
//! (chains, heads, counts, agent registries, skills) must be unchanged.
//! Finally nothing may exist outside the data directory.
//!
//! `cargo test -p mentisdb-tests --test reliability -- bad_input:: --nocapture`

use ed25519_dalek::{Signer, SigningKey};
use mentisdb_core::signature::signable_payload;
use mentisdb_core::{Thought, ThoughtExtras, ThoughtRole, ThoughtType};
use mentisdb_tests::daemon::{client, data_dir, ok, Daemon, McpSession};
use serde_json::{json, Value};

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

/// Arguments of an append signed by `sk` as agent `signer` (see core/src/signature.rs).
fn signed(chain: &str, id: &str, content: &str, sk: &SigningKey, key_id: &str) -> Value {
    let t = Thought {
        schema_version: 1,
        timestamp_fraction: Default::default(),
        id: id.into(),
        index: 0,
        timestamp_ms: 0,
        agent_id: "signer".into(),
        agent_name: "signer".into(),
        thought_type: ThoughtType::Decision,
        role: ThoughtRole::Memory,
        content: content.into(),
        importance: 0.5,
        tags: Default::default(),
        concepts: Default::default(),
        extras: ThoughtExtras { signing_key_id: Some(key_id.into()), ..Default::default() }.boxed(),
        source_episode: Default::default(),
        prev_hash: None,
        hash: Default::default(),
        content_salt: None,
    };
    let sig = sk.sign(&signable_payload(chain, &t, key_id));
    json!({"chain_key": chain, "agent_id": "signer", "thought_type": "Decision", "content": content,
           "thought_id": id, "signing_key_id": key_id, "thought_signature": sig.to_bytes().to_vec()})
}

/// One REST request: method, path, content type, raw body.
struct Rest {
    name: String,
    method: &'static str,
    path: String,
    content_type: &'static str,
    body: Vec<u8>,
}

fn rest_json(name: &str, path: &str, body: Value) -> Rest {
    Rest { name: name.into(), method: "POST", path: path.into(), content_type: "application/json", body: body.to_string().into_bytes() }
}

fn rest_raw(name: &str, path: &str, body: impl Into<Vec<u8>>) -> Rest {
    Rest { name: name.into(), method: "POST", path: path.into(), content_type: "application/json", body: body.into() }
}

/// One MCP message: a tools/call or a raw JSON-RPC body.
enum Mcp {
    Tool { name: String, tool: String, args: Value },
    Raw { name: String, body: Vec<u8> },
}

fn mcp_tool(name: &str, tool: &str, args: Value) -> Mcp {
    Mcp::Tool { name: name.into(), tool: tool.into(), args }
}

fn mcp_raw(name: &str, body: impl Into<Vec<u8>>) -> Mcp {
    Mcp::Raw { name: name.into(), body: body.into() }
}

/// Everything a bad request must not change.
fn snapshot(d: &Daemon) -> Value {
    let c = client();
    let chains: Value = c.get(format!("{}/v1/chains", d.rest)).send().unwrap().json().unwrap();
    let mut heads = Vec::new();
    for k in chains["chain_keys"].as_array().unwrap() {
        let h = ok(&c, d, "/v1/head", json!({"chain_key": k}));
        assert_eq!(h["integrity_ok"], true);
        let agents = ok(&c, d, "/v1/agent-registry", json!({"chain_key": k}));
        heads.push(json!([k, h["thought_count"], h["head_hash"], agents]));
    }
    let skills: Value = c.get(format!("{}/v1/skills", d.rest)).send().unwrap().json().unwrap();
    json!({"chains": chains, "heads": heads, "skills": skills})
}

fn deep(n: usize) -> String {
    format!("{}{}", "[".repeat(n), "]".repeat(n))
}

fn rest_cases() -> Vec<Rest> {
    let append = |extra: Value| {
        let mut a = json!({"chain_key": "m", "thought_type": "Finding", "content": "bad input"});
        for (k, v) in extra.as_object().unwrap() {
            a[k] = v.clone();
        }
        a
    };
    let big = "x".repeat(3 << 20);
    let mut v = vec![
        rest_raw("malformed JSON", "/v1/thoughts", "{oops"),
        rest_raw("truncated JSON", "/v1/thoughts", r#"{"chain_key":"m","thought_type":"Fin"#),
        rest_raw("trailing garbage after JSON", "/v1/thoughts", r#"{"chain_key":"m"} trailing"#),
        rest_raw("JSON array instead of object", "/v1/thoughts", "[1,2,3]"),
        rest_raw("JSON string instead of object", "/v1/head", r#""m""#),
        rest_raw("NaN literal score", "/v1/thoughts", r#"{"chain_key":"m","thought_type":"Finding","content":"x","importance":NaN}"#),
        rest_raw("Infinity literal score", "/v1/thoughts", r#"{"chain_key":"m","thought_type":"Finding","content":"x","confidence":-Infinity}"#),
        rest_raw("score overflowing f64", "/v1/thoughts", r#"{"chain_key":"m","thought_type":"Finding","content":"x","importance":1e400}"#),
        rest_raw("invalid UTF-8 in a string", "/v1/thoughts", [&br#"{"chain_key":"m","thought_type":"Finding","content":""#[..], &[0xff, 0xfe, 0xc3], &br#""}"#[..]].concat()),
        rest_raw("invalid UTF-8 escape (lone surrogate)", "/v1/thoughts", r#"{"chain_key":"m","thought_type":"Finding","content":"\udc00"}"#),
        rest_raw("deeply nested body", "/v1/search", deep(100_000)),
        rest_raw("deeply nested field", "/v1/thoughts", format!(r#"{{"chain_key":"m","thought_type":"Finding","content":"x","tags":{}}}"#, deep(5000))),
        rest_json("huge body (413)", "/v1/thoughts", append(json!({"content": big}))),
        rest_json("huge tags array", "/v1/thoughts", append(json!({"tags": vec!["t"; 50_000]}))),
        rest_json("huge refs array", "/v1/thoughts", append(json!({"refs": vec![0; 60_000]}))),
        rest_json("content over the size limit", "/v1/thoughts", append(json!({"content": "y".repeat(300 * 1024)}))),
        rest_json("score of the wrong type", "/v1/thoughts", append(json!({"importance": "high"}))),
        rest_json("confidence as an array", "/v1/thoughts", append(json!({"confidence": [0.5]}))),
        rest_json("content as a number", "/v1/thoughts", append(json!({"content": 42}))),
        rest_json("content null", "/v1/thoughts", append(json!({"content": null}))),
        rest_json("missing thought_type", "/v1/thoughts", json!({"chain_key": "m", "content": "x"})),
        rest_json("unknown thought_type", "/v1/thoughts", append(json!({"thought_type": "Insigth"}))),
        rest_json("thought_type of the wrong type", "/v1/thoughts", append(json!({"thought_type": 3}))),
        rest_json("unknown role", "/v1/thoughts", append(json!({"role": "Boss"}))),
        rest_json("unknown retrospective thought_type", "/v1/retrospectives", json!({"chain_key": "m", "thought_type": "Rant", "content": "x"})),
        rest_json("tags as a string", "/v1/thoughts", append(json!({"tags": "a,b"}))),
        rest_json("tag with control characters", "/v1/thoughts", append(json!({"tags": ["a\u{0007}b"]}))),
        rest_json("negative ref", "/v1/thoughts", append(json!({"refs": [-1]}))),
        rest_json("ref to a future index", "/v1/thoughts", append(json!({"refs": [99_999]}))),
        rest_json("ref beyond u64", "/v1/thoughts", append(json!({"refs": [1e30]}))),
        rest_json("relation of unknown kind", "/v1/thoughts", append(json!({"relations": [{"kind": "Hates", "target_index": 0}]}))),
        rest_json("relation to a future index", "/v1/thoughts", append(json!({"relations": [{"kind": "Supports", "target_index": 500}]}))),
        rest_json("relation to a missing id", "/v1/thoughts", append(json!({"relations": [{"kind": "Supports", "target_id": "no-such-id"}]}))),
        rest_json("chain_key of the wrong type", "/v1/thoughts", append(json!({"chain_key": 12}))),
        rest_json("chain_key with a NUL byte", "/v1/thoughts", append(json!({"chain_key": "m\u{0000}x"}))),
        rest_json("chain_key over the size limit", "/v1/thoughts", append(json!({"chain_key": "k".repeat(300)}))),
        rest_json("duplicate thought_id", "/v1/thoughts", append(json!({"thought_id": "fixed-id-1"}))),
        rest_json("negative search limit", "/v1/search", json!({"chain_key": "m", "text": "x", "limit": -1})),
        rest_json("search limit as a word", "/v1/search", json!({"chain_key": "m", "limit": "ten"})),
        rest_json("misspelled chain_key on append", "/v1/thoughts", json!({"chain": "m", "thought_type": "Decision", "content": "lost"})),
        rest_json("search since not RFC 3339", "/v1/search", json!({"chain_key": "m", "since": "yesterday"})),
        rest_json("unknown thought_types filter", "/v1/search", json!({"chain_key": "m", "thought_types": ["Nope"]})),
        rest_json("negative last_n", "/v1/recent-context", json!({"chain_key": "m", "last_n": -5})),
        rest_json("negative chunk_size", "/v1/thoughts/traverse", json!({"chain_key": "m", "anchor_boundary": "genesis", "chunk_size": -3})),
        rest_json("unknown anchor_boundary", "/v1/thoughts/traverse", json!({"chain_key": "m", "anchor_boundary": "middle"})),
        rest_json("unknown direction", "/v1/thoughts/traverse", json!({"chain_key": "m", "anchor_boundary": "genesis", "direction": "sideways"})),
        rest_json("duplicate locators (traverse)", "/v1/thoughts/traverse", json!({"chain_key": "m", "anchor_index": 0, "anchor_boundary": "genesis"})),
        rest_json("traverse anchor at a future index", "/v1/thoughts/traverse", json!({"chain_key": "m", "anchor_index": 1000})),
        rest_json("traverse anchor hash missing", "/v1/thoughts/traverse", json!({"chain_key": "m", "anchor_hash": "00".repeat(32)})),
        rest_json("duplicate locators (get thought)", "/v1/thought", json!({"chain_key": "m", "thought_index": 0, "thought_id": "fixed-id-1"})),
        rest_json("get thought at a future index", "/v1/thought", json!({"chain_key": "m", "thought_index": 12345})),
        rest_json("get thought with a missing id", "/v1/thought", json!({"chain_key": "m", "thought_id": "nope"})),
        rest_json("get thought without a locator", "/v1/thought", json!({"chain_key": "m"})),
        rest_json("get thought in an unknown chain", "/v1/thought", json!({"chain_key": "no-such-chain", "thought_index": 0})),
        rest_json("agent in an unknown chain", "/v1/agent", json!({"chain_key": "no-such-chain", "agent_id": "a"})),
        rest_json("path-traversal chain key where the chain must exist", "/v1/agent", json!({"chain_key": "../../etc/passwd", "agent_id": "a"})),
        rest_json("alias for an agent in an unknown chain", "/v1/agents/aliases", json!({"chain_key": "no-such-chain", "agent_id": "a", "alias": "x"})),
        rest_json("revoke a key in an unknown chain", "/v1/agents/keys/revoke", json!({"chain_key": "no-such-chain", "agent_id": "signer", "key_id": "k1"})),
        rest_json("disable an unknown agent", "/v1/agents/disable", json!({"chain_key": "m", "agent_id": "ghost"})),
        rest_json("key with the wrong length", "/v1/agents/keys", json!({"chain_key": "m", "agent_id": "a", "key_id": "kx", "algorithm": "ed25519", "public_key_bytes": [1, 2, 3]})),
        rest_json("key bytes out of byte range", "/v1/agents/keys", json!({"chain_key": "m", "agent_id": "a", "key_id": "kx", "algorithm": "ed25519", "public_key_bytes": vec![300; 32]})),
        rest_json("unsupported key algorithm", "/v1/agents/keys", json!({"chain_key": "m", "agent_id": "a", "key_id": "kx", "algorithm": "rsa", "public_key_bytes": vec![1; 32]})),
        rest_json("agent with an unknown status", "/v1/agents/upsert", json!({"chain_key": "m", "agent_id": "a", "status": "sleepy"})),
        rest_json("forged signature (unregistered key)", "/v1/thoughts", signed("m", "sig-forged", "forged", &key(9), "k1")),
        rest_json("signed thought_id reused for other content (conflict)", "/v1/thoughts", signed("m", "sig-once", "signed twice", &key(1), "k1")),
        rest_json("signed append replayed into another chain", "/v1/thoughts", { let mut a = signed("m", "sig-moved", "moved", &key(1), "k1"); a["chain_key"] = json!("mj"); a }),
        rest_json("signature by a revoked key", "/v1/thoughts", signed("m", "sig-revoked", "old key", &key(0), "k0")),
        rest_json("tampered content after signing", "/v1/thoughts", { let mut a = signed("m", "sig-t", "original", &key(1), "k1"); a["content"] = json!("tampered"); a }),
        rest_json("signature of the wrong length", "/v1/thoughts", { let mut a = signed("m", "sig-short", "x", &key(1), "k1"); a["thought_signature"] = json!([1, 2, 3]); a }),
        rest_json("unsigned append by an agent with an active key", "/v1/thoughts", json!({"chain_key": "m", "agent_id": "signer", "thought_type": "Decision", "content": "unsigned"})),
        rest_json("skill upload by an unregistered agent", "/v1/skills/upload", json!({"chain_key": "m", "agent_id": "ghost", "content": "# Ghost skill\n\nx\n"})),
        rest_json("skill upload by a disabled agent", "/v1/skills/upload", json!({"chain_key": "m", "agent_id": "off", "content": "# Off skill\n\nx\n"})),
        rest_json("unsigned skill upload by an agent with an active key", "/v1/skills/upload", json!({"chain_key": "m", "agent_id": "signer", "content": "# Signer skill\n\nx\n"})),
        rest_json("skill upload in an unknown chain", "/v1/skills/upload", json!({"chain_key": "no-such-chain", "agent_id": "a", "content": "# Lost skill\n\nx\n"})),
        rest_json("skill upload of malformed JSON", "/v1/skills/upload", json!({"chain_key": "m", "agent_id": "a", "format": "json", "content": "{\"name\": "})),
        rest_json("skill upload in an unknown format", "/v1/skills/upload", json!({"chain_key": "m", "agent_id": "a", "format": "yaml", "content": "name: x"})),
        rest_json("skill version by another owner", "/v1/skills/upload", json!({"chain_key": "m", "agent_id": "b", "skill_id": "seed-skill", "content": "# Seed skill\n\nhijack\n"})),
        rest_json("read a path-traversal skill id", "/v1/skills/read", json!({"skill_id": "../../etc/passwd"})),
        rest_json("versions of an unknown skill", "/v1/skills/versions", json!({"skill_id": "no-such-skill"})),
        rest_json("deprecate by an unregistered agent", "/v1/skills/deprecate", json!({"chain_key": "m", "agent_id": "ghost", "skill_id": "seed-skill"})),
        rest_json("revoke by another owner", "/v1/skills/revoke", json!({"chain_key": "m", "agent_id": "b", "skill_id": "seed-skill"})),
        rest_json("bootstrap with an unknown storage adapter", "/v1/bootstrap", json!({"chain_key": "new-chain", "content": "x", "storage_adapter": "sqlite"})),
    ];
    v.push(Rest { name: "wrong content type (415)".into(), method: "POST", path: "/v1/head".into(), content_type: "text/plain", body: b"{}".to_vec() });
    v.push(Rest { name: "unknown path (404)".into(), method: "POST", path: "/v1/../../etc/passwd".into(), content_type: "application/json", body: b"{}".to_vec() });
    v.push(Rest { name: "NUL byte in a query-string chain key".into(), method: "GET", path: "/v1/skills?chain_key=a%00b".into(), content_type: "", body: vec![] });
    v.push(Rest { name: "wrong method on a POST route".into(), method: "GET", path: "/v1/thoughts".into(), content_type: "", body: vec![] });
    v
}

fn mcp_cases() -> Vec<Mcp> {
    let big = "x".repeat(3 << 20);
    vec![
        mcp_raw("MCP malformed JSON-RPC", "{oops"),
        mcp_raw("MCP truncated JSON-RPC", r#"{"jsonrpc":"2.0","id":1,"method":"tools/ca"#),
        mcp_raw("MCP NaN literal in arguments", r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mentisdb_append","arguments":{"chain_key":"m","thought_type":"Finding","content":"x","importance":NaN}}}"#),
        mcp_raw("MCP invalid UTF-8", [&br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mentisdb_append","arguments":{"chain_key":"m","thought_type":"Finding","content":""#[..], &[0xff, 0xc0], &br#""}}}"#[..]].concat()),
        mcp_raw("MCP deep nesting", format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"mentisdb_search","arguments":{{"chain_key":"m","tags_any":{}}}}}}}"#, deep(20_000))),
        mcp_raw("MCP huge body", json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "mentisdb_append", "arguments": {"chain_key": "m", "thought_type": "Finding", "content": big}}}).to_string()),
        mcp_raw("MCP unknown method", json!({"jsonrpc": "2.0", "id": 1, "method": "tools/frobnicate", "params": {}}).to_string()),
        mcp_raw("MCP arguments as an array", json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "mentisdb_head", "arguments": [1, 2]}}).to_string()),
        mcp_raw("MCP tools/call without a name", json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}}).to_string()),
        mcp_tool("MCP unknown tool", "mentisdb_drop_everything", json!({})),
        mcp_tool("MCP unknown thought_type", "mentisdb_append", json!({"chain_key": "m", "thought_type": "Insigth", "content": "x"})),
        mcp_tool("MCP unknown role", "mentisdb_append", json!({"chain_key": "m", "thought_type": "Finding", "role": "Boss", "content": "x"})),
        mcp_tool("MCP score of the wrong type", "mentisdb_append", json!({"chain_key": "m", "thought_type": "Finding", "content": "x", "importance": "high"})),
        mcp_tool("MCP missing content", "mentisdb_append", json!({"chain_key": "m", "thought_type": "Finding"})),
        mcp_tool("MCP ref to a future index", "mentisdb_append", json!({"chain_key": "m", "thought_type": "Finding", "content": "x", "refs": [4242]})),
        mcp_tool("MCP huge tags array", "mentisdb_append", json!({"chain_key": "m", "thought_type": "Finding", "content": "x", "tags": vec!["t"; 20_000]})),
        mcp_tool("MCP negative limit", "mentisdb_search", json!({"chain_key": "m", "limit": -1})),
        mcp_tool("MCP negative last_n", "mentisdb_recent_context", json!({"chain_key": "m", "last_n": -1})),
        mcp_tool("MCP negative chunk_size", "mentisdb_traverse_thoughts", json!({"chain_key": "m", "anchor_boundary": "genesis", "chunk_size": -1})),
        mcp_tool("MCP duplicate locators", "mentisdb_get_thought", json!({"chain_key": "m", "thought_index": 0, "thought_hash": "00"})),
        mcp_tool("MCP agent in an unknown chain", "mentisdb_get_agent", json!({"chain_key": "no-such-chain", "agent_id": "a"})),
        mcp_tool("MCP path-traversal chain key where the chain must exist", "mentisdb_get_thought", json!({"chain_key": "../../etc/passwd", "thought_index": 0})),
        mcp_tool("MCP forged signature", "mentisdb_append", signed("m", "mcp-forged", "forged", &key(7), "k1")),
        mcp_tool("MCP signed thought_id reused for other content (conflict)", "mentisdb_append", signed("m", "sig-once", "signed twice", &key(1), "k1")),
        mcp_tool("MCP revoked-key signature", "mentisdb_append", signed("m", "mcp-revoked", "old", &key(0), "k0")),
        mcp_tool("MCP skill upload by an unregistered agent", "mentisdb_upload_skill", json!({"chain_key": "m", "agent_id": "ghost", "content": "# G\n\nx\n"})),
        mcp_tool("MCP skill upload by a disabled agent", "mentisdb_upload_skill", json!({"chain_key": "m", "agent_id": "off", "content": "# O\n\nx\n"})),
        mcp_tool("MCP read a path-traversal skill id", "mentisdb_read_skill", json!({"skill_id": "../../etc/passwd"})),
        mcp_tool("MCP revoke an unknown skill", "mentisdb_revoke_skill", json!({"chain_key": "m", "agent_id": "a", "skill_id": "../../etc/passwd"})),
    ]
}

/// Judges a REST reply: a 4xx with a non-empty `{"error": "..."}`.
fn rest_verdict(status: u16, body: &str) -> Result<String, String> {
    let v: Value = serde_json::from_str(body).map_err(|_| format!("HTTP {status}, body is not JSON: {:.200}", body))?;
    let msg = v["error"].as_str().filter(|m| !m.trim().is_empty()).ok_or_else(|| format!("HTTP {status}, no {{\"error\"}} string: {:.200}", body))?;
    if !(400..500).contains(&status) {
        return Err(format!("HTTP {status} (expected 4xx): {msg:.200}"));
    }
    Ok(format!("{status} {msg:.120}"))
}

/// Judges an MCP reply: JSON-RPC error, `isError` result, or a transport 4xx.
fn mcp_verdict(status: u16, message: Option<&Value>, text: &str) -> Result<String, String> {
    if (400..500).contains(&status) {
        return Ok(format!("HTTP {status} {:.120}", text));
    }
    let Some(m) = message else { return Err(format!("HTTP {status}, no JSON-RPC message: {:.200}", text)) };
    if let Some(e) = m.get("error") {
        return Ok(format!("JSON-RPC error {} {:.120}", e["code"], e["message"]));
    }
    if m["result"]["isError"] == true {
        let t = m["result"]["content"][0]["text"].as_str().unwrap_or("");
        if t.trim().is_empty() {
            return Err(format!("isError without a message: {m}"));
        }
        return Ok(format!("isError {t:.120}"));
    }
    Err(format!("HTTP {status}, accepted: {:.300}", m))
}

#[test]
fn bad_inputs_over_rest_and_mcp_get_clear_4xx_and_change_nothing() {
    let (root, dir) = data_dir();
    let d = Daemon::start(&dir, &[], &["--max-body-bytes", "1048576"]);
    let c = client();
    // The stored state every case runs against.
    ok(&c, &d, "/v1/bootstrap", json!({"chain_key": "m", "content": "purpose", "storage_adapter": "binary"}));
    ok(&c, &d, "/v1/bootstrap", json!({"chain_key": "mj", "content": "purpose", "storage_adapter": "jsonl"}));
    ok(&c, &d, "/v1/thoughts", json!({"chain_key": "m", "thought_type": "Decision", "content": "first", "thought_id": "fixed-id-1"}));
    ok(&c, &d, "/v1/agents/upsert", json!({"chain_key": "m", "agent_id": "a", "agent_owner": "owner-a"}));
    ok(&c, &d, "/v1/agents/upsert", json!({"chain_key": "m", "agent_id": "b", "agent_owner": "owner-b"}));
    ok(&c, &d, "/v1/agents/upsert", json!({"chain_key": "m", "agent_id": "off"}));
    ok(&c, &d, "/v1/agents/disable", json!({"chain_key": "m", "agent_id": "off"}));
    for chain in ["m", "mj"] {
        ok(&c, &d, "/v1/agents/upsert", json!({"chain_key": chain, "agent_id": "signer"}));
        ok(&c, &d, "/v1/agents/keys", json!({"chain_key": chain, "agent_id": "signer", "key_id": "k1", "algorithm": "ed25519", "public_key_bytes": key(1).verifying_key().to_bytes().to_vec()}));
    }
    ok(&c, &d, "/v1/agents/keys", json!({"chain_key": "m", "agent_id": "signer", "key_id": "k0", "algorithm": "ed25519", "public_key_bytes": key(0).verifying_key().to_bytes().to_vec()}));
    ok(&c, &d, "/v1/agents/keys/revoke", json!({"chain_key": "m", "agent_id": "signer", "key_id": "k0"}));
    ok(&c, &d, "/v1/thoughts", signed("m", "sig-once", "signed once", &key(1), "k1"));
    let up = ok(&c, &d, "/v1/skills/upload", json!({"chain_key": "m", "agent_id": "a", "skill_id": "seed-skill", "content": "# Seed skill\n\nDo things.\n"}));
    assert_eq!(up["skill"]["skill_id"].as_str().or(up["skill_id"].as_str()), Some("seed-skill"), "{up}");
    let before = snapshot(&d);

    let mut failures = Vec::new();
    let mut count = 0;
    for case in rest_cases() {
        let mut req = match case.method {
            "GET" => c.get(format!("{}{}", d.rest, case.path)),
            _ => c.post(format!("{}{}", d.rest, case.path)).body(case.body.clone()),
        };
        if !case.content_type.is_empty() {
            req = req.header("content-type", case.content_type);
        }
        let verdict = match req.send() {
            Ok(r) => {
                let status = r.status().as_u16();
                rest_verdict(status, &r.text().unwrap_or_default())
            }
            Err(e) => Err(format!("request failed: {e}")),
        };
        count += 1;
        record(&mut failures, &format!("REST {}", case.name), verdict, &d, &before);
    }
    let (s, _) = McpSession::open(format!("{}/mcp", d.mcp));
    for (i, case) in mcp_cases().into_iter().enumerate() {
        let (name, reply) = match case {
            Mcp::Tool { name, tool, args } => (name, Ok(s.call_tool(100 + i as u64, &tool, args))),
            Mcp::Raw { name, body } => (name, s.try_raw(body)),
        };
        let verdict = match reply {
            Ok(reply) => mcp_verdict(reply.status, reply.message.as_ref(), &reply.text),
            Err(e) => Err(format!("request failed: {e}")),
        };
        count += 1;
        record(&mut failures, &name, verdict, &d, &before);
    }
    // Malformed JSON is the JSON-RPC parse error, not a bare transport status.
    for body in [&b"{oops"[..], &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"params\":{\"x\":NaN}}"[..], &[b'{', 0xff, b'}'][..]] {
        let r = s.raw(body.to_vec());
        assert_eq!(r.status, 400, "{}", r.text);
        assert_eq!(r.message.as_ref().map(|m| m["error"]["code"].clone()), Some(json!(-32700)), "{}", r.text);
    }
    // tools/call with unusable params is invalid params, not "method not found".
    for params in [json!({"name": "mentisdb_head", "arguments": [1, 2]}), json!({"arguments": {}}), json!("x")] {
        let r = s.raw(json!({"jsonrpc": "2.0", "id": 77, "method": "tools/call", "params": params}).to_string());
        let m = r.message.unwrap_or_else(|| panic!("{}", r.text));
        assert_eq!((m["error"]["code"].clone(), m["id"].clone()), (json!(-32602), json!(77)), "{m}");
    }
    // Requests with no session at all are refused too.
    let r = client().post(format!("{}/mcp", d.mcp)).header("accept", "application/json, text/event-stream").header("content-type", "application/json")
        .body(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "mentisdb_head", "arguments": {}}}).to_string()).send().unwrap();
    let status = r.status().as_u16();
    count += 1;
    record(&mut failures, "MCP tools/call without a session", if (400..500).contains(&status) { Ok(format!("HTTP {status}")) } else { Err(format!("HTTP {status}")) }, &d, &before);

    println!("bad-input matrix: {count} cases, {} failed", failures.len());
    assert!(failures.is_empty(), "{} of {count} cases failed:\n{}", failures.len(), failures.join("\n"));
    assert!(count >= 60);
    // A limit above u64's range is clamped like any large limit (docs/agents.md,
    // "OpenAPI and schemathesis"), not refused.
    for (path, body) in [
        ("/v1/search", r#"{"chain_key":"m","limit":1e30}"#),
        ("/v1/recent-context", r#"{"chain_key":"m","last_n":36893488147419103232}"#),
        ("/v1/thoughts/traverse", r#"{"chain_key":"m","anchor_boundary":"genesis","chunk_size":99999999999999999999999}"#),
    ] {
        let r = c.post(format!("{}{path}", d.rest)).header("content-type", "application/json").body(body).send().unwrap();
        let status = r.status().as_u16();
        let v: Value = r.json().unwrap();
        assert_eq!(status, 200, "{path}: {v}");
        if path.ends_with("traverse") {
            assert_eq!(v["chunk_size"], 1000, "clamped to the largest chunk");
        }
    }
    // Still serving: a good append works afterwards and is durable.
    ok(&c, &d, "/v1/thoughts", json!({"chain_key": "m", "thought_type": "Finding", "content": "after the matrix"}));
    let top: Vec<_> = std::fs::read_dir(root.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(top, vec![std::ffi::OsString::from("data")], "nothing was written outside the data directory");
    assert!(!std::path::Path::new("/etc/passwd.mdb").exists() && !root.path().join("etc").exists());
}

fn record(failures: &mut Vec<String>, name: &str, verdict: Result<String, String>, d: &Daemon, before: &Value) {
    let health = client().get(format!("{}/health", d.rest)).send().map(|r| r.status().as_u16()).unwrap_or(0);
    let after = if health == 200 { Some(snapshot(d)) } else { None };
    let changed = after.as_ref() != Some(before);
    match (&verdict, health, changed) {
        (Ok(v), 200, false) => println!("ok   {name}: {v}"),
        _ => {
            let line = format!("FAIL {name}: {verdict:?}; health {health}; stored data changed: {changed}");
            println!("{line}");
            failures.push(line);
        }
    }
}

/// Cases the spec answers with success: the scores are clamped, and a
/// hostile chain key names a chain stored inside the data directory.
#[test]
fn spec_defined_acceptances_stay_confined() {
    let (root, dir) = data_dir();
    let d = Daemon::start(&dir, &[], &[]);
    let c = client();
    let t = ok(&c, &d, "/v1/thoughts", json!({"chain_key": "s", "thought_type": "Finding", "content": "x", "importance": 7.5, "confidence": -3}));
    assert_eq!(t["thought"]["importance"], 1.0, "out-of-range scores are clamped (MENTISDB_MCP.md)");
    assert_eq!(t["thought"]["confidence"], 0.0);
    let r = ok(&c, &d, "/v1/search", json!({"chain_key": "s", "limit": u64::MAX}));
    assert_eq!(r["thoughts"].as_array().unwrap().len(), 1, "a huge limit is clamped");
    let r = ok(&c, &d, "/v1/thoughts/traverse", json!({"chain_key": "s", "anchor_boundary": "genesis", "include_anchor": true, "chunk_size": 0}));
    assert_eq!(r["chunk_size"], 1, "chunk_size 0 is clamped to 1");
    for key in ["../../etc/passwd", "/etc/passwd", "..", "a/../../b"] {
        let r = ok(&c, &d, "/v1/thoughts", json!({"chain_key": key, "thought_type": "Finding", "content": "confined"}));
        assert_eq!(r["thought"]["content"], "confined");
        let loc = ok(&c, &d, "/v1/head", json!({"chain_key": key}))["storage_location"].as_str().unwrap().to_string();
        assert!(std::path::Path::new(&loc).starts_with(std::fs::canonicalize(dir.join("chains")).unwrap()), "{key:?} stored at {loc}");
    }
    let top: Vec<_> = std::fs::read_dir(root.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(top, vec![std::ffi::OsString::from("data")]);
}
