//! Several engines on one shared store (what several daemons on one database
//! are): appends through any of them make one linear chain that verifies,
//! with every acknowledged thought exactly once; an engine that lost a race
//! takes in the other's records (verified) and re-bases; a retry that reaches
//! another engine is still a replay; tampered records from the store are refused.

use crate::common;
use common::*;
use mentisdb_core::{naming, ChainFormat, DbConfig, ErrorKind, FixedClock, MemoryStorage, MentisDb, Storage, WriteCounts};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::Arc;

fn append(db: &MentisDb, chain: &str, content: &str) -> Result<Value, mentisdb_core::ToolError> {
    db.call("mentisdb_append", json!({"chain_key": chain, "agent_id": "ada", "thought_type": "FactLearned", "content": content}))
}

fn head(db: &MentisDb, chain: &str) -> Value {
    ok(db, "mentisdb_head", json!({"chain_key": chain}))
}

#[test]
fn appends_through_two_engines_make_one_linear_chain() {
    let storage = Arc::new(MemoryStorage::new());
    let a = reopen(storage.clone());
    let b = reopen(storage.clone());
    // A creates the chain; B finds it on first use.
    let first = append(&a, "c", "from a").unwrap()["thought"].clone();
    // B has never seen the chain: it loads it, then appends after A's thought.
    let second = append(&b, "c", "from b").unwrap()["thought"].clone();
    assert_eq!((second["index"].as_u64(), &second["prev_hash"]), (Some(1), &first["hash"]));
    // A's view is stale: its append loses the race, takes B's record in, re-bases.
    let third = append(&a, "c", "from a again").unwrap()["thought"].clone();
    assert_eq!((third["index"].as_u64(), &third["prev_hash"]), (Some(2), &second["hash"]));
    // A wrote three times (its first thought, the refused write, the re-based one) and lost one race.
    assert_eq!(a.write_counts(), WriteCounts { group_writes: 3, lost_races: 1 });
    assert_eq!(b.write_counts(), WriteCounts { group_writes: 1, lost_races: 0 });
    // B catches up on demand (what a daemon does on a notification naming the object).
    let object = naming::chain_object("c", ChainFormat::Binary);
    assert_eq!(b.catch_up_object(&object).unwrap(), 1);
    assert_eq!(b.catch_up_object(&object).unwrap(), 0, "nothing new");
    assert_eq!(b.catch_up_object(&naming::agents_object("c")).unwrap(), 0, "not a chain object");
    assert_eq!(b.catch_up_object(&naming::chain_object("not-loaded", ChainFormat::Binary)).unwrap(), 0, "a chain not served here loads on first use");
    assert_eq!(head(&a, "c"), head(&b, "c"));
    assert_eq!(head(&b, "c")["thought_count"], 3);
    // And the stored object verifies as one chain.
    let fresh = reopen(storage);
    assert_eq!(contents(&ok(&fresh, "mentisdb_search", json!({"chain_key": "c"}))["thoughts"]), vec!["from a", "from b", "from a again"]);
}

#[test]
fn concurrent_writers_on_three_engines_lose_nothing_and_duplicate_nothing() {
    for format in ["binary", "jsonl"] {
        let storage = Arc::new(MemoryStorage::new());
        let engines: Vec<Arc<MentisDb>> = (0..3).map(|_| Arc::new(reopen(storage.clone()))).collect();
        ok(&engines[0], "mentisdb_bootstrap", json!({"chain_key": "load", "content": "start", "storage_adapter": format}));
        let acknowledged: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..12)
                .map(|w| {
                    let db = engines[w % 3].clone();
                    s.spawn(move || (0..25).map(|i| append(&db, "load", &format!("w{w} n{i}")).expect("append").get("thought").unwrap()["id"].as_str().unwrap().to_string()).collect::<Vec<_>>())
                })
                .collect();
            handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(acknowledged.len(), 300);
        let fresh = reopen(storage.clone());
        let all = ok(&fresh, "mentisdb_search", json!({"chain_key": "load"}))["thoughts"].clone();
        let stored: Vec<String> = all.as_array().unwrap().iter().skip(1).map(|t| t["id"].as_str().unwrap().to_string()).collect();
        assert_eq!(stored.len(), 300, "{format}: every acknowledged append is stored once");
        assert_eq!(stored.iter().collect::<BTreeSet<_>>(), acknowledged.iter().collect::<BTreeSet<_>>());
        for db in &engines {
            db.catch_up("load").unwrap();
            assert_eq!(head(db, "load"), head(&fresh, "load"), "{format}: every engine agrees on the head");
        }
    }
}

/// What a store announces of an append: the object, the offset, the bytes.
type Announcement = (String, u64, Vec<u8>);

/// A shared store that announces every append, in the order they are
/// stored, to every engine's listener (what PostgreSQL `NOTIFY` does).
#[derive(Debug)]
struct Announcing {
    inner: Arc<MemoryStorage>,
    listeners: Arc<std::sync::Mutex<Vec<std::sync::mpsc::Sender<Announcement>>>>,
}

impl Storage for Announcing {
    fn backend_name(&self) -> &'static str {
        "announcing"
    }
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, mentisdb_core::StorageError> {
        self.inner.read(name)
    }
    fn append(&self, name: &str, bytes: &[u8]) -> Result<(), mentisdb_core::StorageError> {
        self.inner.append(name, bytes)
    }
    fn append_at(&self, name: &str, expected_len: u64, bytes: &[u8]) -> Result<(), mentisdb_core::StorageError> {
        // Held while storing and announcing: announcements in commit order.
        let listeners = self.listeners.lock().unwrap();
        self.inner.append_at(name, expected_len, bytes)?;
        listeners.iter().for_each(|l| {
            let _ = l.send((name.to_string(), expected_len, bytes.to_vec()));
        });
        Ok(())
    }
    passes_to_inner!();
}

#[test]
fn engines_told_of_each_others_appends_serve_them_all_without_catching_up() {
    let shared = Arc::new(MemoryStorage::new());
    let listeners = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut told = Vec::new();
    let engines: Vec<Arc<MentisDb>> = (0..3)
        .map(|_| {
            let (tx, rx) = std::sync::mpsc::channel();
            listeners.lock().unwrap().push(tx);
            told.push(rx);
            let store = Arc::new(Announcing { inner: shared.clone(), listeners: listeners.clone() });
            Arc::new(MentisDb::open(store as Arc<dyn Storage>, Arc::new(FixedClock::new(T0, 1000)), ids(), DbConfig::default()).expect("open").0)
        })
        .collect();
    append(&engines[0], "load", "start").unwrap();
    // Each engine's listener takes in what it is told, then what it kept for busy chains.
    let listening: Vec<_> = engines
        .iter()
        .zip(told)
        .map(|(db, rx)| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut errors = Vec::new();
                while let Ok((object, offset, bytes)) = rx.recv() {
                    errors.extend(db.take_in_appended(&object, offset, &bytes).err());
                    if let Ok((object, offset, bytes)) = rx.try_recv() {
                        errors.extend(db.take_in_appended(&object, offset, &bytes).err());
                        continue;
                    }
                    errors.extend(db.take_in_announced().err());
                }
                errors.extend(db.take_in_announced().err());
                errors
            })
        })
        .collect();
    // Readers keep every engine's chain busy, so announcements are often kept for later.
    let reading = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let readers: Vec<_> = engines
        .iter()
        .map(|db| {
            let (db, reading) = (db.clone(), reading.clone());
            std::thread::spawn(move || {
                while reading.load(std::sync::atomic::Ordering::Relaxed) {
                    ok(&db, "mentisdb_search", json!({"chain_key": "load", "text": "n1", "limit": 5}));
                }
            })
        })
        .collect();
    let acknowledged: BTreeSet<String> = std::thread::scope(|s| {
        let writers: Vec<_> = (0..12)
            .map(|w| {
                let db = engines[w % 3].clone();
                s.spawn(move || (0..25).map(|i| append(&db, "load", &format!("w{w} n{i}")).expect("append")["thought"]["id"].as_str().unwrap().to_string()).collect::<Vec<_>>())
            })
            .collect();
        writers.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(acknowledged.len(), 300);
    // The store stops announcing; each listener ends after what it was told.
    listeners.lock().unwrap().clear();
    for l in listening {
        let errors = l.join().unwrap();
        assert!(errors.is_empty(), "announced appends were refused: {errors:?}");
    }
    reading.store(false, std::sync::atomic::Ordering::Relaxed);
    readers.into_iter().for_each(|r| r.join().unwrap());
    let fresh = reopen(shared);
    let all = ok(&fresh, "mentisdb_search", json!({"chain_key": "load", "limit": 1000}))["thoughts"].clone();
    let stored: BTreeSet<String> = all.as_array().unwrap().iter().skip(1).map(|t| t["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(stored, acknowledged, "every acknowledged append is stored once");
    assert_eq!(head(&fresh, "load")["thought_count"], 301);
    for db in &engines {
        assert_eq!(head(db, "load"), head(&fresh, "load"), "every engine serves the whole chain from what it was told");
    }
}

#[test]
fn a_retry_that_reaches_another_engine_is_a_replay() {
    let storage = Arc::new(MemoryStorage::new());
    let a = reopen(storage.clone());
    let b = reopen(storage.clone());
    append(&b, "r", "b knows the chain").unwrap();
    let args = json!({"chain_key": "r", "agent_id": "ada", "thought_type": "Decision", "content": "ship it", "thought_id": "retry-1"});
    let first = ok(&a, "mentisdb_append", args.clone());
    // B has not caught up: its first attempt conflicts, it takes A's record in and sees the id.
    let again = ok(&b, "mentisdb_append", args.clone());
    assert_eq!(again["replay"], true);
    assert_eq!(again["thought"], first["thought"]);
    let other = err(&b, "mentisdb_append", json!({"chain_key": "r", "agent_id": "ada", "thought_type": "Decision", "content": "ship something else", "thought_id": "retry-1"}));
    assert_eq!(other.kind(), ErrorKind::Conflict);
    assert_eq!(head(&reopen(storage), "r")["thought_count"], 2);
}

#[test]
fn records_that_do_not_verify_are_refused_not_served() {
    let storage = Arc::new(MemoryStorage::new());
    let a = reopen(storage.clone());
    let b = reopen(storage.clone());
    ok(&a, "mentisdb_bootstrap", json!({"chain_key": "t", "content": "one", "storage_adapter": "jsonl"}));
    assert_eq!(head(&b, "t")["thought_count"], 1);
    // Someone changes a record another engine appended (well-formed, but its hash no longer matches).
    append(&a, "t", "two").unwrap();
    let object = naming::chain_object("t", ChainFormat::Jsonl);
    let mut bytes = storage.read(&object).unwrap().unwrap();
    let at = bytes.windows(3).rposition(|w| w == b"two").unwrap();
    bytes[at] = b'T';
    storage.write_atomic(&object, &bytes).unwrap();
    let e = b.catch_up("t").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ChainRefused, "{e}");
    // B keeps serving what it verified.
    assert_eq!(head(&b, "t")["thought_count"], 1);
}

fn upload(db: &MentisDb, content: &str) -> Value {
    ok(db, "mentisdb_upsert_agent", json!({"chain_key": "skills-chain", "agent_id": "ada"}));
    ok(db, "mentisdb_upload_skill", json!({"chain_key": "skills-chain", "agent_id": "ada", "skill_id": "deploy", "content": content}))
}

fn versions(db: &MentisDb) -> usize {
    db.call("mentisdb_skill_versions", json!({"skill_id": "deploy"})).map(|v| v["versions"].as_array().unwrap().len()).unwrap_or(0)
}

#[test]
fn the_skill_registry_is_shared_through_the_log() {
    let storage = Arc::new(MemoryStorage::new());
    let a = reopen(storage.clone());
    let b = reopen(storage.clone());
    upload(&a, "# Deploy\nv1\n");
    assert_eq!(versions(&b), 0, "b has not looked yet");
    assert_eq!(b.catch_up_object(naming::SKILLS_LOG).unwrap(), 1, "what a notification of the log does");
    assert_eq!(versions(&b), 1);
    // B writes on top of A's event (it judges on the latest registry), and A takes B's in.
    upload(&b, "# Deploy\nv2\n");
    upload(&a, "# Deploy\nv3\n");
    assert_eq!((versions(&a), b.catch_up_object(naming::SKILLS_LOG).unwrap(), versions(&b)), (3, 1, 3));
    // A deletion replaces the log; B reads it again when told.
    ok(&a, "mentisdb_delete_skill", json!({"skill_id": "deploy"}));
    assert_eq!(versions(&b), 3);
    assert!(b.reload_object(naming::SKILLS_LOG).unwrap());
    assert_eq!(versions(&b), 0);
    // Every engine opening the store reads the same registry.
    upload(&b, "# Deploy\nagain\n");
    assert_eq!(versions(&reopen(storage)), 1);
}

#[test]
fn announced_bytes_are_taken_in_verified_and_a_gap_reads_the_store() {
    let storage = Arc::new(MemoryStorage::new());
    let a = reopen(storage.clone());
    let b = reopen(storage.clone());
    append(&a, "n", "one").unwrap();
    b.catch_up("n").unwrap_or_default();
    assert_eq!(head(&b, "n")["thought_count"], 1);
    let object = naming::chain_object("n", ChainFormat::Binary);
    let at = storage.read(&object).unwrap().unwrap().len() as u64;
    append(&a, "n", "two").unwrap();
    let bytes = storage.read_from(&object, at).unwrap().unwrap();
    // Damaged bytes (a frame whose checksum fails reads as torn) take nothing in.
    let mut bad = bytes.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    assert!(matches!(b.take_in_appended(&object, at, &bad), Ok(0) | Err(_)));
    assert_eq!(head(&b, "n")["thought_count"], 1);
    // The announced bytes themselves: taken in without a read, once.
    assert_eq!(b.take_in_appended(&object, at, &bytes).unwrap(), 1);
    assert_eq!(b.take_in_appended(&object, at, &bytes).unwrap(), 0, "bytes it holds are ignored");
    // An announcement past a gap (one missed): the store is read from what B holds.
    let at2 = storage.read(&object).unwrap().unwrap().len() as u64;
    append(&a, "n", "three").unwrap();
    let at3 = storage.read(&object).unwrap().unwrap().len() as u64;
    append(&a, "n", "four").unwrap();
    let fourth = storage.read_from(&object, at3).unwrap().unwrap();
    assert!(at3 > at2);
    assert_eq!(b.take_in_appended(&object, at3, &fourth).unwrap(), 2);
    assert_eq!(head(&b, "n"), head(&a, "n"));
}

/// A test's gate: the call that takes it says so on the first channel and
/// waits for the second.
type Gate = (std::sync::mpsc::Sender<()>, std::sync::mpsc::Receiver<()>);

/// B's view of a shared store: its next conditional append, and its next
/// read of one object, wait at gates the test opens; its reads from an
/// offset are counted.
#[derive(Debug)]
struct Held {
    inner: Arc<MemoryStorage>,
    gate: std::sync::Mutex<Option<Gate>>,
    read_gate: std::sync::Mutex<Option<(String, Gate)>>,
    reads_from: std::sync::atomic::AtomicUsize,
}

impl Storage for Held {
    fn backend_name(&self) -> &'static str {
        "held-writes"
    }
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, mentisdb_core::StorageError> {
        let gate = {
            let mut held = self.read_gate.lock().unwrap();
            if held.as_ref().is_some_and(|(object, _)| object == name) { held.take() } else { None }
        };
        if let Some((_, (entered, release))) = gate {
            entered.send(()).unwrap();
            release.recv().unwrap();
        }
        self.inner.read(name)
    }
    fn read_from(&self, name: &str, offset: u64) -> Result<Option<Vec<u8>>, mentisdb_core::StorageError> {
        self.reads_from.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.inner.read_from(name, offset)
    }
    fn append(&self, name: &str, bytes: &[u8]) -> Result<(), mentisdb_core::StorageError> {
        self.inner.append(name, bytes)
    }
    fn append_at(&self, name: &str, expected_len: u64, bytes: &[u8]) -> Result<(), mentisdb_core::StorageError> {
        let gate = self.gate.lock().unwrap().take();
        if let Some((entered, release)) = gate {
            entered.send(()).unwrap();
            release.recv().unwrap();
        }
        self.inner.append_at(name, expected_len, bytes)
    }
    passes_to_inner!();
}

impl Held {
    /// Starts an append of "from b" to `chain` through `b` and returns once
    /// its write waits at the gate (the append leads: it holds the chain),
    /// with the thread and the sender that opens the gate.
    fn hold_an_append(&self, b: &Arc<MentisDb>, chain: &'static str) -> (std::thread::JoinHandle<Value>, std::sync::mpsc::Sender<()>) {
        let (entered_tx, entered) = std::sync::mpsc::channel();
        let (release, release_rx) = std::sync::mpsc::channel();
        *self.gate.lock().unwrap() = Some((entered_tx, release_rx));
        let b = b.clone();
        let writer = std::thread::spawn(move || append(&b, chain, "from b").unwrap()["thought"].clone());
        entered.recv().unwrap();
        (writer, release)
    }
}

/// Engine A on a shared store and engine B on the same store through
/// [`Held`], both serving `chain` with its first thought.
struct Racing {
    shared: Arc<MemoryStorage>,
    a: MentisDb,
    held: Arc<Held>,
    b: Arc<MentisDb>,
    object: String,
}

impl Racing {
    fn new(chain: &str) -> Self {
        let shared = Arc::new(MemoryStorage::new());
        let a = reopen(shared.clone());
        let held = Arc::new(Held { inner: shared.clone(), gate: Default::default(), read_gate: Default::default(), reads_from: Default::default() });
        let b = Arc::new(MentisDb::open(held.clone() as Arc<dyn Storage>, Arc::new(FixedClock::new(T0, 1000)), ids(), DbConfig::default()).expect("open").0);
        append(&a, chain, "first").unwrap();
        assert_eq!(head(&b, chain)["thought_count"], 1);
        Racing { shared, a, held, b, object: naming::chain_object(chain, ChainFormat::Binary) }
    }
}

#[test]
fn an_append_that_lost_a_race_re_bases_on_the_announced_bytes_without_a_read() {
    let Racing { shared, a, held, b, object } = Racing::new("r");
    // B's append leads: it holds the chain while its write waits at the gate.
    let (writer, release) = held.hold_an_append(&b, "r");
    // A wins the race for the same offset, and its bytes are announced to B.
    let at = shared.read(&object).unwrap().unwrap().len() as u64;
    let won = append(&a, "r", "from a").unwrap()["thought"].clone();
    let bytes = shared.read_from(&object, at).unwrap().unwrap();
    let (told_tx, told) = std::sync::mpsc::channel();
    let announcer = {
        let (b, object, bytes) = (b.clone(), object.clone(), bytes.clone());
        std::thread::spawn(move || told_tx.send(b.take_in_appended(&object, at, &bytes).unwrap()).unwrap())
    };
    // B's chain is busy: the announcement is kept, not waited for.
    assert_eq!(told.recv_timeout(std::time::Duration::from_secs(30)).expect("the announcement does not wait for the busy chain"), 0);
    announcer.join().unwrap();
    let reads_before = held.reads_from.load(std::sync::atomic::Ordering::SeqCst);
    release.send(()).unwrap();
    // B's write is refused; it takes A's kept bytes in and re-bases after them.
    let rebased = writer.join().unwrap();
    assert_eq!((rebased["index"].as_u64(), &rebased["prev_hash"]), (Some(2), &won["hash"]));
    assert_eq!(held.reads_from.load(std::sync::atomic::Ordering::SeqCst), reads_before, "the lost race was settled from the announcement, with no read");
    assert_eq!(b.take_in_announced().unwrap(), 0, "nothing left kept");
    a.catch_up("r").unwrap();
    assert_eq!(head(&a, "r"), head(&b, "r"));
    let fresh = reopen(shared);
    assert_eq!(contents(&ok(&fresh, "mentisdb_search", json!({"chain_key": "r"}))["thoughts"]), vec!["first", "from a", "from b"]);
}

#[test]
fn announcements_kept_on_a_busy_chain_are_taken_in_once_it_is_free() {
    let Racing { shared, a, held, b, object } = Racing::new("k");
    // B holds chain "k" (its append waits at the gate) while A appends twice more.
    let (writer, release) = held.hold_an_append(&b, "k");
    let mut announced = Vec::new();
    for content in ["a two", "a three"] {
        let at = shared.read(&object).unwrap().unwrap().len() as u64;
        append(&a, "k", content).unwrap();
        announced.push((at, shared.read_from(&object, at).unwrap().unwrap()));
    }
    // The first announcement is kept while B is busy; after B's write (which
    // took them in to re-base) the second is held already and ignored.
    let (at, bytes) = announced[0].clone();
    let kept = {
        let (b, object) = (b.clone(), object.clone());
        std::thread::spawn(move || b.take_in_appended(&object, at, &bytes).unwrap())
    };
    assert_eq!(kept.join().unwrap(), 0);
    release.send(()).unwrap();
    writer.join().unwrap();
    // An announcement that comes while a reader holds the chain (B copying
    // it for a backup, its read of the object held at a gate) is kept; once
    // the reader is done nothing else takes it in: take_in_announced does.
    let before = head(&b, "k")["thought_count"].as_u64().unwrap();
    let (entered_tx, entered) = std::sync::mpsc::channel();
    let (release, release_rx) = std::sync::mpsc::channel();
    *held.read_gate.lock().unwrap() = Some((object.clone(), (entered_tx, release_rx)));
    let reader = {
        let b = b.clone();
        std::thread::spawn(move || b.snapshot("test", &[], |_| Ok::<(), ()>(())).is_ok())
    };
    entered.recv().unwrap();
    let at = shared.read(&object).unwrap().unwrap().len() as u64;
    append(&a, "k", "a four").unwrap();
    let bytes = shared.read_from(&object, at).unwrap().unwrap();
    let (told_tx, told) = std::sync::mpsc::channel();
    let announcer = {
        let (b, object) = (b.clone(), object.clone());
        std::thread::spawn(move || told_tx.send(b.take_in_appended(&object, at, &bytes).unwrap()).unwrap())
    };
    assert_eq!(told.recv_timeout(std::time::Duration::from_secs(30)).expect("the announcement does not wait for the reader"), 0);
    announcer.join().unwrap();
    release.send(()).unwrap();
    assert!(reader.join().unwrap(), "the backup copy is taken");
    assert_eq!(head(&b, "k")["thought_count"].as_u64(), Some(before), "kept, not yet served");
    assert_eq!(b.take_in_announced().unwrap(), 1);
    assert_eq!(head(&b, "k")["thought_count"].as_u64(), Some(before + 1));
    assert_eq!(b.take_in_announced().unwrap(), 0);
}

/// A shared store on which another writer wins each of the next `refusals`
/// appends to a chain: each is refused with the object's length, as
/// PostgreSQL answers a lost race.
#[derive(Debug)]
struct Contended {
    inner: Arc<MemoryStorage>,
    refusals: std::sync::atomic::AtomicUsize,
}

impl Storage for Contended {
    fn backend_name(&self) -> &'static str {
        "contended"
    }
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, mentisdb_core::StorageError> {
        self.inner.read(name)
    }
    fn append(&self, name: &str, bytes: &[u8]) -> Result<(), mentisdb_core::StorageError> {
        self.inner.append(name, bytes)
    }
    fn append_at(&self, name: &str, expected_len: u64, bytes: &[u8]) -> Result<(), mentisdb_core::StorageError> {
        use std::sync::atomic::Ordering::SeqCst;
        if name.starts_with("chains/") && self.refusals.fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1)).is_ok() {
            let actual = self.inner.read(name)?.map_or(0, |b| b.len() as u64);
            return Err(mentisdb_core::StorageError::Conflict { object: name.to_string(), expected: expected_len, actual });
        }
        self.inner.append_at(name, expected_len, bytes)
    }
    passes_to_inner!();
}

#[test]
fn an_append_outlasts_a_long_losing_streak_and_an_endless_one_answers_busy_retry() {
    use std::sync::atomic::Ordering::SeqCst;
    let store = Arc::new(Contended { inner: Arc::new(MemoryStorage::new()), refusals: Default::default() });
    let db = MentisDb::open(store.clone() as Arc<dyn Storage>, Arc::new(FixedClock::new(T0, 1000)), ids(), DbConfig::default()).expect("open").0;
    append(&db, "busy", "first").unwrap();
    // 200 lost races in a row (more than the 64 an append used to give up after): still stored.
    store.refusals.store(200, SeqCst);
    let stored = append(&db, "busy", "after a long streak").unwrap();
    assert_eq!(stored["thought"]["index"], 1);
    assert_eq!(db.write_counts().lost_races, 200);
    // A streak that does not end: the append gives up with a retryable "busy", stores nothing.
    store.refusals.store(usize::MAX, SeqCst);
    let args = json!({"chain_key": "busy", "agent_id": "ada", "thought_type": "FactLearned", "content": "never first", "thought_id": "0193c0de-0000-4000-8000-000000000001"});
    let e = db.call("mentisdb_append", args.clone()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unavailable, "{e}");
    assert!(e.to_string().contains("is busy") && e.to_string().contains("retry"), "{e}");
    assert_eq!(head(&db, "busy")["thought_count"], 2, "nothing of it stored");
    // The retry, once the others let it through, is stored once.
    store.refusals.store(0, SeqCst);
    assert_eq!(db.call("mentisdb_append", args.clone()).unwrap()["thought"]["index"], 2);
    assert_eq!(db.call("mentisdb_append", args).unwrap()["thought"]["index"], 2, "a second retry is a replay");
    assert_eq!(head(&db, "busy")["thought_count"], 3);
}

#[test]
fn a_re_based_thought_that_takes_a_later_time_keeps_its_relations_at_that_time() {
    // B's clock is 10 minutes behind A's. B's append re-based after A's takes
    // A's time (chain time never runs backwards), and so do its relations:
    // B serves the thought exactly as every engine reads it back.
    let shared = Arc::new(MemoryStorage::new());
    let open = |at: i64| MentisDb::open(shared.clone() as Arc<dyn Storage>, Arc::new(FixedClock::new(at, 1)), ids(), DbConfig::default()).expect("open").0;
    let (a, b) = (open(T0 + 600_000), open(T0));
    append(&b, "t", "first").unwrap();
    a.catch_up("t").unwrap();
    append(&a, "t", "later, by A's clock").unwrap();
    let linked = ok(&b, "mentisdb_append", json!({"chain_key": "t", "thought_type": "Finding", "content": "links the first", "relations": [{"kind": "References", "target_index": 0}]}))["thought"].clone();
    assert_eq!(linked["index"], 2, "re-based after A's append");
    assert_eq!(linked["relations"][0]["valid_at"], linked["timestamp"]);
    let fresh = reopen(shared);
    assert_eq!(ok(&fresh, "mentisdb_get_thought", json!({"chain_key": "t", "thought_index": 2}))["thought"], linked);
}
