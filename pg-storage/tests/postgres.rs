//! The PostgreSQL backend on a real server (`MENTISDB_TEST_PG_URL`, set by
//! scripts/stages/25-postgres.sh; each test works in a fresh database):
//! the core's storage conformance suite, the shared-writer checks, the
//! schema version rule, notifications, and three engines on three
//! `PgStorage` instances over one database appending concurrently.

use mentisdb_core::storage::conformance;
use mentisdb_core::{DbConfig, FixedClock, MentisDb, SequentialIds, Storage, StorageError};
use mentisdb_pg_storage::{testdb, Event, PgStorage};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// The next event a listener told other than [`Event::Told`] (which
/// follows every batch of notifications), waiting up to `millis` for it.
fn told(rx: &mpsc::Receiver<Event>, millis: u64) -> Result<Event, mpsc::RecvTimeoutError> {
    let until = std::time::Instant::now() + Duration::from_millis(millis);
    loop {
        match rx.recv_timeout(until.saturating_duration_since(std::time::Instant::now()))? {
            Event::Told => continue,
            event => return Ok(event),
        }
    }
}

/// A fresh database's URL, or `None` (test skipped) without a server.
fn fresh(label: &str) -> Option<String> {
    let Some(admin) = testdb::admin_url() else {
        eprintln!("skipped: set MENTISDB_TEST_PG_URL (scripts/stages/25-postgres.sh starts a server and sets it)");
        return None;
    };
    Some(testdb::fresh_database(&admin, label).expect("create a test database"))
}

#[test]
fn passes_the_storage_conformance_suite() {
    let Some(url) = fresh("conformance") else { return };
    conformance::run_all(&PgStorage::connect(&url).unwrap());
    let threads = mentisdb_std_host::ScopedThreads::new(8);
    conformance::run_concurrent(&PgStorage::connect(&url).unwrap(), &|n, job| mentisdb_core::Parallelism::run(&threads, n, job));
}

#[test]
fn is_a_shared_backend() {
    let Some(url) = fresh("shared") else { return };
    let a = PgStorage::connect(&url).unwrap();
    a.append_at("shared/c.bin", 0, b"first").unwrap();
    // A second instance on the same database sees the same objects and loses the same races.
    let b = PgStorage::connect(&url).unwrap();
    assert_eq!(b.read("shared/c.bin").unwrap().as_deref(), Some(&b"first"[..]));
    assert!(matches!(b.append_at("shared/c.bin", 0, b"late"), Err(StorageError::Conflict { expected: 0, actual: 5, .. })));
    b.append_at("shared/c.bin", 5, b"+b").unwrap();
    assert_eq!(a.read_from("shared/c.bin", 3).unwrap().as_deref(), Some(&b"st+b"[..]));
}

#[test]
fn objects_keep_their_bytes_through_truncates_and_empty_writes() {
    let Some(url) = fresh("edges") else { return };
    let s = PgStorage::connect(&url).unwrap();
    for piece in [&b"ab"[..], b"cde", b"f", b"ghij"] {
        s.append("e/x.bin", piece).unwrap();
    }
    // Offsets inside a chunk and at chunk boundaries.
    for at in 0..=10u64 {
        assert_eq!(s.read_from("e/x.bin", at).unwrap().unwrap(), &b"abcdefghij"[at as usize..], "read_from {at}");
    }
    s.truncate("e/x.bin", 4).unwrap();
    assert_eq!(s.read("e/x.bin").unwrap().as_deref(), Some(&b"abcd"[..]));
    s.append_at("e/x.bin", 4, b"Z").unwrap();
    assert_eq!(s.read("e/x.bin").unwrap().as_deref(), Some(&b"abcdZ"[..]));
    s.truncate("e/x.bin", 0).unwrap();
    assert_eq!(s.read("e/x.bin").unwrap().as_deref(), Some(&b""[..]), "truncated to 0, the object still exists");
    s.append_at("e/x.bin", 0, b"new").unwrap();
    assert_eq!(s.read("e/x.bin").unwrap().as_deref(), Some(&b"new"[..]));
    s.write_atomic("e/empty.json", b"").unwrap();
    assert_eq!(s.read("e/empty.json").unwrap().as_deref(), Some(&b""[..]));
    assert_eq!(s.list("e/").unwrap(), vec!["e/empty.json".to_string(), "e/x.bin".to_string()]);
    assert!(s.list("e/%").unwrap().is_empty(), "LIKE metacharacters in a prefix are plain characters");
    assert!(!s.location("e/x.bin").contains('@'), "the location names no user");
}

#[test]
fn a_newer_schema_is_refused_with_a_clear_message() {
    let Some(url) = fresh("schema") else { return };
    drop(PgStorage::connect(&url).unwrap());
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin.execute("UPDATE mentisdb_schema SET version = 99", &[]).unwrap();
    let e = PgStorage::connect(&url).unwrap_err().to_string();
    assert!(e.contains("schema version 99") && e.contains("upgrade mentisdbd"), "{e}");
    // The current version opens again as it is.
    admin.execute("UPDATE mentisdb_schema SET version = $1", &[&mentisdb_pg_storage::schema::SCHEMA_VERSION]).unwrap();
    PgStorage::connect(&url).unwrap();
}

#[test]
fn writes_are_announced_to_listeners() {
    let Some(url) = fresh("notify") else { return };
    let s = std::sync::Arc::new(PgStorage::connect(&url).unwrap());
    let (tx, rx) = mpsc::channel();
    let _listener = s.listen(move |e| tx.send(e).is_ok()).unwrap();
    assert_eq!(told(&rx, 10_000).unwrap(), Event::Resync, "a (re)connection asks for a resync");
    let other = PgStorage::connect(&url).unwrap();
    other.append_at("chains/n.mdb", 0, b"x").unwrap();
    other.write_atomic("agents/n.json", b"{}").unwrap();
    assert_eq!(told(&rx, 10_000).unwrap(), Event::Object("chains/n.mdb".into()));
    assert_eq!(told(&rx, 10_000).unwrap(), Event::Replaced("agents/n.json".into()));
    // Later appends are announced with their bytes and offset, in order, each once.
    for n in 1..50u64 {
        other.append_at("chains/n.mdb", n, format!("{}", n % 10).as_bytes()).unwrap();
    }
    let (mut appended, mut told_last) = (Vec::new(), false);
    while let Ok(e) = rx.recv_timeout(Duration::from_millis(1500)) {
        told_last = e == Event::Told;
        match e {
            Event::Appended { object, offset, bytes } if object == "chains/n.mdb" => appended.push((offset, bytes)),
            Event::Told => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(told_last, "once every notification received is told, the listener says so");
    assert_eq!(appended, (1..50u64).map(|n| (n, format!("{}", n % 10).into_bytes())).collect::<Vec<_>>());
    // An append too big for a notification names only its object.
    other.append_at("chains/n.mdb", 50, &vec![b'z'; 10_000]).unwrap();
    assert_eq!(told(&rx, 10_000).unwrap(), Event::Object("chains/n.mdb".into()));
    // A refused append announces nothing.
    let _ = other.append_at("chains/n.mdb", 0, b"y");
    assert!(told(&rx, 500).is_err());
}

#[test]
fn an_unreachable_server_is_a_clear_error_without_the_password() {
    let e = PgStorage::connect("postgres://u:hunter2@127.0.0.1:1/db?connect_timeout=2").unwrap_err().to_string();
    assert!(e.contains("cannot connect to PostgreSQL at postgres://127.0.0.1:1/db"), "{e}");
    assert!(!e.contains("hunter2"), "{e}");
    assert!(PgStorage::connect("not a url").unwrap_err().to_string().contains("does not parse"));
}

static OPENS: AtomicU64 = AtomicU64::new(1);

fn engine(url: &str) -> Arc<MentisDb> {
    let storage: Arc<dyn Storage> = Arc::new(PgStorage::connect(url).unwrap());
    let ids = Arc::new(SequentialIds::starting_at(OPENS.fetch_add(1, Ordering::Relaxed) << 32));
    let (db, report) = MentisDb::open(storage, Arc::new(FixedClock::new(1_795_339_800_000, 1000)), ids, DbConfig::default()).expect("open");
    assert!(report.refused.is_empty(), "{:?}", report.refused);
    Arc::new(db)
}

fn call(db: &MentisDb, tool: &str, args: Value) -> Value {
    db.call(tool, args).unwrap_or_else(|e| panic!("{tool}: {e}"))
}

#[test]
fn three_engines_on_one_database_lose_nothing_and_duplicate_nothing() {
    let Some(url) = fresh("engines") else { return };
    let engines: Vec<Arc<MentisDb>> = (0..3).map(|_| engine(&url)).collect();
    call(&engines[0], "mentisdb_bootstrap", json!({"chain_key": "load", "content": "start"}));
    let acknowledged: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..6)
            .map(|w| {
                let db = engines[w % 3].clone();
                s.spawn(move || {
                    (0..15)
                        .map(|i| call(&db, "mentisdb_append", json!({"chain_key": "load", "agent_id": "ada", "thought_type": "FactLearned", "content": format!("w{w} n{i}")}))["thought"]["id"].as_str().unwrap().to_string())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(acknowledged.len(), 90);
    let fresh = engine(&url);
    let all = call(&fresh, "mentisdb_search", json!({"chain_key": "load"}))["thoughts"].clone();
    let stored: Vec<String> = all.as_array().unwrap().iter().skip(1).map(|t| t["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(stored.len(), 90, "every acknowledged append is stored once");
    assert_eq!(stored.iter().collect::<BTreeSet<_>>(), acknowledged.iter().collect::<BTreeSet<_>>());
    let head = |db: &MentisDb| call(db, "mentisdb_head", json!({"chain_key": "load"}));
    for db in &engines {
        db.catch_up("load").unwrap();
        assert_eq!(head(db), head(&fresh), "every engine agrees on the head");
    }
    assert_eq!(head(&fresh)["thought_count"], 91);
}

#[test]
fn lost_connections_are_unavailable_then_reconnected() {
    let Some(url) = fresh("reconnect") else { return };
    let s = std::sync::Arc::new(PgStorage::connect(&url).unwrap());
    s.append("r/x.bin", b"kept").unwrap();
    let (tx, rx) = mpsc::channel();
    let _listener = s.listen(move |e| tx.send(e).is_ok()).unwrap();
    assert_eq!(told(&rx, 10_000).unwrap(), Event::Resync);
    // Every connection of this database but the admin's is cut (a server restart, a network cut).
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()", &[]).unwrap();
    let mut failures = 0;
    let read = (0..20)
        .find_map(|_| match s.read("r/x.bin") {
            Ok(bytes) => Some(bytes),
            Err(StorageError::Unreachable(m)) => {
                assert!(m.contains("reconnect"), "{m}");
                failures += 1;
                None
            }
            Err(e) => panic!("a lost connection must be Unreachable, got {e:?}"),
        })
        .expect("a later call reconnects");
    assert_eq!(read.as_deref(), Some(&b"kept"[..]));
    assert!(failures <= 4, "each client thread fails at most once: {failures}");
    // The listener says it lost its connection, reconnects, and asks for a
    // resync (notifications may have been missed).
    assert_eq!(told(&rx, 15_000).unwrap(), Event::Disconnected);
    assert_eq!(told(&rx, 15_000).unwrap(), Event::Resync);
}
