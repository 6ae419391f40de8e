//! What a host's event stream and webhooks build on: every durable thought
//! reaches the registered observers (appends of this engine and thoughts
//! taken in from another engine on a shared store), deletions are told,
//! and a reader can fetch what it missed from its cursor.

use crate::common;

use common::{fresh, ok};
use mentisdb_core::events::EventCursor;
use mentisdb_core::{AppendObserver, DbConfig, MentisDb, SequentialIds, Thought};
use serde_json::json;
use std::sync::{Arc, Mutex};

#[derive(Default)]
struct Seen(Mutex<Vec<String>>);

impl AppendObserver for Seen {
    fn appended(&self, chain_key: &str, thought: &Thought) {
        self.0.lock().unwrap().push(format!("{chain_key}#{} {}", thought.index, thought.content));
    }
    fn chain_deleted(&self, chain_key: &str) {
        self.0.lock().unwrap().push(format!("deleted {chain_key}"));
    }
}

#[test]
fn observers_hear_each_new_thought_once_but_not_replays() {
    let (db, _) = fresh();
    let seen = Arc::new(Seen::default());
    db.add_observer(seen.clone());
    ok(&db, "mentisdb_append", json!({"chain_key": "a", "thought_type": "Idea", "content": "one", "thought_id": "11111111-1111-4111-8111-111111111111"}));
    ok(&db, "mentisdb_append", json!({"chain_key": "a", "thought_type": "Idea", "content": "one", "thought_id": "11111111-1111-4111-8111-111111111111"}));
    ok(&db, "mentisdb_append", json!({"chain_key": "b", "thought_type": "Idea", "content": "two"}));
    ok(&db, "mentisdb_delete_chain", json!({"chain_key": "b"}));
    assert_eq!(*seen.0.lock().unwrap(), ["a#0 one", "b#0 two", "deleted b"]);
}

#[test]
fn thoughts_another_engine_appended_are_told_when_taken_in() {
    let (first, storage) = fresh();
    ok(&first, "mentisdb_append", json!({"chain_key": "shared", "thought_type": "Idea", "content": "before"}));
    let clock = Arc::new(mentisdb_core::FixedClock::new(1_800_000_000_000, 1));
    let (second, _) = MentisDb::open(storage as Arc<dyn mentisdb_core::Storage>, clock, Arc::new(SequentialIds::starting_at(1_000_000)), DbConfig::default()).unwrap();
    let seen = Arc::new(Seen::default());
    second.add_observer(seen.clone());
    ok(&first, "mentisdb_append", json!({"chain_key": "shared", "thought_type": "Idea", "content": "from the first engine"}));
    assert!(seen.0.lock().unwrap().is_empty(), "not taken in yet");
    assert_eq!(second.catch_up("shared").unwrap(), 1);
    assert_eq!(*seen.0.lock().unwrap(), ["shared#1 from the first engine"]);
}

#[test]
fn a_reader_fetches_what_its_cursor_has_not_seen() {
    let (db, _) = fresh();
    for i in 0..5 {
        ok(&db, "mentisdb_append", json!({"chain_key": "c", "thought_type": "Idea", "content": format!("t{i}")}));
    }
    let mut cursor = EventCursor::default();
    cursor.advance("c", 2);
    let from = cursor.next_index("c").unwrap();
    let missed: Vec<u64> = db.thoughts_in("c", from, u64::MAX, 100).unwrap().iter().map(|t| t.index).collect();
    assert_eq!(missed, [2, 3, 4]);
    assert_eq!(db.thoughts_in("c", 1, 3, 100).unwrap().len(), 2);
    assert_eq!(db.thoughts_in("c", 0, u64::MAX, 2).unwrap().len(), 2, "at most max");
    assert!(db.thoughts_in("nowhere", 0, 10, 10).unwrap().is_empty());
    assert_eq!(db.thought_count("c").unwrap(), 5);
    assert_eq!(db.thought_count("nowhere").unwrap(), 0);
}

#[test]
fn a_chain_another_engine_created_is_loaded_and_told_when_announced() {
    let (first, storage) = fresh();
    let clock = Arc::new(mentisdb_core::FixedClock::new(1_800_000_000_000, 1));
    let (second, _) = MentisDb::open(storage as Arc<dyn mentisdb_core::Storage>, clock, Arc::new(SequentialIds::starting_at(1_000_000)), DbConfig::default()).unwrap();
    let seen = Arc::new(Seen::default());
    second.add_observer(seen.clone());
    ok(&first, "mentisdb_append", json!({"chain_key": "made-elsewhere", "thought_type": "Idea", "content": "first"}));
    ok(&first, "mentisdb_append", json!({"chain_key": "made-elsewhere", "thought_type": "Idea", "content": "second"}));
    let object = mentisdb_core::naming::chain_object("made-elsewhere", mentisdb_core::ChainFormat::Binary);
    assert_eq!(second.catch_up_object(&object).unwrap(), 2);
    assert_eq!(*seen.0.lock().unwrap(), ["made-elsewhere#0 first", "made-elsewhere#1 second"]);
    assert_eq!(second.catch_up_object("skills/registry.log").unwrap(), 0, "not a chain");
}

#[test]
fn claim_fact_and_review_records_are_coordination_events_and_other_thoughts_are_not() {
    use mentisdb_core::events::coordination_event;
    let (db, _) = fresh();
    let key = "team";
    ok(&db, "mentisdb_append", json!({"chain_key": key, "thought_type": "Finding", "content": "plain"}));
    ok(&db, "mentisdb_claim", json!({"chain_key": key, "key": "task-1", "holder": "ada", "ttl_ms": 5_000}));
    ok(&db, "mentisdb_renew_claim", json!({"chain_key": key, "key": "task-1", "holder": "ada"}));
    ok(&db, "mentisdb_release_claim", json!({"chain_key": key, "key": "task-1", "holder": "ada"}));
    let fact = ok(&db, "mentisdb_record_fact", json!({"chain_key": key, "subject": "db", "predicate": "is", "object": "pg16"}));
    ok(&db, "mentisdb_close_fact", json!({"chain_key": key, "fact_id": fact["fact"]["fact_id"]}));
    let review = ok(&db, "mentisdb_request_review", json!({"chain_key": key, "subject": "ship", "agent_id": "ada"}));
    ok(&db, "mentisdb_decide_review", json!({"chain_key": key, "review_id": review["review_id"], "decision": "approved", "agent_id": "bob"}));
    let thoughts = db.thoughts_in(key, 0, u64::MAX, 100).unwrap();
    let events: Vec<Option<&str>> = thoughts.iter().map(|t| coordination_event(key, t).map(|e| e.name)).collect();
    assert_eq!(events, [None, Some("claim_acquired"), None, Some("claim_released"), Some("fact_recorded"), Some("fact_closed"), Some("review_requested"), Some("review_decided")]);
    let acquired = coordination_event(key, &thoughts[1]).unwrap().data;
    assert_eq!((acquired["key"].as_str(), acquired["holder"].as_str(), acquired["fencing_token"].as_u64(), acquired["chain_key"].as_str()), (Some("task-1"), Some("ada"), Some(1), Some(key)));
    let decided = coordination_event(key, &thoughts[7]).unwrap().data;
    assert_eq!((decided["review_id"].as_str(), decided["decision"].as_str(), decided["reviewer"].as_str()), (review["review_id"].as_str(), Some("approved"), Some("bob")));
    // The lease ran out 5 s after it was taken; released leases are not expired ones.
    let t_claim = thoughts[1].timestamp_ms;
    assert!(db.leases_expired_between(t_claim, t_claim + 3_600_000).is_empty(), "released before its deadline");
    ok(&db, "mentisdb_claim", json!({"chain_key": key, "key": "task-2", "holder": "cy", "ttl_ms": 5_000}));
    let now = db.now_millis();
    let expired = db.leases_expired_between(now, now + 10_000);
    assert_eq!(expired.iter().map(|(c, l)| (c.as_str(), l.key.as_str(), l.holder.as_str())).collect::<Vec<_>>(), [(key, "task-2", "cy")]);
}
