//! Every tool, fed arbitrary JSON as its arguments: it answers (a result or
//! a typed error, never a panic), an argument error says what was wrong in
//! a short message, and what was stored before stays readable.

use crate::common;

use common::{fresh, ok};
use mentisdb_core::{tool_specs, ErrorKind};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// A chain key the generated strings never spell (they have no `.` or `!`).
const KEPT: &str = "kept.chain!";

/// Any JSON value, leaning towards what arguments hold: names tools
/// accept, integral and fractional floats, negative and huge integers.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e20f64..1e20).prop_map(Value::from),
        prop::sample::select(vec![json!(2.5), json!(10.0), json!(-0.0), json!(1e300)]),
        "[a-zA-Z0-9 _-]{0,12}".prop_map(Value::from),
        prop::sample::select(vec!["Insight", "Memory", "both", "seconds", "ed25519", "binary", "markdown", "active", "user", "Supersedes"]).prop_map(Value::from),
    ];
    leaf.prop_recursive(2, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,10}", inner, 0..3).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

#[test]
fn arbitrary_arguments_get_an_answer_and_leave_what_is_stored() {
    let specs = tool_specs();
    let tools: Vec<&'static str> = specs.iter().map(|s| s.name).collect();
    // Every argument name some tool takes: each call draws from all of them.
    let names: Vec<String> = specs
        .iter()
        .flat_map(|s| s.input_schema["properties"].as_object().into_iter().flat_map(|p| p.keys().cloned()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let (db, _) = fresh();
    let kept = ok(&db, "mentisdb_append", json!({"chain_key": KEPT, "thought_type": "Insight", "content": "kept across the run"}));
    let kept_id = kept["thought"]["id"].as_str().unwrap().to_string();

    let calls = (prop::sample::select(tools), prop::collection::vec((prop::sample::select(names), json_value()), 0..7));
    let mut runner = TestRunner::new(Config { cases: 3000, failure_persistence: None, ..Config::default() });
    runner
        .run(&calls, |(tool, fields)| {
            let args = Value::Object(fields.into_iter().collect());
            if let Err(e) = db.call(tool, args.clone()) {
                // One short line a caller can show as it is.
                let message = e.to_string();
                prop_assert!(!message.trim().is_empty() && message.len() <= 4096 && !message.contains('\n'), "{tool} {args}: {message}");
            }
            Ok(())
        })
        .unwrap();

    let got = ok(&db, "mentisdb_get_thought", json!({"chain_key": KEPT, "thought_id": kept_id}));
    assert_eq!(got["thought"]["content"], "kept across the run");
}

#[test]
fn an_argument_of_the_wrong_type_is_named_with_its_path() {
    let (db, _) = fresh();
    let cases = [
        ("mentisdb_append", json!({"thought_type": "Insight", "content": "c", "importance": "high"}), "invalid `importance`: expected a number, found a string"),
        ("mentisdb_append", json!({"thought_type": "Insight", "content": "c", "relations": [{"kind": "Supports", "target_index": -1}]}), "invalid `relations[0].target_index`: expected a non-negative integer"),
        ("mentisdb_search", json!({"limit": true}), "invalid `limit`: expected a non-negative integer, found the boolean true"),
        ("mentisdb_ranked_search", json!({"text": "x", "graph": {"max_depth": 1.5}}), "invalid `graph.max_depth`: expected a non-negative integer, found the floating point number 1.5"),
        ("mentisdb_traverse_thoughts", json!({"time_window": {"start": 0}}), "missing field `time_window.delta`"),
        ("mentisdb_add_agent_key", json!({"agent_id": "a", "key_id": "k", "algorithm": "ed25519", "public_key_bytes": [1, 300]}), "invalid `public_key_bytes[1]`: expected a byte"),
        ("mentisdb_append", json!({"content": "c"}), "missing field `thought_type`"),
    ];
    for (tool, args, want) in cases {
        let e = db.call(tool, args.clone()).expect_err(tool);
        assert_eq!(e.kind(), ErrorKind::InvalidArguments, "{tool} {args}");
        assert!(e.to_string().contains(want), "{tool} {args}: {e}");
    }
}
