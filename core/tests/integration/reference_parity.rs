//! Reply shapes MentisDB 0.9.7 and 0.10.10 clients read, as those versions
//! write them (tests/compat/recorded-0.10.10.json and the 0.9.7 fixture
//! hold the reference's own answers): a genesis thought's `prev_hash` is
//! `""`, agent and key statuses and algorithms are spelled by their variant
//! names, an agent's former display names (its id first) are aliases, and
//! a context bundle's support names its `path` and the relation kinds on it.

use crate::common;

use common::{fresh, ok};
use serde_json::json;

#[test]
fn genesis_prev_hash_is_an_empty_string_and_the_next_links_to_it() {
    let (db, _) = fresh();
    let first = ok(&db, "mentisdb_append", json!({"chain_key": "c", "thought_type": "Idea", "content": "one"}));
    assert_eq!(first["thought"]["prev_hash"], "");
    let second = ok(&db, "mentisdb_append", json!({"chain_key": "c", "thought_type": "Idea", "content": "two"}));
    assert_eq!(second["thought"]["prev_hash"], first["thought"]["hash"]);
    let genesis = ok(&db, "mentisdb_get_genesis_thought", json!({"chain_key": "c"}));
    assert_eq!(genesis["thought"]["prev_hash"], "");
}

#[test]
fn statuses_and_algorithms_are_spelled_as_the_reference_spells_them() {
    let (db, _) = fresh();
    let a = ok(&db, "mentisdb_upsert_agent", json!({"chain_key": "c", "agent_id": "ops"}));
    assert_eq!(a["agent"]["status"], "Active");
    let key = ed25519_dalek::SigningKey::from_bytes(&[7u8; 32]).verifying_key().to_bytes();
    let k = ok(&db, "mentisdb_add_agent_key", json!({"chain_key": "c", "agent_id": "ops", "key_id": "k1", "algorithm": "ED25519", "public_key_bytes": key.to_vec()}));
    assert_eq!((&k["agent"]["public_keys"][0]["algorithm"], &k["agent"]["public_keys"][0]["status"]), (&json!("Ed25519"), &json!("Active")));
    let d = ok(&db, "mentisdb_upsert_agent", json!({"chain_key": "c", "agent_id": "ops", "status": "revoked"}));
    assert_eq!(d["agent"]["status"], "Revoked", "any spelling is read");
}

#[test]
fn former_display_names_are_aliases() {
    let (db, _) = fresh();
    let a = ok(&db, "mentisdb_upsert_agent", json!({"chain_key": "c", "agent_id": "ops", "display_name": "Ops Bot"}));
    assert_eq!(a["agent"]["aliases"], json!(["ops"]), "a new record's first name is its id");
    let a = ok(&db, "mentisdb_upsert_agent", json!({"chain_key": "c", "agent_id": "ops", "display_name": "OPS BOT"}));
    assert_eq!((a["agent"]["display_name"].as_str(), &a["agent"]["aliases"]), (Some("OPS BOT"), &json!(["ops"])), "a new spelling is not another name");
    let a = ok(&db, "mentisdb_upsert_agent", json!({"chain_key": "c", "agent_id": "ops", "display_name": "Operator"}));
    assert_eq!(a["agent"]["aliases"], json!(["ops", "OPS BOT"]));
    let a = ok(&db, "mentisdb_add_agent_alias", json!({"chain_key": "c", "agent_id": "ops", "alias": "operator"}));
    assert_eq!(a["agent"]["aliases"], json!(["ops", "OPS BOT"]), "an alias that is the display name in another case is not added");
}

#[test]
fn bundle_support_carries_its_path_and_the_relations_walked_in_snake_case() {
    let (db, _) = fresh();
    let append = |body: serde_json::Value| ok(&db, "mentisdb_append", body)["thought"].clone();
    let root = append(json!({"chain_key": "c", "thought_type": "Decision", "content": "deploy with a canary rollout"}));
    let cause = append(json!({"chain_key": "c", "thought_type": "Finding", "content": "an outage last spring",
        "relations": [{"kind": "CausedBy", "target_id": root["id"]}]}));
    append(json!({"chain_key": "c", "thought_type": "Insight", "content": "smaller blast radius",
        "relations": [{"kind": "Supports", "target_id": cause["id"]}]}));
    append(json!({"chain_key": "c", "thought_type": "Idea", "content": "write the runbook", "refs": [0]}));
    let r = ok(&db, "mentisdb_context_bundles", json!({"chain_key": "c", "text": "canary rollout", "graph": {"max_depth": 2}}));
    let bundle = &r["bundles"][0];
    assert_eq!(bundle["seed"]["locator"]["thought_index"], 0, "{r}");
    let support = bundle["support"].as_array().unwrap();
    let by_index = |i: u64| support.iter().find(|s| s["thought"]["index"] == i).unwrap_or_else(|| panic!("no support {i}: {r}"));
    let visited = |s: &serde_json::Value| s["path"]["visited"].as_array().unwrap().iter().map(|l| l["thought_index"].as_u64().unwrap()).collect::<Vec<_>>();
    let one = by_index(1);
    assert_eq!((visited(one), &one["path"]["depth"], &one["relation_kinds"]), (vec![0, 1], &json!(1), &json!(["caused_by"])));
    let two = by_index(2);
    assert_eq!((visited(two), &two["path"]["depth"], &two["relation_kinds"]), (vec![0, 1, 2], &json!(2), &json!(["caused_by", "supports"])));
    assert_eq!(two["path"]["seed"]["thought_index"], 0);
    let by_ref = by_index(3);
    assert_eq!((visited(by_ref), &by_ref["relation_kinds"]), (vec![0, 3], &json!([])), "a ref is not a relation");
    assert_eq!(by_ref["via"]["kind"], "ref", "our own `via` still names the edge");
}
