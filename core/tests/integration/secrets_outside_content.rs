//! Secrets in fields that are not free text (ids, names, labels of
//! thoughts and of the agent registry) are refused with a clear error and
//! nothing is written; content, tags and concepts are redacted instead.

use crate::common;

use common::{fresh, ok};
use serde_json::json;

const SECRET: &str = concat!("ghp_", "1234567890abcdefghijklmnopqrstuvwxyz");

#[test]
fn registry_fields_and_thought_labels_refuse_secrets() {
    let (db, _) = fresh();
    ok(&db, "mentisdb_upsert_agent", json!({"chain_key": "c", "agent_id": "ada", "display_name": "Ada"}));
    let refused = [
        ("mentisdb_upsert_agent", json!({"chain_key": "c", "agent_id": "ada", "description": format!("token {SECRET}")}), "description"),
        ("mentisdb_upsert_agent", json!({"chain_key": "c", "agent_id": "ada", "agent_owner": SECRET}), "agent_owner"),
        ("mentisdb_set_agent_description", json!({"chain_key": "c", "agent_id": "ada", "description": SECRET}), "description"),
        ("mentisdb_add_agent_alias", json!({"chain_key": "c", "agent_id": "ada", "alias": SECRET}), "alias"),
        ("mentisdb_upsert_entity_type", json!({"chain_key": "c", "entity_type": SECRET}), "entity_type"),
        ("mentisdb_append", json!({"chain_key": "c", "agent_id": "ada", "thought_type": "Finding", "content": "x", "session_id": SECRET}), "session_id"),
        ("mentisdb_append", json!({"chain_key": "c", "agent_id": "ada", "thought_type": "Finding", "content": "x", "entity_type": SECRET}), "entity_type"),
    ];
    let registry = || ok(&db, "mentisdb_list_agent_registry", json!({"chain_key": "c"}));
    let before = (registry(), ok(&db, "mentisdb_head", json!({"chain_key": "c"})));
    for (tool, args, field) in refused {
        let e = db.call(tool, args).expect_err(tool);
        let message = e.to_string();
        assert!(message.contains(&format!("`{field}`")) && message.contains("github_token") && !message.contains(SECRET), "{tool}: {message}");
    }
    assert_eq!((registry(), ok(&db, "mentisdb_head", json!({"chain_key": "c"}))), before, "nothing written");
    // A new chain's key names its file: a credential there is refused too.
    let chains = || ok(&db, "mentisdb_list_chains", json!({}));
    let before = chains();
    let e = db.call("mentisdb_append", json!({"chain_key": format!("keys-{SECRET}"), "agent_id": "ada", "thought_type": "Finding", "content": "x"})).expect_err("a credential in a new chain's key");
    assert!(e.to_string().contains("`chain_key`") && !e.to_string().contains(SECRET), "{e}");
    assert_eq!(chains(), before, "no chain created");
    // Content is redacted, not refused.
    let appended = ok(&db, "mentisdb_append", json!({"chain_key": "c", "agent_id": "ada", "thought_type": "Finding", "content": format!("use {SECRET}")}));
    assert_eq!(appended["thought"]["content"], "use [REDACTED:github_token]");
}
