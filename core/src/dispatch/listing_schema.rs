//! The argument schemas an agent is shown (`tools/list`, `list-tools`):
//! every tool's full schema (`input_schemas.json`, what OpenAPI serves and
//! schemathesis generates from) without what costs an agent context and
//! tells it nothing it acts on. Every listed tool is in every conversation,
//! so each byte here is paid again and again.
//!
//! Dropped: `pattern` (the daemon checks text itself and says what is
//! wrong), `format` (`uint32` and the like), an integer's `minimum: 0`
//! (every count is one; other bounds stay), `not` (which
//! arguments exclude each other; the daemon names the conflict), `title` (the
//! Rust type's name), the top-level description and those of shared types
//! under `$defs` (the tool's and the field's descriptions say what they
//! are for), fields marked `deprecated` (accepted from 0.10 clients, doing
//! nothing), and `null` as an
//! alternative type or enum value (an optional field is simply left out). Names, types, enums, bounds, `required` and field
//! descriptions stay.
//!
//! Shared with `core/build.rs`, which embeds the listing form: this file
//! uses only `serde_json`.

use serde_json::{Map, Value};

/// `schema` (a tool's full argument schema) as agents are shown it.
pub(crate) fn for_listing(schema: Value) -> Value {
    let mut schema = compact(schema);
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("description");
    }
    schema
}

/// Keywords an agent does not act on. `not` states which arguments
/// exclude each other (one anchor of several): the description says so
/// in words and the daemon names the conflict.
const DROPPED: &[&str] = &["pattern", "format", "title", "not"];

/// A schema without the [`DROPPED`] keywords and `null` alternatives.
fn compact(value: Value) -> Value {
    match value {
        Value::Object(obj) => {
            let mut out = Map::with_capacity(obj.len());
            for (key, v) in obj {
                if DROPPED.contains(&key.as_str()) {
                    continue;
                }
                let v = match (key.as_str(), v) {
                    // Maps of names to schemas: the names are not keywords.
                    // A deprecated field (accepted for 0.10 clients, doing nothing) is not shown.
                    ("properties", Value::Object(named)) => Value::Object(named.into_iter().filter(|(_, s)| s.get("deprecated") != Some(&Value::Bool(true))).map(|(n, s)| (n, compact(s))).collect()),
                    // A shared type's own doc: the fields that use it say what they are for.
                    ("$defs", Value::Object(named)) => Value::Object(named.into_iter().map(|(n, s)| (n, without_description(compact(s)))).collect()),
                    (_, v) => compact(v),
                };
                out.insert(key, v);
            }
            drop_null_alternative(&mut out);
            if out.get("type").and_then(Value::as_str) == Some("integer") && out.get("minimum").and_then(Value::as_u64) == Some(0) {
                out.remove("minimum");
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(compact).collect()),
        other => other,
    }
}

fn without_description(mut schema: Value) -> Value {
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("description");
    }
    schema
}

/// `"type": ["string", "null"]` → `"string"`; `null` out of an `enum`;
/// `anyOf: [X, {"type": "null"}]` → X.
fn drop_null_alternative(obj: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = obj.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.pop().expect("one type");
            obj.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = obj.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    let is_null = |a: &Value| a.get("type").and_then(Value::as_str) == Some("null");
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alts)) = obj.get_mut(key) {
            if alts.len() > 2 {
                alts.retain(|a| !is_null(a));
            }
        }
    }
    let single = match obj.get("anyOf") {
        Some(Value::Array(alts)) if alts.len() == 2 => {
            let non_null: Vec<&Value> = alts.iter().filter(|a| !is_null(a)).collect();
            (non_null.len() == 1).then(|| non_null[0].clone())
        }
        _ => None,
    };
    if let (Some(Value::Object(alt)), true) = (single, obj.contains_key("anyOf")) {
        obj.remove("anyOf");
        for (k, v) in alt {
            obj.entry(k).or_insert(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_an_agent_does_not_act_on_is_dropped_and_the_rest_kept() {
        let full = json!({
            "title": "AppendArgs", "description": "Arguments of `mentisdb_append`.", "type": "object",
            "required": ["content"],
            "properties": {
                "content": {"type": "string", "pattern": "^.+$", "description": "The text."},
                "chain_key": {"type": ["string", "null"], "pattern": "^[^\\u0000]*$"},
                "limit": {"type": "integer", "format": "uint32", "minimum": 0},
                "tree_size": {"type": "integer", "minimum": 1},
                "scope": {"enum": ["user", "agent", null], "type": "string"},
                "graph": {"anyOf": [{"$ref": "#/$defs/GraphArgs"}, {"type": "null"}], "description": "Expansion."},
                "title": {"type": "string", "description": "a field named title stays"}
            },
            "not": {"required": ["a", "b"]}
        });
        let listed = for_listing(full);
        assert_eq!(listed, json!({
            "type": "object",
            "required": ["content"],
            "properties": {
                "content": {"type": "string", "description": "The text."},
                "chain_key": {"type": "string"},
                "limit": {"type": "integer"},
                "tree_size": {"type": "integer", "minimum": 1},
                "scope": {"enum": ["user", "agent"], "type": "string"},
                "graph": {"$ref": "#/$defs/GraphArgs", "description": "Expansion."},
                "title": {"type": "string", "description": "a field named title stays"}
            }
        }));
    }
}
