//! The storage conformance suite: the [`Storage`] contract as checks.
//!
//! - [`run_all`]: every backend (memory, file, IndexedDB image, WASI,
//!   PostgreSQL) runs it against a fresh, empty instance of itself: reads,
//!   appends, truncation, atomic writes, listing, names, and conditional
//!   appends ([`Storage::append_at`] at a stale length writes nothing).
//! - [`run_concurrent`]: the part that needs threads, run by every backend
//!   that can have them (all but the single-threaded browser and WASI
//!   builds, whose backends are run natively instead). The host hands the
//!   threads in (a [`Threads`] runner): the core starts none.
//!
//! ```ignore
//! mentisdb_core::storage::conformance::run_all(&MyBackend::new(tempdir));
//! mentisdb_core::storage::conformance::run_concurrent(&MyBackend::new(tempdir2), &|n, job| threads.run(n, job));
//! ```
//! Each check panics with a message naming the broken contract.

use super::{Storage, StorageError};
use std::sync::Mutex;

/// Runs jobs `0..count` at once on the host's threads, returning when all
/// are done (what `Parallelism::run` does, with at least two threads).
pub type Threads<'a> = &'a dyn Fn(usize, &(dyn Fn(usize) + Sync));

/// Runs every single-threaded check against an empty backend.
pub fn run_all(storage: &dyn Storage) {
    missing_object_reads_as_none(storage);
    append_creates_and_extends(storage);
    sync_after_append_succeeds(storage);
    truncate_cuts_tail(storage);
    write_atomic_replaces(storage);
    list_filters_by_prefix_sorted(storage);
    remove_is_idempotent(storage);
    hostile_names_are_refused(storage);
    binary_bytes_round_trip(storage);
    location_names_the_object(storage);
    read_from_gives_the_suffix(storage);
    append_at_the_current_length_appends(storage);
    append_at_a_stale_length_writes_nothing(storage);
}

/// Runs the checks of calls made at once from several threads (`threads`
/// runs each check's jobs at once) against an empty backend.
pub fn run_concurrent(storage: &dyn Storage, threads: Threads<'_>) {
    appends_to_different_objects_do_not_mix(storage, threads);
    syncs_run_beside_appends_to_the_same_object(storage, threads);
    one_of_many_appends_at_one_length_wins(storage, threads);
}

/// Writers at once, each appending to its own objects.
const WRITERS: usize = 8;
/// Appends per writer.
const ROUNDS: usize = 25;

/// Record `i` of writer `w`: 16 bytes that name both.
fn record(w: usize, i: usize) -> Vec<u8> {
    format!("w{w:02}-r{i:04}-xxxxx;").into_bytes()
}

fn appends_to_different_objects_do_not_mix(s: &dyn Storage, threads: Threads<'_>) {
    threads(WRITERS, &|w| {
        let name = format!("concurrent/w{w}.bin");
        for i in 0..ROUNDS {
            s.append(&name, &record(w, i)).expect("append beside other writers");
            if i % 5 == 4 {
                s.sync(&name).expect("sync beside other writers");
            }
        }
    });
    for w in 0..WRITERS {
        let expected: Vec<u8> = (0..ROUNDS).flat_map(|i| record(w, i)).collect();
        let got = s.read(&format!("concurrent/w{w}.bin")).unwrap();
        assert_eq!(got.as_deref(), Some(&expected[..]), "appends to one object must land whole and in order while other objects are written");
    }
}

fn syncs_run_beside_appends_to_the_same_object(s: &dyn Storage, threads: Threads<'_>) {
    // Appends to one object are ordered by the caller (the engine's chain
    // lock); its syncs run outside that lock, beside the next appends
    // (group commit). Every acknowledged sync covers the appends before it.
    let name = "concurrent/shared.bin";
    let order = Mutex::new(Vec::new());
    threads(WRITERS, &|w| {
        for i in 0..ROUNDS {
            {
                let mut order = order.lock().unwrap_or_else(|e| e.into_inner());
                s.append(name, &record(w, i)).expect("append under the caller's lock");
                order.push((w, i));
            }
            s.sync(name).expect("sync beside appends to the same object");
        }
    });
    let order = order.into_inner().unwrap_or_else(|e| e.into_inner());
    let expected: Vec<u8> = order.iter().flat_map(|&(w, i)| record(w, i)).collect();
    assert_eq!(s.read(name).unwrap().as_deref(), Some(&expected[..]), "appends ordered by the caller must land in that order, whatever syncs run meanwhile");
}

fn one_of_many_appends_at_one_length_wins(s: &dyn Storage, threads: Threads<'_>) {
    let name = "concurrent/race.bin";
    let mut expected = Vec::new();
    for round in 0..ROUNDS {
        let at = expected.len() as u64;
        let winners = Mutex::new(Vec::new());
        threads(WRITERS, &|w| match s.append_at(name, at, &record(w, round)) {
            Ok(()) => winners.lock().unwrap_or_else(|e| e.into_inner()).push(w),
            Err(StorageError::Conflict { expected, actual, .. }) => {
                assert_eq!((expected, actual), (at, at + 16), "a loser is told the length it expected and the one the winner left");
            }
            Err(e) => panic!("append_at in a race must win or be a Conflict, got {e}"),
        });
        let winners = winners.into_inner().unwrap_or_else(|e| e.into_inner());
        assert_eq!(winners.len(), 1, "exactly one of several appends at length {at} must win, got {winners:?}");
        expected.extend(record(winners[0], round));
    }
    assert_eq!(s.read(name).unwrap().as_deref(), Some(&expected[..]), "only the winners' bytes are stored");
}

fn append_at_a_stale_length_writes_nothing(s: &dyn Storage) {
    s.append_at("conf/cond.bin", 0, b"first").expect("append_at 0 creates");
    match s.append_at("conf/cond.bin", 0, b"loser") {
        Err(StorageError::Conflict { expected: 0, actual: 5, .. }) => {}
        other => panic!("an append at a stale length must be a Conflict naming both lengths, got {other:?}"),
    }
    assert_eq!(s.read("conf/cond.bin").unwrap().as_deref(), Some(&b"first"[..]), "a refused append writes nothing");
    assert!(matches!(s.append_at("conf/cond-absent.bin", 3, b"x"), Err(StorageError::Conflict { actual: 0, .. })), "a missing object has length 0");
    assert_eq!(s.read("conf/cond-absent.bin").unwrap(), None, "a refused append creates nothing");
}

fn read_from_gives_the_suffix(s: &dyn Storage) {
    s.append("conf/suffix.bin", b"0123456789").unwrap();
    assert_eq!(s.read_from("conf/suffix.bin", 6).unwrap().as_deref(), Some(&b"6789"[..]), "read_from must give the bytes from the offset");
    assert_eq!(s.read_from("conf/suffix.bin", 10).unwrap().as_deref(), Some(&b""[..]), "read_from at the end is empty");
    assert_eq!(s.read_from("conf/missing-suffix.bin", 0).unwrap(), None, "read_from of a missing object is None");
}

fn append_at_the_current_length_appends(s: &dyn Storage) {
    s.append_at("conf/at.bin", 0, b"ab").expect("append_at 0 creates");
    s.append_at("conf/at.bin", 2, b"cd").expect("append_at the current length");
    assert_eq!(s.read("conf/at.bin").unwrap().as_deref(), Some(&b"abcd"[..]));
}

fn missing_object_reads_as_none(s: &dyn Storage) {
    assert_eq!(s.read("conf/missing.bin").expect("read of a missing object"), None, "missing object must read as None");
}

fn append_creates_and_extends(s: &dyn Storage) {
    s.append("conf/append.bin", b"hello ").expect("append creates");
    s.append("conf/append.bin", b"world").expect("append extends");
    assert_eq!(s.read("conf/append.bin").unwrap().as_deref(), Some(&b"hello world"[..]), "appends must concatenate in order");
}

fn sync_after_append_succeeds(s: &dyn Storage) {
    s.append("conf/sync.bin", b"durable").unwrap();
    s.sync("conf/sync.bin").expect("sync after append");
    s.sync("conf/sync.bin").expect("sync twice");
    assert_eq!(s.read("conf/sync.bin").unwrap().as_deref(), Some(&b"durable"[..]));
}

fn truncate_cuts_tail(s: &dyn Storage) {
    s.append("conf/trunc.bin", b"0123456789").unwrap();
    s.truncate("conf/trunc.bin", 4).expect("truncate");
    assert_eq!(s.read("conf/trunc.bin").unwrap().as_deref(), Some(&b"0123"[..]), "truncate must keep the prefix");
    s.append("conf/trunc.bin", b"xy").unwrap();
    assert_eq!(s.read("conf/trunc.bin").unwrap().as_deref(), Some(&b"0123xy"[..]), "append after truncate continues at the cut");
}

fn write_atomic_replaces(s: &dyn Storage) {
    s.write_atomic("conf/blob.json", b"{\"v\":1}").expect("write_atomic creates");
    s.write_atomic("conf/blob.json", b"{\"v\":2}").expect("write_atomic replaces");
    assert_eq!(s.read("conf/blob.json").unwrap().as_deref(), Some(&b"{\"v\":2}"[..]), "write_atomic must replace the whole object");
}

fn list_filters_by_prefix_sorted(s: &dyn Storage) {
    s.append("list/b.bin", b"b").unwrap();
    s.append("list/a.bin", b"a").unwrap();
    s.append("other/c.bin", b"c").unwrap();
    let names = s.list("list/").expect("list");
    assert_eq!(names, vec!["list/a.bin".to_string(), "list/b.bin".to_string()], "list must filter by prefix and sort");
}

fn remove_is_idempotent(s: &dyn Storage) {
    s.append("conf/rm.bin", b"x").unwrap();
    s.remove("conf/rm.bin").expect("remove");
    s.remove("conf/rm.bin").expect("remove of a missing object is not an error");
    assert_eq!(s.read("conf/rm.bin").unwrap(), None, "removed object must be gone");
}

fn hostile_names_are_refused(s: &dyn Storage) {
    for name in ["../escape.bin", "conf/../../escape.bin", "/etc/passwd", "a/b/c", "", "conf/..", "c:\\x"] {
        match s.append(name, b"x") {
            Err(StorageError::InvalidName(_)) => {}
            other => panic!("append to hostile name {name:?} must be refused with InvalidName, got {other:?}"),
        }
        assert!(matches!(s.read(name), Err(StorageError::InvalidName(_))), "read of hostile name {name:?} must be refused");
        assert!(matches!(s.write_atomic(name, b"x"), Err(StorageError::InvalidName(_))), "write_atomic of {name:?} must be refused");
    }
}

fn binary_bytes_round_trip(s: &dyn Storage) {
    let all: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    s.append("conf/bytes.bin", &all).unwrap();
    s.sync("conf/bytes.bin").unwrap();
    assert_eq!(s.read("conf/bytes.bin").unwrap().as_deref(), Some(&all[..]), "every byte value must round-trip");
}

fn location_names_the_object(s: &dyn Storage) {
    let loc = s.location("conf/append.bin");
    assert!(loc.contains("append.bin"), "location {loc:?} should name the object");
}
