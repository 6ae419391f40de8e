//! A misspelled argument never silently changes what a call does: a field
//! close to one the tool knows is refused with a suggestion and nothing is
//! written; other unknown fields are accepted (MentisDB 0.10's clients
//! send extras) and named in the reply's `warnings`; numbers and booleans
//! sent as strings are read as what they spell; a number moved into its
//! range is named in `warnings` with the value sent and the value used.

use crate::common;

use common::{fresh, ok};
use serde_json::json;

#[test]
fn a_misspelled_field_is_refused_with_a_suggestion_and_nothing_is_written() {
    let (db, _) = fresh();
    let before = ok(&db, "mentisdb_list_chains", json!({}));
    for (tool, args, unknown, meant) in [
        ("mentisdb_append", json!({"chain": "project-alpha", "agent": "planner", "thought_type": "Decision", "content": "ship it"}), "agent", "agent_id"),
        ("mentisdb_append", json!({"chain": "project-alpha", "agent_id": "planner", "thought_type": "Decision", "content": "ship it"}), "chain", "chain_key"),
        ("mentisdb_append", json!({"chainKey": "project-alpha", "thought_type": "Decision", "content": "ship it"}), "chainKey", "chain_key"),
        ("mentisdb_append", json!({"chain_key": "project-alpha", "thought_type": "Decision", "contnet": "ship it", "content": "x"}), "contnet", "content"),
        ("mentisdb_ranked_search", json!({"query": "canary"}), "query", "text"),
        ("mentisdb_search", json!({"chain_key": "c", "limt": 5}), "limt", "limit"),
    ] {
        let e = db.call(tool, args).expect_err(tool);
        assert_eq!(e.kind(), mentisdb_core::ErrorKind::InvalidArguments);
        assert!(e.to_string().contains(&format!("unknown field `{unknown}` (did you mean `{meant}`?)")), "{tool}: {e}");
    }
    assert_eq!(ok(&db, "mentisdb_list_chains", json!({})), before, "nothing written");
    let nested = db.call("mentisdb_append", json!({"thought_type": "Decision", "content": "x", "relations": [{"kindd": "References", "target_index": 0}]})).unwrap_err();
    assert!(nested.to_string().contains("`relations[0]`: unknown field `kindd` (did you mean `kind`?)"), "{nested}");
}

#[test]
fn other_unknown_fields_are_accepted_and_named_in_warnings() {
    let (db, _) = fresh();
    let r = ok(&db, "mentisdb_append", json!({"chain_key": "c", "thought_type": "Decision", "content": "x", "metadata": {"a": 1}, "client": "cursor"}));
    assert_eq!(r["warnings"], json!(["unknown field `client` ignored", "unknown field `metadata` ignored"]));
    let r = ok(&db, "mentisdb_append", json!({"chain_key": "c", "thought_type": "Decision", "content": "y"}));
    assert!(r.get("warnings").is_none(), "no warnings key without unknown fields: {r}");
    // A reply with warnings of its own keeps them and gets these after.
    ok(&db, "mentisdb_upsert_agent", json!({"chain_key": "c", "agent_id": "ada"}));
    let r = ok(&db, "mentisdb_upload_skill", json!({"chain_key": "c", "agent_id": "ada", "content": "# Deploy\n\nSteps.\n", "origin": "web"}));
    assert_eq!(r["warnings"].as_array().unwrap().last().unwrap(), "unknown field `origin` ignored", "{r}");
}

#[test]
fn numbers_and_booleans_sent_as_strings_are_read() {
    let (db, _) = fresh();
    for i in 0..7 {
        ok(&db, "mentisdb_append", json!({"chain_key": "c", "thought_type": "Decision", "content": format!("note {i}")}));
    }
    let r = ok(&db, "mentisdb_search", json!({"chain_key": "c", "limit": "5"}));
    assert_eq!(r["thoughts"].as_array().unwrap().len(), 5, "{r}");
    let r = ok(&db, "mentisdb_append", json!({"chain_key": "c", "thought_type": "Decision", "content": "z", "importance": " 0.25 "}));
    assert_eq!(r["thought"]["importance"], 0.25);
    let e = db.call("mentisdb_search", json!({"chain_key": "c", "limit": "five"})).unwrap_err();
    assert!(e.to_string().contains("limit"), "{e}");
}

#[test]
fn a_number_moved_into_its_range_is_named_in_warnings() {
    let (db, _) = fresh();
    let r = ok(&db, "mentisdb_append", json!({"chain_key": "c", "thought_type": "Decision", "content": "x", "importance": 7, "confidence": -1}));
    assert_eq!(r["thought"]["importance"], 1.0);
    assert_eq!(r["warnings"], json!(["`importance` 7 is outside 0..=1; 1 was stored", "`confidence` -1 is outside 0..=1; 0 was stored"]));
    let r = ok(&db, "mentisdb_ranked_search", json!({"chain_key": "c", "text": "x", "limit": 500, "graph": {"max_depth": 99}}));
    assert_eq!(r["warnings"], json!(["`limit` 500 is outside 1..=100; 100 was used", "`graph.max_depth` 99 is outside 0..=8; 8 was used"]));
    let r = ok(&db, "mentisdb_append_batch", json!({"chain_key": "c", "thoughts": [
        {"thought_type": "Decision", "content": "a"}, {"thought_type": "Decision", "content": "b", "importance": 2}]}));
    assert_eq!(r["warnings"], json!(["`thoughts[1].importance` 2 is outside 0..=1; 1 was stored"]));
    let r = ok(&db, "mentisdb_recent_context", json!({"chain_key": "c", "last_n": 0, "unheard_of": true}));
    assert_eq!(r["warnings"], json!(["unknown field `unheard_of` ignored", "`last_n` 0 is outside 1..=1000; 1 was used"]));
    let r = ok(&db, "mentisdb_search", json!({"chain_key": "c", "limit": 3}));
    assert!(r.get("warnings").is_none(), "values in range say nothing: {r}");
}

#[test]
fn a_bootstrap_that_will_not_write_still_checks_its_arguments() {
    let (db, _) = fresh();
    ok(&db, "mentisdb_bootstrap", json!({"chain_key": "c", "content": "first"}));
    for (args, field) in [
        (json!({"chain_key": "c", "content": "  "}), "content"),
        (json!({"chain_key": "c", "content": "x", "tags": ["\u{84}"]}), "tags"),
        (json!({"chain_key": "c", "content": "x", "agent_name": "a\u{7}b"}), "agent_name"),
    ] {
        let e = db.call("mentisdb_bootstrap", args).unwrap_err();
        assert!(e.to_string().contains(field), "{e}");
    }
    assert_eq!(ok(&db, "mentisdb_bootstrap", json!({"chain_key": "c", "content": "again"}))["bootstrapped"], false);
}
