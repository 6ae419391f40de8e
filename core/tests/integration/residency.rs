//! Chains under a memory budget (`DbConfig::max_resident_bytes`): more
//! chains than fit stay served (parked ones load again on use), listings do
//! not load them, appends to a parked chain continue its history, and a
//! parked chain's observers hear only of thoughts that are new; a chain
//! read on demand while this engine creates it is served, not refused.

use crate::common;

use common::{ids, ok, T0};
use mentisdb_core::{naming, AppendObserver, ChainFormat, DbConfig, FixedClock, MemoryStorage, MentisDb, Storage, Thought};
use serde_json::json;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

const CHAINS: usize = 20;
const PER_CHAIN: usize = 30;
/// About two of the test chains (each ~60 KB by the estimate).
const BUDGET: u64 = 150_000;

fn open(storage: &Arc<MemoryStorage>, budget: Option<u64>) -> MentisDb {
    let config = DbConfig { max_resident_bytes: budget, ..DbConfig::default() };
    MentisDb::open(storage.clone() as Arc<dyn Storage>, Arc::new(FixedClock::new(T0, 1000)), ids(), config).expect("open").0
}

fn key(i: usize) -> String {
    format!("project-{i:02}")
}

fn fill(db: &MentisDb) {
    for i in 0..CHAINS {
        for n in 0..PER_CHAIN {
            let content = format!("chain {i} thought {n}: {}", "notes about the deployment pipeline and its flaky stages ".repeat(3));
            ok(db, "mentisdb_append", json!({"chain_key": key(i), "thought_type": "Finding", "content": content, "tags": [format!("c{i}")]}));
        }
    }
}

#[test]
fn more_chains_than_the_budget_holds_stay_readable_and_listed() {
    let storage = Arc::new(MemoryStorage::new());
    let db = open(&storage, Some(BUDGET));
    fill(&db);
    let r = db.residency();
    assert!(r.resident_chains <= 3, "{r:?}");
    assert_eq!(r.resident_chains + r.parked_chains, CHAINS, "{r:?}");
    assert!(r.resident_bytes <= BUDGET + 70_000, "{r:?}");

    // Listing answers every chain from its summary and loads none.
    let list = ok(&db, "mentisdb_list_chains", json!({}));
    let chains = list["chains"].as_array().unwrap();
    assert_eq!(chains.len(), CHAINS);
    assert!(chains.iter().all(|c| c["thought_count"] == PER_CHAIN), "{list}");
    assert_eq!(db.residency().parked_chains, r.parked_chains, "a listing loads nothing");

    // Every chain reads back whole, parked or not.
    for i in 0..CHAINS {
        let head = ok(&db, "mentisdb_head", json!({"chain_key": key(i)}));
        assert_eq!((head["thought_count"].clone(), head["integrity_ok"].clone()), (json!(PER_CHAIN), json!(true)));
        let found = ok(&db, "mentisdb_search", json!({"chain_key": key(i), "text": format!("chain {i} thought 7:")}));
        assert_eq!(found["thoughts"].as_array().unwrap().len(), 1, "chain {i}");
    }
    assert!(db.residency().resident_chains <= 3, "reading them all keeps the budget");
}

#[test]
fn a_reopen_under_a_budget_parks_chains_and_appends_continue_their_history() {
    let storage = Arc::new(MemoryStorage::new());
    fill(&open(&storage, None));
    let db = open(&storage, Some(BUDGET));
    let r = db.residency();
    assert!(r.parked_chains >= CHAINS - 3, "open verifies every chain and keeps only what fits: {r:?}");
    assert_eq!(db.chain_keys().len(), CHAINS);
    for i in 0..CHAINS {
        let t = ok(&db, "mentisdb_append", json!({"chain_key": key(i), "thought_type": "Decision", "content": format!("after reopen {i}")}));
        assert_eq!(t["thought"]["index"], PER_CHAIN, "chain {i}");
    }
    // A parked chain can be deleted.
    let parked = (0..CHAINS).map(key).find(|k| !db.is_resident(k)).expect("a parked chain");
    assert_eq!(ok(&db, "mentisdb_delete_chain", json!({"chain_key": parked}))["thought_count"], PER_CHAIN + 1);
    assert_eq!(db.chain_keys().len(), CHAINS - 1);
    drop(db);
    let all = open(&storage, None);
    for k in all.chain_keys() {
        assert_eq!(ok(&all, "mentisdb_head", json!({"chain_key": k}))["thought_count"], PER_CHAIN + 1, "{k} verifies with every append");
    }
}

#[derive(Default)]
struct Heard(Mutex<Vec<(String, u64)>>);

impl AppendObserver for Heard {
    fn appended(&self, chain_key: &str, thought: &Thought) {
        self.0.lock().unwrap().push((chain_key.to_string(), thought.index));
    }
}

#[test]
fn a_parked_chain_told_of_another_engines_append_reports_only_the_new_thought() {
    let storage = Arc::new(MemoryStorage::new());
    let a = open(&storage, Some(BUDGET));
    fill(&a);
    let parked = (0..CHAINS).map(key).find(|k| !a.is_resident(k)).expect("a parked chain");
    let heard = Arc::new(Heard::default());
    a.add_observer(heard.clone());
    let b = open(&storage, None);
    ok(&b, "mentisdb_append", json!({"chain_key": parked, "thought_type": "Idea", "content": "from the other engine"}));
    let added = a.catch_up_object(&naming::chain_object(&parked, ChainFormat::Binary)).unwrap();
    assert_eq!(added, 1);
    assert_eq!(*heard.0.lock().unwrap(), [(parked.clone(), PER_CHAIN as u64)]);
    assert_eq!(ok(&a, "mentisdb_head", json!({"chain_key": parked}))["thought_count"], PER_CHAIN + 1);
}

/// A store whose reads of one object wait until the test lets them go.
#[derive(Debug)]
struct Gated {
    inner: MemoryStorage,
    object: Mutex<Option<String>>,
    entered: Mutex<std::sync::mpsc::Sender<()>>,
    release: Mutex<std::sync::mpsc::Receiver<()>>,
}

impl Storage for Gated {
    fn backend_name(&self) -> &'static str {
        "gated"
    }
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, mentisdb_core::StorageError> {
        if self.object.lock().unwrap().as_deref() == Some(name) {
            self.entered.lock().unwrap().send(()).unwrap();
            self.release.lock().unwrap().recv().unwrap();
        }
        self.inner.read(name)
    }
    fn append(&self, name: &str, bytes: &[u8]) -> Result<(), mentisdb_core::StorageError> {
        self.inner.append(name, bytes)
    }
    fn append_at(&self, name: &str, expected_len: u64, bytes: &[u8]) -> Result<(), mentisdb_core::StorageError> {
        self.inner.append_at(name, expected_len, bytes)
    }
    passes_to_inner!();
}

#[test]
fn loading_a_parked_chain_does_not_hold_up_the_other_chains() {
    let (entered_tx, entered) = std::sync::mpsc::channel();
    let (release, release_rx) = std::sync::mpsc::channel();
    let storage = Arc::new(Gated { inner: MemoryStorage::new(), object: Mutex::new(None), entered: Mutex::new(entered_tx), release: Mutex::new(release_rx) });
    let config = DbConfig { max_resident_bytes: Some(BUDGET), ..DbConfig::default() };
    let db = Arc::new(MentisDb::open(storage.clone() as Arc<dyn Storage>, Arc::new(FixedClock::new(T0, 1000)), ids(), config).expect("open").0);
    fill(&db);
    let parked = (0..CHAINS).map(key).find(|k| !db.is_resident(k)).expect("a parked chain");
    let resident = (0..CHAINS).map(key).find(|k| db.is_resident(k)).expect("a resident chain");
    *storage.object.lock().unwrap() = Some(naming::chain_object(&parked, ChainFormat::Binary));
    let loader = {
        let (db, parked) = (db.clone(), parked.clone());
        std::thread::spawn(move || ok(&db, "mentisdb_head", json!({"chain_key": parked}))["thought_count"].clone())
    };
    // The parked chain's bytes are being read (and wait there); the other chains answer meanwhile.
    entered.recv().unwrap();
    let (done, answered) = std::sync::mpsc::channel();
    let other = {
        let (db, resident) = (db.clone(), resident.clone());
        std::thread::spawn(move || {
            let count = ok(&db, "mentisdb_head", json!({"chain_key": resident}))["thought_count"].clone();
            ok(&db, "mentisdb_append", json!({"chain_key": resident, "thought_type": "Idea", "content": "while another chain loads"}));
            done.send(count).unwrap();
        })
    };
    let answered = answered.recv_timeout(std::time::Duration::from_secs(30));
    *storage.object.lock().unwrap() = None;
    release.send(()).unwrap();
    assert_eq!(answered.expect("another chain answered while a parked one was being read"), PER_CHAIN);
    other.join().unwrap();
    assert_eq!(loader.join().unwrap(), PER_CHAIN, "the parked chain loads whole");
    assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": resident}))["thought_count"], PER_CHAIN + 1);
}

/// A store that creates one object the way a file store does, in two steps
/// (an empty object, then its first bytes), pausing between them until the
/// test lets it go; and that holds the first read of that object until the
/// test lets it go, telling the test when it has read.
#[derive(Debug)]
struct HalfCreated {
    inner: MemoryStorage,
    object: String,
    reads: std::sync::atomic::AtomicUsize,
    /// The first read: tells it is held, waits to go, tells it has read.
    reader: Mutex<(Sender<()>, Receiver<()>, Sender<()>)>,
    /// The creation: tells the object exists empty, waits to go on.
    creator: Mutex<(Sender<()>, Receiver<()>)>,
}

impl Storage for HalfCreated {
    fn backend_name(&self) -> &'static str {
        "half-created"
    }
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, mentisdb_core::StorageError> {
        if name != self.object || self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst) != 0 {
            return self.inner.read(name);
        }
        let (held, go, done) = &*self.reader.lock().unwrap();
        held.send(()).unwrap();
        go.recv().unwrap();
        let bytes = self.inner.read(name);
        done.send(()).unwrap();
        bytes
    }
    fn append(&self, name: &str, bytes: &[u8]) -> Result<(), mentisdb_core::StorageError> {
        self.inner.append(name, bytes)
    }
    fn append_at(&self, name: &str, expected_len: u64, bytes: &[u8]) -> Result<(), mentisdb_core::StorageError> {
        if name == self.object && expected_len == 0 {
            self.inner.append(name, &[])?;
            let (created, go_on) = &*self.creator.lock().unwrap();
            created.send(()).unwrap();
            go_on.recv().unwrap();
            return self.inner.append(name, bytes);
        }
        self.inner.append_at(name, expected_len, bytes)
    }
    passes_to_inner!();
}

/// A chain this engine is creating is not refused by a read that finds its
/// object still empty (a file store creates the file, then writes the
/// header): the explorer's 120 concurrent first appends to a new chain once
/// answered `500 chain 'long' failed verification` and kept refusing it.
#[test]
fn a_chain_read_while_it_is_being_created_is_served_not_refused() {
    let ((held_tx, held), (go, go_rx), (done_tx, done)) = (channel(), channel(), channel());
    let ((created_tx, created), (go_on, go_on_rx)) = (channel(), channel());
    let storage = Arc::new(HalfCreated {
        inner: MemoryStorage::new(),
        object: naming::chain_object("fresh", ChainFormat::Binary),
        reads: Default::default(),
        reader: Mutex::new((held_tx, go_rx, done_tx)),
        creator: Mutex::new((created_tx, go_on_rx)),
    });
    let db = Arc::new(MentisDb::open(storage.clone() as Arc<dyn Storage>, Arc::new(FixedClock::new(T0, 1000)), ids(), DbConfig::default()).expect("open").0);
    let wait = std::time::Duration::from_secs(30);
    // 1. A reader finds no resident chain 'fresh' and goes to read its object (held there).
    let reader = {
        let db = db.clone();
        std::thread::spawn(move || db.call("mentisdb_head", json!({"chain_key": "fresh"})))
    };
    held.recv_timeout(wait).expect("the reader reads the object");
    // 2. An append creates the chain: the object exists, still empty.
    let creator = {
        let db = db.clone();
        std::thread::spawn(move || ok(&db, "mentisdb_append", json!({"chain_key": "fresh", "thought_type": "Idea", "content": "the first thought"})))
    };
    created.recv_timeout(wait).expect("the creator created the object");
    // 3. The reader reads the empty object; then the creator writes the header.
    go.send(()).unwrap();
    done.recv_timeout(wait).expect("the reader read the object");
    go_on.send(()).unwrap();
    creator.join().unwrap();
    let head = reader.join().unwrap().expect("the reader is served the chain being created, not a refusal");
    assert!(head["thought_count"] == 0 || head["thought_count"] == 1, "{head}");
    assert_eq!(ok(&db, "mentisdb_head", json!({"chain_key": "fresh"}))["thought_count"], 1);
    ok(&db, "mentisdb_append", json!({"chain_key": "fresh", "thought_type": "Idea", "content": "and the chain goes on"}));
}
