//! Appends written on a host's event loop (`db/append_now.rs`): the reply
//! of an append comes only after a drain has synced its chain, in the
//! chain's order; observers hear of a thought only once it is durable; an
//! append that would wait (chain not in memory, lock held) writes nothing
//! and can be tried again or waited for; a failed sync answers every
//! append of its batch with an error and tells no observer; a panicking
//! observer costs no reply; a drain dropped unrun frees the chain for the
//! next; many threads appending at once each get one thought of one chain.

use crate::common;
use common::*;
use mentisdb_core::{AppendObserver, DbConfig, FixedClock, MemoryStorage, MentisDb, NotQueued, Queued, ReplyLater, Storage, StorageError, Thought, ToolError};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};

/// Memory storage that counts syncs and fails them while `fail_sync` is
/// set; its appends are quick unless `slow` (a database's round trip).
#[derive(Debug, Default)]
struct Syncs {
    inner: MemoryStorage,
    count: Mutex<u64>,
    fail_sync: AtomicBool,
    slow: bool,
    /// Each object's length at its last sync (or atomic write): what a power loss keeps.
    durable: Mutex<std::collections::BTreeMap<String, usize>>,
}

impl Syncs {
    /// The storage a restart after a power loss now would find: synced bytes only.
    fn crash(&self) -> MemoryStorage {
        let image = MemoryStorage::new();
        let durable = self.durable.lock().unwrap();
        for name in self.inner.list("").unwrap() {
            let bytes = self.inner.read(&name).unwrap().unwrap_or_default();
            let kept = durable.get(&name).copied().unwrap_or(0).min(bytes.len());
            if kept > 0 {
                image.append(&name, &bytes[..kept]).unwrap();
            }
        }
        image
    }

    fn mark_durable(&self, name: &str) {
        let len = self.inner.read(name).unwrap().map_or(0, |b| b.len());
        self.durable.lock().unwrap().insert(name.to_string(), len);
    }
}

impl Storage for Syncs {
    fn backend_name(&self) -> &'static str {
        "syncs"
    }
    fn quick_appends(&self) -> bool {
        !self.slow
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
        self.inner.append_at(name, expected_len, bytes)
    }
    fn truncate(&self, name: &str, len: u64) -> Result<(), StorageError> {
        self.inner.truncate(name, len)?;
        self.durable.lock().unwrap().entry(name.to_string()).and_modify(|d| *d = (*d).min(len as usize));
        Ok(())
    }
    fn sync(&self, name: &str) -> Result<(), StorageError> {
        *self.count.lock().unwrap() += 1;
        if self.fail_sync.load(Ordering::SeqCst) {
            return Err(StorageError::io(name, "injected fsync failure"));
        }
        self.inner.sync(name)?;
        self.mark_durable(name);
        Ok(())
    }
    fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        self.inner.write_atomic(name, bytes)?;
        self.mark_durable(name);
        Ok(())
    }
    fn remove(&self, name: &str) -> Result<(), StorageError> {
        self.durable.lock().unwrap().remove(name);
        self.inner.remove(name)
    }
    fn location(&self, name: &str) -> String {
        self.inner.location(name)
    }
}

/// The contents observers were told of, in order; panics on `panic_on`.
#[derive(Default)]
struct Heard {
    contents: Mutex<Vec<String>>,
    panic_on: Mutex<Option<String>>,
}

impl AppendObserver for Heard {
    fn appended(&self, _chain_key: &str, thought: &Thought) {
        if self.panic_on.lock().unwrap().as_deref() == Some(&*thought.content) {
            panic!("observer fails on {}", thought.content);
        }
        self.contents.lock().unwrap().push(thought.content.to_string());
    }
}

fn open(storage: Arc<Syncs>, config: DbConfig) -> (MentisDb, Arc<Heard>) {
    let (db, _) = MentisDb::open(storage as Arc<dyn Storage>, Arc::new(FixedClock::new(T0, 1000)), ids(), config).expect("open");
    let heard = Arc::new(Heard::default());
    db.add_observer(heard.clone());
    (db, heard)
}

type Replies = Receiver<Result<Value, ToolError>>;

/// Longer than any reply takes: a reply that never comes fails the test, not hangs it.
const WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// A `later` that sends the reply, read as JSON, to the returned receiver.
fn later() -> (ReplyLater, Replies) {
    let (tx, rx) = channel();
    (Box::new(move |r: Result<mentisdb_core::json_text::JsonText, ToolError>| tx.send(r.map(|raw| serde_json::from_str(raw.get()).unwrap())).unwrap()), rx)
}

fn append_args(content: &str) -> Value {
    json!({"chain_key": "c", "thought_type": "Finding", "content": content, "agent_id": "a"})
}

/// Appends `content` now; the chain must be free.
fn append_now(db: &MentisDb, content: &str) -> (Queued, Replies) {
    let (later, rx) = later();
    (db.append_tool_now("mentisdb_append", append_args(content), later).expect("written now"), rx)
}

#[test]
fn replies_wait_for_the_drains_sync_and_keep_the_chains_order() {
    let storage = Arc::new(Syncs::default());
    let (db, heard) = open(storage.clone(), DbConfig::default());
    assert!(db.queues_appends("mentisdb_append") && db.queues_appends("mentisdb_append_retrospective") && !db.queues_appends("mentisdb_search"));
    ok(&db, "mentisdb_append", append_args("first, the ordinary way"));
    let syncs_before = *storage.count.lock().unwrap();
    let (a, ra) = append_now(&db, "alpha");
    let (b, rb) = append_now(&db, "beta");
    let Queued::Drain(drain) = a else { panic!("the first append with no drain running starts one") };
    assert!(matches!(b, Queued::Joined), "the second joins the drain not yet run");
    assert_eq!(ra.try_recv().unwrap_err(), TryRecvError::Empty, "no reply before the sync");
    assert_eq!(*heard.contents.lock().unwrap(), ["first, the ordinary way"], "observers hear of a thought only once it is durable");
    let listed = ok(&db, "mentisdb_search", json!({"chain_key": "c"}));
    assert_eq!(listed["thoughts"].as_array().unwrap().len(), 3, "written thoughts are readable before they are acknowledged: {listed}");
    drain.run(&db);
    assert_eq!(*storage.count.lock().unwrap(), syncs_before + 1, "one sync for the whole batch");
    let (a, b) = (ra.recv_timeout(WAIT).unwrap().unwrap(), rb.recv_timeout(WAIT).unwrap().unwrap());
    assert_eq!((a["thought"]["index"].as_u64(), b["thought"]["index"].as_u64()), (Some(1), Some(2)));
    assert_eq!(a["replay"], false);
    assert_eq!(b["head_hash"], b["thought"]["hash"]);
    assert_eq!(*heard.contents.lock().unwrap(), ["first, the ordinary way", "alpha", "beta"], "in the chain's order");
    // The reply has the ordinary append's shape.
    let ordinary = ok(&db, "mentisdb_append", append_args("gamma"));
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&a), keys(&ordinary));
    assert_eq!(keys(&a["thought"]), keys(&ordinary["thought"]));
    // The next append starts a new drain.
    let (c, rc) = append_now(&db, "delta");
    let Queued::Drain(drain) = c else { panic!("the last drain ended") };
    drain.run(&db);
    assert_eq!(rc.recv_timeout(WAIT).unwrap().unwrap()["thought"]["content"], "delta");
    // What was written verifies as one chain after a re-open.
    let reopened = MentisDb::open(storage.clone() as Arc<dyn Storage>, Arc::new(FixedClock::new(T0, 1000)), ids(), DbConfig::default()).unwrap().0;
    assert_eq!(contents(&ok(&reopened, "mentisdb_search", json!({"chain_key": "c"}))["thoughts"]), ["first, the ordinary way", "alpha", "beta", "gamma", "delta"]);
}

#[test]
fn a_power_loss_keeps_every_acknowledged_append_and_the_chain_verifies() {
    let storage = Arc::new(Syncs::default());
    let (db, _) = open(storage.clone(), DbConfig::default());
    ok(&db, "mentisdb_append", append_args("first"));
    let (a, ra) = append_now(&db, "alpha");
    let (_, rb) = append_now(&db, "beta");
    let reopen = |image: MemoryStorage| {
        let (db, report) = MentisDb::open(Arc::new(image) as Arc<dyn Storage>, Arc::new(FixedClock::new(T0, 1000)), ids(), DbConfig::default()).unwrap();
        assert!(report.refused.is_empty(), "the chain verifies after the crash: {:?}", report.refused);
        contents(&ok(&db, "mentisdb_search", json!({"chain_key": "c"}))["thoughts"])
    };
    assert_eq!(ra.try_recv().unwrap_err(), TryRecvError::Empty);
    assert_eq!(reopen(storage.crash()), ["first"], "written, not yet synced nor acknowledged: a power loss may take them");
    let Queued::Drain(drain) = a else { panic!("a drain starts") };
    drain.run(&db);
    assert!(ra.recv_timeout(WAIT).unwrap().is_ok() && rb.recv_timeout(WAIT).unwrap().is_ok());
    assert_eq!(reopen(storage.crash()), ["first", "alpha", "beta"], "acknowledged: they survive");
}

#[test]
fn an_append_that_would_wait_writes_nothing_and_can_retry_or_wait() {
    let (db, _) = open(Arc::new(Syncs::default()), DbConfig::default());
    // A chain that does not exist yet would be created: that waits.
    let (l, rx) = later();
    let Err(NotQueued::Busy(busy)) = db.append_tool_now("mentisdb_append", append_args("new chain"), l) else { panic!("creating a chain waits") };
    assert!(busy.chain_not_in_memory(), "no use trying again now");
    assert!(!db.chain_exists("c").unwrap(), "nothing was written");
    let Queued::Drain(drain) = busy.wait(&db).unwrap() else { panic!("no drain was running") };
    drain.run(&db);
    assert_eq!(rx.recv_timeout(WAIT).unwrap().unwrap()["thought"]["index"], 0);
    // The chain's lock held (a reader here): busy, then free again.
    let (l, rx) = later();
    let busy = db
        .with_chain("c", |_| match db.append_tool_now("mentisdb_append", append_args("while read"), l) {
            Err(NotQueued::Busy(busy)) if !busy.chain_not_in_memory() => busy,
            other => panic!("a held lock makes an append busy, not {other:?}"),
        })
        .unwrap();
    assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": "c"}))["thought_count"], 1, "nothing was written");
    let Ok(Queued::Drain(drain)) = busy.retry_now(&db) else { panic!("the lock is free now") };
    drain.run(&db);
    assert_eq!(rx.recv_timeout(WAIT).unwrap().unwrap()["thought"]["content"], "while read");
    // A repeated thought_id is answered as a replay, on this path too.
    let with_id = json!({"chain_key": "c", "thought_type": "Finding", "content": "once", "thought_id": "6f9619ff-8b86-d011-b42d-00c04fc964ff"});
    ok(&db, "mentisdb_append", with_id.clone());
    let (l, rx) = later();
    let Ok(Queued::Drain(drain)) = db.append_tool_now("mentisdb_append", with_id.clone(), l) else { panic!("a replay is queued like an append") };
    drain.run(&db);
    assert_eq!(rx.recv_timeout(WAIT).unwrap().unwrap()["replay"], true);
}

#[test]
fn bad_arguments_are_refused_at_once_and_write_nothing() {
    let (db, _) = open(Arc::new(Syncs::default()), DbConfig::default());
    ok(&db, "mentisdb_append", append_args("first"));
    let (l, rx) = later();
    match db.append_tool_now("mentisdb_append", json!({"chain_key": "c", "thought_type": "Finding"}), l) {
        Err(NotQueued::Refused(e)) => assert!(e.to_string().contains("content"), "{e}"),
        other => panic!("missing content is refused, not {other:?}"),
    }
    assert_eq!(rx.recv_timeout(WAIT).unwrap_err(), RecvTimeoutError::Disconnected, "a refused append's `later` is dropped uncalled");
    let (l, _) = later();
    let unknown_type = db.append_tool_now("mentisdb_append", json!({"chain_key": "c", "thought_type": "Nope", "content": "x"}), l);
    assert!(matches!(unknown_type, Err(NotQueued::Refused(_))));
    assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": "c"}))["thought_count"], 1);
}

#[test]
fn a_failed_sync_answers_its_batch_with_an_error_and_tells_no_observer() {
    let storage = Arc::new(Syncs::default());
    let (db, heard) = open(storage.clone(), DbConfig::default());
    ok(&db, "mentisdb_append", append_args("first"));
    storage.fail_sync.store(true, Ordering::SeqCst);
    let (a, ra) = append_now(&db, "unsynced one");
    let (_, rb) = append_now(&db, "unsynced two");
    let Queued::Drain(drain) = a else { panic!("a drain starts") };
    drain.run(&db);
    for rx in [ra, rb] {
        let e = rx.recv_timeout(WAIT).unwrap().unwrap_err();
        assert!(e.to_string().contains("could not be made durable"), "{e}");
    }
    assert_eq!(*heard.contents.lock().unwrap(), ["first"]);
    storage.fail_sync.store(false, Ordering::SeqCst);
    let (c, rc) = append_now(&db, "synced again");
    let Queued::Drain(drain) = c else { panic!("a new drain starts") };
    drain.run(&db);
    assert!(rc.recv_timeout(WAIT).unwrap().is_ok());
}

#[test]
fn a_panicking_observer_costs_no_reply_and_a_drain_dropped_unrun_frees_the_chain() {
    let (db, heard) = open(Arc::new(Syncs::default()), DbConfig::default());
    ok(&db, "mentisdb_append", append_args("first"));
    *heard.panic_on.lock().unwrap() = Some("boom".into());
    let (a, ra) = append_now(&db, "boom");
    let (_, rb) = append_now(&db, "after boom");
    let Queued::Drain(drain) = a else { panic!("a drain starts") };
    drain.run(&db);
    assert_eq!(ra.recv_timeout(WAIT).unwrap().unwrap()["thought"]["content"], "boom", "the append is durable: it is acknowledged");
    assert!(rb.recv_timeout(WAIT).unwrap().is_ok());
    assert_eq!(*heard.contents.lock().unwrap(), ["first", "after boom"], "the drain went on to the next thought");
    // A drain dropped without running (a host shutting down): its appends
    // are answered by their dropped `later`, and the chain drains again.
    let (c, rc) = append_now(&db, "dropped");
    let Queued::Drain(drain) = c else { panic!("a drain starts") };
    drop(drain);
    assert_eq!(rc.recv_timeout(WAIT).unwrap_err(), RecvTimeoutError::Disconnected, "the host answers 'interrupted'");
    let (d, rd) = append_now(&db, "next");
    let Queued::Drain(drain) = d else { panic!("the dropped drain ended: a new one starts") };
    drain.run(&db);
    assert_eq!(rd.recv_timeout(WAIT).unwrap().unwrap()["thought"]["index"], 4);
}

#[test]
fn appends_from_many_threads_with_drains_running_are_each_acknowledged_once_in_one_chain() {
    let storage = Arc::new(Syncs::default());
    let (db, heard) = open(storage.clone(), DbConfig::default());
    ok(&db, "mentisdb_append", append_args("first"));
    let db = Arc::new(db);
    let (threads, each) = (6, 40);
    let replies: Vec<Value> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let db = db.clone();
                s.spawn(move || {
                    (0..each)
                        .map(|i| {
                            let (l, rx) = later();
                            let mut attempt = db.append_tool_now("mentisdb_append", append_args(&format!("t{t} n{i}")), l);
                            let queued = loop {
                                match attempt {
                                    Ok(q) => break q,
                                    Err(NotQueued::Busy(busy)) if i % 2 == 0 => break busy.wait(&db).unwrap(),
                                    Err(NotQueued::Busy(busy)) => attempt = busy.retry_now(&db),
                                    Err(NotQueued::Refused(e)) => panic!("{e}"),
                                }
                            };
                            if let Queued::Drain(drain) = queued {
                                drain.run(&db);
                            }
                            rx.recv_timeout(WAIT).expect("every queued append is answered").unwrap()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let mut indices: Vec<u64> = replies.iter().map(|r| r["thought"]["index"].as_u64().unwrap()).collect();
    indices.sort_unstable();
    assert_eq!(indices, (1..=(threads * each) as u64).collect::<Vec<_>>(), "one thought each, no gaps");
    let heard = heard.contents.lock().unwrap().clone();
    let stored = contents(&ok(&db, "mentisdb_search", json!({"chain_key": "c", "limit": 1000}))["thoughts"]);
    assert_eq!(heard, stored, "observers heard every thought once, in the chain's order");
    assert!(*storage.count.lock().unwrap() <= (threads * each) as u64, "no more syncs than appends");
    let reopened = MentisDb::open(storage as Arc<dyn Storage>, Arc::new(FixedClock::new(T0, 1000)), ids(), DbConfig::default()).unwrap().0;
    assert_eq!(ok(&reopened, "mentisdb_head", json!({"chain_key": "c"}))["thought_count"], 1 + threads * each, "the chain verifies on re-open");
}

#[test]
fn slow_backends_and_dedup_keep_the_ordinary_append_path() {
    let (memory, _) = fresh();
    assert!(memory.queues_appends("mentisdb_append"), "memory appends are quick");
    let (slow, _) = open(Arc::new(Syncs::default()), DbConfig { dedup_threshold: Some(0.9), ..DbConfig::default() });
    assert!(!slow.queues_appends("mentisdb_append"), "a dedup scan may be long");
    let (db, _) = open(Arc::new(Syncs { slow: true, ..Syncs::default() }), DbConfig::default());
    assert!(!db.queues_appends("mentisdb_append"), "a backend whose appends are round trips");
    assert_eq!(ok(&db, "mentisdb_append", append_args("the ordinary way"))["thought"]["index"], 0);
}
