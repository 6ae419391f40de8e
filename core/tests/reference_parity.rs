//! Reply shapes MentisDB 0.9.7 and 0.10.10 clients read, as those versions
//! write them (tests/compat/recorded-0.10.10.json and the 0.9.7 fixture
//! hold the reference's own answers): a genesis thought's `prev_hash` is
//! `""`, agent and key statuses and algorithms are spelled by their variant
//! names, and an agent's former display names (its id first) are aliases.

mod common;

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
