//! The storage contract: a flat namespace of named byte objects.
//!
//! The core decides *what* bytes to write (record framing lives in
//! [`crate::record`]); a backend decides *where* they go (files, IndexedDB,
//! a WASI preopened directory, memory). Object names are produced by the core
//! ([`crate::naming`]) and always match `[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)?`;
//! a backend must still refuse any other name with [`StorageError::InvalidName`]
//! (use [`validate_object_name`]) so that no caller-controlled string can reach
//! outside its data directory.
//!
//! Durability: bytes given to [`Storage::append`] may sit in a buffer until
//! [`Storage::sync`] returns `Ok`. After `sync(name)` returns, every byte
//! appended to `name` before the call survives a crash or power loss.
//! [`Storage::write_atomic`] replaces a whole object and is durable when it
//! returns: after a crash a reader sees either the old or the new contents,
//! never a mix.

mod memory;
pub mod conformance;
pub mod fault;

pub use memory::MemoryStorage;

use std::fmt;

/// Errors a storage backend reports.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StorageError {
    /// The name is not one the core produces; it was refused before any I/O.
    #[error("invalid storage object name '{0}'")]
    InvalidName(String),
    /// An I/O failure, with the backend's description.
    #[error("storage I/O error on '{object}': {message}")]
    Io {
        /// The object being read or written.
        object: String,
        /// The backend's description of the failure.
        message: String,
    },
    /// The backend refuses writes (read-only, quota exhausted, closed).
    #[error("storage is unavailable: {0}")]
    Unavailable(String),
    /// The backend cannot be reached now (a database server down or cut
    /// off); the same call may succeed later. Nothing was written.
    #[error("storage cannot be reached now, retry later: {0}")]
    Unreachable(String),
    /// A conditional append ([`Storage::append_at`]) found the object at
    /// another length: another writer (another instance on shared storage)
    /// appended first. Nothing was written.
    #[error("'{object}' is {actual} bytes, not the {expected} this append expected: another writer appended first")]
    Conflict {
        /// The object appended to.
        object: String,
        /// The length the caller expected.
        expected: u64,
        /// The length it has.
        actual: u64,
    },
}

impl StorageError {
    /// Shorthand for an [`StorageError::Io`] error.
    pub fn io(object: &str, message: impl fmt::Display) -> Self {
        StorageError::Io { object: object.to_string(), message: message.to_string() }
    }
}

/// A synchronous object store with an explicit durability point.
///
/// Implementations must be safe to call from several threads at once; calls
/// on *different* names must not block each other for long, and `sync` on one
/// name should not hold a lock that stops `append` on the same name (so that
/// concurrent appends can share one `sync`: group commit).
pub trait Storage: Send + Sync + fmt::Debug {
    /// A short name for the backend, e.g. `"file"`, `"memory"`, `"indexeddb"`.
    fn backend_name(&self) -> &'static str;

    /// Names of all existing objects whose name starts with `prefix`, sorted.
    fn list(&self, prefix: &str) -> Result<Vec<String>, StorageError>;

    /// The whole contents of an object, or `None` when it does not exist.
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError>;

    /// Appends bytes at the end of an object, creating it when absent.
    /// Not durable until [`Storage::sync`] returns. On error the object may
    /// hold a prefix of `bytes`; the caller truncates back.
    fn append(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError>;

    /// Cuts an object to `len` bytes (used to drop a torn tail or roll back a
    /// failed append). Durable when it returns.
    fn truncate(&self, name: &str, len: u64) -> Result<(), StorageError>;

    /// The durability point: after `Ok`, every byte appended to `name` before
    /// this call survives a crash.
    fn sync(&self, name: &str) -> Result<(), StorageError>;

    /// Replaces an object's whole contents atomically and durably
    /// (temp object, sync, rename on file systems).
    fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError>;

    /// Removes an object; removing a missing object is not an error.
    fn remove(&self, name: &str) -> Result<(), StorageError>;

    /// A human-readable location for the object (a file path, a database
    /// key), reported as `storage_location` by the tools.
    fn location(&self, name: &str) -> String;

    /// Whether an append ([`Storage::append_at`]) returns in microseconds
    /// with no network round trip: the bytes handed to a local OS or kept in
    /// memory, durable only at [`Storage::sync`]. A host with an event loop
    /// may then write an append there and wait for its sync elsewhere
    /// ([`crate::MentisDb::append_tool_now`]). A database backend is not quick.
    fn quick_appends(&self) -> bool {
        false
    }

    /// Whether the backend answers now (a health check: a database backend
    /// makes a round trip). Local backends are always reachable.
    fn probe(&self) -> Result<(), StorageError> {
        Ok(())
    }

    /// Appends `bytes` only when the object is exactly `expected_len` bytes
    /// long now (absent counts as 0), else [`StorageError::Conflict`] and
    /// nothing is written; the check and the append are one step, so of
    /// several callers at one length exactly one wins. This is how several
    /// engines on one shared store (several daemons on one database) keep
    /// each chain linear, and how a chain object is created only once. Every
    /// backend honours it (the conformance suite checks it), including those
    /// whose objects have one writer.
    fn append_at(&self, name: &str, expected_len: u64, bytes: &[u8]) -> Result<(), StorageError>;

    /// The object's bytes from `offset` to its end (`None` when it does not
    /// exist): what another writer appended since this engine last looked.
    /// The default reads the whole object; shared backends read only the suffix.
    fn read_from(&self, name: &str, offset: u64) -> Result<Option<Vec<u8>>, StorageError> {
        Ok(self.read(name)?.map(|mut bytes| bytes.split_off((offset as usize).min(bytes.len()))))
    }
}

/// Checks that `name` is a name the core could have produced:
/// one or two `/`-separated segments of `[A-Za-z0-9._-]`, none of them
/// empty, `.` or `..`, at most 255 bytes per segment.
pub fn validate_object_name(name: &str) -> Result<(), StorageError> {
    let allowed = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
    let mut segments = name.as_bytes().split(|b| *b == b'/');
    let ok = segments.clone().count() <= 2
        && segments.all(|seg| !seg.is_empty() && seg != b"." && seg != b".." && seg.len() <= 255 && seg.iter().all(allowed));
    if ok {
        Ok(())
    } else {
        Err(StorageError::InvalidName(name.to_string()))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn object_names_are_confined() {
        assert!(validate_object_name("chains/abc-123.mdb").is_ok());
        assert!(validate_object_name("skills.log").is_ok());
        for bad in ["", "/", "../x", "a/../b", "a/b/c", "..", ".", "a\\b", "a b", "chains/", "/etc/passwd"] {
            assert!(validate_object_name(bad).is_err(), "{bad:?} must be refused");
        }
    }

    /// One scoped thread per job: the host's part in [`conformance::run_concurrent`].
    #[derive(Debug)]
    pub(crate) struct TestThreads;

    impl crate::Parallelism for TestThreads {
        fn width(&self) -> usize {
            8
        }
        fn run(&self, count: usize, job: &(dyn Fn(usize) + Sync)) {
            std::thread::scope(|s| {
                for i in 0..count {
                    s.spawn(move || job(i));
                }
            });
        }
    }

    #[test]
    fn memory_backend_passes_conformance() {
        conformance::run_all(&MemoryStorage::new());
        conformance::run_concurrent(&MemoryStorage::new(), &|n, job| crate::Parallelism::run(&TestThreads, n, job));
    }
}
