//! [`AppendHandle`]: one object's open append handle with **group commit**.
//!
//! Every handle keeps a *written* generation (bumped after each complete
//! append) and a *synced* generation. A caller of [`AppendHandle::sync`]
//! whose write is already covered by a finished fsync returns at once; if an
//! fsync is in flight it waits for it and, if that one started before its
//! write, for the next. One fsync covers every append that finished before it
//! started, so N concurrent appenders pay for far fewer than N fsyncs (this
//! is what carries the daemon's durable-append throughput). In a WASI
//! component, which runs one call at a time, the locks never contend and
//! every `sync` simply fsyncs.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::{Condvar, Mutex, MutexGuard};

/// An open append handle and its group-commit state.
#[derive(Debug)]
pub struct AppendHandle {
    file: File,
    /// Serializes writes (and truncation) so `written` counts complete appends in order.
    write_lock: Mutex<()>,
    commit: Mutex<CommitState>,
    synced_cv: Condvar,
}

/// The generations of one handle.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CommitState {
    /// Appends that completed (bytes handed to the kernel).
    pub written: u64,
    /// Appends known to be on stable storage.
    pub synced: u64,
    /// An fsync is running right now.
    syncing: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl AppendHandle {
    /// Opens `path` for appending, creating the file when absent. Returns the
    /// handle and whether the file was created (its name is then not durable
    /// until the caller fsyncs the directory).
    pub fn open(path: &Path) -> io::Result<(AppendHandle, bool)> {
        let existed = path.exists();
        let file = crate::private::private_file(OpenOptions::new().create(true).append(true)).open(path)?;
        let handle = AppendHandle { file, write_lock: Mutex::new(()), commit: Mutex::new(CommitState::default()), synced_cv: Condvar::new() };
        Ok((handle, !existed))
    }

    /// Opens `path` for appending only if the file exists (`None` when it
    /// does not): what an append that must not create the object uses.
    pub fn open_existing(path: &Path) -> io::Result<Option<AppendHandle>> {
        match OpenOptions::new().append(true).open(path) {
            Ok(file) => Ok(Some(AppendHandle { file, write_lock: Mutex::new(()), commit: Mutex::new(CommitState::default()), synced_cv: Condvar::new() })),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Appends `bytes` at the end of the file (not durable until [`Self::sync`]).
    pub fn append(&self, bytes: &[u8]) -> io::Result<()> {
        let _w = lock(&self.write_lock);
        (&self.file).write_all(bytes)?;
        lock(&self.commit).written += 1;
        Ok(())
    }

    /// Appends `bytes` only when the file is `expected_len` bytes long, as
    /// one step among this handle's writers; `Ok(Err(actual))` when it is
    /// not, and nothing was written.
    pub fn append_at(&self, expected_len: u64, bytes: &[u8]) -> io::Result<Result<(), u64>> {
        let _w = lock(&self.write_lock);
        let actual = self.file.metadata()?.len();
        if actual != expected_len {
            return Ok(Err(actual));
        }
        (&self.file).write_all(bytes)?;
        lock(&self.commit).written += 1;
        Ok(Ok(()))
    }

    /// Group commit: returns once every append completed before this call is durable.
    pub fn sync(&self) -> io::Result<()> {
        let mut state = lock(&self.commit);
        let target = state.written;
        loop {
            if state.synced >= target {
                return Ok(());
            }
            if state.syncing {
                state = self.synced_cv.wait(state).unwrap_or_else(|e| e.into_inner());
                continue;
            }
            // Lead an fsync covering everything written so far.
            state.syncing = true;
            let covers = state.written;
            drop(state);
            let result = self.file.sync_data();
            state = lock(&self.commit);
            state.syncing = false;
            if result.is_ok() && covers > state.synced {
                state.synced = covers;
            }
            self.synced_cv.notify_all();
            result?;
        }
    }

    /// Cuts the file at `path` (this handle's file) to `len` bytes and fsyncs
    /// it, with no append in between. Later appends continue at the cut.
    pub fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        let _w = lock(&self.write_lock);
        truncate_durably(path, len).map(|_| ())
    }

    /// A snapshot of the generations (for tests and diagnostics).
    pub fn commit_state(&self) -> CommitState {
        *lock(&self.commit)
    }
}

/// Cuts the file at `path` to `len` bytes through a fresh write descriptor
/// and fsyncs it. `Ok(false)` when the file does not exist.
pub fn truncate_durably(path: &Path, len: u64) -> io::Result<bool> {
    match OpenOptions::new().write(true).open(path) {
        Ok(f) => {
            f.set_len(len)?;
            f.sync_all()?;
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn concurrent_syncs_all_return_and_cover_their_appends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.bin");
        let (handle, created) = AppendHandle::open(&path).unwrap();
        assert!(created);
        let handle = Arc::new(handle);
        let done = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let (h, done) = (handle.clone(), done.clone());
                std::thread::spawn(move || {
                    for i in 0..50 {
                        h.append(format!("{t}:{i};").as_bytes()).unwrap();
                        h.sync().unwrap();
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(done.load(Ordering::Relaxed), 400);
        let state = handle.commit_state();
        assert_eq!(state.written, 400);
        assert_eq!(state.synced, 400, "the last sync covers every append");
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches(';').count(), 400);
    }

    #[test]
    fn repeated_syncs_leave_written_and_synced_equal() {
        let dir = tempfile::tempdir().unwrap();
        let (handle, _) = AppendHandle::open(&dir.path().join("y.bin")).unwrap();
        handle.append(b"a").unwrap();
        handle.sync().unwrap();
        handle.sync().unwrap();
        assert_eq!(handle.commit_state(), CommitState { written: 1, synced: 1, syncing: false });
    }
}
