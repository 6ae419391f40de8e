//! # mentisdb-fs-storage: the one `std::fs` backend of MentisDB
//!
//! [`FsStorage`] implements the core's [`mentisdb_core::Storage`] contract
//! over a data directory. The native daemon (`mentisdbd`) and the WASI
//! component both use it, so a data directory written by one opens in the
//! other unchanged. Inside a `wasm32-wasip2` component `std::fs` *is* the
//! WASI filesystem (paths resolve against the host's preopens); the same code
//! compiles there, and its mutexes never contend because a component instance
//! runs one call at a time.
//!
//! **Layout.** Object `chains/x.mdb` is the file `<root>/chains/x.mdb`, and
//! only after [`mentisdb_core::storage::validate_object_name`] accepted the
//! name, so no caller-controlled string reaches outside the directory.
//!
//! **The fsync rule** (one for both hosts):
//! - `append` writes through a cached append handle; it is not durable yet.
//! - `sync` fsyncs the file's data, shared among concurrent appenders
//!   ([`group_commit`]): one fsync covers every append that finished before
//!   it started.
//! - Whenever a name is created, renamed or removed, its parent directory is
//!   fsynced (and the root, when the parent directory itself is new), so the
//!   name survives a crash too.
//! - `truncate` is durable when it returns (`set_len` + fsync).
//! - `write_atomic` = temp file + fsync + rename over the target + directory
//!   fsync: after a crash a reader sees the old or the new contents.
//!
//! **No append waits for another object's file to open.** The cached append
//! handles are looked up under a lock held only to read or change the map;
//! opening a handle (creating a new object's file and syncing its directory,
//! milliseconds on a disk) happens outside it, one opening at a time, and
//! forgetting a replaced or removed object's handle waits for an opening in
//! progress, so no handle to an old file is cached after it.
//!
//! **The file-mode rule** ([`private`]): directories are created `0700` and
//! files `0600` whatever the umask; memory is for the daemon's user alone.
//!
//! **The temp-file rule** ([`temp_file`]): `write_atomic`'s temp files are
//! named `.tmp-<file>.<n>` next to their target. They are never listed, and
//! opening a directory removes any left by an interrupted write, including
//! those of the two earlier backends (`.tmp-…` of the daemon, `….mentisdb-tmp`
//! of the WASI component), so existing data directories still open.

mod fs_storage;

/// The lock file a daemon holds exclusively in the data directory it
/// serves (`mentisdbd`), and in-process users of the directory share.
pub const DAEMON_LOCK_FILE: &str = "mentisdbd.lock";
pub mod group_commit;
pub mod private;
pub mod self_check;
pub mod temp_file;

pub use fs_storage::FsStorage;
