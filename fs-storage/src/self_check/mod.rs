//! The checks every host runs on [`FsStorage`] in its own environment:
//! natively in this crate's tests, and inside the WASI component through its
//! `self-test` export (where `std::fs` is the WASI filesystem).
//!
//! [`run_all`] runs the core's storage conformance suite, the backend's own
//! layout checks (temp-file rule, reopen, a second instance) and the
//! file-backend crash checks (a crash image keeps every acknowledged thought,
//! a torn tail is cut on reopen). Like the conformance suite, a broken
//! contract panics with a message naming it.

mod crash;
mod layout;

use crate::FsStorage;
use std::path::{Path, PathBuf};

/// Runs every check, each in its own new subdirectory of `scratch` (which
/// must exist and be writable; the subdirectories are left for the caller to
/// remove). Panics on the first broken contract or failed setup step.
pub fn run_all(scratch: &Path) {
    mentisdb_core::storage::conformance::run_all(&open(&fresh_dir(scratch, "conformance")));
    layout::objects_stay_inside_the_root_and_survive_reopen(&fresh_dir(scratch, "reopen"));
    layout::temp_files_of_every_rule_are_skipped_and_cleaned_on_open(&fresh_dir(scratch, "temp-files"));
    layout::write_atomic_leaves_no_temp_file(&fresh_dir(scratch, "write-atomic"));
    layout::a_second_instance_sees_appends_and_truncation(&fresh_dir(scratch, "two-instances"));
    crash::crash_image_keeps_acknowledged_thoughts(&fresh_dir(scratch, "crash-image"));
    crash::torn_tail_is_cut_on_reopen(&fresh_dir(scratch, "torn-tail"));
}

/// Creates `scratch/<name>`, which must not exist yet.
fn fresh_dir(scratch: &Path, name: &str) -> PathBuf {
    let dir = scratch.join(name);
    std::fs::create_dir(&dir).unwrap_or_else(|e| panic!("cannot create the check directory {}: {e}", dir.display()));
    dir
}

fn open(dir: &Path) -> FsStorage {
    FsStorage::open(dir).unwrap_or_else(|e| panic!("cannot open {}: {e}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mentisdb_core::StorageError;

    #[test]
    fn every_check_passes_natively() {
        let scratch = tempfile::tempdir().unwrap();
        run_all(scratch.path());
    }

    /// The threaded part of the conformance suite (the WASI component, one
    /// call at a time, runs only [`run_all`]).
    #[test]
    fn concurrent_calls_keep_the_contract() {
        let scratch = tempfile::tempdir().unwrap();
        let threads = mentisdb_std_host::ScopedThreads::new(8);
        let run = |n, job: &(dyn Fn(usize) + Sync)| mentisdb_core::Parallelism::run(&threads, n, job);
        mentisdb_core::storage::conformance::run_concurrent(&open(&fresh_dir(scratch.path(), "concurrent")), &run);
    }

    #[test]
    fn a_data_directory_that_is_a_file_is_a_clear_error() {
        let scratch = tempfile::tempdir().unwrap();
        let file = scratch.path().join("not-a-dir");
        std::fs::write(&file, b"x").unwrap();
        let err = FsStorage::open(&file).unwrap_err();
        assert!(matches!(&err, StorageError::Io { object, .. } if object.contains("not-a-dir")), "{err}");
    }
}
