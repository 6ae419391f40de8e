//! The tool schemas served to MCP clients list the allowed values of every
//! enum argument, and a value outside them is refused with a message that
//! names every accepted value; clients send the same JSON strings as before.

use crate::common;
use common::*;
use mentisdb_core::{tool_specs, ThoughtRole, ThoughtType};
use serde_json::{json, Value};

/// The argument schema of `tool`.
fn schema(tool: &str) -> Value {
    tool_specs().into_iter().find(|t| t.name == tool).unwrap_or_else(|| panic!("no tool {tool}")).input_schema
}

/// Follows a local `$ref` (`#/$defs/Name`) inside `root`, and the non-null
/// branch of an optional field's `anyOf`.
fn resolve<'a>(root: &'a Value, s: &'a Value) -> &'a Value {
    if let Some(branches) = s.get("anyOf").and_then(Value::as_array) {
        let branch = branches.iter().find(|b| b.get("type") != Some(&json!("null"))).expect("a non-null branch");
        return resolve(root, branch);
    }
    match s.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let name = r.strip_prefix("#/$defs/").unwrap_or_else(|| panic!("unexpected $ref {r}"));
            &root["$defs"][name]
        }
        None => s,
    }
}

/// The allowed string values of the schema at `path` (property names, with
/// `[]` stepping into array items), without the `null` of optional fields.
fn allowed(tool: &str, path: &[&str]) -> Vec<String> {
    let root = schema(tool);
    let mut s = &root;
    for step in path {
        s = resolve(&root, s);
        s = if *step == "[]" { &s["items"] } else { &s["properties"][*step] };
        assert!(!s.is_null(), "{tool}: no schema at {path:?}\n{root:#}");
    }
    let s = resolve(&root, s);
    let values = s["enum"].as_array().unwrap_or_else(|| panic!("{tool} {path:?} lists no allowed values: {s}"));
    values.iter().filter_map(|v| v.as_str().map(str::to_string)).collect()
}

fn names<T: Copy>(all: &[T], name: impl Fn(T) -> &'static str) -> Vec<String> {
    all.iter().map(|v| name(*v).to_string()).collect()
}

#[test]
fn append_schema_lists_every_thought_type_and_role() {
    let types = names(ThoughtType::ALL, ThoughtType::as_str);
    assert_eq!(types.len(), 31);
    assert_eq!(types[28..], ["Reframe", "Goal", "LLMExtracted"]);
    assert!(types.contains(&"LessonLearned".to_string()) && types.contains(&"PreferenceUpdate".to_string()));
    assert_eq!(allowed("mentisdb_append", &["thought_type"]), types);
    assert_eq!(allowed("mentisdb_append_retrospective", &["thought_type"]), types);
    assert_eq!(allowed("mentisdb_search", &["thought_types", "[]"]), types);
    let roles = names(ThoughtRole::ALL, ThoughtRole::as_str);
    assert_eq!(roles, ["Memory", "WorkingMemory", "Summary", "Compression", "Checkpoint", "Handoff", "Audit", "Retrospective"]);
    assert_eq!(allowed("mentisdb_append", &["role"]), roles);
    assert_eq!(allowed("mentisdb_traverse_thoughts", &["roles", "[]"]), roles);
    let kinds = allowed("mentisdb_append", &["relations", "[]", "kind"]);
    assert_eq!(kinds.len(), 12);
    assert!(kinds.contains(&"Supersedes".to_string()));
}

#[test]
fn every_enum_argument_lists_its_values() {
    let cases: &[(&str, &[&str], &[&str])] = &[
        ("mentisdb_bootstrap", &["storage_adapter"], &["binary", "jsonl"]),
        ("mentisdb_traverse_thoughts", &["direction"], &["forward", "backward"]),
        ("mentisdb_traverse_thoughts", &["anchor_boundary"], &["genesis", "head"]),
        ("mentisdb_traverse_thoughts", &["time_window", "unit"], &["seconds", "milliseconds"]),
        ("mentisdb_upsert_agent", &["status"], &["active", "revoked"]),
        ("mentisdb_add_agent_key", &["algorithm"], &["ed25519"]),
        ("mentisdb_upload_skill", &["format"], &["markdown", "md", "json"]),
        ("mentisdb_read_skill", &["format"], &["markdown", "md", "json"]),
        ("mentisdb_search_skill", &["statuses", "[]"], &["active", "deprecated", "revoked"]),
        ("mentisdb_search_skill", &["formats", "[]"], &["markdown", "md", "json"]),
        ("mentisdb_ranked_search", &["graph", "mode"], &["both", "outgoing", "incoming", "off"]),
        ("mentisdb_resolve_context", &["direction"], &["outgoing", "incoming", "both"]),
    ];
    for (tool, path, want) in cases {
        assert_eq!(allowed(tool, path), *want, "{tool} {path:?}");
    }
}

#[test]
fn append_arguments_are_defined_once_and_required_where_they_were() {
    let append = schema("mentisdb_append");
    let retro = schema("mentisdb_append_retrospective");
    let fields = [
        "chain_key", "agent_id", "agent_name", "agent_owner", "content", "importance", "confidence", "tags", "concepts", "refs", "relations",
        "session_id", "thought_id", "signing_key_id", "thought_signature", "thought_type",
    ];
    for f in fields {
        assert!(!append["properties"][f].is_null(), "append lacks {f}: {append:#}");
        assert!(!retro["properties"][f].is_null(), "retrospective lacks {f}: {retro:#}");
    }
    assert!(!append["properties"]["role"].is_null());
    assert!(retro["properties"]["role"].is_null(), "the retrospective's role is fixed");
    let required = |s: &Value| {
        let mut r: Vec<String> = s["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
        r.sort();
        r
    };
    assert_eq!(required(&append), ["content", "thought_type"]);
    assert_eq!(required(&retro), ["content"]);
}

#[test]
fn values_outside_the_list_are_refused_naming_every_accepted_value() {
    let (db, _) = fresh();
    let e = err(&db, "mentisdb_append", json!({"chain_key": "s", "thought_type": "Insigth", "content": "typo"}));
    assert_eq!(e.kind(), "invalid_arguments");
    let msg = e.to_string();
    assert!(msg.starts_with("invalid arguments for mentisdb_append: unknown thought_type 'Insigth'; expected one of: "), "{msg}");
    for t in ThoughtType::ALL {
        assert!(msg.contains(t.as_str()), "{msg} does not name {t}");
    }
    let e = err(&db, "mentisdb_search", json!({"chain_key": "s", "roles": ["Memory", "Boss"]})).to_string();
    assert!(e.contains("unknown role 'Boss'; expected one of: Memory, WorkingMemory, Summary, Compression, Checkpoint, Handoff, Audit, Retrospective"), "{e}");
    let e = err(&db, "mentisdb_ranked_search", json!({"chain_key": "s", "text": "x", "graph": {"mode": "sideways"}})).to_string();
    assert!(e.contains("unknown graph.mode 'sideways'; expected one of: both, outgoing, incoming, off"), "{e}");
    let e = err(&db, "mentisdb_search_skill", json!({"statuses": ["gone"]}));
    assert_eq!(e.kind(), "invalid_arguments");
    assert!(e.to_string().contains("expected one of: active, deprecated, revoked"), "{e}");
}

#[test]
fn clients_send_the_same_spellings_as_before() {
    let (db, _) = fresh();
    // Case-insensitive names and the historical aliases are still accepted.
    ok(&db, "mentisdb_bootstrap", json!({"chain_key": "s", "content": "x", "storage_adapter": "JSONL"}));
    let t = ok(&db, "mentisdb_append", json!({"chain_key": "s", "thought_type": "Decision", "role": "Audit", "content": "y",
        "relations": [{"kind": "Supports", "target_index": 0}]}));
    assert_eq!(t["thought"]["role"], "Audit");
    assert_eq!(t["thought"]["relations"][0]["kind"], "Supports");
    ok(&db, "mentisdb_traverse_thoughts", json!({"chain_key": "s", "anchor_boundary": "HEAD", "direction": "Backward",
        "time_window": {"start": 0, "delta": 1, "unit": "ms"}}));
    ok(&db, "mentisdb_upsert_agent", json!({"chain_key": "s", "agent_id": "a", "status": "disabled"}));
    let r = ok(&db, "mentisdb_get_agent", json!({"chain_key": "s", "agent_id": "a"}));
    assert_eq!(r["agent"]["status"], "Revoked");
    ok(&db, "mentisdb_ranked_search", json!({"chain_key": "s", "text": "x", "graph": {"mode": " None "}}));
    ok(&db, "mentisdb_resolve_context", json!({"chain_key": "s", "thought_index": 1, "direction": "in"}));
    ok(&db, "mentisdb_search_skill", json!({"statuses": [" Active"], "formats": ["MD"]}));
}
