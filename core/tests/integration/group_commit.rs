//! Group commit (`db/append_group.rs`): appends to one chain that arrive
//! while a write is in flight share the next storage write, and still each
//! get their own thought, in one linear chain that verifies; a `thought_id`
//! repeated inside one group is a replay, not a second thought; a failed
//! write fails every append of its group and stores none of them.

use crate::common;
use common::*;
use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, MentisDb, Storage, StorageError};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Memory storage whose conditional appends take a while (a database
/// commit), counted, so that appends pile up behind each write; the
/// `fail_at`th one (1-based) writes half its bytes and fails.
#[derive(Debug)]
struct SlowWrites {
    inner: Arc<MemoryStorage>,
    writes: AtomicUsize,
    fail_at: usize,
}

impl SlowWrites {
    fn new(inner: Arc<MemoryStorage>, fail_at: usize) -> Arc<Self> {
        Arc::new(SlowWrites { inner, writes: AtomicUsize::new(0), fail_at })
    }
}

impl Storage for SlowWrites {
    fn backend_name(&self) -> &'static str {
        "slow"
    }
    fn list(&self, prefix: &str) -> Result<Vec<String>, StorageError> {
        self.inner.list(prefix)
    }
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError> {
        self.inner.read(name)
    }
    fn append(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        self.inner.append(name, bytes)
    }
    fn append_at(&self, name: &str, expected_len: u64, bytes: &[u8]) -> Result<(), StorageError> {
        let nth = self.writes.fetch_add(1, Ordering::Relaxed) + 1;
        std::thread::sleep(Duration::from_millis(3));
        if nth == self.fail_at {
            self.inner.append_at(name, expected_len, &bytes[..bytes.len() / 2])?;
            return Err(StorageError::io(name, "injected failure after a short write"));
        }
        self.inner.append_at(name, expected_len, bytes)
    }
    fn truncate(&self, name: &str, len: u64) -> Result<(), StorageError> {
        self.inner.truncate(name, len)
    }
    fn sync(&self, name: &str) -> Result<(), StorageError> {
        self.inner.sync(name)
    }
    fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        self.inner.write_atomic(name, bytes)
    }
    fn remove(&self, name: &str) -> Result<(), StorageError> {
        self.inner.remove(name)
    }
    fn location(&self, name: &str) -> String {
        self.inner.location(name)
    }
}

fn open(storage: Arc<dyn Storage>) -> MentisDb {
    MentisDb::open(storage, Arc::new(FixedClock::new(T0, 1)), ids(), DbConfig::default()).expect("open").0
}

fn append(db: &MentisDb, args: Value) -> Result<Value, mentisdb_core::ToolError> {
    let mut call = json!({"chain_key": "g", "agent_id": "ada", "thought_type": "FactLearned"});
    call.as_object_mut().unwrap().extend(args.as_object().unwrap().clone());
    db.call("mentisdb_append", call)
}

#[test]
fn appends_that_arrive_together_share_a_write_and_each_get_their_own_thought() {
    let memory = Arc::new(MemoryStorage::new());
    let slow = SlowWrites::new(memory.clone(), 0);
    let db = open(slow.clone());
    append(&db, json!({"content": "first"})).unwrap();
    let acknowledged: Vec<(u64, String)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|w| {
                let db = &db;
                s.spawn(move || {
                    (0..20)
                        .map(|i| {
                            let t = append(db, json!({"content": format!("w{w} n{i}")})).expect("append")["thought"].clone();
                            (t["index"].as_u64().unwrap(), t["content"].as_str().unwrap().to_string())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(acknowledged.len(), 160);
    let indices: BTreeSet<u64> = acknowledged.iter().map(|(i, _)| *i).collect();
    assert_eq!(indices, (1..=160).collect(), "each append answered its own index");
    let writes = slow.writes.load(Ordering::Relaxed);
    eprintln!("161 appends, {writes} writes");
    assert!(writes <= 80, "161 appends from 8 threads took {writes} writes: no group was formed");
    // A fresh engine verifies what was written and finds each thought once, where its append said.
    let fresh = reopen(memory);
    let stored = ok(&fresh, "mentisdb_search", json!({"chain_key": "g", "limit": 500}))["thoughts"].clone();
    let stored: Vec<(u64, String)> = stored.as_array().unwrap().iter().skip(1).map(|t| (t["index"].as_u64().unwrap(), t["content"].as_str().unwrap().to_string())).collect();
    assert_eq!(stored.iter().collect::<BTreeSet<_>>(), acknowledged.iter().collect::<BTreeSet<_>>());
}

#[test]
fn a_thought_id_sent_twice_at_once_is_stored_once() {
    let memory = Arc::new(MemoryStorage::new());
    let db = open(SlowWrites::new(memory.clone(), 0));
    append(&db, json!({"content": "first"})).unwrap();
    for round in 0..5 {
        let id = format!("retry-{round}");
        let replies: Vec<Value> = std::thread::scope(|s| {
            // One write in flight, then the same thought three times behind it: they queue together.
            let lead = s.spawn(|| append(&db, json!({"content": "in flight"})).unwrap());
            std::thread::sleep(Duration::from_millis(1));
            let same: Vec<_> = (0..3).map(|_| s.spawn(|| append(&db, json!({"content": "once", "thought_id": id})).unwrap())).collect();
            lead.join().unwrap();
            same.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(replies.iter().filter(|r| r["replay"] == false).count(), 1, "round {round}: one append stores it");
        assert!(replies.iter().all(|r| r["thought"] == replies[0]["thought"]), "round {round}: the others answer the stored thought");
    }
    let stored = ok(&reopen(memory), "mentisdb_head", json!({"chain_key": "g"}));
    assert_eq!(stored["thought_count"], 11, "first + 5 rounds of (in flight + once)");
}

#[test]
fn a_failed_write_fails_its_whole_group_and_stores_none_of_it() {
    let memory = Arc::new(MemoryStorage::new());
    // The 3rd write fails halfway: the appends of its group share its fate.
    // The chain's header and a first thought are writes 1 and 2, so the
    // first write of the six appends below is the failing one, however
    // they group.
    let failing = SlowWrites::new(memory.clone(), 3);
    let db = open(failing.clone());
    append(&db, json!({"content": "first"})).unwrap();
    assert_eq!(failing.writes.load(Ordering::Relaxed), 2, "the header, then the first thought");
    let results: Vec<Result<Value, _>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..6).map(|w| {
            let db = &db;
            s.spawn(move || append(db, json!({"content": format!("w{w}")})))
        }).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(failing.writes.load(Ordering::Relaxed) >= 3, "the failing write happened");
    let acknowledged: BTreeSet<String> = results.iter().filter_map(|r| r.as_ref().ok()).map(|v| v["thought"]["content"].as_str().unwrap().to_string()).collect();
    assert!(acknowledged.len() < 6, "one write failed");
    // What was acknowledged is stored, what failed is not, and the chain goes on.
    append(&db, json!({"content": "after"})).unwrap();
    let stored: BTreeSet<String> = contents(&ok(&reopen(memory), "mentisdb_search", json!({"chain_key": "g"}))["thoughts"]).into_iter().collect();
    let mut expected = acknowledged.clone();
    expected.extend(["first".to_string(), "after".to_string()]);
    assert_eq!(stored, expected);
}
