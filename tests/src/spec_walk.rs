//! The tool conformance sequence, as data: a walk over the MCP spec's chain
//! and agent tools that every transport must answer identically (the core
//! dispatcher, the WASI component, the daemon's MCP/REST, the browser build).
//!
//! A [`Step`] is a tool name, its JSON arguments, and what must come back:
//! field checks on a success (by JSON pointer), or an error's stable kind and
//! a fragment of its message. Values captured from earlier results (`${name}`)
//! are substituted into later arguments and expectations. A host only has to
//! supply one function, `call(tool, args) -> Result<Value, CallError>`:
//!
//! ```
//! use mentisdb_tests::spec_walk::{run, spec_walk, CallError};
//! use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, MentisDb, SequentialIds};
//! use std::sync::Arc;
//! let (db, _) = MentisDb::open(Arc::new(MemoryStorage::new()), Arc::new(FixedClock::new(1_795_000_000_000, 1)),
//!     Arc::new(SequentialIds::default()), DbConfig::default()).unwrap();
//! run(&spec_walk("walk"), |tool, args| db.call(tool, args).map_err(|e| CallError { kind: e.kind().to_string(), message: e.to_string() }));
//! ```

use serde_json::{json, Value};
use std::collections::BTreeMap;

/// An error as a transport reports it: the stable kind and the human message.
#[derive(Debug, Clone, PartialEq)]
pub struct CallError {
    pub kind: String,
    pub message: String,
}

/// One check on a successful result; paths are JSON pointers (`/thought/index`).
#[derive(Debug, Clone)]
pub enum Check {
    /// The value at the path equals this one (after `${name}` substitution).
    Eq(&'static str, Value),
    /// The array at the path has this many elements.
    Len(&'static str, usize),
    /// The string at the path contains this fragment.
    Contains(&'static str, &'static str),
    /// The value at the path is a non-empty string.
    NonEmptyString(&'static str),
}

/// What a step must return.
#[derive(Debug, Clone)]
pub enum Expect {
    Ok(Vec<Check>),
    Err { kind: &'static str, message_contains: &'static str },
}

/// One tool call and its expected outcome.
#[derive(Debug, Clone)]
pub struct Step {
    pub tool: &'static str,
    pub args: Value,
    pub expect: Expect,
    /// `(name, pointer)`: remember the value at `pointer` as `${name}`.
    pub capture: Vec<(&'static str, &'static str)>,
}

impl Step {
    fn ok(tool: &'static str, args: Value) -> Step {
        Step { tool, args, expect: Expect::Ok(Vec::new()), capture: Vec::new() }
    }

    fn err(tool: &'static str, args: Value, kind: &'static str, message_contains: &'static str) -> Step {
        Step { tool, args, expect: Expect::Err { kind, message_contains }, capture: Vec::new() }
    }

    fn check(mut self, c: Check) -> Step {
        if let Expect::Ok(checks) = &mut self.expect {
            checks.push(c);
        }
        self
    }

    fn eq(self, path: &'static str, v: Value) -> Step {
        self.check(Check::Eq(path, v))
    }

    fn len(self, path: &'static str, n: usize) -> Step {
        self.check(Check::Len(path, n))
    }

    fn contains(self, path: &'static str, fragment: &'static str) -> Step {
        self.check(Check::Contains(path, fragment))
    }

    fn capture(mut self, name: &'static str, path: &'static str) -> Step {
        self.capture.push((name, path));
        self.check(Check::NonEmptyString(path))
    }
}

/// The skill the walk uploads (Markdown with front matter).
pub const SKILL_MD: &str = "---\nname: Sync Files\ndescription: Make appends durable\ntags: [storage]\n---\n# Sync Files\n\nCall fsync before acknowledging an append.\n";

/// The walk, on a fresh store, over chain `chain` (which must not exist yet).
pub fn spec_walk(chain: &str) -> Vec<Step> {
    vec![
        // A chain that does not exist yet is not found (as in MentisDB 0.10.10).
        Step::err("mentisdb_head", json!({"chain_key": chain}), "not_found", "not found"),
        Step::ok("mentisdb_bootstrap", json!({"chain_key": chain, "content": "Memory for the spec walk: decisions, mistakes, lessons.", "tags": ["bootstrap"]}))
            .eq("/bootstrapped", json!(true))
            .eq("/thought_count", json!(1))
            .capture("h0", "/head_hash"),
        Step::ok("mentisdb_bootstrap", json!({"chain_key": chain, "content": "A second bootstrap must not write."}))
            .eq("/bootstrapped", json!(false))
            .eq("/thought_count", json!(1))
            .eq("/head_hash", json!("${h0}")),
        Step::ok("mentisdb_append", json!({
            "chain_key": chain, "agent_id": "planner", "agent_name": "Planner", "agent_owner": "ops",
            "thought_type": "Decision", "importance": 0.9, "confidence": 0.8,
            "tags": ["storage", "wasi"], "concepts": ["durability"],
            "content": "Store chains as append-only files and fsync before acknowledging."
        }))
            .eq("/thought/index", json!(1))
            .eq("/thought/thought_type", json!("Decision"))
            .eq("/thought/role", json!("Memory"))
            .eq("/thought/agent_name", json!("Planner"))
            .eq("/thought/prev_hash", json!("${h0}"))
            .eq("/thought/tags", json!(["storage", "wasi"]))
            .capture("h1", "/thought/hash")
            .capture("id1", "/thought/id"),
        Step::ok("mentisdb_append", json!({
            "chain_key": chain, "agent_id": "planner", "thought_type": "Mistake", "refs": [1],
            "content": "Forgot to sync the directory after creating the chain file."
        }))
            .eq("/thought/index", json!(2))
            .eq("/thought/refs", json!([1]))
            .eq("/thought/prev_hash", json!("${h1}"))
            .capture("h2", "/head_hash"),
        Step::ok("mentisdb_append_retrospective", json!({
            "chain_key": chain, "agent_id": "reviewer", "refs": [2], "importance": 0.95,
            "content": "Sync the parent directory whenever a file is created."
        }))
            .eq("/thought/index", json!(3))
            .eq("/thought/role", json!("Retrospective"))
            .eq("/thought/thought_type", json!("LessonLearned"))
            .capture("h3", "/head_hash"),
        Step::err("mentisdb_append", json!({"chain_key": chain, "thought_type": "Insigth", "content": "typo"}), "invalid_arguments", "expected one of: PreferenceUpdate"),
        Step::err("mentisdb_append", json!({"chain_key": chain, "thought_type": "Insight", "role": "Boss", "content": "bad role"}), "invalid_arguments", "Retrospective"),
        Step::err("mentisdb_append", json!({"chain_key": chain, "thought_type": "Insight", "refs": [99], "content": "dangling ref"}), "append_rejected", "99"),
        Step::err("mentisdb_append", json!({"chain_key": chain, "thought_type": "Insight"}), "invalid_arguments", "content"),
        Step::ok("mentisdb_search", json!({"chain_key": chain, "text": "DIRECTORY"})).len("/thoughts", 2).eq("/thoughts/0/index", json!(2)),
        Step::ok("mentisdb_search", json!({"chain_key": chain, "thought_types": ["Mistake", "LessonLearned"], "limit": 1}))
            .len("/thoughts", 1)
            .eq("/thoughts/0/index", json!(3)),
        Step::ok("mentisdb_search", json!({"chain_key": chain, "agent_names": ["planner"], "min_importance": 0.85})).len("/thoughts", 1).eq("/thoughts/0/hash", json!("${h1}")),
        Step::ok("mentisdb_search", json!({"chain_key": chain, "tags_any": ["WASI"], "roles": ["Memory"]})).len("/thoughts", 1),
        Step::ok("mentisdb_get_thought", json!({"chain_key": chain, "thought_id": "${id1}"})).eq("/thought/hash", json!("${h1}")),
        Step::ok("mentisdb_get_thought", json!({"chain_key": chain, "thought_hash": "${h2}"})).eq("/thought/index", json!(2)),
        Step::err("mentisdb_get_thought", json!({"chain_key": chain, "thought_index": 99}), "not_found", "index 99"),
        Step::err("mentisdb_get_thought", json!({"chain_key": chain}), "invalid_arguments", "exactly one"),
        Step::ok("mentisdb_get_genesis_thought", json!({"chain_key": chain}))
            .eq("/thought/index", json!(0))
            .eq("/thought/thought_type", json!("Summary"))
            .eq("/thought/role", json!("Checkpoint"))
            .eq("/thought/prev_hash", json!("")),
        Step::ok("mentisdb_traverse_thoughts", json!({"chain_key": chain, "anchor_boundary": "genesis", "direction": "forward", "chunk_size": 2}))
            .len("/thoughts", 2)
            .eq("/has_more", json!(true))
            .eq("/thoughts/0/index", json!(0)),
        Step::ok("mentisdb_traverse_thoughts", json!({"chain_key": chain, "anchor_index": 3, "direction": "backward", "chunk_size": 1}))
            .len("/thoughts", 1)
            .eq("/thoughts/0/index", json!(2)),
        Step::ok("mentisdb_head", json!({"chain_key": chain}))
            .eq("/thought_count", json!(4))
            .eq("/head_hash", json!("${h3}"))
            .eq("/latest_thought/index", json!(3))
            .eq("/integrity_ok", json!(true))
            .contains("/storage_location", ".mdb"),
        Step::ok("mentisdb_recent_context", json!({"chain_key": chain, "last_n": 2}))
            .contains("/prompt", "Sync the parent directory")
            .contains("/prompt", "Forgot to sync"),
        Step::ok("mentisdb_memory_markdown", json!({"chain_key": chain})).contains("/markdown", "Store chains as append-only files"),
        Step::ok("mentisdb_list_chains", json!({})).eq("/chain_keys", json!([chain])).eq("/chains/0/thought_count", json!(4)).eq("/chains/0/storage_adapter", json!("binary")),
        Step::ok("mentisdb_list_agents", json!({"chain_key": chain})).len("/agents", 3),
        Step::ok("mentisdb_upsert_agent", json!({"chain_key": chain, "agent_id": "planner", "description": "Plans the storage work."}))
            .eq("/agent/agent_id", json!("planner"))
            .eq("/agent/description", json!("Plans the storage work."))
            .eq("/agent/thought_count", json!(2))
            .eq("/agent/status", json!("Active")),
        Step::ok("mentisdb_add_agent_alias", json!({"chain_key": chain, "agent_id": "planner", "alias": "architect"})).eq("/agent/aliases", json!(["architect"])),
        Step::ok("mentisdb_search", json!({"chain_key": chain, "agent_names": ["Architect"]})).len("/thoughts", 2),
        Step::ok("mentisdb_upload_skill", json!({"chain_key": chain, "agent_id": "planner", "content": SKILL_MD}))
            .eq("/skill/name", json!("Sync Files"))
            .eq("/skill/status", json!("active"))
            .eq("/skill/version_count", json!(1))
            .capture("skill", "/skill/skill_id"),
        Step::ok("mentisdb_read_skill", json!({"chain_key": chain, "skill_id": "${skill}"})).contains("/content", "fsync before acknowledging"),
        Step::ok("mentisdb_search_skill", json!({"chain_key": chain, "text": "durable"})).len("/skills", 1).eq("/skills/0/skill_id", json!("${skill}")),
        Step::ok("mentisdb_list_skills", json!({"chain_key": chain})).len("/skills", 1),
        Step::err("mentisdb_upload_skill", json!({"chain_key": chain, "agent_id": "nobody", "content": SKILL_MD}), "not_found", "nobody"),
        Step::ok("mentisdb_get_agent", json!({"chain_key": chain, "agent_id": "planner"})).eq("/agent/display_name", json!("Planner")),
        Step::err("mentisdb_get_agent", json!({"chain_key": chain, "agent_id": "nobody"}), "not_found", "nobody"),
        Step::ok("mentisdb_disable_agent", json!({"chain_key": chain, "agent_id": "reviewer"})).eq("/agent/status", json!("Revoked")),
        Step::err("mentisdb_append", json!({"chain_key": chain, "agent_id": "reviewer", "thought_type": "Insight", "content": "after disable"}), "append_rejected", "disabled"),
        Step::ok("mentisdb_list_agent_registry", json!({"chain_key": chain})).len("/agents", 3),
        Step::err("mentisdb_no_such_tool", json!({}), "unknown_tool", "mentisdb_no_such_tool"),
        Step::ok("mentisdb_head", json!({"chain_key": chain})).eq("/thought_count", json!(4)).eq("/head_hash", json!("${h3}")),
        // Claims: one holder at a time, fencing tokens, refusals as answers.
        Step::ok("mentisdb_claim", json!({"chain_key": chain, "key": "compaction", "holder": "planner", "ttl_ms": 600000}))
            .eq("/ok", json!(true)).eq("/claim/fencing_token", json!(1)).eq("/deduped", json!(false)).eq("/record_index", json!(4)),
        Step::ok("mentisdb_claim", json!({"chain_key": chain, "key": "compaction", "holder": "architect", "ttl_ms": 600000}))
            .eq("/ok", json!(false)).eq("/reason", json!("held")).eq("/held_by", json!("planner")),
        Step::ok("mentisdb_append", json!({"chain_key": chain, "agent_id": "planner", "thought_type": "ActionTaken", "content": "Compacted segment 7.", "fencing": {"key": "compaction", "token": 1}}))
            .eq("/thought/tags", json!(["mentisdb:fence:1:compaction"])),
        Step::err("mentisdb_append", json!({"chain_key": chain, "agent_id": "planner", "thought_type": "ActionTaken", "content": "stale", "fencing": {"key": "compaction", "token": 2}}), "conflict", "holds it with token 1"),
        Step::ok("mentisdb_list_claims", json!({"chain_key": chain})).len("/claims", 1).eq("/claims/0/holder", json!("planner")),
        Step::ok("mentisdb_release_claim", json!({"chain_key": chain, "key": "compaction", "holder": "architect"})).eq("/ok", json!(false)).eq("/reason", json!("wrong_holder")),
        Step::ok("mentisdb_release_claim", json!({"chain_key": chain, "key": "compaction", "holder": "planner"})).eq("/ok", json!(true)),
        Step::ok("mentisdb_claim", json!({"chain_key": chain, "key": "compaction", "holder": "architect", "ttl_ms": 600000})).eq("/claim/fencing_token", json!(2)),
        // Facts: a new value closes the old one.
        Step::ok("mentisdb_record_fact", json!({"chain_key": chain, "subject": "segment format", "predicate": "is", "object": "v1", "valid_from": "2026-01-01T00:00:00Z", "agent_id": "planner"}))
            .len("/closed", 0).capture("fact1", "/fact/fact_id"),
        Step::ok("mentisdb_record_fact", json!({"chain_key": chain, "subject": "Segment format", "predicate": "is", "object": "v2", "valid_from": "2026-02-01T00:00:00Z"}))
            .eq("/closed/0/fact_id", json!("${fact1}")).eq("/closed/0/valid_to", json!("2026-02-01T00:00:00.000Z")),
        Step::ok("mentisdb_query_facts", json!({"chain_key": chain, "subject": "segment format", "point_in_time": "2026-01-15T00:00:00Z"})).len("/facts", 1).eq("/facts/0/object", json!("v1")),
        // Reviews: the first decision wins; refusals are answers.
        Step::ok("mentisdb_request_review", json!({"chain_key": chain, "subject": "Compaction of segment 7", "claim_key": "compaction", "reviewers": ["architect"], "agent_id": "planner"}))
            .eq("/review/status", json!("open")).capture("review", "/review_id"),
        Step::ok("mentisdb_decide_review", json!({"chain_key": chain, "review_id": "${review}", "decision": "approved", "agent_id": "planner"})).eq("/ok", json!(false)).eq("/reason", json!("not_a_reviewer")),
        Step::ok("mentisdb_decide_review", json!({"chain_key": chain, "review_id": "${review}", "decision": "approved", "agent_id": "architect"})).eq("/ok", json!(true)),
        Step::ok("mentisdb_decide_review", json!({"chain_key": chain, "review_id": "${review}", "decision": "rejected", "agent_id": "architect"}))
            .eq("/reason", json!("already_decided")).eq("/decision", json!("approved")),
        Step::ok("mentisdb_list_reviews", json!({"chain_key": chain, "requester": "planner", "include_decided": true})).len("/reviews", 1).eq("/reviews/0/decided_by", json!("architect")),
        Step::err("mentisdb_decide_review", json!({"chain_key": chain, "review_id": "nope", "decision": "approved", "agent_id": "architect"}), "not_found", "nope"),
        // Presence: live state beside the chain, not thoughts.
        Step::ok("mentisdb_heartbeat", json!({"chain_key": chain, "agent_id": "planner", "current_action": "compacting"})).eq("/current_action", json!("compacting")),
        Step::ok("mentisdb_list_presence", json!({"chain_key": chain})).len("/agents", 1).eq("/agents/0/agent_id", json!("planner")),
        Step::ok("mentisdb_head", json!({"chain_key": chain})).eq("/thought_count", json!(12)),
    ]
}

fn substitute(v: &Value, vars: &BTreeMap<String, Value>) -> Value {
    match v {
        Value::String(s) if s.starts_with("${") && s.ends_with('}') => {
            vars.get(&s[2..s.len() - 1]).cloned().unwrap_or_else(|| panic!("{s} used before it was captured"))
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| substitute(x, vars)).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), substitute(x, vars))).collect()),
        other => other.clone(),
    }
}

/// Runs `steps` through `call`, panicking with the step number, tool and
/// the mismatch at the first step that does not answer as expected.
/// Returns the captured values.
pub fn run(steps: &[Step], mut call: impl FnMut(&str, Value) -> Result<Value, CallError>) -> BTreeMap<String, Value> {
    let mut vars = BTreeMap::new();
    for (n, step) in steps.iter().enumerate() {
        let args = substitute(&step.args, &vars);
        let at = format!("step {n} {} {args}", step.tool);
        let outcome = call(step.tool, args.clone());
        match (&step.expect, outcome) {
            (Expect::Ok(checks), Ok(result)) => {
                for check in checks {
                    let get = |p: &str| result.pointer(p).unwrap_or_else(|| panic!("{at}: no {p} in {result}"));
                    match check {
                        Check::Eq(p, want) => assert_eq!(get(p), &substitute(want, &vars), "{at}: {p} in {result}"),
                        Check::Len(p, n) => assert_eq!(get(p).as_array().map(Vec::len), Some(*n), "{at}: length of {p} in {result}"),
                        Check::Contains(p, frag) => {
                            let s = get(p).as_str().unwrap_or_else(|| panic!("{at}: {p} is not a string"));
                            assert!(s.contains(frag), "{at}: {p} = {s:?} lacks {frag:?}");
                        }
                        Check::NonEmptyString(p) => assert!(get(p).as_str().is_some_and(|s| !s.is_empty()), "{at}: {p} is not a non-empty string in {result}"),
                    }
                }
                for (name, p) in &step.capture {
                    vars.insert(name.to_string(), result.pointer(p).cloned().unwrap_or(Value::Null));
                }
            }
            (Expect::Err { kind, message_contains }, Err(e)) => {
                assert_eq!(e.kind, *kind, "{at}: error kind (message: {})", e.message);
                assert!(e.message.contains(message_contains), "{at}: message {:?} lacks {message_contains:?}", e.message);
            }
            (Expect::Ok(_), Err(e)) => panic!("{at}: expected success, got {} error: {}", e.kind, e.message),
            (Expect::Err { kind, .. }, Ok(v)) => panic!("{at}: expected a {kind} error, got {v}"),
        }
    }
    vars
}
