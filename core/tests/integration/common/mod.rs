//! Shared helpers for the core's integration tests.
#![allow(dead_code)]

use mentisdb_core::{DbConfig, FixedClock, MemoryStorage, MentisDb, SequentialIds, Storage, ToolError};
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

static OPENS: AtomicU64 = AtomicU64::new(0);

/// A deterministic id source that never repeats across re-opens in one test process.
pub fn ids() -> Arc<SequentialIds> {
    Arc::new(SequentialIds::starting_at(OPENS.fetch_add(1, Ordering::Relaxed) << 32))
}

/// 2026-11-22T09:30:00.000Z
pub const T0: i64 = 1_795_339_800_000;

/// A fresh engine over in-memory storage with a deterministic clock (1 s per read) and ids.
pub fn fresh() -> (MentisDb, Arc<MemoryStorage>) {
    let storage = Arc::new(MemoryStorage::new());
    (reopen(storage.clone()), storage)
}

/// Opens (or re-opens) an engine over existing storage.
pub fn reopen(storage: Arc<MemoryStorage>) -> MentisDb {
    let (db, report) = MentisDb::open(storage as Arc<dyn Storage>, Arc::new(FixedClock::new(T0, 1000)), ids(), DbConfig::default()).expect("open");
    assert!(report.refused.is_empty(), "unexpected refusals: {:?}", report.refused);
    db
}

/// Calls a tool, panicking with the error text on failure.
pub fn ok(db: &MentisDb, tool: &str, args: Value) -> Value {
    db.call(tool, args).unwrap_or_else(|e| panic!("{tool} failed: {e}"))
}

/// Calls a tool that must fail, returning the error.
pub fn err(db: &MentisDb, tool: &str, args: Value) -> ToolError {
    match db.call(tool, args) {
        Ok(v) => panic!("{tool} should have failed, returned {v}"),
        Err(e) => e,
    }
}

/// Asserts an object has every named field.
pub fn has_fields(v: &Value, fields: &[&str]) {
    for f in fields {
        assert!(v.get(f).is_some(), "missing field {f:?} in {v}");
    }
}

/// The contents of a list of thoughts.
pub fn contents(v: &Value) -> Vec<String> {
    v.as_array().expect("array").iter().map(|t| t["content"].as_str().unwrap().to_string()).collect()
}

/// The `Storage` methods a test store passes to its `inner` store unchanged.
#[allow(unused_macros)]
macro_rules! passes_to_inner {
    () => {
        fn list(&self, prefix: &str) -> Result<Vec<String>, mentisdb_core::StorageError> {
            self.inner.list(prefix)
        }
        fn truncate(&self, name: &str, len: u64) -> Result<(), mentisdb_core::StorageError> {
            self.inner.truncate(name, len)
        }
        fn sync(&self, name: &str) -> Result<(), mentisdb_core::StorageError> {
            self.inner.sync(name)
        }
        fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<(), mentisdb_core::StorageError> {
            self.inner.write_atomic(name, bytes)
        }
        fn remove(&self, name: &str) -> Result<(), mentisdb_core::StorageError> {
            self.inner.remove(name)
        }
        fn location(&self, name: &str) -> String {
            self.inner.location(name)
        }
    };
}
