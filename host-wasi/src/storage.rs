//! [`DirStorage`]: the core's [`Storage`] over a directory, through `std::fs`.
//!
//! Inside the component `std::fs` *is* the WASI filesystem: every path
//! resolves against the directory the host preopened at `/data`
//! (`wasi:filesystem/preopens`), and nothing outside a preopen is reachable
//! at all. Each object is one file, `<root>/<name>` (names have at most two
//! segments, e.g. `chains/<stem>.mdb`), so the layout is the native
//! daemon's: a data directory is one copy away from `mentisdbd`.
//!
//! Durability: `append` writes straight to the file (no user-space buffer)
//! and `sync` calls `sync_data` (`wasi:filesystem` `sync-data`, an fsync on
//! the host); an object created since its last sync also gets its directory
//! synced, so the new name survives a crash too. `write_atomic` writes a
//! temporary file, syncs it, renames it over the target and syncs the
//! directory. Open append handles are cached per object, because opening a
//! path costs a host call per segment; the component runs one call at a
//! time, so holding the cache lock across `sync` blocks nobody.

use mentisdb_core::storage::{validate_object_name, Storage, StorageError};
use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Suffix of `write_atomic`'s temporary files; such files are never listed.
const TEMP_SUFFIX: &str = ".mentisdb-tmp";

/// An open append handle and whether its directory entry still needs a sync.
#[derive(Debug)]
struct AppendHandle {
    file: File,
    created: bool,
}

/// Named objects as files under one root directory.
#[derive(Debug)]
pub struct DirStorage {
    root: PathBuf,
    handles: Mutex<HashMap<String, AppendHandle>>,
}

impl DirStorage {
    /// A backend over `root`, which must be an existing directory (in the
    /// component: the preopened `/data`).
    pub fn open(root: impl Into<PathBuf>) -> Result<Self, StorageError> {
        let root = root.into();
        match fs::metadata(&root) {
            Ok(m) if m.is_dir() => Ok(DirStorage { root, handles: Mutex::new(HashMap::new()) }),
            Ok(_) => Err(StorageError::Unavailable(format!("{} is not a directory", root.display()))),
            Err(e) => Err(StorageError::Unavailable(format!(
                "cannot open the data directory {}: {e}; the host must preopen a writable directory at this guest path",
                root.display()
            ))),
        }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    fn handles(&self) -> MutexGuard<'_, HashMap<String, AppendHandle>> {
        self.handles.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Creates the object's parent directory when the name has two segments.
    /// Returns whether it had to be created.
    fn ensure_parent(&self, name: &str) -> io::Result<bool> {
        match name.split_once('/') {
            Some((dir, _)) => {
                let dir = self.root.join(dir);
                match fs::create_dir(&dir) {
                    Ok(()) => Ok(true),
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
                    Err(e) => Err(e),
                }
            }
            None => Ok(false),
        }
    }

    /// Syncs the directory holding `name` (and the root when `parent_created`).
    fn sync_dirs(&self, name: &str, parent_created: bool) -> io::Result<()> {
        let parent = self.path(name).parent().map(Path::to_path_buf).unwrap_or_else(|| self.root.clone());
        sync_dir(&parent)?;
        if parent_created && parent != self.root {
            sync_dir(&self.root)?;
        }
        Ok(())
    }

    fn list_dir(&self, dir: &Path, prefix_segment: Option<&str>, out: &mut Vec<String>) -> io::Result<()> {
        let entries = match fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        for entry in entries {
            let entry = entry?;
            let Some(file_name) = entry.file_name().to_str().map(str::to_string) else { continue };
            let file_type = entry.file_type()?;
            match prefix_segment {
                None if file_type.is_dir() => self.list_dir(&entry.path(), Some(&file_name), out)?,
                None if file_type.is_file() => out.push(file_name),
                Some(seg) if file_type.is_file() => out.push(format!("{seg}/{file_name}")),
                _ => {}
            }
        }
        Ok(())
    }
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

fn io_err(name: &str, e: impl std::fmt::Display) -> StorageError {
    StorageError::io(name, e)
}

impl Storage for DirStorage {
    fn backend_name(&self) -> &'static str {
        "wasi-fs"
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
        names.retain(|n| n.starts_with(prefix) && !n.ends_with(TEMP_SUFFIX) && validate_object_name(n).is_ok());
        names.sort();
        Ok(names)
    }

    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError> {
        validate_object_name(name)?;
        match fs::read(self.path(name)) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err(name, e)),
        }
    }

    fn append(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        validate_object_name(name)?;
        let mut handles = self.handles();
        if !handles.contains_key(name) {
            let path = self.path(name);
            let parent_created = self.ensure_parent(name).map_err(|e| io_err(name, e))?;
            let existed = !parent_created && path.exists();
            let file = OpenOptions::new().append(true).create(true).open(&path).map_err(|e| io_err(name, e))?;
            if parent_created {
                // The new directory's own entry must reach the root on the next sync.
                sync_dir(&self.root).map_err(|e| io_err(name, e))?;
            }
            handles.insert(name.to_string(), AppendHandle { file, created: !existed });
        }
        let handle = handles.get_mut(name).expect("inserted above");
        handle.file.write_all(bytes).map_err(|e| io_err(name, e))
    }

    fn truncate(&self, name: &str, len: u64) -> Result<(), StorageError> {
        validate_object_name(name)?;
        self.handles().remove(name);
        let file = match OpenOptions::new().write(true).open(self.path(name)) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io_err(name, e)),
        };
        file.set_len(len).and_then(|_| file.sync_all()).map_err(|e| io_err(name, e))
    }

    fn sync(&self, name: &str) -> Result<(), StorageError> {
        validate_object_name(name)?;
        let mut handles = self.handles();
        match handles.get_mut(name) {
            Some(handle) => {
                handle.file.sync_data().map_err(|e| io_err(name, e))?;
                if handle.created {
                    self.sync_dirs(name, false).map_err(|e| io_err(name, e))?;
                    handle.created = false;
                }
                Ok(())
            }
            // Nothing appended through this instance: sync whatever is there.
            None => match OpenOptions::new().write(true).open(self.path(name)) {
                Ok(f) => f.sync_data().map_err(|e| io_err(name, e)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(io_err(name, e)),
            },
        }
    }

    fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<(), StorageError> {
        validate_object_name(name)?;
        self.handles().remove(name);
        let parent_created = self.ensure_parent(name).map_err(|e| io_err(name, e))?;
        let path = self.path(name);
        let mut temp = path.clone().into_os_string();
        temp.push(TEMP_SUFFIX);
        let temp = PathBuf::from(temp);
        let written = File::create(&temp).and_then(|mut f| {
            f.write_all(bytes)?;
            f.sync_all()
        });
        if let Err(e) = written.and_then(|_| fs::rename(&temp, &path)) {
            let _ = fs::remove_file(&temp);
            return Err(io_err(name, e));
        }
        self.sync_dirs(name, parent_created).map_err(|e| io_err(name, e))
    }

    fn remove(&self, name: &str) -> Result<(), StorageError> {
        validate_object_name(name)?;
        self.handles().remove(name);
        match fs::remove_file(self.path(name)) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_err(name, e)),
        }
    }

    fn location(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_the_core_conformance_suite_natively() {
        let dir = tempfile::tempdir().unwrap();
        mentisdb_core::storage::conformance::run_all(&DirStorage::open(dir.path()).unwrap());
    }

    #[test]
    fn temp_files_and_foreign_names_are_not_listed() {
        let dir = tempfile::tempdir().unwrap();
        let s = DirStorage::open(dir.path()).unwrap();
        s.write_atomic("chains/a.agents.json", b"{}").unwrap();
        fs::write(dir.path().join("chains/b.mdb.mentisdb-tmp"), b"x").unwrap();
        fs::write(dir.path().join("chains/has space.mdb"), b"x").unwrap();
        assert_eq!(s.list("chains/").unwrap(), vec!["chains/a.agents.json".to_string()]);
    }

    #[test]
    fn missing_root_is_a_clear_error() {
        let err = DirStorage::open("/definitely/not/here").unwrap_err().to_string();
        assert!(err.contains("preopen"), "{err}");
    }

    #[test]
    fn a_second_instance_sees_appends_and_truncation() {
        let dir = tempfile::tempdir().unwrap();
        let a = DirStorage::open(dir.path()).unwrap();
        a.append("chains/x.mdb", b"abc").unwrap();
        a.sync("chains/x.mdb").unwrap();
        let b = DirStorage::open(dir.path()).unwrap();
        b.append("chains/x.mdb", b"def").unwrap();
        b.truncate("chains/x.mdb", 5).unwrap();
        a.append("chains/x.mdb", b"!").unwrap();
        assert_eq!(a.read("chains/x.mdb").unwrap().unwrap(), b"abcde!");
    }
}
