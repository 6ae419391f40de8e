//! [`FileStorage`]: the core's [`Storage`] contract over a data directory.
//!
//! Object `chains/x.mdb` lives at `<dir>/chains/x.mdb`, and only after
//! [`validate_object_name`] accepted the name, so no caller-controlled string
//! reaches outside the directory.
//!
//! Durability:
//! - `append` writes through a cached `O_APPEND` handle (not durable).
//! - `sync` is **group commit**: every object keeps a *written* generation
//!   (bumped after each append) and a *synced* generation. A caller whose
//!   write is already covered by a finished `fdatasync` returns at once; if an
//!   fsync is in flight it waits for it and, if that one started before its
//!   write, for the next. One fsync covers every append that finished before
//!   it started, so N concurrent appenders pay for far fewer than N fsyncs.
//! - `write_atomic` writes a temp file, fsyncs it, renames it over the
//!   object and fsyncs the directory.
//! - `truncate` is followed by `fsync`; creating a file or directory fsyncs
//!   its parent so the new name itself survives a crash.

use mentisdb_core::storage::validate_object_name;
use mentisdb_core::{Storage, StorageError};
use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};

/// Prefix of temp files left by an interrupted `write_atomic`; never listed.
const TEMP_PREFIX: &str = ".tmp-";

/// Durable named objects in a directory.
#[derive(Debug)]
pub struct FileStorage {
    root: PathBuf,
    handles: RwLock<HashMap<String, Arc<AppendHandle>>>,
}

/// A cached append handle with its group-commit state.
#[derive(Debug)]
struct AppendHandle {
    file: File,
    /// Serializes writes so `written` counts complete appends in order.
    write_lock: Mutex<()>,
    commit: Mutex<CommitState>,
    synced_cv: Condvar,
}

#[derive(Debug, Default)]
struct CommitState {
    /// Appends that completed (bytes handed to the kernel).
    written: u64,
    /// Appends known to be on stable storage.
    synced: u64,
    /// An fsync is running right now.
    syncing: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn io_err(name: &str, e: impl std::fmt::Display) -> StorageError {
    StorageError::io(name, e)
}

/// Fsyncs a directory so entries created or renamed in it are durable.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

impl FileStorage {
    /// Opens (creating when absent) the data directory `root`. Temp files of
    /// interrupted atomic writes are removed.
    pub fn open(root: impl AsRef<Path>) -> Result<FileStorage, StorageError> {
        let root = root.as_ref();
        let shown = root.display().to_string();
        fs::create_dir_all(root).map_err(|e| io_err(&shown, format!("cannot create data directory: {e}")))?;
        let root = fs::canonicalize(root).map_err(|e| io_err(&shown, e))?;
        let storage = FileStorage { root, handles: RwLock::new(HashMap::new()) };
        storage.remove_stale_temps()?;
        Ok(storage)
    }

    /// The absolute data directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path_of(&self, name: &str) -> Result<PathBuf, StorageError> {
        validate_object_name(name)?;
        Ok(self.root.join(name))
    }

    fn remove_stale_temps(&self) -> Result<(), StorageError> {
        for (dir, _) in self.dirs()? {
            let Ok(entries) = fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
                    let _ = fs::remove_file(entry.path());
                }
            }
        }
        Ok(())
    }

    /// The root and its direct subdirectories, with their object-name prefixes.
    fn dirs(&self) -> Result<Vec<(PathBuf, String)>, StorageError> {
        let mut out = vec![(self.root.clone(), String::new())];
        let entries = fs::read_dir(&self.root).map_err(|e| io_err(&self.root.display().to_string(), e))?;
        for entry in entries.flatten() {
            if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                let name = entry.file_name().to_string_lossy().into_owned();
                out.push((entry.path(), format!("{name}/")));
            }
        }
        Ok(out)
    }

    /// Creates the parent directory of `path` (fsyncing the root when new).
    fn ensure_parent(&self, name: &str, path: &Path) -> Result<(), StorageError> {
        let parent = path.parent().expect("object paths have a parent");
        if parent != self.root && !parent.is_dir() {
            fs::create_dir_all(parent).map_err(|e| io_err(name, e))?;
            sync_dir(&self.root).map_err(|e| io_err(name, e))?;
        }
        Ok(())
    }

    fn cached(&self, name: &str) -> Option<Arc<AppendHandle>> {
        self.handles.read().unwrap_or_else(|e| e.into_inner()).get(name).cloned()
    }

    /// The append handle for `name`, opening (and creating) the file once.
    fn handle(&self, name: &str) -> Result<Arc<AppendHandle>, StorageError> {
        if let Some(h) = self.cached(name) {
            return Ok(h);
        }
        let path = self.path_of(name)?;
        let mut handles = self.handles.write().unwrap_or_else(|e| e.into_inner());
        if let Some(h) = handles.get(name) {
            return Ok(h.clone());
        }
        self.ensure_parent(name, &path)?;
        let existed = path.exists();
        let file = OpenOptions::new().create(true).append(true).open(&path).map_err(|e| io_err(name, e))?;
        if !existed {
            sync_dir(path.parent().expect("parent")).map_err(|e| io_err(name, e))?;
        }
        let h = Arc::new(AppendHandle { file, write_lock: Mutex::new(()), commit: Mutex::new(CommitState::default()), synced_cv: Condvar::new() });
        handles.insert(name.to_string(), h.clone());
        Ok(h)
    }

    fn forget_handle(&self, name: &str) {
        self.handles.write().unwrap_or_else(|e| e.into_inner()).remove(name);
    }
}

impl AppendHandle {
    fn append(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        let _w = lock(&self.write_lock);
        (&self.file).write_all(bytes).map_err(|e| io_err(name, e))?;
        lock(&self.commit).written += 1;
        Ok(())
    }

    /// Group commit: returns once every append completed before this call is durable.
    fn sync(&self, name: &str) -> Result<(), StorageError> {
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
            if let Err(e) = result {
                return Err(io_err(name, format!("fsync failed: {e}")));
            }
        }
    }
}

impl Storage for FileStorage {
    fn backend_name(&self) -> &'static str {
        "file"
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, StorageError> {
        let mut names = Vec::new();
        for (dir, dir_prefix) in self.dirs()? {
            let Ok(entries) = fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                if !entry.file_type().map(|t| t.is_file()).unwrap_or(false) {
                    continue;
                }
                let file = entry.file_name().to_string_lossy().into_owned();
                if file.starts_with(TEMP_PREFIX) {
                    continue;
                }
                let name = format!("{dir_prefix}{file}");
                if name.starts_with(prefix) && validate_object_name(&name).is_ok() {
                    names.push(name);
                }
            }
        }
        names.sort();
        Ok(names)
    }

    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError> {
        let path = self.path_of(name)?;
        match fs::read(&path) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err(name, e)),
        }
    }

    fn append(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        validate_object_name(name)?;
        self.handle(name)?.append(name, bytes)
    }

    fn truncate(&self, name: &str, len: u64) -> Result<(), StorageError> {
        let path = self.path_of(name)?;
        if let Some(h) = self.cached(name) {
            let _w = lock(&h.write_lock);
            h.file.set_len(len).map_err(|e| io_err(name, e))?;
            return h.file.sync_all().map_err(|e| io_err(name, e));
        }
        match OpenOptions::new().write(true).open(&path) {
            Ok(f) => {
                f.set_len(len).map_err(|e| io_err(name, e))?;
                f.sync_all().map_err(|e| io_err(name, e))
            }
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_err(name, e)),
        }
    }

    fn sync(&self, name: &str) -> Result<(), StorageError> {
        validate_object_name(name)?;
        match self.cached(name) {
            Some(h) => h.sync(name),
            None => {
                // Nothing appended through this process: make the file durable if it exists.
                let path = self.path_of(name)?;
                match File::open(&path) {
                    Ok(f) => f.sync_data().map_err(|e| io_err(name, e)),
                    Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
                    Err(e) => Err(io_err(name, e)),
                }
            }
        }
    }

    fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        let path = self.path_of(name)?;
        self.ensure_parent(name, &path)?;
        let parent = path.parent().expect("parent");
        let mut suffix = [0u8; 8];
        getrandom::fill(&mut suffix).map_err(|e| io_err(name, e))?;
        let file_name = path.file_name().expect("file name").to_string_lossy();
        let temp = parent.join(format!("{TEMP_PREFIX}{file_name}.{:016x}", u64::from_le_bytes(suffix)));
        let result = (|| -> std::io::Result<()> {
            let mut f = OpenOptions::new().write(true).create_new(true).open(&temp)?;
            f.write_all(bytes)?;
            f.sync_all()?;
            drop(f);
            fs::rename(&temp, &path)?;
            sync_dir(parent)
        })();
        if let Err(e) = result {
            let _ = fs::remove_file(&temp);
            return Err(io_err(name, e));
        }
        // A cached append handle points at the replaced inode.
        self.forget_handle(name);
        Ok(())
    }

    fn remove(&self, name: &str) -> Result<(), StorageError> {
        let path = self.path_of(name)?;
        self.forget_handle(name);
        match fs::remove_file(&path) {
            Ok(()) => sync_dir(path.parent().expect("parent")).map_err(|e| io_err(name, e)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_err(name, e)),
        }
    }

    fn location(&self, name: &str) -> String {
        self.root.join(name).display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn passes_core_conformance() {
        let dir = tempfile::tempdir().unwrap();
        mentisdb_core::storage::conformance::run_all(&FileStorage::open(dir.path()).unwrap());
    }

    #[test]
    fn objects_stay_inside_the_root_and_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let s = FileStorage::open(dir.path()).unwrap();
        s.append("chains/a.mdb", b"abc").unwrap();
        s.sync("chains/a.mdb").unwrap();
        s.write_atomic("chains/a.agents.json", b"{}").unwrap();
        assert!(dir.path().join("chains/a.mdb").is_file());
        assert!(s.location("chains/a.mdb").starts_with(&*s.root().display().to_string()));
        assert!(matches!(s.append("../x", b"x"), Err(StorageError::InvalidName(_))));
        drop(s);
        fs::write(dir.path().join("chains").join(format!("{TEMP_PREFIX}stale")), b"x").unwrap();
        let s = FileStorage::open(dir.path()).unwrap();
        assert_eq!(s.list("chains/").unwrap(), vec!["chains/a.agents.json".to_string(), "chains/a.mdb".to_string()]);
        assert_eq!(s.read("chains/a.mdb").unwrap().unwrap(), b"abc");
    }

    #[test]
    fn concurrent_syncs_all_return_and_cover_their_appends() {
        let dir = tempfile::tempdir().unwrap();
        let s = Arc::new(FileStorage::open(dir.path()).unwrap());
        let done = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let (s, done) = (s.clone(), done.clone());
                std::thread::spawn(move || {
                    for i in 0..50 {
                        s.append("c/x.bin", format!("{t}:{i};").as_bytes()).unwrap();
                        s.sync("c/x.bin").unwrap();
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(done.load(Ordering::Relaxed), 400);
        let h = s.cached("c/x.bin").unwrap();
        let st = lock(&h.commit);
        assert_eq!(st.written, 400);
        assert_eq!(st.synced, 400, "the last sync covers every append");
        let text = String::from_utf8(s.read("c/x.bin").unwrap().unwrap()).unwrap();
        assert_eq!(text.matches(';').count(), 400);
    }
}
