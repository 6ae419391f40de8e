//! The daemon tests' harness: the real `mentisdbd` as a child process on
//! free loopback ports (crate `mentisdb-daemon-harness`, shared with the
//! cross-host tests in `tests/`), and the webhook receiver.
#![allow(dead_code, unused_imports)]

pub mod receiver;

pub use mentisdb_daemon_harness::{client, initialize, sse_result, Daemon, McpSession, StdioServer};
use std::path::Path;
use std::process::Command;

/// `mentisdbd` with no `MENTISDB_*` variable of ours, free ports and `dir`.
pub fn command(dir: &Path, extra_env: &[(&str, &str)], args: &[&str]) -> Command {
    mentisdb_daemon_harness::command("mentisdbd", dir, extra_env, args)
}

/// [`command`] for the program's MentisDB 0.10 name, `mentisdb`.
pub fn command_of_reference_name(dir: &Path, extra_env: &[(&str, &str)], args: &[&str]) -> Command {
    mentisdb_daemon_harness::command("mentisdb", dir, extra_env, args)
}
