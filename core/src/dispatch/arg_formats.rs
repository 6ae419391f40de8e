//! What an argument's name promises, written into every tool's JSON Schema.
//!
//! An argument name means one thing in every tool: `agent_id` is always a
//! key (not blank, no control characters), `since` is always an RFC 3339
//! timestamp. The argument types leave those rules to the code that checks
//! them ([`crate::limits`], [`crate::timestamp`]); this table states them in
//! the schemas MCP `tools/list` and `/openapi.json` serve, so a client (or a
//! schema-driven fuzzer) learns them before it calls. The schema tests and
//! the daemon's schemathesis run check that the table and the checks agree.

#[cfg(test)]
use serde_json::{json, Value};

/// Not blank and no control characters: the keys [`crate::limits::check_key`] checks.
const KEY: &str = r"^[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$";
/// No control characters (blank allowed: a blank `chain_key` is the default chain).
#[cfg(test)]
const NO_CONTROL: &str = r"^[^\u0000-\u001f\u007f-\u009f]*$";
/// No control characters but newline and tab: the labels [`crate::limits`] checks.
#[cfg(test)]
const LABEL: &str = r"^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*$";

/// An RFC 3339 date-time as [`crate::timestamp`] parses it (February 29 is
/// allowed in every year here; the parser refuses it outside leap years).
#[cfg(test)]
const RFC3339: &str = r"^\d{4}-((0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])|(0[13-9]|1[0-2])-(29|30)|(0[13578]|1[02])-31|02-29)[Tt ]([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$";

/// A time as [`crate::args::Instant`] reads it from a string: RFC 3339, or
/// 10 to 14 digits of milliseconds since 1970 (the schema says no more than
/// that; the reader takes any time of years 0 to 9999).
#[cfg(test)]
const INSTANT: &str = r"^(?:\d{10,14}|\d{4}-((0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])|(0[13-9]|1[0-2])-(29|30)|(0[13578]|1[02])-31|02-29)[Tt ]([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d))$";

/// Argument name -> the JSON Schema keywords it adds (string keywords apply
/// to strings only, `items` to each element of a list). `required` says the
/// field is a plain `string` (not nullable): a required key must not be blank.
#[cfg(test)]
fn rule(name: &str, required: bool) -> Option<Value> {
    Some(match name {
        "agent_id" if required => json!({"pattern": KEY}),
        "key" | "holder" | "subject" | "predicate" | "fact_id" | "review_id" if required => json!({"pattern": KEY}),
        "claim_key" => json!({"pattern": KEY}),
        "reviewer" | "requester" => json!({"pattern": NO_CONTROL}),
        "reviewers" => json!({"items": {"pattern": KEY}, "maxItems": crate::reviews::MAX_REVIEWERS}),
        "comment" | "session_id" | "tool" | "current_file" | "current_action" => json!({"pattern": LABEL}),
        "object" if required => json!({"pattern": r"\S", "maxLength": crate::facts::MAX_OBJECT_CHARS}),
        "valid_from" | "valid_to" | "point_in_time" => json!({"pattern": INSTANT, "minimum": crate::args::EARLIEST_MS, "maximum": crate::args::LATEST_MS}),
        "prefix" => json!({"pattern": NO_CONTROL}),
        "agent_id" => json!({"pattern": NO_CONTROL}),
        "content" if required => json!({"pattern": r"\S"}),
        "agent_ids" | "agent_names" | "agent_owners" | "skill_ids" | "names" | "triggers_any" | "uploaded_by_agent_ids" | "uploaded_by_agent_names" | "uploaded_by_agent_owners" => json!({"items": {"pattern": LABEL}}),
        "default_agent_id" => json!({"pattern": NO_CONTROL}),
        "text" => json!({"pattern": LABEL}),
        "skill_id" | "key_id" | "alias" | "source_chain_key" | "target_chain_key" | "branch_chain_key" | "branch_thought_id" => json!({"pattern": KEY}),
        "chain_key" => json!({"pattern": NO_CONTROL}),
        "agent_name" | "agent_owner" | "display_name" | "description" | "reason" | "entity_type" => json!({"pattern": LABEL}),
        "tags" | "concepts" | "tags_any" | "concepts_any" => json!({"items": {"pattern": LABEL}}),
        "since" | "until" | "as_of" => json!({"format": "date-time", "pattern": RFC3339}),
        "public_key_bytes" => json!({"minItems": 32, "maxItems": 32}),
        _ => return None,
    })
}

/// Adds the rules of [`rule`] to the properties of `schema` and of its
/// `$defs`, keeping any keyword a field already states for itself.
#[cfg(test)]
pub(crate) fn apply(schema: &mut Value) {
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        for (name, prop) in props.iter_mut() {
            if let Some(extra) = rule(name, prop.get("type") == Some(&json!("string"))) {
                merge(prop, extra);
            }
        }
    }
    if let Some(defs) = schema.get_mut("$defs").and_then(Value::as_object_mut) {
        defs.values_mut().for_each(apply);
    }
}

#[cfg(test)]
fn merge(target: &mut Value, extra: Value) {
    let (Some(t), Value::Object(extra)) = (target.as_object_mut(), extra) else { return };
    for (k, v) in extra {
        match t.get_mut(&k) {
            Some(existing @ Value::Object(_)) => merge(existing, v),
            Some(_) => {}
            None => {
                t.insert(k, v);
            }
        }
    }
}

/// Field-level rules the name table cannot state (one tool's field is
/// stricter than the same name elsewhere), for `#[schemars(pattern(...))]`.
pub(crate) const NOT_BLANK: &str = KEY;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_reach_defs_and_nullable_strings() {
        let mut s = json!({"properties": {"since": {"type": ["string", "null"]}, "limit": {"type": "integer"}},
                           "$defs": {"R": {"properties": {"skill_id": {"type": "string"}}}}});
        apply(&mut s);
        assert_eq!(s["properties"]["since"]["format"], "date-time");
        assert!(s["properties"]["limit"].get("pattern").is_none());
        assert_eq!(s["$defs"]["R"]["properties"]["skill_id"]["pattern"], KEY);
        let mut own = json!({"properties": {"reason": {"type": "string", "pattern": NOT_BLANK}, "tags": {"type": "array", "items": {"type": "string"}}}});
        apply(&mut own);
        assert_eq!(own["properties"]["reason"]["pattern"], NOT_BLANK, "a field's own rule wins");
        assert_eq!(own["properties"]["tags"]["items"], json!({"type": "string", "pattern": LABEL}));
    }
}
