//! Moving a store between a directory of files and a [`MemoryStorage`], for
//! the cross-host tests: object name = path relative to the directory
//! (`chains/<stem>.mdb`), bytes unchanged. This is the native daemon's and the
//! WASI component's layout, so `load_dir` + `MentisDb::open` runs the same
//! verification the daemon runs on its data directory.

use mentisdb_core::{MemoryStorage, Storage};
use std::fs;
use std::path::Path;

/// Every file under `dir` (one level of subdirectories, as object names
/// allow) as an object of a fresh [`MemoryStorage`].
pub fn load_dir(dir: &Path) -> MemoryStorage {
    let storage = MemoryStorage::new();
    for entry in fs::read_dir(dir).expect("read data dir") {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().expect("utf-8 file name");
        if entry.file_type().unwrap().is_dir() {
            for inner in fs::read_dir(entry.path()).unwrap() {
                let inner = inner.unwrap();
                let object = format!("{name}/{}", inner.file_name().into_string().unwrap());
                storage.append(&object, &fs::read(inner.path()).unwrap()).expect("object name");
            }
        } else {
            storage.append(&name, &fs::read(entry.path()).unwrap()).expect("object name");
        }
    }
    storage
}

/// Writes every object of `storage` to `dir` as `dir/<name>`.
pub fn dump_to_dir(storage: &dyn Storage, dir: &Path) {
    for name in storage.list("").expect("list") {
        let path = dir.join(&name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, storage.read(&name).unwrap().expect("listed object exists")).unwrap();
    }
}
