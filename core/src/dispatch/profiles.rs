//! Tool profiles: which tools a host offers an agent.
//!
//! Every tool an agent is offered costs context in every conversation (its
//! description and argument schema). An agent that only remembers and
//! recalls needs a handful, so a host may offer a profile: `all` (every
//! tool, the default), `core` ([`CORE_TOOLS`]) or a list of tool names. A
//! profile decides what is *listed*; calls are answered for every tool.

use super::{canonical_tool_name, families, tool_specs, ToolSpec};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// The `core` profile: what an agent needs to remember and recall.
pub const CORE_TOOLS: &[&str] = &[
    "mentisdb_skill_md",
    "mentisdb_list_chains",
    "mentisdb_bootstrap",
    "mentisdb_append",
    "mentisdb_append_retrospective",
    "mentisdb_ranked_search",
    "mentisdb_recent_context",
    "mentisdb_get_thought",
    "mentisdb_head",
];

/// A profile as configured: `all`, `core`, or tool names (MentisDB 0.10
/// aliases accepted) separated by commas or spaces. The tools it lists, in
/// [`super::tool_specs`] order, or a one-line error naming what is wrong.
pub fn select_tools(profile: &str) -> Result<Vec<&'static str>, String> {
    let profile = profile.trim();
    let all: Vec<&'static str> = families().iter().flat_map(|f| f.iter()).map(|t| t.name).collect();
    if profile.is_empty() || profile.eq_ignore_ascii_case("all") {
        return Ok(all);
    }
    let wanted: Vec<&'static str> = if profile.eq_ignore_ascii_case("core") {
        CORE_TOOLS.to_vec()
    } else {
        let mut names = Vec::new();
        for given in profile.split([',', ' ']).map(str::trim).filter(|n| !n.is_empty()) {
            let name = canonical_tool_name(given).ok_or_else(|| format!("unknown tool '{}' in the tool profile; give all, core, or tool names from tools/list", crate::text::truncate_chars(given, 64)))?;
            names.push(name);
        }
        names
    };
    Ok(all.into_iter().filter(|n| wanted.contains(n)).collect())
}

/// The specs of the tools `names` (in [`tool_specs`] order) as one listing
/// shows them to an agent, which reads the whole listing at once: a field's
/// description or an enum that an earlier tool of the listing already
/// states is not repeated (the search filters are shared by seven tools,
/// the thought types by eleven), and a shared type that is a whole earlier
/// tool's arguments (a batch item: `mentisdb_append`'s) is named, not
/// spelled out again. What a tool accepts does not change.
pub fn listed_tools(names: &[&str]) -> Vec<ToolSpec> {
    let mut stated = Stated::default();
    tool_specs()
        .into_iter()
        .filter(|s| names.contains(&s.name))
        .map(|mut spec| {
            let whole = without_defs(&spec.input_schema);
            stated.name_whole_tools(&mut spec.input_schema);
            stated.drop_repeats(&mut spec.input_schema, None);
            stated.tools.push((whole, spec.name));
            spec
        })
        .collect()
}

/// What earlier tools of a listing stated: `(field name, description)`
/// pairs, enums, and each tool's whole argument schema (without `$defs`).
#[derive(Default)]
struct Stated {
    descriptions: BTreeSet<(String, String)>,
    enums: BTreeSet<String>,
    tools: Vec<(Value, &'static str)>,
}

/// A schema without its `$defs` (what a shared type's body holds of it).
fn without_defs(schema: &Value) -> Value {
    let mut s = schema.clone();
    if let Some(obj) = s.as_object_mut() {
        obj.remove("$defs");
    }
    s
}

impl Stated {
    /// Replaces each shared type of `schema` that is exactly an earlier
    /// listed tool's arguments by `{"type": "object", "description": "<tool>'s
    /// arguments."}`, then drops the shared types nothing refers to any more.
    fn name_whole_tools(&mut self, schema: &mut Value) {
        let Some(Value::Object(defs)) = schema.get_mut("$defs") else { return };
        let mut named = false;
        for def in defs.values_mut() {
            if let Some((_, tool)) = self.tools.iter().find(|(whole, _)| whole == def) {
                *def = serde_json::json!({"type": "object", "description": format!("{tool}'s arguments.")});
                named = true;
            }
        }
        if !named {
            return;
        }
        // Referred to from outside `$defs`, or from a def that is.
        loop {
            let text = {
                let mut rest = schema.clone();
                let defs = rest.get("$defs").cloned().unwrap_or_default();
                if let Some(obj) = rest.as_object_mut() {
                    obj.remove("$defs");
                }
                format!("{rest}{}", defs.as_object().map(|d| d.values().map(Value::to_string).collect::<String>()).unwrap_or_default())
            };
            let Some(Value::Object(defs)) = schema.get_mut("$defs") else { return };
            let unused: Vec<String> = defs.keys().filter(|k| !text.contains(&format!("\"#/$defs/{k}\""))).cloned().collect();
            if unused.is_empty() {
                break;
            }
            for k in unused {
                defs.remove(&k);
            }
        }
        if schema.get("$defs").and_then(Value::as_object).is_some_and(Map::is_empty) {
            schema.as_object_mut().map(|o| o.remove("$defs"));
        }
    }

    /// Drops from `schema` (the schema of the field `name`, if any) what
    /// was stated before, and records the rest as stated.
    fn drop_repeats(&mut self, schema: &mut Value, name: Option<&str>) {
        let Value::Object(obj) = schema else {
            if let Value::Array(items) = schema {
                items.iter_mut().for_each(|v| self.drop_repeats(v, None));
            }
            return;
        };
        if let (Some(name), Some(Value::String(d))) = (name, obj.get("description")) {
            if !self.descriptions.insert((name.to_string(), d.clone())) {
                obj.remove("description");
            }
        }
        // Only lists long enough to be worth a second look (thought types, roles, relation kinds).
        if let Some(Value::Array(values)) = obj.get("enum").filter(|e| e.as_array().is_some_and(|a| a.len() >= 6)) {
            if !self.enums.insert(Value::Array(values.clone()).to_string()) {
                obj.remove("enum");
            }
        }
        for (key, value) in obj.iter_mut() {
            match (key.as_str(), value) {
                ("properties" | "$defs", Value::Object(fields)) => self.drop_named(fields),
                (_, v) => self.drop_repeats(v, None),
            }
        }
    }

    fn drop_named(&mut self, fields: &mut Map<String, Value>) {
        for (field, schema) in fields.iter_mut() {
            self.drop_repeats(schema, Some(field));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_states_each_field_description_and_long_enum_once() {
        let all = select_tools("all").unwrap();
        let listed = listed_tools(&all);
        let full = tool_specs();
        assert_eq!(listed.len(), full.len());
        let text = |specs: &[ToolSpec]| serde_json::to_string(specs).unwrap();
        let count = |hay: &str, needle: &str| hay.matches(needle).count();
        let filter = "\"description\":\"Any of these tags (case-insensitive).\"";
        assert!(count(&text(&full), filter) > 1);
        assert_eq!(count(&text(&listed), filter), 1, "the shared filter's description once");
        assert_eq!(count(&text(&listed), "\"LessonLearned\""), 1, "the thought types once");
        for (l, f) in listed.iter().zip(&full) {
            // Same fields, same required ones: only words were dropped.
            assert_eq!(l.input_schema["properties"].as_object().map(|p| p.keys().collect::<Vec<_>>()), f.input_schema["properties"].as_object().map(|p| p.keys().collect::<Vec<_>>()), "{}", l.name);
            assert_eq!(l.input_schema.get("required"), f.input_schema.get("required"), "{}", l.name);
        }
        // A batch item is mentisdb_append's arguments: named when that tool is listed, else spelled out.
        let batch = |l: &[ToolSpec]| l.iter().find(|s| s.name == "mentisdb_append_batch").unwrap().input_schema.to_string();
        assert!(batch(&listed).contains("mentisdb_append's arguments.") && !batch(&listed).contains("FencingArg"), "{}", batch(&listed));
        assert!(batch(&listed_tools(&["mentisdb_append_batch"])).contains("\"fencing\""));
        // A listing of one tool states everything it has.
        let search = listed_tools(&["mentisdb_search"]);
        assert_eq!(search[0].input_schema, full.iter().find(|s| s.name == "mentisdb_search").unwrap().input_schema);
    }

    #[test]
    fn profiles_name_tools_that_exist() {
        assert_eq!(select_tools("all").unwrap().len(), tool_specs().len());
        assert_eq!(select_tools("").unwrap().len(), tool_specs().len());
        let core = select_tools("CORE").unwrap();
        assert_eq!(core.len(), CORE_TOOLS.len(), "every core tool exists");
        assert_eq!(select_tools("thoughtchain_append, mentisdb_search").unwrap(), ["mentisdb_append", "mentisdb_search"]);
        let e = select_tools("mentisdb_append,mentisdb_nope").unwrap_err();
        assert!(e.contains("'mentisdb_nope'") && !e.contains('\n'), "{e}");
    }
}
