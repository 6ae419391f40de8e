//! Fault-injecting storage wrappers for crash tests, in the redb style.
//!
//! - [`CrashSimStorage`] keeps the *durable* image apart from the *live* one:
//!   only bytes covered by [`Storage::sync`], [`Storage::write_atomic`] or
//!   [`Storage::truncate`] reach the durable image. [`CrashSimStorage::crash`]
//!   returns a [`MemoryStorage`] holding what a machine would find after
//!   power loss; [`CrashSimStorage::crash_with_torn_tails`] also keeps part
//!   of each object's unsynced tail, as a real disk may.
//! - [`FailingStorage`] fails the Nth `append`, `sync` or `write_atomic`
//!   (a failing append first writes half its bytes, as a short write would).
//!
//! Both wrap any backend, so a host can crash-test its own.

use super::{MemoryStorage, Storage, StorageError};
use std::collections::BTreeMap;
use std::sync::Mutex;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A backend whose durable image only holds synced bytes.
#[derive(Debug)]
pub struct CrashSimStorage<S: Storage> {
    live: S,
    durable: Mutex<BTreeMap<String, Vec<u8>>>,
}

impl<S: Storage> CrashSimStorage<S> {
    /// Wraps `live`; whatever it already holds counts as durable.
    pub fn new(live: S) -> Self {
        let mut durable = BTreeMap::new();
        if let Ok(names) = live.list("") {
            for name in names {
                if let Ok(Some(bytes)) = live.read(&name) {
                    durable.insert(name, bytes);
                }
            }
        }
        CrashSimStorage { live, durable: Mutex::new(durable) }
    }

    /// The wrapped live backend.
    pub fn live(&self) -> &S {
        &self.live
    }

    /// The storage a restart after power loss would see: durable bytes only.
    pub fn crash(&self) -> MemoryStorage {
        self.crash_with_torn_tails(0)
    }

    /// Like [`CrashSimStorage::crash`], but each object also keeps up to
    /// `keep` bytes of its unsynced tail (a torn write).
    pub fn crash_with_torn_tails(&self, keep: usize) -> MemoryStorage {
        let image = MemoryStorage::new();
        for (name, bytes) in lock(&self.durable).iter() {
            let mut bytes = bytes.clone();
            if keep > 0 {
                if let Ok(Some(live)) = self.live.read(name) {
                    if live.len() > bytes.len() && live.starts_with(&bytes) {
                        let end = (bytes.len() + keep).min(live.len());
                        bytes = live[..end].to_vec();
                    }
                }
            }
            image.write_atomic(name, &bytes).expect("memory storage accepts names that were already accepted");
        }
        image
    }

    /// Bytes of `name` that would survive a crash now.
    pub fn durable_len(&self, name: &str) -> usize {
        lock(&self.durable).get(name).map_or(0, Vec::len)
    }
}

impl<S: Storage> Storage for CrashSimStorage<S> {
    fn backend_name(&self) -> &'static str {
        "crash-sim"
    }
    fn list(&self, prefix: &str) -> Result<Vec<String>, StorageError> {
        self.live.list(prefix)
    }
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError> {
        self.live.read(name)
    }
    fn append(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        self.live.append(name, bytes)
    }
    fn append_at(&self, name: &str, expected_len: u64, bytes: &[u8]) -> Result<(), StorageError> {
        self.live.append_at(name, expected_len, bytes)
    }
    fn truncate(&self, name: &str, len: u64) -> Result<(), StorageError> {
        self.live.truncate(name, len)?;
        if let Some(d) = lock(&self.durable).get_mut(name) {
            d.truncate(len as usize);
        }
        Ok(())
    }
    fn sync(&self, name: &str) -> Result<(), StorageError> {
        self.live.sync(name)?;
        if let Some(bytes) = self.live.read(name)? {
            lock(&self.durable).insert(name.to_string(), bytes);
        }
        Ok(())
    }
    fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        self.live.write_atomic(name, bytes)?;
        lock(&self.durable).insert(name.to_string(), bytes.to_vec());
        Ok(())
    }
    fn remove(&self, name: &str) -> Result<(), StorageError> {
        self.live.remove(name)?;
        lock(&self.durable).remove(name);
        Ok(())
    }
    fn location(&self, name: &str) -> String {
        self.live.location(name)
    }
}

/// Which operation [`FailingStorage`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOp {
    /// [`Storage::append`] and [`Storage::append_at`] calls.
    Append,
    /// [`Storage::sync`] calls.
    Sync,
    /// [`Storage::write_atomic`] calls.
    WriteAtomic,
}

/// A backend that fails the Nth call (1-based) of one operation, and every
/// later one when `sticky`.
#[derive(Debug)]
pub struct FailingStorage<S: Storage> {
    inner: S,
    op: FailOp,
    nth: u64,
    sticky: bool,
    seen: Mutex<u64>,
}

impl<S: Storage> FailingStorage<S> {
    /// Fails only the `nth` call of `op`.
    pub fn new(inner: S, op: FailOp, nth: u64) -> Self {
        FailingStorage { inner, op, nth, sticky: false, seen: Mutex::new(0) }
    }

    /// Fails the `nth` call of `op` and every later one (a dead disk).
    pub fn sticky(inner: S, op: FailOp, nth: u64) -> Self {
        FailingStorage { sticky: true, ..Self::new(inner, op, nth) }
    }

    /// The wrapped backend.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Whether a failure was injected so far.
    pub fn has_failed(&self) -> bool {
        *lock(&self.seen) >= self.nth
    }

    fn should_fail(&self, op: FailOp) -> bool {
        if op != self.op {
            return false;
        }
        let mut seen = lock(&self.seen);
        *seen += 1;
        *seen == self.nth || (self.sticky && *seen > self.nth)
    }

    fn injected(name: &str, op: FailOp) -> StorageError {
        StorageError::io(name, format!("injected {op:?} failure"))
    }
}

impl<S: Storage> Storage for FailingStorage<S> {
    fn backend_name(&self) -> &'static str {
        "failing"
    }
    fn list(&self, prefix: &str) -> Result<Vec<String>, StorageError> {
        self.inner.list(prefix)
    }
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError> {
        self.inner.read(name)
    }
    fn append(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        if self.should_fail(FailOp::Append) {
            // A short write: half the bytes land, then the error.
            self.inner.append(name, &bytes[..bytes.len() / 2])?;
            return Err(Self::injected(name, FailOp::Append));
        }
        self.inner.append(name, bytes)
    }
    /// Counted as an [`FailOp::Append`]: the same short write when it fails.
    fn append_at(&self, name: &str, expected_len: u64, bytes: &[u8]) -> Result<(), StorageError> {
        if self.should_fail(FailOp::Append) {
            self.inner.append_at(name, expected_len, &bytes[..bytes.len() / 2])?;
            return Err(Self::injected(name, FailOp::Append));
        }
        self.inner.append_at(name, expected_len, bytes)
    }
    fn truncate(&self, name: &str, len: u64) -> Result<(), StorageError> {
        self.inner.truncate(name, len)
    }
    fn sync(&self, name: &str) -> Result<(), StorageError> {
        if self.should_fail(FailOp::Sync) {
            return Err(Self::injected(name, FailOp::Sync));
        }
        self.inner.sync(name)
    }
    fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        if self.should_fail(FailOp::WriteAtomic) {
            return Err(Self::injected(name, FailOp::WriteAtomic));
        }
        self.inner.write_atomic(name, bytes)
    }
    fn remove(&self, name: &str) -> Result<(), StorageError> {
        self.inner.remove(name)
    }
    fn location(&self, name: &str) -> String {
        self.inner.location(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_synced_bytes_survive_a_crash() {
        let s = CrashSimStorage::new(MemoryStorage::new());
        s.append("c/a", b"one").unwrap();
        s.sync("c/a").unwrap();
        s.append("c/a", b"two").unwrap();
        assert_eq!(s.crash().read("c/a").unwrap().unwrap(), b"one");
        assert_eq!(s.crash_with_torn_tails(2).read("c/a").unwrap().unwrap(), b"onetw");
        s.write_atomic("c/b", b"x").unwrap();
        assert_eq!(s.crash().read("c/b").unwrap().unwrap(), b"x");
        s.truncate("c/a", 1).unwrap();
        assert_eq!(s.crash().read("c/a").unwrap().unwrap(), b"o");
    }

    #[test]
    fn wrappers_pass_conformance() {
        super::super::conformance::run_all(&CrashSimStorage::new(MemoryStorage::new()));
        super::super::conformance::run_all(&FailingStorage::new(MemoryStorage::new(), FailOp::Sync, u64::MAX));
        let threads = |n, job: &(dyn Fn(usize) + Sync)| crate::Parallelism::run(&crate::storage::tests::TestThreads, n, job);
        super::super::conformance::run_concurrent(&CrashSimStorage::new(MemoryStorage::new()), &threads);
        super::super::conformance::run_concurrent(&FailingStorage::new(MemoryStorage::new(), FailOp::Sync, u64::MAX), &threads);
    }

    #[test]
    fn fails_exactly_the_nth_call() {
        let s = FailingStorage::new(MemoryStorage::new(), FailOp::Append, 2);
        s.append("c/a", b"ab").unwrap();
        assert!(s.append("c/a", b"cd").is_err());
        assert_eq!(s.read("c/a").unwrap().unwrap(), b"abc", "a failed append leaves a short write");
        s.append("c/a", b"ef").unwrap();
        let s = FailingStorage::sticky(MemoryStorage::new(), FailOp::Sync, 1);
        assert!(s.sync("c/a").is_err() && s.sync("c/a").is_err());
    }
}
