//! What a host's event stream and webhooks build on: every durable thought
//! reaches the registered observers (appends of this engine and thoughts
//! taken in from another engine on a shared store), deletions are told,
//! and a reader can fetch what it missed from its cursor.

mod common;

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
