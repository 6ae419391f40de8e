//! Temporal facts through the dispatcher: recording a new value closes the
//! old one, windows answer points in time, ranked search answers the
//! current version, concurrent writers leave a conflict that can be listed
//! and resolved, and everything is derived again from the chain alone.

use crate::common;

use common::{err, fresh, ok, reopen};
use mentisdb_core::ErrorKind;
use serde_json::{json, Value};

fn objects(reply: &Value) -> Vec<String> {
    reply["facts"].as_array().unwrap().iter().map(|f| f["object"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_new_value_closes_the_old_and_each_answers_its_own_time() {
    let (db, storage) = fresh();
    let first = ok(&db, "mentisdb_record_fact", json!({"chain_key": "ops", "subject": "API base URL", "predicate": "is", "object": "https://api-1.example", "valid_from": "2026-11-18T00:00:00Z", "confidence": 0.9, "agent_id": "planner"}));
    assert_eq!(first["closed"], json!([]));
    let first_id = first["fact"]["fact_id"].as_str().unwrap().to_string();
    assert_eq!(first["fact"]["recorded_by"], "planner");
    assert_eq!(first["fact"]["valid_to"], Value::Null);
    // Milliseconds since 1970 are accepted too (memoturn's form): 2026-11-20T00:00:00Z.
    let second = ok(&db, "mentisdb_record_fact", json!({"chain_key": "ops", "subject": "api base url", "predicate": "IS", "object": "https://api-2.example", "valid_from": 1_795_132_800_000i64}));
    assert_eq!(second["fact"]["valid_from"], "2026-11-20T00:00:00.000Z");
    assert_eq!(second["closed"][0]["fact_id"], first_id.as_str(), "the same subject and predicate, without case");
    assert_eq!(second["closed"][0]["valid_to"], "2026-11-20T00:00:00.000Z");

    let now = ok(&db, "mentisdb_query_facts", json!({"chain_key": "ops", "subject": "API base URL"}));
    assert_eq!(objects(&now), ["https://api-2.example"], "active only by default");
    let monday = ok(&db, "mentisdb_query_facts", json!({"chain_key": "ops", "subject": "API base URL", "point_in_time": "2026-11-19T12:00:00Z"}));
    assert_eq!(objects(&monday), ["https://api-1.example"]);
    let before = ok(&db, "mentisdb_query_facts", json!({"chain_key": "ops", "point_in_time": "2026-11-01T00:00:00Z"}));
    assert_eq!(objects(&before), Vec::<String>::new());
    let all = ok(&db, "mentisdb_query_facts", json!({"chain_key": "ops", "active_only": false}));
    assert_eq!(objects(&all), ["https://api-2.example", "https://api-1.example"], "latest first");

    // Ranked search answers the current value, not the one it replaced.
    let hits = ok(&db, "mentisdb_ranked_search", json!({"chain_key": "ops", "text": "API base URL", "limit": 5}));
    let found: Vec<&str> = hits["results"].as_array().unwrap().iter().map(|h| h["thought"]["content"].as_str().unwrap()).collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("api-2"), "{found:?}");

    // Closing ends it; closing again says so.
    let id = second["fact"]["fact_id"].as_str().unwrap();
    let closed = ok(&db, "mentisdb_close_fact", json!({"chain_key": "ops", "fact_id": id, "valid_to": "2026-11-21T00:00:00Z"}));
    assert_eq!((closed["ok"].clone(), closed["fact"]["valid_to"].clone()), (json!(true), json!("2026-11-21T00:00:00.000Z")));
    let again = ok(&db, "mentisdb_close_fact", json!({"chain_key": "ops", "fact_id": id}));
    assert_eq!((again["ok"].clone(), again["reason"].clone()), (json!(false), json!("already_closed")));
    assert_eq!(objects(&ok(&db, "mentisdb_query_facts", json!({"chain_key": "ops"}))), Vec::<String>::new());

    // The windows come from the chain alone.
    drop(db);
    let db = reopen(storage);
    let all_again = ok(&db, "mentisdb_query_facts", json!({"chain_key": "ops", "active_only": false}));
    assert_eq!(all_again["facts"][0]["valid_to"], "2026-11-21T00:00:00.000Z");
    assert_eq!(all_again["facts"][1]["valid_to"], "2026-11-20T00:00:00.000Z");
}

#[test]
fn writers_that_each_closed_what_they_saw_leave_a_conflict_until_one_resolves_it() {
    let (db, _) = fresh();
    ok(&db, "mentisdb_record_fact", json!({"chain_key": "team", "subject": "release owner", "predicate": "is", "object": "ana"}));
    // Two daemons on one database each record a new owner having seen only
    // ana's fact: written here as the same records, with their `closes`.
    let ana = ok(&db, "mentisdb_query_facts", json!({"chain_key": "team"}))["facts"][0]["fact_id"].as_str().unwrap().to_string();
    for who in ["bo", "cy"] {
        let content = json!({"fact": "record", "subject": "release owner", "predicate": "is", "object": who, "valid_from": "2026-11-27T10:00:00.000Z", "closes": [ana]}).to_string();
        ok(&db, "mentisdb_append", json!({"chain_key": "team", "agent_id": who, "thought_type": "FactLearned", "tags": ["fact"], "content": content}));
    }
    let conflicts = ok(&db, "mentisdb_fact_conflicts", json!({"chain_key": "team"}));
    assert_eq!(conflicts["conflicts"].as_array().unwrap().len(), 1, "{conflicts}");
    assert_eq!(objects(&conflicts["conflicts"][0]), ["bo", "cy"]);
    assert_eq!(ok(&db, "mentisdb_fact_conflicts", json!({"chain_key": "team", "subject": "something else"}))["conflicts"], json!([]));
    // A new fact closes every active one of that subject and predicate.
    let resolved = ok(&db, "mentisdb_record_fact", json!({"chain_key": "team", "subject": "release owner", "predicate": "is", "object": "cy", "valid_from": "2026-11-27T11:00:00Z"}));
    assert_eq!(resolved["closed"].as_array().unwrap().len(), 2);
    assert_eq!(ok(&db, "mentisdb_fact_conflicts", json!({"chain_key": "team"}))["conflicts"], json!([]));
}

#[test]
fn bad_facts_are_refused_and_nothing_is_written() {
    let (db, _) = fresh();
    for (args, says) in [
        (json!({"subject": " ", "predicate": "is", "object": "x"}), "subject"),
        (json!({"subject": "s", "predicate": "is", "object": "x".repeat(5000)}), "object"),
        (json!({"subject": "s", "predicate": "is", "object": "x", "valid_from": "last tuesday"}), "valid_from"),
        (json!({"subject": "s", "predicate": "is", "object": "x", "valid_from": true}), "valid_from"),
    ] {
        let e = err(&db, "mentisdb_record_fact", args.clone());
        assert_eq!(e.kind(), ErrorKind::InvalidArguments, "{args}: {e}");
        assert!(e.to_string().contains(says), "{args}: {e}");
    }
    assert_eq!(err(&db, "mentisdb_close_fact", json!({"fact_id": "nope"})).kind(), ErrorKind::NotFound);
    assert_eq!(ok(&db, "mentisdb_list_chains", json!({}))["chains"], json!([]), "nothing was written");
}

#[test]
fn a_value_from_the_future_is_answered_by_time_and_hides_nothing_yet() {
    let (db, _) = fresh();
    ok(&db, "mentisdb_record_fact", json!({"chain_key": "ops", "subject": "region", "predicate": "is", "object": "eu-west", "valid_from": "2026-11-01T00:00:00Z"}));
    let future = ok(&db, "mentisdb_record_fact", json!({"chain_key": "ops", "subject": "region", "predicate": "is", "object": "us-east", "valid_from": "2030-01-01T00:00:00Z"}));
    assert_eq!(future["closed"][0]["valid_to"], "2030-01-01T00:00:00.000Z");
    assert_eq!(objects(&ok(&db, "mentisdb_query_facts", json!({"chain_key": "ops", "point_in_time": "2027-01-01T00:00:00Z"}))), ["eu-west"]);
    assert_eq!(objects(&ok(&db, "mentisdb_query_facts", json!({"chain_key": "ops", "point_in_time": "2030-06-01T00:00:00Z"}))), ["us-east"]);
    let hits = ok(&db, "mentisdb_ranked_search", json!({"chain_key": "ops", "text": "region eu-west", "limit": 5}));
    assert!(hits["results"].as_array().unwrap().iter().any(|h| h["thought"]["content"].as_str().unwrap().contains("eu-west")), "{hits}");
}

#[test]
fn a_fact_that_reads_like_a_secret_is_refused() {
    let (db, _) = fresh();
    let e = err(&db, "mentisdb_record_fact", json!({"chain_key": "ops", "subject": "deploy key", "predicate": "is", "object": "AKIAIOSFODNN7EXAMPLE"}));
    assert_eq!(e.kind(), ErrorKind::AppendRejected, "{e}");
    assert_eq!(ok(&db, "mentisdb_list_chains", json!({}))["chains"], json!([]));
}

#[test]
fn a_forgotten_fact_is_gone_from_the_windows_at_once() {
    let (db, _) = fresh();
    let first = ok(&db, "mentisdb_record_fact", json!({"chain_key": "ops", "subject": "home", "predicate": "is", "object": "12 Elm St", "valid_from": "2026-01-01T00:00:00Z"}));
    ok(&db, "mentisdb_forget_thought", json!({"chain_key": "ops", "thought_id": first["fact"]["fact_id"], "reason": "the user asked"}));
    assert_eq!(ok(&db, "mentisdb_query_facts", json!({"chain_key": "ops", "active_only": false}))["facts"], json!([]), "its content is erased: it states no fact");
}

/// What the proptest does: record a value of one of two subjects and two
/// predicates from a day of 2026, or close the n-th recorded fact at a day.
#[derive(Debug, Clone)]
enum Op {
    Record { subject: usize, predicate: usize, object: u8, day: i64 },
    Close { nth: usize, day: i64 },
}

/// A fact as the model keeps it: (subject, predicate, object, from, to).
type ModelFact = (usize, usize, u8, i64, Option<i64>);

const DAY_MS: i64 = 86_400_000;
/// 2026-01-01T00:00:00Z.
const JAN_1_MS: i64 = 1_767_225_600_000;

fn op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    prop_oneof![
        3 => (0..2usize, 0..2usize, 0..4u8, 0..60i64).prop_map(|(subject, predicate, object, day)| Op::Record { subject, predicate, object, day }),
        1 => (0..40usize, 0..60i64).prop_map(|(nth, day)| Op::Close { nth, day }),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// One writer: never two active facts of one subject and predicate, and
    /// every point-in-time answer (before and after a re-open) is the
    /// brute-force model's: the facts with `valid_from <= t < valid_to`.
    #[test]
    fn windows_follow_a_brute_force_model(ops in proptest::collection::vec(op(), 1..30)) {
        let (db, storage) = fresh();
        let mut model: Vec<ModelFact> = Vec::new();
        let mut ids: Vec<String> = Vec::new();
        let at = |day: i64| JAN_1_MS + day * DAY_MS;
        for op in &ops {
            match *op {
                Op::Record { subject, predicate, object, day } => {
                    let from = at(day);
                    let later = model.iter().filter(|f| f.0 == subject && f.1 == predicate && f.4.is_none() && f.3 > from).map(|f| f.3).min();
                    for f in model.iter_mut().filter(|f| f.0 == subject && f.1 == predicate && f.4.is_none() && f.3 <= from) {
                        f.4 = Some(from);
                    }
                    model.push((subject, predicate, object, from, later));
                    let r = ok(&db, "mentisdb_record_fact", json!({"chain_key": "p", "subject": format!("s{subject}"), "predicate": format!("p{predicate}"), "object": format!("o{object}"), "valid_from": from}));
                    ids.push(r["fact"]["fact_id"].as_str().unwrap().to_string());
                }
                Op::Close { nth, day } => {
                    if model.is_empty() {
                        continue;
                    }
                    let i = nth % model.len();
                    let to = at(day);
                    let args = json!({"chain_key": "p", "fact_id": ids[i], "valid_to": to});
                    if model[i].4.is_some() {
                        let r = ok(&db, "mentisdb_close_fact", args);
                        proptest::prop_assert_eq!(r["reason"].as_str(), Some("already_closed"));
                    } else if to < model[i].3 {
                        err(&db, "mentisdb_close_fact", args);
                    } else {
                        model[i].4 = Some(to);
                        let r = ok(&db, "mentisdb_close_fact", args);
                        proptest::prop_assert_eq!(r["ok"].as_bool(), Some(true));
                    }
                }
            }
            proptest::prop_assert_eq!(ok(&db, "mentisdb_fact_conflicts", json!({"chain_key": "p"}))["conflicts"].as_array().map(Vec::len), Some(0));
        }
        let answers = |db: &mentisdb_core::MentisDb| -> Vec<Vec<String>> {
            (-1..62).map(|day| {
                let mut got: Vec<String> = ok(db, "mentisdb_query_facts", json!({"chain_key": "p", "point_in_time": at(day) + DAY_MS / 2}))["facts"].as_array().unwrap().iter().map(|f| f["fact_id"].as_str().unwrap().to_string()).collect();
                got.sort();
                got
            }).collect()
        };
        let expected: Vec<Vec<String>> = (-1..62).map(|day| {
            let t = at(day) + DAY_MS / 2;
            let mut want: Vec<String> = model.iter().zip(&ids).filter(|(f, _)| f.3 <= t && f.4.is_none_or(|to| t < to)).map(|(_, id)| id.clone()).collect();
            want.sort();
            want
        }).collect();
        proptest::prop_assert_eq!(&answers(&db), &expected);
        for (s, p) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            let active = ok(&db, "mentisdb_query_facts", json!({"chain_key": "p", "subject": format!("s{s}"), "predicate": format!("p{p}")}));
            proptest::prop_assert!(active["facts"].as_array().unwrap().len() <= 1, "{}", active);
        }
        proptest::prop_assert_eq!(&answers(&reopen(storage)), &expected);
    }
}
