//! Walks the examples of MENTISDB_MCP.md / MENTISDB_REST.md through the
//! dispatcher and checks every response field the spec names.

use crate::common;
use common::*;
use serde_json::json;

const THOUGHT_FIELDS: &[&str] = &[
    "index", "id", "agent_id", "agent_name", "agent_owner", "timestamp", "thought_type", "role", "content", "confidence",
    "importance", "tags", "concepts", "refs", "relations", "hash", "prev_hash", "signing_key_id", "thought_signature",
];

#[test]
fn bootstrap_writes_once_as_summary_checkpoint() {
    let (db, _) = fresh();
    let args = json!({
        "chain_key": "borganism-brain", "agent_id": "bootstrap", "agent_name": "Bootstrap", "agent_owner": "cloudllm",
        "content": "Bootstrap memory for a long-running coding agent.", "importance": 1.0,
        "tags": ["bootstrap", "system"], "concepts": ["persistence", "semantic-memory"]
    });
    let first = ok(&db, "mentisdb_bootstrap", args.clone());
    has_fields(&first, &["bootstrapped", "thought_count", "head_hash"]);
    assert_eq!(first["bootstrapped"], true);
    assert_eq!(first["thought_count"], 1);
    let second = ok(&db, "mentisdb_bootstrap", json!({"chain_key": "borganism-brain", "content": "again"}));
    assert_eq!(second["bootstrapped"], false, "a non-empty chain is never overwritten");
    assert_eq!(second["thought_count"], 1);
    assert_eq!(second["head_hash"], first["head_hash"]);
    let g = ok(&db, "mentisdb_get_genesis_thought", json!({"chain_key": "borganism-brain"}));
    assert_eq!(g["thought"]["thought_type"], "Summary");
    assert_eq!(g["thought"]["role"], "Checkpoint");
    assert_eq!(g["thought"]["agent_owner"], "cloudllm");
    // Without agent_id, bootstrap uses the system identity.
    ok(&db, "mentisdb_bootstrap", json!({"chain_key": "other", "content": "x"}));
    let g = ok(&db, "mentisdb_get_genesis_thought", json!({"chain_key": "other"}));
    assert_eq!(g["thought"]["agent_id"], "system");
}

#[test]
fn bootstrap_honours_storage_adapter_and_rejects_unknown() {
    let (db, _) = fresh();
    ok(&db, "mentisdb_bootstrap", json!({"chain_key": "j", "content": "x", "storage_adapter": "jsonl"}));
    let chains = ok(&db, "mentisdb_list_chains", json!({}));
    assert_eq!(chains["chains"][0]["storage_adapter"], "jsonl");
    let e = err(&db, "mentisdb_bootstrap", json!({"chain_key": "k", "content": "x", "storage_adapter": "sqlite"}));
    assert!(e.to_string().contains("expected one of: binary, jsonl"), "{e}");
}

#[test]
fn append_returns_the_full_thought_with_defaults() {
    let (db, _) = fresh();
    let r = ok(&db, "mentisdb_append", json!({
        "chain_key": "borganism-brain", "agent_id": "agent-42", "agent_name": "Planner", "agent_owner": "ops-team",
        "thought_type": "Constraint", "role": "Memory", "importance": 0.95, "confidence": 0.98,
        "tags": ["security", "ops"], "concepts": ["no-external-api", "offline-mode"],
        "content": "This deployment path must work without external APIs."
    }));
    has_fields(&r, &["thought", "head_hash"]);
    has_fields(&r["thought"], THOUGHT_FIELDS);
    assert_eq!(r["thought"]["hash"], r["head_hash"]);
    assert_eq!(r["thought"]["index"], 0);
    assert_eq!(r["thought"]["prev_hash"], "", "genesis: \"\" as MentisDB 0.10.10 sends it");
    assert_eq!(r["thought"]["timestamp"], "2026-11-22T09:30:00.000Z");
    // Defaults: role Memory, agent_id = chain_key, agent_name = agent_id, importance 0.5.
    let r = ok(&db, "mentisdb_append", json!({"chain_key": "c2", "thought_type": "Idea", "content": "x", "importance": 7, "confidence": -3}));
    let t = &r["thought"];
    assert_eq!(t["role"], "Memory");
    assert_eq!(t["agent_id"], "c2");
    assert_eq!(t["agent_name"], "c2");
    assert_eq!(t["importance"], 1.0, "importance is clamped");
    assert_eq!(t["confidence"], 0.0, "confidence is clamped");
    let r = ok(&db, "mentisdb_append", json!({"chain_key": "c2", "thought_type": "Idea", "content": "y"}));
    assert_eq!(r["thought"]["importance"], 0.5);
    assert_eq!(r["thought"]["prev_hash"], r["thought"]["prev_hash"]);
}

#[test]
fn unknown_types_and_roles_list_accepted_values() {
    let (db, _) = fresh();
    let e = err(&db, "mentisdb_append", json!({"thought_type": "Insigth", "content": "x"}));
    assert!(e.to_string().contains("unknown thought_type 'Insigth'; expected one of: PreferenceUpdate"), "{e}");
    let e = err(&db, "mentisdb_append", json!({"thought_type": "Insight", "role": "Boss", "content": "x"}));
    assert!(e.to_string().contains("unknown role 'Boss'; expected one of: Memory, WorkingMemory"), "{e}");
    let e = err(&db, "mentisdb_append", json!({"thought_type": "Insight"}));
    assert!(e.to_string().contains("missing field `content`"), "{e}");
    let e = err(&db, "mentisdb_append", json!({"thought_type": "Insight", "content": "x", "refs": [0]}));
    assert!(e.to_string().contains("ref 0 does not point at an existing earlier thought"), "{e}");
    let e = err(&db, "mentisdb_no_such_tool", json!({}));
    assert_eq!(e.kind(), "unknown_tool");
    let e = err(&db, "mentisdb_append", json!({"thought_type": "Insight", "content": "x", "importance": "high"}));
    assert_eq!(e.kind(), "invalid_arguments");
    let e = err(&db, "mentisdb_append", json!([1, 2]));
    assert!(e.to_string().contains("must be a JSON object"), "{e}");
    // Nothing was stored by any of the failures.
    assert_eq!(ok(&db, "mentisdb_head", json!({}))["thought_count"], 0);
}

#[test]
fn retrospective_defaults_and_role() {
    let (db, _) = fresh();
    ok(&db, "mentisdb_append", json!({"chain_key": "p", "thought_type": "Mistake", "content": "Used a staging-only configuration assumption in production."}));
    let r = ok(&db, "mentisdb_append_retrospective", json!({
        "chain_key": "p", "agent_id": "astro", "agent_name": "Astro", "refs": [0], "importance": 0.94,
        "content": "Lesson learned: environment-specific assumptions must be verified explicitly before rollout."
    }));
    assert_eq!(r["thought"]["thought_type"], "LessonLearned");
    assert_eq!(r["thought"]["role"], "Retrospective");
    assert_eq!(r["thought"]["refs"], json!([0]));
    let r = ok(&db, "mentisdb_append_retrospective", json!({"chain_key": "p", "thought_type": "Correction", "content": "c"}));
    assert_eq!(r["thought"]["thought_type"], "Correction");
    assert_eq!(r["thought"]["role"], "Retrospective");
}

fn example_chain() -> mentisdb_core::MentisDb {
    let (db, _) = fresh();
    ok(&db, "mentisdb_bootstrap", json!({"chain_key": "project-alpha", "content": "Memory for Project Alpha.", "tags": ["bootstrap"], "concepts": ["project-alpha"]}));
    let rows = [
        ("agent-42", "Planner", "ops-team", "Insight", 0.8, "Rate limit on the upstream API explains the slowness."),
        ("agent-42", "Planner", "ops-team", "Mistake", 0.9, "Incorrectly blamed database latency; the real issue was API rate limiting."),
        ("agent-7", "Coder", "dev-team", "Correction", 0.75, "Shift debugging focus to upstream API throttling (rate limit)."),
        ("agent-42", "Planner", "ops-team", "Plan", 0.82, "Use a staged deployment with a canary instance before global rollout."),
        ("agent-42", "Planner", "ops-team", "Correction", 0.5, "Minor: rate limit window is per minute."),
    ];
    for (id, name, owner, tt, imp, content) in rows {
        ok(&db, "mentisdb_append", json!({"chain_key": "project-alpha", "agent_id": id, "agent_name": name, "agent_owner": owner,
            "thought_type": tt, "importance": imp, "content": content, "tags": ["deployment"], "confidence": 0.9}));
    }
    db
}

#[test]
fn search_example_from_the_spec() {
    let db = example_chain();
    let r = ok(&db, "mentisdb_search", json!({
        "chain_key": "project-alpha", "text": "rate limit", "agent_names": ["Planner"],
        "thought_types": ["Insight", "Mistake", "Correction"], "min_importance": 0.7, "limit": 8
    }));
    assert_eq!(contents(&r["thoughts"]), vec![
        "Rate limit on the upstream API explains the slowness.",
        "Incorrectly blamed database latency; the real issue was API rate limiting.",
    ]);
    // limit keeps the newest matching tail, in append order.
    let r = ok(&db, "mentisdb_search", json!({"chain_key": "project-alpha", "text": "RATE LIMIT", "limit": 2}));
    assert_eq!(contents(&r["thoughts"]), vec![
        "Shift debugging focus to upstream API throttling (rate limit).",
        "Minor: rate limit window is per minute.",
    ]);
    // Registry names match text: agent-7's owner is only in the registry/thought owner.
    ok(&db, "mentisdb_set_agent_description", json!({"chain_key": "project-alpha", "agent_id": "agent-7", "description": "Owns the canary pipeline"}));
    let r = ok(&db, "mentisdb_search", json!({"chain_key": "project-alpha", "text": "canary pipeline"}));
    assert_eq!(r["thoughts"].as_array().unwrap().len(), 1);
    assert_eq!(r["thoughts"][0]["agent_id"], "agent-7");
}

#[test]
fn every_filter_works_alone_and_combined() {
    let db = example_chain();
    let count = |args: serde_json::Value| {
        let mut a = args;
        a["chain_key"] = json!("project-alpha");
        ok(&db, "mentisdb_search", a)["thoughts"].as_array().unwrap().len()
    };
    assert_eq!(count(json!({})), 6);
    assert_eq!(count(json!({"thought_types": ["Correction"]})), 2);
    assert_eq!(count(json!({"roles": ["Checkpoint"]})), 1);
    assert_eq!(count(json!({"roles": ["Memory", "Checkpoint"]})), 6);
    assert_eq!(count(json!({"tags_any": ["DEPLOYMENT", "nope"]})), 5);
    assert_eq!(count(json!({"concepts_any": ["project-alpha"]})), 1);
    assert_eq!(count(json!({"agent_ids": ["agent-7"]})), 1);
    assert_eq!(count(json!({"agent_names": ["coder"]})), 1);
    assert_eq!(count(json!({"agent_owners": ["ops-team"]})), 4);
    assert_eq!(count(json!({"min_importance": 0.8})), 4);
    assert_eq!(count(json!({"min_confidence": 0.9})), 5, "the bootstrap thought has no confidence");
    // The clock advances 1 s per read: thoughts sit at T0, T0+1s, ...
    assert_eq!(count(json!({"since": "2026-11-22T09:30:02Z"})), 4);
    assert_eq!(count(json!({"until": "2026-11-22T09:30:01Z"})), 2);
    assert_eq!(count(json!({"since": "2026-11-22T10:30:02+01:00", "until": "2026-11-22T09:30:03Z"})), 2);
    assert_eq!(count(json!({"thought_types": ["Correction"], "agent_owners": ["ops-team"], "min_importance": 0.4, "text": "minute", "tags_any": ["deployment"], "since": "2026-11-22T09:30:00Z", "min_confidence": 0.5, "agent_ids": ["agent-42"], "agent_names": ["Planner"], "roles": ["Memory"], "concepts_any": []})), 0, "empty concepts_any matches nothing");
    assert_eq!(count(json!({"thought_types": ["Correction"], "agent_owners": ["ops-team"], "min_importance": 0.4, "text": "minute", "tags_any": ["deployment"], "since": "2026-11-22T09:30:00Z", "min_confidence": 0.5, "agent_ids": ["agent-42"], "agent_names": ["Planner"], "roles": ["Memory"]})), 1);
    let e = err(&db, "mentisdb_search", json!({"since": "yesterday"}));
    assert!(e.to_string().contains("invalid RFC 3339 timestamp"), "{e}");
    let e = err(&db, "mentisdb_search", json!({"roles": ["Boss"]}));
    assert!(e.to_string().contains("unknown role"), "{e}");
}

#[test]
fn get_thought_needs_exactly_one_locator() {
    let db = example_chain();
    let by_index = ok(&db, "mentisdb_get_thought", json!({"chain_key": "project-alpha", "thought_index": 2}));
    has_fields(&by_index, &["chain_key", "thought"]);
    let t = &by_index["thought"];
    let by_id = ok(&db, "mentisdb_get_thought", json!({"chain_key": "project-alpha", "thought_id": t["id"]}));
    let by_hash = ok(&db, "mentisdb_get_thought", json!({"chain_key": "project-alpha", "thought_hash": t["hash"]}));
    assert_eq!(by_id, by_index);
    assert_eq!(by_hash, by_index);
    let e = err(&db, "mentisdb_get_thought", json!({"chain_key": "project-alpha", "thought_index": 2, "thought_id": t["id"]}));
    assert!(e.to_string().contains("exactly one of thought_id, thought_hash or thought_index"), "{e}");
    let e = err(&db, "mentisdb_get_thought", json!({"chain_key": "project-alpha"}));
    assert!(e.to_string().contains("got 0"), "{e}");
    let e = err(&db, "mentisdb_get_thought", json!({"chain_key": "project-alpha", "thought_index": 99}));
    assert_eq!(e.kind(), "not_found");
}

#[test]
fn head_and_genesis() {
    let db = example_chain();
    let h = ok(&db, "mentisdb_head", json!({"chain_key": "project-alpha"}));
    has_fields(&h, &["chain_key", "thought_count", "head_hash", "latest_thought", "integrity_ok", "storage_location"]);
    assert_eq!(h["thought_count"], 6);
    assert_eq!(h["integrity_ok"], true);
    assert_eq!(h["latest_thought"]["index"], 5);
    assert_eq!(h["head_hash"], h["latest_thought"]["hash"]);
    assert!(h["storage_location"].as_str().unwrap().contains("chains/project-alpha."));
    // A chain that does not exist is not found (0.10.10); the default chain reads as empty.
    let missing = db.call("mentisdb_head", json!({"chain_key": "nothing-here"})).unwrap_err();
    assert_eq!(missing.kind(), mentisdb_core::ErrorKind::NotFound, "{missing}");
    let empty = ok(&db, "mentisdb_head", json!({}));
    assert_eq!(empty["thought_count"], 0);
    assert_eq!(empty["head_hash"], serde_json::Value::Null);
    assert_eq!(empty["latest_thought"], serde_json::Value::Null);
    let g = ok(&db, "mentisdb_get_genesis_thought", json!({}));
    assert_eq!(g["thought"], serde_json::Value::Null);
    // Reads of unknown chains create nothing.
    assert_eq!(ok(&db, "mentisdb_list_chains", json!({}))["chain_keys"], json!(["project-alpha"]));
}

#[test]
fn traverse_example_and_cursors() {
    let db = example_chain();
    let r = ok(&db, "mentisdb_traverse_thoughts", json!({
        "chain_key": "project-alpha", "anchor_boundary": "head", "direction": "backward", "chunk_size": 2,
        "thought_types": ["Correction", "Plan"]
    }));
    has_fields(&r, &["chain_key", "direction", "include_anchor", "chunk_size", "anchor", "thoughts", "has_more", "next_cursor", "previous_cursor"]);
    let idx: Vec<u64> = r["thoughts"].as_array().unwrap().iter().map(|t| t["index"].as_u64().unwrap()).collect();
    assert_eq!(idx, vec![5, 4], "backward from head, head included");
    assert_eq!(r["has_more"], true);
    assert_eq!(r["next_cursor"]["index"], 4);
    assert_eq!(r["previous_cursor"], serde_json::Value::Null, "nothing lies after head");
    let r2 = ok(&db, "mentisdb_traverse_thoughts", json!({
        "chain_key": "project-alpha", "anchor_index": r["next_cursor"]["index"], "direction": "backward", "chunk_size": 2,
        "thought_types": ["Correction", "Plan"]
    }));
    let idx: Vec<u64> = r2["thoughts"].as_array().unwrap().iter().map(|t| t["index"].as_u64().unwrap()).collect();
    assert_eq!(idx, vec![3]);
    assert_eq!(r2["has_more"], false);
    assert_eq!(r2["next_cursor"], serde_json::Value::Null);
    assert_eq!(r2["previous_cursor"]["index"], 3);
    // chunk_size 1 gives next/previous; include_anchor returns the anchor itself.
    let r3 = ok(&db, "mentisdb_traverse_thoughts", json!({"chain_key": "project-alpha", "anchor_index": 2, "chunk_size": 1}));
    assert_eq!(r3["thoughts"][0]["index"], 3);
    assert_eq!(r3["anchor"]["index"], 2);
    let r4 = ok(&db, "mentisdb_traverse_thoughts", json!({"chain_key": "project-alpha", "anchor_index": 2, "chunk_size": 1, "include_anchor": true}));
    assert_eq!(r4["thoughts"][0]["index"], 2);
    // Defaults: forward from genesis, chunk 50; chunk_size is clamped.
    let r5 = ok(&db, "mentisdb_traverse_thoughts", json!({"chain_key": "project-alpha", "chunk_size": 1_000_000}));
    assert_eq!(r5["chunk_size"], 1000);
    assert_eq!(r5["thoughts"].as_array().unwrap().len(), 6);
    assert_eq!(r5["direction"], "forward");
    // Anchors by id and hash; the time window in seconds and milliseconds.
    let g = ok(&db, "mentisdb_get_thought", json!({"chain_key": "project-alpha", "thought_index": 1}))["thought"].clone();
    let by_id = ok(&db, "mentisdb_traverse_thoughts", json!({"chain_key": "project-alpha", "anchor_id": g["id"], "chunk_size": 1}));
    let by_hash = ok(&db, "mentisdb_traverse_thoughts", json!({"chain_key": "project-alpha", "anchor_hash": g["hash"], "chunk_size": 1}));
    assert_eq!(by_id["thoughts"], by_hash["thoughts"]);
    assert_eq!(by_id["thoughts"][0]["index"], 2);
    let start_s = common::T0 / 1000 + 1;
    let w = ok(&db, "mentisdb_traverse_thoughts", json!({"chain_key": "project-alpha", "time_window": {"start": start_s, "delta": 2, "unit": "seconds"}}));
    assert_eq!(w["thoughts"].as_array().unwrap().len(), 3);
    let w = ok(&db, "mentisdb_traverse_thoughts", json!({"chain_key": "project-alpha", "time_window": {"start": common::T0 + 1000, "delta": 999, "unit": "milliseconds"}}));
    assert_eq!(w["thoughts"].as_array().unwrap().len(), 1);
    let e = err(&db, "mentisdb_traverse_thoughts", json!({"chain_key": "project-alpha", "anchor_index": 1, "anchor_boundary": "head"}));
    assert!(e.to_string().contains("at most one of"), "{e}");
    let e = err(&db, "mentisdb_traverse_thoughts", json!({"chain_key": "project-alpha", "direction": "sideways"}));
    assert!(e.to_string().contains("expected one of: forward, backward"), "{e}");
}

#[test]
fn recent_context_and_markdown_render_the_chain() {
    let db = example_chain();
    let p = ok(&db, "mentisdb_recent_context", json!({"chain_key": "project-alpha", "last_n": 2}))["prompt"].as_str().unwrap().to_string();
    assert!(p.starts_with("MentisDB recent context for chain `project-alpha`: the last 2 of 6 thoughts, oldest first."), "{p}");
    assert!(p.contains("[#4] ") && p.contains("[#5] ") && !p.contains("[#3] "), "{p}");
    assert!(p.contains("Plan/Memory by Planner (agent-42), importance 0.82"), "{p}");
    let p = ok(&db, "mentisdb_recent_context", json!({"chain_key": "project-alpha"}))["prompt"].as_str().unwrap().to_string();
    assert!(p.contains("the last 6 of 6"), "default last_n 12 covers the chain: {p}");
    let md = ok(&db, "mentisdb_memory_markdown", json!({"chain_key": "project-alpha", "thought_types": ["Plan", "Correction"], "min_importance": 0.6}))["markdown"].as_str().unwrap().to_string();
    assert!(md.starts_with("# MEMORY: `project-alpha`"), "{md}");
    assert!(md.contains("## Correction") && md.contains("## Plan") && !md.contains("## Mistake"), "{md}");
    assert!(md.contains("- Use a staged deployment") && !md.contains("Minor: rate limit"), "{md}");
    assert!(md.find("## Correction").unwrap() < md.find("## Plan").unwrap(), "sections follow the spec type order (Correction is listed before Plan)");
}

#[test]
fn list_chains_counts() {
    let db = example_chain();
    let r = ok(&db, "mentisdb_list_chains", json!({}));
    has_fields(&r, &["default_chain_key", "chain_keys", "chains"]);
    assert_eq!(r["default_chain_key"], "borganism-brain");
    let c = &r["chains"][0];
    has_fields(c, &["chain_key", "version", "storage_adapter", "thought_count", "agent_count", "storage_location"]);
    assert_eq!(c["thought_count"], 6);
    assert_eq!(c["agent_count"], 3, "system, agent-42, agent-7");
    assert_eq!(c["storage_adapter"], "binary");
}

#[test]
fn agent_registry_operations() {
    let db = example_chain();
    let k = "project-alpha";
    let agents = ok(&db, "mentisdb_list_agents", json!({"chain_key": k}));
    has_fields(&agents, &["chain_key", "agents"]);
    let ids: Vec<&str> = agents["agents"].as_array().unwrap().iter().map(|a| a["agent_id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec!["agent-42", "agent-7", "system"]);
    has_fields(&agents["agents"][0], &["agent_id", "agent_name", "agent_owner"]);
    let a = ok(&db, "mentisdb_get_agent", json!({"chain_key": k, "agent_id": "agent-42"}));
    has_fields(&a["agent"], &["agent_id", "display_name", "agent_owner", "description", "aliases", "status", "public_keys", "thought_count", "first_seen_index", "last_seen_index", "first_seen_at", "last_seen_at"]);
    assert_eq!(a["agent"]["thought_count"], 4);
    assert_eq!(a["agent"]["first_seen_index"], 1);
    assert_eq!(a["agent"]["last_seen_index"], 5);
    let u = ok(&db, "mentisdb_upsert_agent", json!({"chain_key": k, "agent_id": "reviewer", "display_name": "Reviewer", "agent_owner": "qa", "description": "Reviews plans"}));
    assert_eq!(u["agent"]["status"], "Active", "as MentisDB 0.9 and 0.10.10 write it");
    assert_eq!(u["agent"]["thought_count"], 0);
    let d = ok(&db, "mentisdb_set_agent_description", json!({"chain_key": k, "agent_id": "reviewer"}));
    assert_eq!(d["agent"]["description"], serde_json::Value::Null, "omitted description clears it");
    let al = ok(&db, "mentisdb_add_agent_alias", json!({"chain_key": k, "agent_id": "agent-42", "alias": "PlannerV1"}));
    assert_eq!(al["agent"]["aliases"], json!(["PlannerV1"]));
    // An alias is a name: agent_names finds the agent's thoughts by it.
    let r = ok(&db, "mentisdb_search", json!({"chain_key": k, "agent_names": ["plannerv1"]}));
    assert_eq!(r["thoughts"].as_array().unwrap().len(), 4);
    let reg = ok(&db, "mentisdb_list_agent_registry", json!({"chain_key": k}));
    assert_eq!(reg["agents"].as_array().unwrap().len(), 4);
    let dis = ok(&db, "mentisdb_disable_agent", json!({"chain_key": k, "agent_id": "agent-7"}));
    assert_eq!(dis["agent"]["status"], "Revoked");
    let e = err(&db, "mentisdb_append", json!({"chain_key": k, "agent_id": "agent-7", "thought_type": "Idea", "content": "sneaky"}));
    assert!(e.to_string().contains("agent 'agent-7' is disabled"), "{e}");
    let e = err(&db, "mentisdb_get_agent", json!({"chain_key": k, "agent_id": "ghost"}));
    assert_eq!(e.kind(), "not_found");
    let e = err(&db, "mentisdb_add_agent_alias", json!({"chain_key": k, "agent_id": "ghost", "alias": "x"}));
    assert!(e.to_string().contains("agent 'ghost' is not registered in chain 'project-alpha'"), "{e}");
    let e = err(&db, "mentisdb_add_agent_key", json!({"chain_key": k, "agent_id": "agent-42", "key_id": "k", "algorithm": "rsa", "public_key_bytes": [1, 2]}));
    assert!(e.to_string().contains("expected one of: ed25519"), "{e}");
    let e = err(&db, "mentisdb_add_agent_key", json!({"chain_key": k, "agent_id": "agent-42", "key_id": "k", "algorithm": "ed25519", "public_key_bytes": [1, 2]}));
    assert!(e.to_string().contains("32 bytes"), "{e}");
    let e = err(&db, "mentisdb_disable_agent", json!({"chain_key": "no-chain", "agent_id": "x"}));
    assert_eq!(e.kind(), "not_found");
}

#[test]
fn registry_edits_survive_reopen_and_activity_is_rebuilt() {
    let (db, storage) = fresh();
    ok(&db, "mentisdb_append", json!({"chain_key": "k", "agent_id": "a", "agent_name": "Alpha", "thought_type": "Idea", "content": "one"}));
    ok(&db, "mentisdb_add_agent_alias", json!({"chain_key": "k", "agent_id": "a", "alias": "Al"}));
    ok(&db, "mentisdb_upsert_agent", json!({"chain_key": "k", "agent_id": "b", "description": "pre-registered"}));
    ok(&db, "mentisdb_append", json!({"chain_key": "k", "agent_id": "a", "thought_type": "Idea", "content": "two"}));
    drop(db);
    let db = reopen(storage);
    let a = ok(&db, "mentisdb_get_agent", json!({"chain_key": "k", "agent_id": "a"}));
    assert_eq!(a["agent"]["aliases"], json!(["Al"]));
    assert_eq!(a["agent"]["thought_count"], 2);
    assert_eq!(a["agent"]["display_name"], "Alpha");
    let b = ok(&db, "mentisdb_get_agent", json!({"chain_key": "k", "agent_id": "b"}));
    assert_eq!(b["agent"]["description"], "pre-registered");
}

#[test]
fn relations_and_session_are_accepted_on_append() {
    let (db, _) = fresh();
    let a = ok(&db, "mentisdb_append", json!({"chain_key": "r", "thought_type": "Hypothesis", "content": "h", "session_id": "s-1"}));
    assert_eq!(a["thought"]["session_id"], "s-1");
    let b = ok(&db, "mentisdb_append", json!({"chain_key": "r", "thought_type": "Correction", "content": "c",
        "relations": [{"kind": "Corrects", "target_index": 0}, {"kind": "RelatedTo", "target_id": a["thought"]["id"]},
                      {"kind": "References", "target_id": "remote-id", "chain_key": "other-chain"}]}));
    let rels = &b["thought"]["relations"];
    assert_eq!(rels[0]["kind"], "Corrects");
    assert_eq!(rels[0]["target_id"], a["thought"]["id"]);
    assert_eq!(rels[1]["target_index"], 0);
    assert_eq!(rels[2]["chain_key"], "other-chain");
    let e = err(&db, "mentisdb_append", json!({"chain_key": "r", "thought_type": "Idea", "content": "x", "relations": [{"kind": "Corrects", "target_index": 9}]}));
    assert!(e.to_string().contains("does not point at an existing earlier thought"), "{e}");
    let e = err(&db, "mentisdb_append", json!({"chain_key": "r", "thought_type": "Idea", "content": "x", "relations": [{"kind": "Fixes", "target_index": 0}]}));
    assert!(e.to_string().contains("unknown relation kind 'Fixes'"), "{e}");
}

#[test]
fn every_tool_has_an_object_schema() {
    let specs = mentisdb_core::tool_specs();
    let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
    for required in ["mentisdb_bootstrap", "mentisdb_append", "mentisdb_append_retrospective", "mentisdb_search", "mentisdb_list_chains",
        "mentisdb_list_agents", "mentisdb_get_agent", "mentisdb_list_agent_registry", "mentisdb_upsert_agent", "mentisdb_set_agent_description",
        "mentisdb_add_agent_alias", "mentisdb_add_agent_key", "mentisdb_revoke_agent_key", "mentisdb_disable_agent", "mentisdb_recent_context",
        "mentisdb_memory_markdown", "mentisdb_get_thought", "mentisdb_get_genesis_thought", "mentisdb_traverse_thoughts", "mentisdb_head"] {
        assert!(names.contains(&required), "{required} missing from tool_specs");
    }
    for s in &specs {
        assert_eq!(s.input_schema["type"], "object", "{}", s.name);
        assert!(!s.description.is_empty());
    }
    let append = specs.iter().find(|s| s.name == "mentisdb_append").unwrap();
    assert_eq!(append.input_schema["required"], json!(["thought_type", "content"]));
    assert!(append.input_schema["properties"]["thought_signature"].is_object());
    let search = specs.iter().find(|s| s.name == "mentisdb_search").unwrap();
    for f in ["text", "thought_types", "roles", "tags_any", "concepts_any", "agent_ids", "agent_names", "agent_owners", "min_importance", "min_confidence", "since", "until", "limit"] {
        assert!(search.input_schema["properties"][f].is_object(), "search schema lacks {f}: {}", search.input_schema);
    }
}

#[test]
fn recent_context_can_be_narrowed_to_one_agent() {
    let (db, _) = common::fresh();
    for (agent, content) in [("alice", "alice first"), ("bob", "bob only"), ("alice", "alice second")] {
        ok(&db, "mentisdb_append", json!({"chain_key": "rc", "agent_id": agent, "thought_type": "Finding", "content": content}));
    }
    let prompt = ok(&db, "mentisdb_recent_context", json!({"chain_key": "rc", "agent_id": "alice"}))["prompt"].as_str().unwrap().to_string();
    assert!(prompt.contains("alice first") && prompt.contains("alice second") && !prompt.contains("bob only"), "{prompt}");
    let all = ok(&db, "mentisdb_recent_context", json!({"chain_key": "rc"}))["prompt"].as_str().unwrap().to_string();
    assert!(all.contains("bob only"));
}
