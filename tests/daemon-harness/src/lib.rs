//! # mentisdb-daemon-harness: the real `mentisdbd` in a test
//!
//! **Contract.** Every test that runs the daemon as users do (a child
//! process on free loopback ports, never an in-process stand-in) starts it
//! here, so the daemon tests of `host-native` and the cross-host tests of
//! `tests/` share one way to start, read, stop and kill it:
//!
//! - [`Daemon::start`]: `mentisdbd` over a data directory with no
//!   `MENTISDB_*` variable of the caller's environment, ports `0`, quiet
//!   logs; returns once it printed its startup line (`rest=`, `mcp=`).
//! - [`McpSession`]: an initialized streamable-HTTP MCP session; [`StdioServer`]:
//!   `mentisdb --mode stdio`, initialized.
//! - REST helpers: [`post`], [`ok`], [`head`], [`all_thoughts`].
//!
//! The binaries are `$MENTISDB_BIN` (for `mentisdbd`) when set, else the
//! ones next to the test executable's profile directory
//! (`target/debug/mentisdbd`, `target/debug/mentisdb`). Cargo builds them
//! before `host-native`'s own integration tests; other packages build them
//! first (`cargo build -p mentisdb-native --bins`).

mod daemon;
mod mcp;
mod rest;

pub use daemon::{binary, command, data_dir, Daemon};
pub use mcp::{initialize, sse_result, McpSession, RawReply, StdioServer};
pub use rest::{all_thoughts, client, head, ok, post};
