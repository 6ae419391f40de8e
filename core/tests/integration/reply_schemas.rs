//! Each tool's result has exactly the top-level fields of its declared reply
//! type (`mentisdb_core::output_schema`, from `dispatch::replies`): a handler that
//! serialized something else than the type its `tool!` entry names fails here.

use crate::common;
use common::*;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Every tool called at least once on a chain with relations, sessions,
/// agents, keys and skills. Returns `(tool, result)` of the calls that succeed.
/// A chat model answering one fixed extraction (the daemon's real one is
/// tested against a local chat-completions server in host-native).
struct CannedModel;

impl mentisdb_core::extract::ChatModel for CannedModel {
    fn model(&self) -> &str {
        "canned"
    }
    fn chat(&self, _system: &str, _user: &str, _temperature: f32) -> Result<Value, String> {
        Ok(json!({"model": "canned", "choices": [{"message": {"content": "{\"thoughts\": [{\"thought_type\": \"Idea\", \"content\": \"x\"}]}"}}], "usage": {"total_tokens": 3}}))
    }
}

/// Accepts every webhook URL (no delivery happens in these tests).
struct AnyUrl;

impl mentisdb_core::webhooks::WebhookTargets for AnyUrl {
    fn check_url(&self, _url: &str) -> Result<(), String> {
        Ok(())
    }
}

fn session() -> Vec<(&'static str, Value)> {
    let (db, _) = fresh();
    db.set_chat_model(Some(std::sync::Arc::new(CannedModel)));
    db.webhooks().set_targets(Some(std::sync::Arc::new(AnyUrl)));
    db.set_checkpoint_signer(Some(mentisdb_core::checkpoint::CheckpointSigner::new("reply-test", &[3u8; 32]).unwrap()), None);
    let key = ed25519_dalek::SigningKey::from_bytes(&[1u8; 32]).verifying_key().to_bytes().to_vec();
    let skill = "---\nname: Deploy\ndescription: how\ntags: [ops]\n---\n# Deploy\nRun it.\n";
    let on_b = db.call("mentisdb_append", json!({"chain_key": "b", "agent_id": "ag", "thought_type": "Idea", "content": "branch here"})).unwrap();
    let branch_at = on_b["thought"]["id"].clone();
    let calls: Vec<(&'static str, Value)> = vec![
        ("mentisdb_branch_from", json!({"source_chain_key": "b", "branch_thought_id": branch_at, "branch_chain_key": "b2"})),
        ("mentisdb_merge_chains", json!({"source_chain_key": "b2", "target_chain_key": "b"})),
        ("mentisdb_extract_memories", json!({"text": "an idea"})),
        ("mentisdb_import_memory_markdown", json!({"chain_key": "b", "markdown": "## Idea\n\n- again\n  _(#0 Memory, ag, 2026-11-22T09:30:00.000Z, importance 0.50)_\n"})),
        ("mentisdb_bootstrap", json!({"chain_key": "a", "content": "boot"})),
        ("mentisdb_append", json!({"chain_key": "a", "agent_id": "ag", "thought_type": "Decision", "content": "Use IndexedDB for storage", "session_id": "s1", "entity_type": "decision", "scope": "user"})),
        ("mentisdb_append", json!({"chain_key": "a", "agent_id": "ag", "thought_type": "Question", "content": "Why is storage slow?", "refs": [1], "relations": [{"kind": "Supports", "target_index": 1}]})),
        ("mentisdb_append_retrospective", json!({"chain_key": "a", "agent_id": "ag", "content": "Batch fsyncs", "refs": [2]})),
        ("mentisdb_search", json!({"chain_key": "a"})),
        ("mentisdb_list_chains", json!({})),
        ("mentisdb_recent_context", json!({"chain_key": "a"})),
        ("mentisdb_memory_markdown", json!({"chain_key": "a"})),
        ("mentisdb_get_thought", json!({"chain_key": "a", "thought_index": 2})),
        ("mentisdb_get_genesis_thought", json!({"chain_key": "a"})),
        ("mentisdb_get_genesis_thought", json!({})),
        ("mentisdb_traverse_thoughts", json!({"chain_key": "a", "anchor_boundary": "genesis", "chunk_size": 2})),
        ("mentisdb_head", json!({"chain_key": "a"})),
        ("mentisdb_checkpoint", json!({"chain_key": "a"})),
        ("mentisdb_inclusion_proof", json!({"chain_key": "a", "index": 0})),
        ("mentisdb_consistency_proof", json!({"chain_key": "a", "first": 1})),
        ("mentisdb_identity", json!({})),
        ("mentisdb_head", json!({})),
        ("mentisdb_list_agents", json!({"chain_key": "a"})),
        ("mentisdb_get_agent", json!({"chain_key": "a", "agent_id": "ag"})),
        ("mentisdb_upsert_agent", json!({"chain_key": "a", "agent_id": "ag", "agent_owner": "own"})),
        ("mentisdb_set_agent_description", json!({"chain_key": "a", "agent_id": "ag", "description": "d"})),
        ("mentisdb_add_agent_alias", json!({"chain_key": "a", "agent_id": "ag", "alias": "al"})),
        ("mentisdb_upsert_agent", json!({"chain_key": "a", "agent_id": "signer"})),
        ("mentisdb_add_agent_key", json!({"chain_key": "a", "agent_id": "signer", "key_id": "k", "algorithm": "ed25519", "public_key_bytes": key})),
        ("mentisdb_revoke_agent_key", json!({"chain_key": "a", "agent_id": "signer", "key_id": "k"})),
        ("mentisdb_disable_agent", json!({"chain_key": "a", "agent_id": "signer"})),
        ("mentisdb_list_agent_registry", json!({"chain_key": "a"})),
        ("mentisdb_upsert_entity_type", json!({"chain_key": "a", "entity_type": "service"})),
        ("mentisdb_list_entity_types", json!({"chain_key": "a"})),
        ("mentisdb_skill_md", json!({})),
        ("mentisdb_skill_manifest", json!({})),
        ("mentisdb_upload_skill", json!({"chain_key": "a", "agent_id": "ag", "skill_id": "deploy", "content": skill})),
        ("mentisdb_list_skills", json!({})),
        ("mentisdb_search_skill", json!({"text": "deploy"})),
        ("mentisdb_read_skill", json!({"skill_id": "deploy"})),
        ("mentisdb_skill_versions", json!({"skill_id": "deploy"})),
        ("mentisdb_deprecate_skill", json!({"chain_key": "a", "agent_id": "ag", "skill_id": "deploy", "reason": "old"})),
        ("mentisdb_revoke_skill", json!({"chain_key": "a", "agent_id": "ag", "skill_id": "deploy"})),
        ("mentisdb_delete_skill", json!({"skill_id": "deploy"})),
        ("mentisdb_ranked_search", json!({"chain_key": "a", "text": "why is storage slow"})),
        ("mentisdb_ranked_search", json!({"text": "storage"})),
        ("mentisdb_ranked_search", json!({"chain_key": "a", "text": "storage", "enable_reranking": true, "offset": 1})),
        ("mentisdb_lexical_search", json!({"chain_key": "a", "text": "storage"})),
        ("mentisdb_federated_search", json!({"chain_keys": ["a", "missing"], "text": "storage"})),
        ("mentisdb_summary_candidates", json!({"chain_key": "a", "config": {"window_size": 2, "overlap": 1}})),
        ("mentisdb_context_bundles", json!({"chain_key": "a", "text": "storage"})),
        ("mentisdb_resolve_context", json!({"chain_key": "a", "thought_index": 2})),
        ("mentisdb_forget_thought", json!({"chain_key": "a", "thought_index": 1, "reason": "test"})),
        ("mentisdb_bootstrap", json!({"chain_key": "doomed", "content": "short-lived"})),
        ("mentisdb_delete_chain", json!({"chain_key": "doomed"})),
        ("mentisdb_catch_up", json!({"chain_key": "a", "min_index": 1})),
        ("mentisdb_register_webhook", json!({"url": "http://example.com/hook", "thought_type_filter": ["Idea"]})),
        ("mentisdb_list_webhooks", json!({})),
        ("mentisdb_delete_webhook", json!({"id": "no-such-webhook"})),
        ("mentisdb_chain_records", json!({"chain_key": "a", "from": 1, "limit": 1})),
        ("mentisdb_append_batch", json!({"chain_key": "a", "thoughts": [{"thought_type": "Idea", "content": "batched", "thought_id": "batch-1"}]})),
        ("mentisdb_rebuild_vectors", json!({"chain_key": "a"})),
        ("mentisdb_claim", json!({"chain_key": "a", "key": "task", "holder": "ada", "ttl_ms": 60000})),
        ("mentisdb_renew_claim", json!({"chain_key": "a", "key": "task", "holder": "ada"})),
        ("mentisdb_list_claims", json!({"chain_key": "a"})),
        ("mentisdb_release_claim", json!({"chain_key": "a", "key": "task", "holder": "ada"})),
        ("mentisdb_record_fact", json!({"chain_key": "a", "subject": "deploy target", "predicate": "is", "object": "eu-1", "valid_from": "2026-11-01T00:00:00Z"})),
        ("mentisdb_query_facts", json!({"chain_key": "a", "subject": "deploy target"})),
        ("mentisdb_fact_conflicts", json!({"chain_key": "a"})),
    ];
    let mut results: Vec<(&'static str, Value)> = calls.into_iter().map(|(tool, args)| (tool, ok(&db, tool, args))).collect();
    // A review asked, decided, and decided again (too late); a beat, and who is present.
    let review = ok(&db, "mentisdb_request_review", json!({"chain_key": "a", "subject": "ship it", "claim_key": "task", "reviewers": ["bob"], "agent_id": "ada"}));
    let decided = ok(&db, "mentisdb_decide_review", json!({"chain_key": "a", "review_id": review["review_id"], "decision": "approved", "comment": "fine", "agent_id": "bob"}));
    let late = ok(&db, "mentisdb_decide_review", json!({"chain_key": "a", "review_id": review["review_id"], "decision": "rejected", "agent_id": "bob"}));
    let reviews = ok(&db, "mentisdb_list_reviews", json!({"chain_key": "a", "include_decided": true}));
    let beat = ok(&db, "mentisdb_heartbeat", json!({"chain_key": "a", "agent_id": "ada", "session_id": "s", "display_name": "Ada", "tool": "cli", "current_file": "a.rs", "current_action": "editing"}));
    let present = ok(&db, "mentisdb_list_presence", json!({"chain_key": "a"}));
    results.extend([("mentisdb_request_review", review), ("mentisdb_decide_review", decided), ("mentisdb_decide_review", late), ("mentisdb_list_reviews", reviews), ("mentisdb_heartbeat", beat), ("mentisdb_list_presence", present)]);
    // A chain object moves to another store: export here, import there.
    let exported = ok(&db, "mentisdb_export_chain", json!({"chain_key": "b"}));
    let (other, _) = fresh();
    let imported = ok(&other, "mentisdb_import_chain", json!({"chain_key": "b", "chain_base64": exported["chain_base64"]}));
    // A second value closes the first; closing the second ends it.
    let second = ok(&db, "mentisdb_record_fact", json!({"chain_key": "a", "subject": "deploy target", "predicate": "is", "object": "eu-2", "valid_from": "2026-11-02T00:00:00Z"}));
    let closed = ok(&db, "mentisdb_close_fact", json!({"chain_key": "a", "fact_id": second["fact"]["fact_id"]}));
    results.push(("mentisdb_record_fact", second));
    results.push(("mentisdb_close_fact", closed));
    results.push(("mentisdb_export_chain", exported));
    results.push(("mentisdb_import_chain", imported));
    results
}

/// The JSON Schema of `tool`'s reply type.
fn reply_schema(tool: &str) -> Value {
    mentisdb_core::output_schema(tool).unwrap_or_else(|| panic!("no reply schema for {tool}"))
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default()
}

#[test]
fn every_result_has_exactly_its_reply_types_fields() {
    let schemas: BTreeMap<&str, Value> = mentisdb_core::tool_specs().into_iter().map(|s| (s.name, reply_schema(s.name))).collect();
    let results = session();
    for (tool, result) in &results {
        assert_eq!(keys(result), keys(&schemas[tool]["properties"]), "{tool}: result fields differ from its reply type; result: {result}");
    }
    let called: BTreeSet<&str> = results.iter().map(|(t, _)| *t).collect();
    let missing: Vec<&&str> = schemas.keys().filter(|t| !called.contains(**t)).collect();
    assert!(missing.is_empty(), "call these tools in session(): {missing:?}");
}

#[test]
fn nested_replies_match_their_schemas_too() {
    let schema = reply_schema;
    let results = session();
    let result = |tool: &str| results.iter().find(|(t, _)| *t == tool).unwrap().1.clone();
    let def = |tool: &str, name: &str| keys(&schema(tool)["$defs"][name]["properties"]);
    // A thought has `content_salt` until it is forgotten, then `forgotten` instead.
    let with = |v: &Value, extra: &str| keys(v).into_iter().chain([extra.to_string()]).collect::<BTreeSet<_>>();
    assert_eq!(with(&result("mentisdb_append")["thought"], "forgotten"), def("mentisdb_append", "Thought"));
    assert_eq!(with(&result("mentisdb_forget_thought")["thought"], "content_salt"), def("mentisdb_forget_thought", "Thought"));
    let second = &results.iter().filter(|(t, _)| *t == "mentisdb_append").nth(1).unwrap().1;
    assert_eq!(keys(&second["thought"]["relations"][0]), def("mentisdb_append", "ThoughtRelation"));
    let hit = &result("mentisdb_ranked_search")["results"][0];
    assert_eq!(keys(hit), def("mentisdb_ranked_search", "RankedHitReply"));
    assert_eq!(keys(&hit["score"]), def("mentisdb_ranked_search", "ScoreReply"));
    let bundle = &result("mentisdb_context_bundles")["bundles"][0];
    assert_eq!(keys(&bundle["seed"]), def("mentisdb_context_bundles", "SeedReply"));
    assert_eq!(keys(&bundle["seed"]), keys(hit).union(&BTreeSet::from(["locator".into(), "lexical_score".into()])).cloned().collect());
    let reached = &result("mentisdb_resolve_context")["thoughts"][0];
    assert_eq!(keys(reached), def("mentisdb_resolve_context", "ReachedReply"));
    assert_eq!(keys(&result("mentisdb_list_chains")["chains"][0]), def("mentisdb_list_chains", "ChainInfo"));
    assert_eq!(keys(&result("mentisdb_list_entity_types")["entity_types"][0]), def("mentisdb_list_entity_types", "EntityTypeRecord"));
    assert_eq!(keys(&result("mentisdb_upsert_entity_type")["entity_type"]), def("mentisdb_upsert_entity_type", "EntityTypeRecord"));
    assert_eq!(keys(&result("mentisdb_list_skills")["skills"][0]), def("mentisdb_list_skills", "SkillSummary"));
    assert_eq!(keys(&result("mentisdb_skill_versions")["versions"][0]), def("mentisdb_skill_versions", "SkillVersionEntry"));
    assert_eq!(keys(&result("mentisdb_list_agent_registry")["agents"][0]), def("mentisdb_list_agent_registry", "AgentRecord"));
}
