//! Claims through the dispatcher, against a model: at most one holder of a
//! key at any instant, fencing tokens that grow with every acquisition, the
//! renew/release rules, expiry at the deadline, fenced appends stored only
//! while their token's holder holds the key, and the same leases derived
//! again from the chain alone after a re-open.

use crate::common;

use common::{ids, T0};
use mentisdb_core::{Clock, DbConfig, MemoryStorage, MentisDb, Storage};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

/// A clock the test moves by hand.
#[derive(Default)]
struct HandClock(AtomicI64);

impl Clock for HandClock {
    fn now_millis(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

fn open(storage: &Arc<MemoryStorage>, clock: &Arc<HandClock>) -> MentisDb {
    MentisDb::open(storage.clone() as Arc<dyn Storage>, clock.clone(), ids(), DbConfig::default()).expect("open").0
}

fn call(db: &MentisDb, tool: &str, args: Value) -> Value {
    db.call(tool, args).unwrap_or_else(|e| panic!("{tool}: {e}"))
}

/// The model of one key: its lease (holder, token, deadline) and last token.
#[derive(Debug, Default, Clone)]
struct Key {
    lease: Option<(usize, u64, i64)>,
    last_token: u64,
}

impl Key {
    fn held(&self, now: i64) -> Option<(usize, u64, i64)> {
        self.lease.filter(|(_, _, until)| now < *until)
    }
}

#[derive(Debug, Clone)]
enum Op {
    Claim { holder: usize, key: usize, ttl: u64 },
    Renew { holder: usize, key: usize, ttl: u64 },
    Release { holder: usize, key: usize },
    /// An append fenced with the token `holder` last got for `key` (or 1).
    Fenced { holder: usize, key: usize },
}

fn op() -> impl Strategy<Value = Op> {
    let (h, k, ttl) = (0..3usize, 0..2usize, 1_000..4_000u64);
    prop_oneof![
        (h.clone(), k.clone(), ttl.clone()).prop_map(|(holder, key, ttl)| Op::Claim { holder, key, ttl }),
        (h.clone(), k.clone(), ttl).prop_map(|(holder, key, ttl)| Op::Renew { holder, key, ttl }),
        (h.clone(), k.clone()).prop_map(|(holder, key)| Op::Release { holder, key }),
        (h, k).prop_map(|(holder, key)| Op::Fenced { holder, key }),
    ]
}

fn holder(i: usize) -> String {
    format!("agent-{i}")
}

fn key(i: usize) -> String {
    format!("task/{i}")
}

fn iso(ms: i64) -> String {
    mentisdb_core::timestamp::format_rfc3339_millis(ms)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn claims_follow_the_model_and_replay_from_the_chain(steps in prop::collection::vec((op(), 0..2_500i64), 1..40)) {
        let storage = Arc::new(MemoryStorage::new());
        let clock = Arc::new(HandClock(AtomicI64::new(T0)));
        let db = open(&storage, &clock);
        let mut model: Vec<Key> = vec![Key::default(); 2];
        // The last token each holder was answered for each key.
        let mut tokens: BTreeMap<(usize, usize), u64> = BTreeMap::new();
        let mut now = T0;
        for (op, advance) in steps {
            now += advance;
            clock.0.store(now, Ordering::SeqCst);
            match op {
                Op::Claim { holder: h, key: k, ttl } => {
                    let r = call(&db, "mentisdb_claim", json!({"chain_key": "c", "key": key(k), "holder": holder(h), "ttl_ms": ttl}));
                    let m = &mut model[k];
                    match m.held(now) {
                        Some((other, _, until)) if other != h => {
                            prop_assert_eq!((&r["ok"], &r["reason"], &r["held_by"], &r["expires_at"], &r["claim"]), (&json!(false), &json!("held"), &json!(holder(other)), &json!(iso(until)), &Value::Null));
                        }
                        Some((_, token, _)) => {
                            prop_assert_eq!((&r["ok"], &r["deduped"], &r["claim"]["fencing_token"]), (&json!(true), &json!(true), &json!(token)));
                            m.lease = Some((h, token, now + ttl as i64));
                        }
                        None => {
                            m.last_token += 1;
                            prop_assert_eq!((&r["ok"], &r["deduped"], &r["claim"]["fencing_token"]), (&json!(true), &json!(false), &json!(m.last_token)), "{}", r);
                            m.lease = Some((h, m.last_token, now + ttl as i64));
                            tokens.insert((h, k), m.last_token);
                        }
                    }
                    if r["ok"] == true {
                        prop_assert_eq!(&r["claim"]["expires_at"], &json!(iso(now + ttl as i64)));
                    }
                }
                Op::Renew { holder: h, key: k, ttl } => {
                    let r = call(&db, "mentisdb_renew_claim", json!({"chain_key": "c", "key": key(k), "holder": holder(h), "ttl_ms": ttl}));
                    let m = &mut model[k];
                    match m.held(now) {
                        None => prop_assert_eq!(&r["reason"], "not_held"),
                        Some((other, _, _)) if other != h => prop_assert_eq!((&r["reason"], &r["held_by"]), (&json!("wrong_holder"), &json!(holder(other)))),
                        Some((_, token, _)) => {
                            prop_assert_eq!((&r["ok"], &r["claim"]["fencing_token"], &r["claim"]["expires_at"]), (&json!(true), &json!(token), &json!(iso(now + ttl as i64))));
                            m.lease = Some((h, token, now + ttl as i64));
                        }
                    }
                }
                Op::Release { holder: h, key: k } => {
                    let r = call(&db, "mentisdb_release_claim", json!({"chain_key": "c", "key": key(k), "holder": holder(h)}));
                    let m = &mut model[k];
                    match m.held(now) {
                        None => prop_assert_eq!(&r["reason"], "not_held"),
                        Some((other, _, _)) if other != h => prop_assert_eq!(&r["reason"], "wrong_holder"),
                        Some(_) => {
                            prop_assert_eq!(&r["ok"], true);
                            m.lease = None;
                        }
                    }
                }
                Op::Fenced { holder: h, key: k } => {
                    let token = tokens.get(&(h, k)).copied().unwrap_or(1);
                    let r = db.call("mentisdb_append", json!({"chain_key": "c", "agent_id": holder(h), "thought_type": "ActionTaken", "content": "did the work",
                        "fencing": {"key": key(k), "token": token}}));
                    let allowed = model[k].held(now).is_some_and(|(holder_of_time, t, _)| t == token && holder_of_time == h);
                    match r {
                        Ok(v) => {
                            prop_assert!(allowed, "a fenced append with a stale token was stored: {}", v);
                            let tag = format!("mentisdb:fence:{token}:{}", key(k));
                            prop_assert!(v["thought"]["tags"].as_array().unwrap().contains(&json!(tag)));
                        }
                        Err(e) => {
                            prop_assert!(!allowed, "a fenced append of the holder was refused: {}", e);
                            prop_assert_eq!(e.kind(), mentisdb_core::ErrorKind::Conflict);
                        }
                    }
                }
            }
            // What is held now, as the tools list it, is the model's.
            let listed = call(&db, "mentisdb_list_claims", json!({"chain_key": "c"}));
            let expected: Vec<Value> = (0..2).filter_map(|k| model[k].held(now).map(|(h, t, until)| json!([key(k), holder(h), t, iso(until)]))).collect();
            let got: Vec<Value> = listed["claims"].as_array().unwrap().iter().map(|l| json!([l["key"], l["holder"], l["fencing_token"], l["expires_at"]])).collect();
            prop_assert_eq!(got, expected);
        }
        // The leases are derived from the chain alone: a re-opened engine lists the same.
        let before = call(&db, "mentisdb_list_claims", json!({"chain_key": "c"}));
        drop(db);
        let again = open(&storage, &clock);
        prop_assert_eq!(call(&again, "mentisdb_list_claims", json!({"chain_key": "c"})), before);
    }
}

#[test]
fn only_the_engine_writes_claim_records_and_fence_tags() {
    let storage = Arc::new(MemoryStorage::new());
    let clock = Arc::new(HandClock(AtomicI64::new(T0)));
    let db = open(&storage, &clock);
    for tags in [json!(["mentisdb:claim"]), json!(["mentisdb:fence:1:task/0"])] {
        let e = db.call("mentisdb_append", json!({"chain_key": "c", "agent_id": "mentisdb", "thought_type": "ActionTaken", "role": "Audit", "tags": tags,
            "content": "{\"claim\":\"acquire\",\"key\":\"task/0\",\"holder\":\"mallory\",\"fencing_token\":1,\"ttl_ms\":86400000,\"metadata\":null}"})).unwrap_err();
        assert!(e.to_string().contains("written by MentisDB itself"), "{e}");
    }
    let r = call(&db, "mentisdb_claim", json!({"chain_key": "c", "key": "task/0", "holder": "ada", "ttl_ms": 5000, "metadata": {"branch": "fix-1"}}));
    assert_eq!(r["claim"]["metadata"], json!({"branch": "fix-1"}));
    // The record is a thought like any other: hashed, in the chain, verified.
    let record = call(&db, "mentisdb_get_thought", json!({"chain_key": "c", "thought_index": r["record_index"]}));
    assert_eq!((&record["thought"]["agent_id"], &record["thought"]["role"]), (&json!("mentisdb"), &json!("Audit")));
    assert_eq!(call(&db, "mentisdb_head", json!({"chain_key": "c"}))["integrity_ok"], true);
    // A merge carries the record's text but not its marks: no claim moves with it.
    call(&db, "mentisdb_merge_chains", json!({"source_chain_key": "c", "target_chain_key": "d"}));
    assert_eq!(call(&db, "mentisdb_list_claims", json!({"chain_key": "d"}))["claims"], json!([]));
}

#[test]
fn bad_claims_are_refused_with_the_field_named_and_a_clamped_ttl_is_said() {
    let storage = Arc::new(MemoryStorage::new());
    let clock = Arc::new(HandClock(AtomicI64::new(T0)));
    let db = open(&storage, &clock);
    for (args, field) in [
        (json!({"key": " ", "holder": "ada"}), "key"),
        (json!({"key": "k", "holder": ""}), "holder"),
        (json!({"key": "k".repeat(300), "holder": "ada"}), "key"),
        (json!({"key": "k", "holder": "ada", "metadata": {"blob": "x".repeat(5000)}}), "metadata"),
    ] {
        let e = db.call("mentisdb_claim", args).unwrap_err();
        assert!(e.to_string().contains(field), "{e}");
    }
    let r = call(&db, "mentisdb_claim", json!({"key": "k", "holder": "ada", "ttl_ms": 10}));
    assert_eq!(r["warnings"], json!(["`ttl_ms` 10 is outside 1000..=86400000; 1000 was used"]));
    assert_eq!(r["claim"]["expires_at"], json!(iso(T0 + 1000)));
}

#[test]
fn a_lease_ends_exactly_at_its_deadline_and_a_stale_holder_is_fenced_out() {
    let storage = Arc::new(MemoryStorage::new());
    let clock = Arc::new(HandClock(AtomicI64::new(T0)));
    let db = open(&storage, &clock);
    let claim = |who: &str| call(&db, "mentisdb_claim", json!({"chain_key": "c", "key": "deploy", "holder": who, "ttl_ms": 1000}));
    assert_eq!(claim("ada")["claim"]["fencing_token"], 1);
    clock.0.store(T0 + 999, Ordering::SeqCst);
    assert_eq!(claim("bob")["held_by"], "ada", "held until the last millisecond");
    clock.0.store(T0 + 1000, Ordering::SeqCst);
    let bob = claim("bob");
    assert_eq!((&bob["ok"], &bob["claim"]["fencing_token"]), (&json!(true), &json!(2)), "free at the deadline, with a larger token");
    // Ada, paused past her deadline, still believes she holds token 1.
    let late = db.call("mentisdb_append", json!({"chain_key": "c", "agent_id": "ada", "thought_type": "ActionTaken", "content": "deployed", "fencing": {"key": "deploy", "token": 1}})).unwrap_err();
    assert!(late.to_string().contains("'bob' holds it with token 2"), "{late}");
    call(&db, "mentisdb_append", json!({"chain_key": "c", "agent_id": "bob", "thought_type": "ActionTaken", "content": "deployed", "fencing": {"key": "deploy", "token": 2}}));
}

#[test]
fn a_claim_record_cannot_be_forgotten_and_a_fenced_retry_is_answered_as_stored() {
    let storage = Arc::new(MemoryStorage::new());
    let clock = Arc::new(HandClock(AtomicI64::new(T0)));
    let db = open(&storage, &clock);
    let r = call(&db, "mentisdb_claim", json!({"chain_key": "c", "key": "deploy", "holder": "ada", "ttl_ms": 1000}));
    // Forgetting the record would hand token 1 out again.
    let e = db.call("mentisdb_forget_thought", json!({"chain_key": "c", "thought_index": r["record_index"], "reason": "tidy"})).unwrap_err();
    assert_eq!(e.kind(), mentisdb_core::ErrorKind::Conflict, "{e}");
    let fenced = json!({"chain_key": "c", "agent_id": "ada", "thought_type": "ActionTaken", "content": "deployed", "thought_id": "deploy-1", "fencing": {"key": "deploy", "token": 1}});
    let first = call(&db, "mentisdb_append", fenced.clone());
    // The reply was lost; the retry comes after the lease ended: it is the stored thought, not a conflict.
    clock.0.store(T0 + 5_000, Ordering::SeqCst);
    let retry = call(&db, "mentisdb_append", fenced);
    assert_eq!((&retry["replay"], &retry["thought"]["index"]), (&json!(true), &first["thought"]["index"]));
    // A fenced append names its writer: token 1 is Ada's, not Bob's.
    clock.0.store(T0, Ordering::SeqCst);
    let e = db.call("mentisdb_append", json!({"chain_key": "c", "agent_id": "bob", "thought_type": "ActionTaken", "content": "x", "fencing": {"key": "deploy", "token": 1}})).unwrap_err();
    assert!(e.to_string().contains("is 'ada''s, not 'bob''s") || e.to_string().contains("nobody holds"), "{e}");
}

#[test]
fn a_clock_stepped_back_does_not_bring_a_lease_back() {
    let storage = Arc::new(MemoryStorage::new());
    let clock = Arc::new(HandClock(AtomicI64::new(T0)));
    let db = open(&storage, &clock);
    call(&db, "mentisdb_claim", json!({"chain_key": "c", "key": "deploy", "holder": "ada", "ttl_ms": 1000}));
    clock.0.store(T0 + 5_000, Ordering::SeqCst);
    assert_eq!(call(&db, "mentisdb_list_claims", json!({"chain_key": "c"}))["claims"], json!([]));
    // NTP steps the clock back into the old lease: the engine's time does not go back.
    clock.0.store(T0 + 500, Ordering::SeqCst);
    let e = db.call("mentisdb_append", json!({"chain_key": "c", "agent_id": "ada", "thought_type": "ActionTaken", "content": "late", "fencing": {"key": "deploy", "token": 1}})).unwrap_err();
    assert!(e.to_string().contains("nobody holds the key now"), "{e}");
    let bob = call(&db, "mentisdb_claim", json!({"chain_key": "c", "key": "deploy", "holder": "bob"}));
    assert_eq!(bob["claim"]["fencing_token"], 2);
    assert_eq!(bob["claim"]["acquired_at"], json!(iso(T0 + 5_000)), "stamped with the engine's time, not the stepped-back clock");
}

#[test]
fn renewing_or_releasing_on_an_unknown_chain_creates_nothing() {
    let storage = Arc::new(MemoryStorage::new());
    let clock = Arc::new(HandClock(AtomicI64::new(T0)));
    let db = open(&storage, &clock);
    let r = call(&db, "mentisdb_release_claim", json!({"chain_key": "typo", "key": "k", "holder": "ada"}));
    assert_eq!(r["reason"], "not_held");
    assert_eq!(call(&db, "mentisdb_list_chains", json!({}))["chain_keys"], json!([]));
}

#[test]
fn a_memory_md_export_imports_without_the_sources_claims() {
    let storage = Arc::new(MemoryStorage::new());
    let clock = Arc::new(HandClock(AtomicI64::new(T0)));
    let db = open(&storage, &clock);
    call(&db, "mentisdb_claim", json!({"chain_key": "c", "key": "deploy", "holder": "ada", "ttl_ms": 60000}));
    call(&db, "mentisdb_append", json!({"chain_key": "c", "agent_id": "ada", "thought_type": "ActionTaken", "content": "deployed", "fencing": {"key": "deploy", "token": 1}}));
    let md = call(&db, "mentisdb_memory_markdown", json!({"chain_key": "c"}))["markdown"].clone();
    let r = call(&db, "mentisdb_import_memory_markdown", json!({"chain_key": "d", "markdown": md}));
    assert_eq!(r["imported"].as_array().map(Vec::len).or(r["indices"].as_array().map(Vec::len)), Some(1), "the claim record stays with its chain: {r}");
    let t = call(&db, "mentisdb_get_thought", json!({"chain_key": "d", "thought_index": 0}));
    assert_eq!((&t["thought"]["content"], &t["thought"]["tags"]), (&json!("deployed"), &json!([])));
}

#[test]
fn claim_records_stay_out_of_ranked_search_and_recent_context() {
    let storage = Arc::new(MemoryStorage::new());
    let clock = Arc::new(HandClock(AtomicI64::new(T0)));
    let db = open(&storage, &clock);
    call(&db, "mentisdb_append", json!({"chain_key": "c", "agent_id": "ada", "thought_type": "Decision", "content": "Deploy with a canary first"}));
    for i in 0..5 {
        call(&db, "mentisdb_claim", json!({"chain_key": "c", "key": "deploy", "holder": "ada", "ttl_ms": 60000}));
        clock.0.store(T0 + i * 10, Ordering::SeqCst);
    }
    let hits = call(&db, "mentisdb_ranked_search", json!({"chain_key": "c", "text": "deploy holder ada claim"}));
    let indices: Vec<&Value> = hits["results"].as_array().unwrap().iter().map(|h| &h["thought"]["index"]).collect();
    assert_eq!(indices, [&json!(0)], "only the memory, never the lease bookkeeping: {hits}");
    let recent = call(&db, "mentisdb_recent_context", json!({"chain_key": "c", "last_n": 3}));
    let prompt = recent["prompt"].as_str().unwrap();
    assert!(prompt.contains("canary") && !prompt.contains("fencing_token"), "{prompt}");
    // The records are still thoughts of the chain: a plain search lists them.
    assert_eq!(call(&db, "mentisdb_search", json!({"chain_key": "c", "agent_ids": ["mentisdb"]}))["thoughts"].as_array().unwrap().len(), 5);
}

#[test]
fn a_holder_claiming_again_refreshes_its_lease_with_what_it_says_now() {
    let storage = Arc::new(MemoryStorage::new());
    let clock = Arc::new(HandClock(AtomicI64::new(T0)));
    let db = open(&storage, &clock);
    call(&db, "mentisdb_claim", json!({"chain_key": "c", "key": "deploy", "holder": "ada", "ttl_ms": 5000, "metadata": {"step": 1}}));
    clock.0.store(T0 + 1000, Ordering::SeqCst);
    let again = call(&db, "mentisdb_claim", json!({"chain_key": "c", "key": "deploy", "holder": "ada", "ttl_ms": 5000, "metadata": {"step": 2}}));
    assert_eq!((&again["deduped"], &again["claim"]["fencing_token"], &again["claim"]["metadata"]), (&json!(true), &json!(1), &json!({"step": 2})));
    let renewed = call(&db, "mentisdb_renew_claim", json!({"chain_key": "c", "key": "deploy", "holder": "ada", "ttl_ms": 5000}));
    assert_eq!(renewed["claim"]["metadata"], json!({"step": 2}), "a renewal keeps what the holder said last");
    drop(db);
    let again = open(&storage, &clock);
    assert_eq!(call(&again, "mentisdb_list_claims", json!({"chain_key": "c"}))["claims"][0]["metadata"], json!({"step": 2}));
}
