//! Presence through the dispatcher: a beat says who is active and what it
//! is doing, never grows the chain, is seen by every engine on one shared
//! store, and ages out of the listing window.

use crate::common;

use common::{err, fresh, ids, ok, T0};
use mentisdb_core::{DbConfig, FixedClock, MentisDb, Storage};
use serde_json::json;
use std::sync::Arc;

#[test]
fn beats_show_who_is_doing_what_without_growing_the_chain() {
    let (db, storage) = fresh();
    ok(&db, "mentisdb_append", json!({"chain_key": "team", "thought_type": "Finding", "content": "the build is green"}));
    let first = ok(&db, "mentisdb_heartbeat", json!({"chain_key": "team", "agent_id": "ada", "session_id": "s1", "tool": "claude-code", "current_file": "src/auth.rs", "current_action": "editing"}));
    assert_eq!(first["first_seen"], first["last_seen"]);
    ok(&db, "mentisdb_heartbeat", json!({"chain_key": "team", "agent_id": "bob", "display_name": "Bob", "current_action": "reviewing"}));
    let again = ok(&db, "mentisdb_heartbeat", json!({"chain_key": "team", "agent_id": "ada", "session_id": "s1", "current_action": "testing"}));
    assert_eq!(again["first_seen"], first["first_seen"], "the session's first beat is kept");
    assert_ne!(again["last_seen"], first["last_seen"]);
    assert_eq!(again["current_file"], serde_json::Value::Null, "a beat states what the agent does now");

    let listed = ok(&db, "mentisdb_list_presence", json!({"chain_key": "team"}));
    let agents: Vec<(&str, &str)> = listed["agents"].as_array().unwrap().iter().map(|a| (a["agent_id"].as_str().unwrap(), a["current_action"].as_str().unwrap())).collect();
    assert_eq!(agents, [("ada", "testing"), ("bob", "reviewing")], "latest beat first");
    assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": "team"}))["thought_count"], 1, "beats are not thoughts");
    assert_eq!(ok(&db, "mentisdb_list_presence", json!({"chain_key": "other"}))["agents"], json!([]), "presence is per chain");

    // Another engine on the same store (another daemon on one database) sees them.
    let other = MentisDb::open(storage.clone() as Arc<dyn Storage>, Arc::new(FixedClock::new(T0 + 60_000, 1000)), ids(), DbConfig::default()).unwrap().0;
    assert_eq!(ok(&other, "mentisdb_list_presence", json!({"chain_key": "team"}))["agents"].as_array().unwrap().len(), 2);
    // Past the window they are no longer listed; a day on, a beat removes them.
    assert_eq!(ok(&other, "mentisdb_list_presence", json!({"chain_key": "team", "since_ms": 1_000}))["agents"], json!([]));
    let later = MentisDb::open(storage.clone() as Arc<dyn Storage>, Arc::new(FixedClock::new(T0 + 86_400_000 + 60_000, 1000)), ids(), DbConfig::default()).unwrap().0;
    ok(&later, "mentisdb_heartbeat", json!({"chain_key": "team", "agent_id": "cy"}));
    assert_eq!(storage.list("presence/").unwrap().len(), 1, "stale entries are removed by the next beat");
}

#[test]
fn a_chain_keeps_at_most_its_session_cap_dropping_the_least_recently_seen() {
    let (db, storage) = fresh();
    let cap = mentisdb_core::presence::MAX_SESSIONS;
    ok(&db, "mentisdb_append", json!({"chain_key": "busy", "thought_type": "Finding", "content": "here"}));
    for i in 0..cap + 4 {
        ok(&db, "mentisdb_heartbeat", json!({"chain_key": "busy", "agent_id": format!("agent-{i}")}));
    }
    assert_eq!(storage.list("presence/").unwrap().len(), cap);
    let listed = ok(&db, "mentisdb_list_presence", json!({"chain_key": "busy"}));
    let agents: Vec<&str> = listed["agents"].as_array().unwrap().iter().map(|a| a["agent_id"].as_str().unwrap()).collect();
    assert_eq!(agents.len(), cap);
    assert!(!agents.contains(&"agent-3") && agents.contains(&"agent-4") && agents[0] == format!("agent-{}", cap + 3), "the four seen first are gone");
}

#[test]
fn bad_beats_are_refused_with_the_field_named() {
    let (db, _) = fresh();
    for (args, needle) in [
        (json!({"agent_id": " "}), "agent_id"),
        (json!({"agent_id": "ada", "current_file": "x".repeat(600)}), "current_file"),
        (json!({"agent_id": "ada", "current_action": "a\u{7}b"}), "current_action"),
        (json!({"agent_id": "ada", "current_action": "using AKIAIOSFODNN7EXAMPLE"}), "current_action"),
    ] {
        let e = err(&db, "mentisdb_heartbeat", args.clone());
        assert!(e.to_string().contains(needle), "{args}: {e}");
    }
    let clamped = ok(&db, "mentisdb_list_presence", json!({"since_ms": 999_999_999_999u64}));
    assert!(clamped["warnings"].to_string().contains("since_ms"), "{clamped}");
}

#[test]
fn a_beat_needs_its_chain_and_deleting_the_chain_removes_its_presence() {
    let (db, storage) = fresh();
    let e = err(&db, "mentisdb_heartbeat", json!({"chain_key": "fresh", "agent_id": "ada"}));
    assert_eq!(e.kind(), mentisdb_core::ErrorKind::NotFound, "{e}");
    assert_eq!(ok(&db, "mentisdb_list_chains", json!({}))["chains"], json!([]), "a beat creates no chain");
    for chain in ["fresh", "kept"] {
        ok(&db, "mentisdb_append", json!({"chain_key": chain, "thought_type": "Finding", "content": "here"}));
    }
    ok(&db, "mentisdb_heartbeat", json!({"chain_key": "fresh", "agent_id": "ada"}));
    ok(&db, "mentisdb_heartbeat", json!({"chain_key": "kept", "agent_id": "bob"}));
    ok(&db, "mentisdb_delete_chain", json!({"chain_key": "fresh"}));
    assert_eq!(ok(&db, "mentisdb_list_presence", json!({"chain_key": "fresh"}))["agents"], json!([]));
    assert_eq!(storage.list("presence/").unwrap().len(), 1, "only the kept chain's entry is left");
}
