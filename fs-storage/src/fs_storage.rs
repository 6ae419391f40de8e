//! [`FsStorage`]: the core's [`Storage`] contract over a data directory
//! (the layout, fsync rule and temp-file rule are in the crate docs).

use crate::group_commit::{truncate_durably, AppendHandle};
use crate::temp_file::{is_temp_file, temp_file_name};
use mentisdb_core::storage::validate_object_name;
use mentisdb_core::{Storage, StorageError};
use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// How many taken temp names `write_atomic` skips before it gives up.
const TEMP_NAME_ATTEMPTS: u64 = 1_000;

/// Durable named objects as files under one root directory.
#[derive(Debug)]
pub struct FsStorage {
    root: PathBuf,
    /// Open append handles by object name. Held only to look up, insert or
    /// remove: every append reads it, so no file is opened or synced under it.
    handles: RwLock<HashMap<String, Arc<AppendHandle>>>,
    /// Held while a handle is opened (a new object's file created and its
    /// directory synced) until it is in `handles`, and while a handle is
    /// forgotten: a file replaced or removed meanwhile cannot leave a handle
    /// to the old one behind.
    opening: Mutex<()>,
    /// Next temp-file number to try.
    next_temp: AtomicU64,
}

fn io_err(name: &str, e: impl std::fmt::Display) -> StorageError {
    StorageError::io(name, e)
}

/// Fsyncs a directory so entries created, renamed or removed in it are durable.
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

impl FsStorage {
    /// Opens the data directory `root`, creating it when absent, and removes
    /// the temp files of interrupted atomic writes (of every naming rule).
    /// Errors when the directory cannot be created or read (in a WASI
    /// component: when the host did not preopen it).
    pub fn open(root: impl AsRef<Path>) -> Result<FsStorage, StorageError> {
        let root = root.as_ref();
        let shown = root.display().to_string();
        crate::private::create_private_dir(root, true).map_err(|e| io_err(&shown, format!("cannot create the data directory: {e}")))?;
        let root = match fs::canonicalize(root) {
            Ok(absolute) => absolute,
            // WASI has no canonical paths; guest paths are already rooted at a preopen.
            Err(e) if e.kind() == ErrorKind::Unsupported => root.to_path_buf(),
            Err(e) => return Err(io_err(&shown, e)),
        };
        let storage = FsStorage { root, handles: RwLock::new(HashMap::new()), opening: Mutex::new(()), next_temp: AtomicU64::new(0) };
        storage.remove_stale_temps()?;
        Ok(storage)
    }

    /// The data directory (absolute where the platform has absolute paths).
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path_of(&self, name: &str) -> Result<PathBuf, StorageError> {
        validate_object_name(name)?;
        Ok(self.root.join(name))
    }

    fn handles_read(&self) -> RwLockReadGuard<'_, HashMap<String, Arc<AppendHandle>>> {
        self.handles.read().unwrap_or_else(|e| e.into_inner())
    }

    fn handles_write(&self) -> RwLockWriteGuard<'_, HashMap<String, Arc<AppendHandle>>> {
        self.handles.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Deletes temp files in the root and its direct subdirectories.
    fn remove_stale_temps(&self) -> Result<(), StorageError> {
        let mut dirs = vec![self.root.clone()];
        let entries = fs::read_dir(&self.root).map_err(|e| io_err(&self.root.display().to_string(), e))?;
        dirs.extend(entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()));
        for dir in dirs {
            let Ok(entries) = fs::read_dir(&dir) else { continue };
            let stale: Vec<PathBuf> = entries.flatten().filter(|e| e.file_name().to_str().is_some_and(is_temp_file)).map(|e| e.path()).collect();
            for path in &stale {
                fs::remove_file(path).map_err(|e| io_err(&path.display().to_string(), format!("cannot remove a stale temp file: {e}")))?;
            }
            if !stale.is_empty() {
                sync_dir(&dir).map_err(|e| io_err(&dir.display().to_string(), e))?;
            }
        }
        Ok(())
    }

    /// Creates the object's parent directory when the name has two segments,
    /// fsyncing the root so the new directory's name is durable.
    fn ensure_parent(&self, name: &str) -> io::Result<()> {
        let Some((dir, _)) = name.split_once('/') else { return Ok(()) };
        match crate::private::create_private_dir(&self.root.join(dir), false) {
            Ok(()) => sync_dir(&self.root),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn opening(&self) -> MutexGuard<'_, ()> {
        self.opening.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn cached(&self, name: &str) -> Option<Arc<AppendHandle>> {
        self.handles_read().get(name).cloned()
    }

    /// The append handle for `name`, opening (and creating) the file once.
    fn handle(&self, name: &str) -> Result<Arc<AppendHandle>, StorageError> {
        if let Some(h) = self.cached(name) {
            return Ok(h);
        }
        let path = self.path_of(name)?;
        // Appends to other objects read `handles` meanwhile: a new object's
        // directory fsync (milliseconds on a disk) must not hold them up.
        let _opening = self.opening();
        if let Some(h) = self.cached(name) {
            return Ok(h);
        }
        self.ensure_parent(name).map_err(|e| io_err(name, e))?;
        let (handle, created) = AppendHandle::open(&path).map_err(|e| io_err(name, e))?;
        if created {
            sync_dir(parent_of(&path)).map_err(|e| io_err(name, e))?;
        }
        let handle = Arc::new(handle);
        self.handles_write().insert(name.to_string(), handle.clone());
        Ok(handle)
    }

    /// The append handle for `name` if its file exists, opened without
    /// creating it (so an append refused for a missing object creates none,
    /// even when the file is removed meanwhile).
    fn existing_handle(&self, name: &str) -> Result<Option<Arc<AppendHandle>>, StorageError> {
        if let Some(h) = self.cached(name) {
            return Ok(Some(h));
        }
        let path = self.path_of(name)?;
        let _opening = self.opening();
        if let Some(h) = self.cached(name) {
            return Ok(Some(h));
        }
        let Some(handle) = AppendHandle::open_existing(&path).map_err(|e| io_err(name, e))? else { return Ok(None) };
        let handle = Arc::new(handle);
        self.handles_write().insert(name.to_string(), handle.clone());
        Ok(Some(handle))
    }

    /// Drops the cached handle of `name` (its file was replaced or removed).
    /// Waits for a handle being opened: one opened on the old file would
    /// otherwise be cached after this.
    fn forget_handle(&self, name: &str) {
        let _opening = self.opening();
        self.handles_write().remove(name);
    }

    /// Object names of the regular, non-temp files directly in `dir`
    /// (prefixed with `dir_prefix`), plus, when listing the root, those of
    /// its subdirectories.
    fn list_dir(&self, dir: &Path, dir_prefix: Option<&str>, out: &mut Vec<String>) -> io::Result<()> {
        let entries = match fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        for entry in entries {
            let entry = entry?;
            let Some(file_name) = entry.file_name().to_str().map(str::to_string) else { continue };
            let file_type = entry.file_type()?;
            match dir_prefix {
                None if file_type.is_dir() => self.list_dir(&entry.path(), Some(&file_name), out)?,
                None if file_type.is_file() && !is_temp_file(&file_name) => out.push(file_name),
                Some(seg) if file_type.is_file() && !is_temp_file(&file_name) => out.push(format!("{seg}/{file_name}")),
                _ => {}
            }
        }
        Ok(())
    }

    /// Writes `bytes` to a fresh temp file next to `path` and fsyncs it.
    fn write_temp(&self, path: &Path, bytes: &[u8]) -> io::Result<PathBuf> {
        let file_name = path.file_name().and_then(|n| n.to_str()).expect("validated object names are UTF-8 file names");
        for _ in 0..TEMP_NAME_ATTEMPTS {
            let n = self.next_temp.fetch_add(1, Ordering::Relaxed);
            let temp = parent_of(path).join(temp_file_name(file_name, n));
            let mut file = match crate::private::private_file(OpenOptions::new().write(true).create_new(true)).open(&temp) {
                Ok(f) => f,
                // Another writer (or an earlier process) holds this name: take the next.
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            };
            let written = file.write_all(bytes).and_then(|()| file.sync_all());
            return match written {
                Ok(()) => Ok(temp),
                Err(e) => {
                    let _ = fs::remove_file(&temp);
                    Err(e)
                }
            };
        }
        Err(io::Error::new(ErrorKind::AlreadyExists, format!("no free temp file name after {TEMP_NAME_ATTEMPTS} attempts")))
    }
}

fn parent_of(path: &Path) -> &Path {
    path.parent().expect("object paths lie inside the root")
}

impl Storage for FsStorage {
    fn backend_name(&self) -> &'static str {
        "file"
    }

    fn quick_appends(&self) -> bool {
        true
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, StorageError> {
        let mut names = Vec::new();
        // Objects live at most one directory deep: a prefix with a '/' names
        // that directory, so only it is read.
        let listed = match prefix.split_once('/') {
            Some((dir, _)) if validate_object_name(dir).is_ok() => self.list_dir(&self.root.join(dir), Some(dir), &mut names),
            _ => self.list_dir(&self.root, None, &mut names),
        };
        listed.map_err(|e| io_err(prefix, e))?;
        names.retain(|n| n.starts_with(prefix) && validate_object_name(n).is_ok());
        names.sort();
        Ok(names)
    }

    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError> {
        let path = self.path_of(name)?;
        match fs::read(path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err(name, e)),
        }
    }

    fn append(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        validate_object_name(name)?;
        self.handle(name)?.append(bytes).map_err(|e| io_err(name, e))
    }

    fn append_at(&self, name: &str, expected_len: u64, bytes: &[u8]) -> Result<(), StorageError> {
        validate_object_name(name)?;
        // Only an append at length 0 may create the object.
        let handle = if expected_len == 0 {
            self.handle(name)?
        } else {
            match self.existing_handle(name)? {
                Some(h) => h,
                None => return Err(StorageError::Conflict { object: name.to_string(), expected: expected_len, actual: 0 }),
            }
        };
        match handle.append_at(expected_len, bytes).map_err(|e| io_err(name, e))? {
            Ok(()) => Ok(()),
            Err(actual) => Err(StorageError::Conflict { object: name.to_string(), expected: expected_len, actual }),
        }
    }

    fn truncate(&self, name: &str, len: u64) -> Result<(), StorageError> {
        let path = self.path_of(name)?;
        let result = match self.cached(name) {
            Some(handle) => handle.truncate(&path, len),
            None => truncate_durably(&path, len).map(|_| ()),
        };
        result.map_err(|e| io_err(name, e))
    }

    fn sync(&self, name: &str) -> Result<(), StorageError> {
        let path = self.path_of(name)?;
        match self.cached(name) {
            Some(handle) => handle.sync().map_err(|e| io_err(name, format!("fsync failed: {e}"))),
            // Nothing appended through this instance: make the file durable if it exists.
            None => match OpenOptions::new().write(true).open(&path) {
                Ok(f) => f.sync_data().map_err(|e| io_err(name, format!("fsync failed: {e}"))),
                Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
                Err(e) => Err(io_err(name, e)),
            },
        }
    }

    fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        let path = self.path_of(name)?;
        self.ensure_parent(name).map_err(|e| io_err(name, e))?;
        let temp = self.write_temp(&path, bytes).map_err(|e| io_err(name, e))?;
        if let Err(e) = fs::rename(&temp, &path) {
            let _ = fs::remove_file(&temp);
            return Err(io_err(name, e));
        }
        // A cached append handle points at the replaced file.
        self.forget_handle(name);
        sync_dir(parent_of(&path)).map_err(|e| io_err(name, e))
    }

    fn remove(&self, name: &str) -> Result<(), StorageError> {
        let path = self.path_of(name)?;
        self.forget_handle(name);
        match fs::remove_file(&path) {
            Ok(()) => sync_dir(parent_of(&path)).map_err(|e| io_err(name, e)),
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
    use std::sync::mpsc;
    use std::time::Duration;

    /// A deadlock detector, not a speed limit: the appends below finish in
    /// microseconds, or never if they wait for the held lock.
    const HUNG: Duration = Duration::from_secs(60);

    #[test]
    fn opening_a_new_object_holds_up_no_append_to_an_open_one() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Arc::new(FsStorage::open(dir.path()).unwrap());
        storage.append("open.chain", b"first").unwrap();
        // While a new object's file is being created and its directory synced...
        let opening = storage.opening();
        let (done, finished) = mpsc::channel();
        let writer = storage.clone();
        std::thread::spawn(move || {
            let result = writer.append("open.chain", b" second").and_then(|_| writer.sync("open.chain"));
            let _ = done.send(result);
        });
        // ...an append to an object already open goes through.
        finished.recv_timeout(HUNG).expect("the append waited for another object's opening").unwrap();
        drop(opening);
        storage.append("new.chain", b"x").unwrap();
        assert_eq!(storage.read("open.chain").unwrap().unwrap(), b"first second");
        assert_eq!(storage.read("new.chain").unwrap().unwrap(), b"x");
    }

    #[test]
    fn a_replaced_object_is_appended_to_in_its_new_file() {
        let dir = tempfile::tempdir().unwrap();
        let storage = FsStorage::open(dir.path()).unwrap();
        storage.append("c.chain", b"old").unwrap();
        storage.write_atomic("c.chain", b"new").unwrap();
        storage.append("c.chain", b"+").unwrap();
        assert_eq!(storage.read("c.chain").unwrap().unwrap(), b"new+", "the handle to the replaced file was forgotten");
    }
}
