//! The engine's lifetime inside one component instance.
//!
//! The first export call opens [`MentisDb`] over [`FsStorage`] at
//! [`DATA_DIR`] (verifying every chain, cutting torn tails); later calls
//! reuse it. A failed open (say, no `/data` preopen, or an I/O error) is
//! returned as an error record and not cached: the next call tries again.

use mentisdb_std_host::{OsRandomIds, SystemClock};
use mentisdb_core::{DbConfig, MentisDb, StorageError, ToolError};
use mentisdb_fs_storage::FsStorage;
use std::sync::{Arc, Mutex};

/// The guest path of the data directory the host must preopen.
pub const DATA_DIR: &str = "/data";

static ENGINE: Mutex<Option<Arc<MentisDb>>> = Mutex::new(None);

/// The instance's engine, opened on first use.
pub fn engine() -> Result<Arc<MentisDb>, ToolError> {
    let mut slot = ENGINE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(db) = slot.as_ref() {
        return Ok(db.clone());
    }
    let storage = FsStorage::open(DATA_DIR)
        .map_err(|e| StorageError::Unavailable(format!("{e}; the host must preopen a writable directory at the guest path {DATA_DIR}")))?;
    let (db, report) = MentisDb::open(Arc::new(storage), Arc::new(SystemClock), Arc::new(OsRandomIds), DbConfig::default())?;
    for (object, why) in &report.refused {
        // wasi:cli/stderr: the host decides where this goes.
        eprintln!("mentisdb: refused {object}: {why}");
    }
    let db = Arc::new(db);
    *slot = Some(db.clone());
    Ok(db)
}
