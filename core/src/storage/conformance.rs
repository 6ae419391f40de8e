//! The storage conformance suite. Every backend (memory, file, IndexedDB,
//! WASI) runs [`run_all`] against a fresh, empty instance of itself.
//!
//! ```ignore
//! mentisdb_core::storage::conformance::run_all(&MyBackend::new(tempdir));
//! ```
//! Each check panics with a message naming the broken contract.

use super::{Storage, StorageError};

/// Runs every check against an empty backend.
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
}

/// Checks that only backends shared by several writers must pass: an
/// append at a stale length is refused with [`StorageError::Conflict`] and
/// writes nothing (run it on such backends after [`run_all`]).
pub fn run_shared(storage: &dyn Storage) {
    storage.append_at("shared/c.bin", 0, b"first").expect("append_at 0 creates");
    match storage.append_at("shared/c.bin", 0, b"loser") {
        Err(StorageError::Conflict { expected: 0, actual: 5, .. }) => {}
        other => panic!("an append at a stale length must be a Conflict naming both lengths, got {other:?}"),
    }
    assert_eq!(storage.read("shared/c.bin").unwrap().as_deref(), Some(&b"first"[..]), "a refused append writes nothing");
    assert!(matches!(storage.append_at("shared/absent.bin", 3, b"x"), Err(StorageError::Conflict { actual: 0, .. })), "a missing object has length 0");
    assert_eq!(storage.read("shared/absent.bin").unwrap(), None, "a refused append creates nothing");
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
