//! Reviews through the dispatcher: a request names who may decide and by
//! when; the first decision wins (also between two engines on one shared
//! store, where the loser re-decides after re-basing); a review past its
//! deadline takes none; and every review is derived again from the chain.

use crate::common;

use common::{err, fresh, ids, ok, reopen, T0};
use mentisdb_core::{DbConfig, ErrorKind, FixedClock, MemoryStorage, MentisDb, Storage};
use serde_json::{json, Value};
use std::sync::Arc;

fn request(db: &MentisDb, args: Value) -> String {
    let r = ok(db, "mentisdb_request_review", args);
    assert_eq!(r["review"]["status"], "open", "{r}");
    r["review_id"].as_str().unwrap().to_string()
}

#[test]
fn the_first_decision_wins_and_the_queue_shows_what_is_left() {
    let (db, storage) = fresh();
    let id = request(&db, json!({"chain_key": "team", "subject": "merge the auth refactor", "claim_key": "task:auth", "reviewers": ["bob", "cy", "bob"], "agent_id": "ada"}));
    let queue = ok(&db, "mentisdb_list_reviews", json!({"chain_key": "team", "reviewer": "cy"}));
    assert_eq!(queue["reviews"][0]["review_id"], id.as_str());
    assert_eq!(queue["reviews"][0]["reviewers"], json!(["bob", "cy"]), "named once each");
    assert_eq!(queue["reviews"][0]["claim_key"], "task:auth");
    assert_eq!(ok(&db, "mentisdb_list_reviews", json!({"chain_key": "team", "reviewer": "dan"}))["reviews"], json!([]), "dan may not decide it");

    let not_yours = ok(&db, "mentisdb_decide_review", json!({"chain_key": "team", "review_id": id, "decision": "approved", "agent_id": "ada"}));
    assert_eq!((not_yours["ok"].as_bool(), not_yours["reason"].as_str()), (Some(false), Some("not_a_reviewer")), "the requester is not a reviewer: {not_yours}");
    let first = ok(&db, "mentisdb_decide_review", json!({"chain_key": "team", "review_id": id, "decision": "needs_changes", "comment": "split the migration out", "agent_id": "bob"}));
    assert_eq!((first["ok"].as_bool(), first["decision"].as_str()), (Some(true), Some("needs_changes")), "{first}");
    assert_eq!((first["review"]["decided_by"].as_str(), first["review"]["comment"].as_str()), (Some("bob"), Some("split the migration out")));
    let late = ok(&db, "mentisdb_decide_review", json!({"chain_key": "team", "review_id": id, "decision": "approved", "agent_id": "cy"}));
    assert_eq!((late["ok"].as_bool(), late["reason"].as_str(), late["decision"].as_str()), (Some(false), Some("already_decided"), Some("needs_changes")), "{late}");
    assert_eq!(ok(&db, "mentisdb_list_reviews", json!({"chain_key": "team"}))["reviews"], json!([]), "decided: off the queue");
    let mine = ok(&db, "mentisdb_list_reviews", json!({"chain_key": "team", "requester": "ada", "include_decided": true}));
    assert_eq!(mine["reviews"][0]["status"], "needs_changes");

    // Only the request and the one decision were written, and a re-open derives the same review.
    let count = ok(&db, "mentisdb_head", json!({"chain_key": "team"}))["thought_count"].as_u64();
    assert_eq!(count, Some(2));
    let again = reopen(storage);
    let mine_again = ok(&again, "mentisdb_list_reviews", json!({"chain_key": "team", "requester": "ada", "include_decided": true}));
    assert_eq!(mine_again["reviews"][0]["decided_by"], "bob");
    assert_eq!(mine_again["reviews"][0]["status"], "needs_changes");
}

#[test]
fn a_review_past_its_deadline_is_expired_and_takes_no_decision() {
    let (db, _) = fresh();
    // The test clock moves 1 s per read: a one-minute deadline passes after 60 reads.
    let id = request(&db, json!({"chain_key": "t", "subject": "ship 1.2", "deadline_ms": 60_000, "agent_id": "ada"}));
    for _ in 0..61 {
        db.now_millis();
    }
    let listed = ok(&db, "mentisdb_list_reviews", json!({"chain_key": "t"}));
    assert_eq!(listed["reviews"][0]["status"], "expired", "undecided past its deadline: listed as expired");
    let late = ok(&db, "mentisdb_decide_review", json!({"chain_key": "t", "review_id": id, "decision": "approved", "agent_id": "bob"}));
    assert_eq!((late["ok"].as_bool(), late["reason"].as_str()), (Some(false), Some("expired")), "{late}");
}

#[test]
fn a_decision_written_by_hand_counts_only_where_the_review_takes_it() {
    // An agent with a key writes its decision with mentisdb_append (signed):
    // it is stored as written and counts only if the review takes it.
    let (db, storage) = fresh();
    let id = request(&db, json!({"chain_key": "h", "subject": "rotate keys", "reviewers": ["bob"], "agent_id": "ada"}));
    let content = |verdict: &str| json!({"review": "decision", "review_id": id, "decision": verdict, "comment": null}).to_string();
    ok(&db, "mentisdb_append", json!({"chain_key": "h", "agent_id": "dan", "thought_type": "Decision", "tags": ["review"], "content": content("rejected")}));
    assert_eq!(ok(&db, "mentisdb_list_reviews", json!({"chain_key": "h"}))["reviews"][0]["status"], "open", "dan is not a reviewer: his decision does not count");
    ok(&db, "mentisdb_append", json!({"chain_key": "h", "agent_id": "bob", "thought_type": "Decision", "tags": ["review"], "content": content("approved")}));
    ok(&db, "mentisdb_append", json!({"chain_key": "h", "agent_id": "bob", "thought_type": "Decision", "tags": ["review"], "content": content("rejected")}));
    for db in [db, reopen(storage)] {
        let listed = ok(&db, "mentisdb_list_reviews", json!({"chain_key": "h", "include_decided": true}));
        assert_eq!((listed["reviews"][0]["status"].as_str(), listed["reviews"][0]["decided_by"].as_str()), (Some("approved"), Some("bob")), "the first that counts wins");
    }
}

#[test]
fn a_counted_decision_cannot_be_forgotten_and_a_request_written_by_hand_must_be_well_formed() {
    let (db, _) = fresh();
    let id = request(&db, json!({"chain_key": "f", "subject": "ship", "agent_id": "ada"}));
    let decided = ok(&db, "mentisdb_decide_review", json!({"chain_key": "f", "review_id": id, "decision": "approved", "agent_id": "bob"}));
    let index = ok(&db, "mentisdb_head", json!({"chain_key": "f"}))["latest_thought"]["index"].clone();
    let e = err(&db, "mentisdb_forget_thought", json!({"chain_key": "f", "thought_index": index, "reason": "oops"}));
    assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
    assert!(e.to_string().contains("open the review again"), "{e}");
    assert_eq!(decided["review"]["status"], "approved");
    // A request whose deadline is not 1 min to 7 days after it is no review.
    let content = json!({"review": "request", "subject": "forever", "claim_key": null, "reviewers": [], "deadline": 32_503_680_000_000i64}).to_string();
    let stored = ok(&db, "mentisdb_append", json!({"chain_key": "f", "agent_id": "ada", "thought_type": "Question", "tags": ["review"], "content": content}));
    let e = err(&db, "mentisdb_decide_review", json!({"chain_key": "f", "review_id": stored["thought"]["id"], "decision": "approved", "agent_id": "bob"}));
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
}

/// Appends to one chain wait a moment at the store, so that calls made
/// together meet at the chain's write lock (and form groups).
#[derive(Debug)]
struct Slow {
    inner: Arc<MemoryStorage>,
}

impl Storage for Slow {
    fn backend_name(&self) -> &'static str {
        "slow"
    }
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, mentisdb_core::StorageError> {
        self.inner.read(name)
    }
    fn append(&self, name: &str, bytes: &[u8]) -> Result<(), mentisdb_core::StorageError> {
        self.inner.append(name, bytes)
    }
    fn append_at(&self, name: &str, expected_len: u64, bytes: &[u8]) -> Result<(), mentisdb_core::StorageError> {
        std::thread::sleep(std::time::Duration::from_millis(50));
        self.inner.append_at(name, expected_len, bytes)
    }
    passes_to_inner!();
}

#[test]
fn reviewers_deciding_at_once_through_one_engine_store_one_decision() {
    let slow = Arc::new(Slow { inner: Arc::new(MemoryStorage::new()) });
    let db = Arc::new(MentisDb::open(slow as Arc<dyn Storage>, Arc::new(FixedClock::new(T0, 1)), ids(), DbConfig::default()).unwrap().0);
    let id = request(&db, json!({"chain_key": "g", "subject": "merge", "agent_id": "ada"}));
    let answers: Vec<serde_json::Value> = std::thread::scope(|s| {
        // An ordinary append leads a group the decisions would join.
        s.spawn(|| ok(&db, "mentisdb_append", json!({"chain_key": "g", "thought_type": "Finding", "content": "unrelated"})));
        let calls: Vec<_> = (0..4).map(|i| {
            let (db, id) = (&db, &id);
            s.spawn(move || ok(db, "mentisdb_decide_review", json!({"chain_key": "g", "review_id": id, "decision": "approved", "agent_id": format!("r{i}")})))
        }).collect();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    });
    assert_eq!(answers.iter().filter(|a| a["ok"] == true).count(), 1, "{answers:?}");
    let decisions = ok(&db, "mentisdb_search", json!({"chain_key": "g", "thought_types": ["Decision"]}))["thoughts"].as_array().unwrap().len();
    assert_eq!(decisions, 1, "one decision stored");
}

#[test]
fn two_engines_deciding_at_once_store_one_decision() {
    // Two daemons on one database: B has not seen A's decision when it
    // decides; its append loses the race, re-bases onto A's, and answers
    // already_decided with A's decision. The chain holds one decision.
    let shared = Arc::new(MemoryStorage::new());
    let open = || MentisDb::open(shared.clone() as Arc<dyn Storage>, Arc::new(FixedClock::new(T0, 1000)), ids(), DbConfig::default()).expect("open").0;
    let (a, b) = (open(), open());
    let id = request(&a, json!({"chain_key": "p", "subject": "deploy", "reviewers": ["bob", "cy"], "agent_id": "ada"}));
    b.catch_up("p").unwrap();
    assert_eq!(ok(&b, "mentisdb_list_reviews", json!({"chain_key": "p"}))["reviews"][0]["review_id"], id.as_str());
    let won = ok(&a, "mentisdb_decide_review", json!({"chain_key": "p", "review_id": id, "decision": "rejected", "agent_id": "bob"}));
    assert_eq!(won["ok"], true);
    let lost = ok(&b, "mentisdb_decide_review", json!({"chain_key": "p", "review_id": id, "decision": "approved", "agent_id": "cy"}));
    assert_eq!((lost["ok"].as_bool(), lost["reason"].as_str(), lost["decision"].as_str()), (Some(false), Some("already_decided"), Some("rejected")), "{lost}");
    // B's decision was written after re-basing onto A's: history that does not count.
    let fresh = MentisDb::open(shared.clone() as Arc<dyn Storage>, Arc::new(FixedClock::new(T0, 1000)), ids(), DbConfig::default()).unwrap().0;
    let listed = ok(&fresh, "mentisdb_list_reviews", json!({"chain_key": "p", "include_decided": true}));
    assert_eq!((listed["reviews"][0]["decision"].as_str(), listed["reviews"][0]["decided_by"].as_str()), (Some("rejected"), Some("bob")));
}

#[test]
fn bad_requests_are_refused_with_the_field_named() {
    let (db, _) = fresh();
    for (args, needle) in [
        (json!({"chain_key": "x", "subject": " "}), "subject"),
        (json!({"chain_key": "x", "subject": "s".repeat(513)}), "subject"),
        (json!({"chain_key": "x", "subject": "ok", "reviewers": ["a\u{7}"]}), "reviewers"),
        (json!({"chain_key": "x", "subject": "ok", "reviewers": (0..21).map(|i| format!("r{i}")).collect::<Vec<_>>()}), "reviewers"),
        (json!({"chain_key": "x", "subject": "log in with AKIAIOSFODNN7EXAMPLE"}), "secret"),
    ] {
        let e = err(&db, "mentisdb_request_review", args.clone());
        assert!(e.to_string().contains(needle), "{args}: {e}");
    }
    let e = err(&db, "mentisdb_decide_review", json!({"chain_key": "x", "review_id": "nope", "decision": "approved", "agent_id": "bob"}));
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    let e = err(&db, "mentisdb_decide_review", json!({"chain_key": "x", "review_id": "nope", "decision": "maybe", "agent_id": "bob"}));
    assert!(e.to_string().contains("approved, rejected, needs_changes"), "{e}");
    let clamped = ok(&db, "mentisdb_request_review", json!({"chain_key": "x", "subject": "soon", "deadline_ms": 5}));
    assert!(clamped["warnings"].to_string().contains("deadline_ms"), "a clamped deadline is named: {clamped}");
}

#[test]
fn reviews_are_judged_at_chain_time_when_another_daemons_clock_is_ahead() {
    // B's clock is 10 minutes behind A's. After A's append the chain's time
    // is A's: a decision B wrote now would be stamped then, past a one-minute
    // deadline, so B refuses it and says the review expired; nothing is written.
    let shared = Arc::new(MemoryStorage::new());
    let open = |at: i64| MentisDb::open(shared.clone() as Arc<dyn Storage>, Arc::new(FixedClock::new(at, 1)), ids(), DbConfig::default()).expect("open").0;
    let (a, b) = (open(T0 + 600_000), open(T0));
    let id = request(&b, json!({"chain_key": "s", "subject": "ship", "deadline_ms": 60_000, "agent_id": "ada"}));
    a.catch_up("s").unwrap();
    ok(&a, "mentisdb_append", json!({"chain_key": "s", "thought_type": "Finding", "content": "later, by A's clock"}));
    b.catch_up("s").unwrap();
    let late = ok(&b, "mentisdb_decide_review", json!({"chain_key": "s", "review_id": id, "decision": "approved", "agent_id": "bob"}));
    assert_eq!((late["ok"].as_bool(), late["reason"].as_str(), late["review"]["status"].as_str()), (Some(false), Some("expired"), Some("expired")), "{late}");
    assert_eq!(ok(&b, "mentisdb_list_reviews", json!({"chain_key": "s"}))["reviews"][0]["status"], "expired");
    assert_eq!(ok(&b, "mentisdb_head", json!({"chain_key": "s"}))["thought_count"], 2, "no decision written");
}
