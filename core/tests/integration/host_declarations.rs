//! The hosts' typed declarations cannot drift from the tools.
//!
//! The browser host declares the objects its typed methods take and return
//! as TypeScript interfaces (`host-wasm/src/types.rs`); the WASI component
//! declares WIT records (`host-wasi/wit/mentisdb.wit`). This test reads both
//! texts and compares them, field by field, with each tool's argument
//! schema (`ToolSpec::input_schema`) and reply type (`output_schema`,
//! `mentisdb_core::dispatch::replies`):
//!
//! - every tool has an entry in [`TS`] and in [`WIT`], or is listed as
//!   reached only through the untyped `call` (so a new tool must be decided);
//! - each declared interface / record has exactly the schema's properties,
//!   WIT names being the snake_case names in kebab-case (`thought_id` ->
//!   `thought-id`), except the fields of [`ABSENT`], each with its reason.
//!
//! Adding a field to a tool's arguments or reply without the TypeScript and
//! WIT sides fails here.

use mentisdb_core::{output_schema, tool_specs};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// How a host declares one side (arguments or reply) of a tool.
#[derive(Clone, Copy)]
enum Decl {
    /// An interface (TS) or record (WIT) holding every property.
    Object(&'static str),
    /// The host passes or returns this one property as a plain value
    /// (e.g. `recentContext()` returns the `prompt` string).
    Unwrapped(&'static str),
    /// WIT: the parameters of this exported function are the properties.
    Params(&'static str),
    /// The schema has no properties (e.g. `listChains()`).
    Nothing,
}

use Decl::*;

/// `(tool, arguments, reply)` as the browser host's typed methods declare them.
const TS: &[(&str, Decl, Decl)] = &[
    ("mentisdb_bootstrap", Object("BootstrapArgs"), Object("BootstrapResult")),
    ("mentisdb_append", Object("AppendArgs"), Object("AppendResult")),
    ("mentisdb_append_retrospective", Object("RetrospectiveArgs"), Object("AppendResult")),
    ("mentisdb_search", Object("SearchArgs"), Object("SearchResult")),
    ("mentisdb_memory_markdown", Object("SearchArgs"), Unwrapped("markdown")),
    ("mentisdb_recent_context", Object("RecentContextArgs"), Unwrapped("prompt")),
    ("mentisdb_traverse_thoughts", Object("TraverseArgs"), Object("TraverseResult")),
    ("mentisdb_get_thought", Object("GetThoughtArgs"), Object("GetThoughtResult")),
    ("mentisdb_head", Unwrapped("chain_key"), Object("HeadResult")),
    ("mentisdb_list_chains", Nothing, Object("ListChainsResult")),
];

/// `(tool, arguments, reply)` as the WASI component's typed exports declare them.
const WIT: &[(&str, Decl, Decl)] = &[
    ("mentisdb_bootstrap", Object("bootstrap-request"), Object("bootstrap-result")),
    ("mentisdb_append", Object("append-request"), Unwrapped("thought")),
    ("mentisdb_search", Object("search-request"), Unwrapped("thoughts")),
    ("mentisdb_head", Params("head"), Object("head-info")),
    ("mentisdb_recent_context", Params("recent-context"), Unwrapped("prompt")),
];

/// Nested types: `(tool whose schema holds it, in its reply?, schema $defs name, TS interface, WIT record)`.
const NESTED: &[(&str, bool, &str, &str, Option<&str>)] = &[
    ("mentisdb_append", true, "Thought", "Thought", Some("thought")),
    ("mentisdb_append", true, "ThoughtRelation", "ThoughtRelation", Some("relation")),
    ("mentisdb_append", false, "RelationArg", "RelationArg", Some("relation-request")),
    ("mentisdb_traverse_thoughts", false, "TimeWindow", "TimeWindow", None),
    ("mentisdb_traverse_thoughts", true, "Cursor", "Cursor", None),
    ("mentisdb_list_chains", true, "ChainInfo", "ChainInfo", None),
    ("mentisdb_append", true, "Redaction", "Redaction", None),
];

/// Tools the browser host reaches only through `db.call(tool, args)`
/// (typed `Promise<any>`), the WASI component only through `memory.call`.
const UNTYPED_TS: &[&str] = &[
    "mentisdb_get_genesis_thought",
    "mentisdb_list_agents", "mentisdb_get_agent", "mentisdb_list_agent_registry", "mentisdb_upsert_agent",
    "mentisdb_set_agent_description", "mentisdb_add_agent_alias", "mentisdb_add_agent_key", "mentisdb_revoke_agent_key",
    "mentisdb_disable_agent",
    "mentisdb_skill_md", "mentisdb_list_skills", "mentisdb_skill_manifest", "mentisdb_upload_skill", "mentisdb_search_skill",
    "mentisdb_read_skill", "mentisdb_skill_versions", "mentisdb_deprecate_skill", "mentisdb_revoke_skill", "mentisdb_delete_skill",
    "mentisdb_ranked_search", "mentisdb_context_bundles", "mentisdb_resolve_context",
    "mentisdb_forget_thought", "mentisdb_branch_from", "mentisdb_merge_chains", "mentisdb_delete_chain", "mentisdb_catch_up",
    // Webhooks are delivered by the daemon only; other hosts answer `unavailable`.
    "mentisdb_register_webhook", "mentisdb_list_webhooks", "mentisdb_delete_webhook", "mentisdb_import_memory_markdown", "mentisdb_extract_memories",
    "mentisdb_lexical_search", "mentisdb_federated_search", "mentisdb_summary_candidates",
    "mentisdb_list_entity_types", "mentisdb_upsert_entity_type",
    // The browser moves chain objects as bytes with exportChain/importChain (same core operations).
    "mentisdb_export_chain", "mentisdb_import_chain",
    "mentisdb_checkpoint", "mentisdb_inclusion_proof", "mentisdb_consistency_proof", "mentisdb_identity",
    // The daemon side of sync: replicas call them through `sync()`, not directly.
    "mentisdb_chain_records", "mentisdb_append_batch",
    "mentisdb_rebuild_vectors",
    "mentisdb_claim", "mentisdb_renew_claim", "mentisdb_release_claim", "mentisdb_list_claims",
    "mentisdb_record_fact", "mentisdb_query_facts", "mentisdb_close_fact", "mentisdb_fact_conflicts",
    "mentisdb_request_review", "mentisdb_decide_review", "mentisdb_list_reviews",
    "mentisdb_heartbeat", "mentisdb_list_presence",
];

/// See [`UNTYPED_TS`]: the WASI component types only the everyday five.
const UNTYPED_WIT_EXTRA: &[&str] = &[
    "mentisdb_append_retrospective", "mentisdb_list_chains", "mentisdb_memory_markdown", "mentisdb_get_thought",
    "mentisdb_traverse_thoughts",
];

/// Fields a declaration leaves out on purpose: `(host, tool or $defs name, field, reason)`.
const ABSENT: &[(&str, &str, &str, &str)] = &[
    (
        "wit",
        "mentisdb_append",
        "head_hash",
        "the typed append returns the stored thought; right after the append the head hash is that thought's own `hash`",
    ),
    ("wit", "mentisdb_append", "leaf_hash", "the typed append returns the stored thought; its leaf hash is SHA-256(0x00 || its `hash` bytes), and `memory.call` returns it"),
    ("wit", "mentisdb_append", "replay", "the typed append returns the stored thought (the same one for a replay); `memory.call` returns the full reply"),
    ("wit", "mentisdb_append", "redactions", "the typed append returns the stored thought, whose text shows each `[REDACTED:<kind>]`; `memory.call` returns the list"),
    ("wit", "mentisdb_search", "include_invalidated", "the typed search hides superseded, corrected and invalidated thoughts (the default); `memory.call` takes the flag"),
    ("wit", "mentisdb_search", "include_superseded", "an alias of include_invalidated, through `memory.call`"),
    ("wit", "mentisdb_recent_context", "include_invalidated", "the typed recent-context hides superseded, corrected and invalidated thoughts (the default); `memory.call` takes the flag"),
    ("wit", "mentisdb_recent_context", "include_superseded", "an alias of include_invalidated, through `memory.call`"),
    ("wit", "mentisdb_recent_context", "agent_id", "the typed recent-context covers every agent; `memory.call` takes the filter"),
    ("wit", "Thought", "source_episode", "always null (MentisDB 0.10's episode label, which no API sets); a WIT record has no null-only type, and `memory.call` returns it"),
    ("wit", "mentisdb_bootstrap", "available_skills", "the typed bootstrap reports the chain; `memory.call` returns the skills too (a WASI plugin reads skills through `call`)"),
];

fn read(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Drops `/* */` and `//` comments.
fn strip_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        rest = rest[i..].find("*/").map_or("", |j| &rest[i + j + 2..]);
    }
    out.push_str(rest);
    out.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// Splits `body` at `seps` outside `<>`, `()`, `{}` and `[]`.
fn split_top(body: &str, seps: &[char]) -> Vec<String> {
    let (mut depth, mut cur, mut out) = (0i32, String::new(), Vec::new());
    for ch in body.chars() {
        match ch {
            '<' | '(' | '{' | '[' => depth += 1,
            '>' | ')' | '}' | ']' => depth -= 1,
            _ => {}
        }
        if depth == 0 && seps.contains(&ch) {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(ch);
        }
    }
    out.push(cur);
    out.into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

/// The text between the `{` at `open` and its matching `}`.
fn braced(text: &str, open: usize) -> &str {
    let mut depth = 0;
    for (i, ch) in text[open..].char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &text[open + 1..open + i];
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced braces");
}

/// Member names of a TS or WIT member list (`name?: type` / `name: type`).
fn member_names(body: &str, seps: &[char]) -> BTreeSet<String> {
    split_top(body, seps)
        .iter()
        .filter(|m| !m.starts_with('['))
        .map(|m| m.split([':', '?']).next().unwrap().trim().to_string())
        .collect()
}

/// `export interface Name [extends A, B] { ... }` -> member names, inherited ones included.
fn ts_interfaces(text: &str) -> BTreeMap<String, BTreeSet<String>> {
    let text = strip_comments(text);
    let mut own = BTreeMap::new();
    let mut parents: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (at, _) in text.match_indices("export interface ") {
        let head_end = at + text[at..].find('{').expect("interface body");
        let head = text[at + "export interface ".len()..head_end].trim();
        let (name, extends) = head.split_once(" extends ").unwrap_or((head, ""));
        parents.insert(name.trim().into(), extends.split(',').map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect());
        own.insert(name.trim().to_string(), member_names(braced(&text, head_end), &[';', '\n']));
    }
    let mut all = BTreeMap::new();
    for name in own.keys() {
        let mut fields = BTreeSet::new();
        let mut todo = vec![name.clone()];
        while let Some(n) = todo.pop() {
            fields.extend(own.get(&n).unwrap_or_else(|| panic!("interface {n} not declared")).iter().cloned());
            // Parents declared elsewhere (`Error`) add nothing to compare.
            todo.extend(parents[&n].iter().filter(|p| own.contains_key(*p)).cloned());
        }
        all.insert(name.clone(), fields);
    }
    all
}

/// WIT `record name { ... }` -> field names, and `name: func(params)` -> parameter names.
fn wit_items(text: &str) -> BTreeMap<String, BTreeSet<String>> {
    let text = strip_comments(text);
    let mut out = BTreeMap::new();
    for (at, _) in text.match_indices("record ") {
        let open = at + text[at..].find('{').expect("record body");
        let name = text[at + "record ".len()..open].trim().to_string();
        out.insert(name, member_names(braced(&text, open), &[',']));
    }
    for (at, _) in text.match_indices(": func(") {
        let name = text[..at].rsplit(|c: char| c.is_whitespace()).next().unwrap().to_string();
        let params = &text[at + ": func(".len()..];
        let params = &params[..params.find(')').unwrap()];
        out.insert(format!("func {name}"), member_names(params, &[',']));
    }
    out
}

fn properties(schema: &Value) -> BTreeSet<String> {
    schema.get("properties").and_then(Value::as_object).map(|p| p.keys().cloned().collect()).unwrap_or_default()
}

/// Collects differences, and which [`ABSENT`] entries were needed.
#[derive(Default)]
struct Checker {
    problems: Vec<String>,
    absences_used: BTreeSet<usize>,
}

impl Checker {
    /// Compares `expected` (schema properties) with `declared` (mapped back
    /// to snake_case).
    fn compare(&mut self, host: &str, owner: &str, what: &str, expected: &BTreeSet<String>, declared: Option<&BTreeSet<String>>) {
        let Some(declared) = declared else {
            self.problems.push(format!("{host}: {what} (for {owner}) is not declared"));
            return;
        };
        for f in expected.difference(declared) {
            match ABSENT.iter().position(|(h, o, field, _)| *h == host && *o == owner && field == f) {
                Some(i) => {
                    self.absences_used.insert(i);
                }
                None => self.problems.push(format!("{host}: {what} (for {owner}) lacks `{f}`")),
            }
        }
        for f in declared.difference(expected) {
            self.problems.push(format!("{host}: {what} (for {owner}) declares `{f}`, which the tool does not have"));
        }
    }

    /// Checks one schema (a tool's arguments or reply, or a nested type) against its declaration.
    fn side(&mut self, host: &str, owner: &str, schema: &Value, decl: Decl, items: &BTreeMap<String, BTreeSet<String>>) {
        let expected = properties(schema);
        let snake = |set: &BTreeSet<String>| set.iter().map(|f| f.replace('-', "_")).collect::<BTreeSet<_>>();
        match decl {
            Object(name) => self.compare(host, owner, name, &expected, items.get(name).map(snake).as_ref()),
            Params(func) => {
                let key = format!("func {func}");
                self.compare(host, owner, &key, &expected, items.get(&key).map(snake).as_ref())
            }
            Unwrapped(field) => self.compare(host, owner, &format!("the plain `{field}` value"), &expected, Some(&BTreeSet::from([field.to_string()]))),
            Nothing => self.compare(host, owner, "no arguments", &expected, Some(&BTreeSet::new())),
        }
    }
}

/// The JSON Schema of `tool`'s reply type.
fn reply_schema(tool: &str) -> Value {
    output_schema(tool).unwrap_or_else(|| panic!("no reply schema for {tool}"))
}

/// Every difference between the tools and the two hosts' declarations.
fn drift(ts_text: &str, wit_text: &str) -> Vec<String> {
    let ts = ts_interfaces(ts_text);
    let wit = wit_items(wit_text);
    let specs = tool_specs();
    let spec = |tool: &str| specs.iter().find(|s| s.name == tool).unwrap_or_else(|| panic!("no tool {tool}"));
    let mut c = Checker::default();

    for s in &specs {
        let in_ts = TS.iter().any(|(t, ..)| *t == s.name) as u8 + UNTYPED_TS.contains(&s.name) as u8;
        let in_wit = WIT.iter().any(|(t, ..)| *t == s.name) as u8 + (UNTYPED_TS.contains(&s.name) || UNTYPED_WIT_EXTRA.contains(&s.name)) as u8;
        if in_ts != 1 || in_wit != 1 {
            c.problems.push(format!("{}: give it exactly one TS and one WIT entry (typed, or untyped through `call`)", s.name));
        }
    }
    for (host, table, items) in [("ts", TS, &ts), ("wit", WIT, &wit)] {
        for (tool, args, reply) in table {
            let s = spec(tool);
            c.side(host, tool, &s.input_schema, *args, items);
            c.side(host, tool, &reply_schema(tool), *reply, items);
        }
    }
    for (tool, in_reply, def, ts_name, wit_name) in NESTED {
        let s = spec(tool);
        let schema = if *in_reply { &reply_schema(tool) } else { &s.input_schema };
        let def_schema = schema.pointer(&format!("/$defs/{def}")).unwrap_or_else(|| panic!("{tool}: no $defs/{def}"));
        c.side("ts", def, def_schema, Object(ts_name), &ts);
        if let Some(w) = wit_name {
            c.side("wit", def, def_schema, Object(w), &wit);
        }
    }
    for (i, (host, owner, field, _)) in ABSENT.iter().enumerate() {
        if !c.absences_used.contains(&i) {
            c.problems.push(format!("{host}: `{field}` of {owner} is allowed to be absent but is declared (or gone): drop it from ABSENT"));
        }
    }
    c.problems
}

#[test]
fn typescript_and_wit_declare_every_field_of_the_tools() {
    let problems = drift(&read("host-wasm/src/types.rs"), &read("host-wasi/wit/mentisdb.wit"));
    assert!(problems.is_empty(), "host declarations drifted from the tools:\n{}", problems.join("\n"));
}

#[test]
fn a_missing_field_is_reported() {
    let ts = read("host-wasm/src/types.rs");
    let wit = read("host-wasi/wit/mentisdb.wit");
    let ts_cut = ts.replace("target_index?: number | null; ", "");
    let wit_cut = wit.replace("        /// Session this thought belongs to.\n        session-id: option<string>,\n", "");
    assert_ne!((&ts, &wit), (&ts_cut, &wit_cut), "the fixtures moved: update the cuts");
    let problems = drift(&ts_cut, &wit_cut);
    assert!(problems.iter().any(|p| p.starts_with("ts: ThoughtRelation") && p.contains("`target_index`")), "{problems:#?}");
    assert!(problems.iter().any(|p| p.starts_with("wit: append-request") && p.contains("`session_id`")), "{problems:#?}");
    let extra = drift(&ts.replace("export interface Cursor { index: number;", "export interface Cursor { index: number; page: number;"), &wit);
    assert!(extra.iter().any(|p| p.contains("declares `page`")), "{extra:#?}");
}
