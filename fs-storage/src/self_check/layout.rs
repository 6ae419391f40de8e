//! Layout checks: objects are files under the root, temp files follow one
//! rule and never surface, and separate instances share the files.

use super::open;
use crate::temp_file::{temp_file_name, LEGACY_WASI_TEMP_SUFFIX, TEMP_PREFIX};
use mentisdb_core::{Storage, StorageError};
use std::fs;
use std::path::Path;

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// Objects are `<root>/<name>`; hostile names never reach the disk; data is
/// there again after reopening.
pub(super) fn objects_stay_inside_the_root_and_survive_reopen(dir: &Path) {
    let s = open(dir);
    s.append("chains/a.mdb", b"abc").unwrap();
    s.sync("chains/a.mdb").unwrap();
    s.write_atomic("chains/a.agents.json", b"{}").unwrap();
    assert!(dir.join("chains/a.mdb").is_file(), "object chains/a.mdb must be the file <root>/chains/a.mdb");
    assert!(s.location("chains/a.mdb").starts_with(&*s.root().display().to_string()), "locations lie under the root");
    assert!(matches!(s.append("../x", b"x"), Err(StorageError::InvalidName(_))));
    drop(s);
    let s = open(dir);
    assert_eq!(s.list("chains/").unwrap(), names(&["chains/a.agents.json", "chains/a.mdb"]));
    assert_eq!(s.read("chains/a.mdb").unwrap().as_deref(), Some(&b"abc"[..]), "appended bytes survive a reopen");
}

/// Temp files of this rule and of both earlier backends' rules are never
/// listed, and opening the directory removes them (objects stay).
pub(super) fn temp_files_of_every_rule_are_skipped_and_cleaned_on_open(dir: &Path) {
    let s = open(dir);
    s.write_atomic("chains/a.agents.json", b"{}").unwrap();
    s.append("top.log", b"x").unwrap();
    let temps = [
        format!("chains/{}", temp_file_name("a.agents.json", 3)),
        format!("chains/{TEMP_PREFIX}b.agents.json.00ff00ff00ff00ff"),
        format!("chains/b.agents.json{LEGACY_WASI_TEMP_SUFFIX}"),
        format!("{TEMP_PREFIX}top.log.1"),
        format!("top.log{LEGACY_WASI_TEMP_SUFFIX}"),
    ];
    for temp in &temps {
        fs::write(dir.join(temp), b"half written").unwrap();
    }
    fs::write(dir.join("chains/has space.mdb"), b"x").unwrap();
    assert_eq!(s.list("chains/").unwrap(), names(&["chains/a.agents.json"]), "temp files and foreign names are never listed");
    assert_eq!(s.list("").unwrap(), names(&["chains/a.agents.json", "top.log"]));
    drop(s);
    let s = open(dir);
    for temp in &temps {
        assert!(!dir.join(temp).exists(), "opening must remove the stale temp file {temp}");
    }
    assert_eq!(s.read("chains/a.agents.json").unwrap().as_deref(), Some(&b"{}"[..]), "objects are kept");
    assert!(dir.join("chains/has space.mdb").exists(), "files that are not temp files are left alone");
}

/// A replaced object leaves exactly itself behind, and a replaced object
/// takes appends again afterwards.
pub(super) fn write_atomic_leaves_no_temp_file(dir: &Path) {
    let s = open(dir);
    s.append("chains/x.agents.json", b"old").unwrap();
    s.write_atomic("chains/x.agents.json", b"new").unwrap();
    s.write_atomic("chains/x.agents.json", b"newer").unwrap();
    let files: Vec<String> = fs::read_dir(dir.join("chains")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(files, names(&["x.agents.json"]), "write_atomic must rename its temp file away");
    s.append("chains/x.agents.json", b"+").unwrap();
    assert_eq!(s.read("chains/x.agents.json").unwrap().as_deref(), Some(&b"newer+"[..]), "appends after write_atomic go to the new file");
}

/// Two instances over one directory: appends land at the current end of
/// the file, and a truncation by one is seen by the other.
pub(super) fn a_second_instance_sees_appends_and_truncation(dir: &Path) {
    let a = open(dir);
    a.append("chains/x.mdb", b"abc").unwrap();
    a.sync("chains/x.mdb").unwrap();
    let b = open(dir);
    b.append("chains/x.mdb", b"def").unwrap();
    b.truncate("chains/x.mdb", 5).unwrap();
    a.append("chains/x.mdb", b"!").unwrap();
    assert_eq!(a.read("chains/x.mdb").unwrap().as_deref(), Some(&b"abcde!"[..]));
}
