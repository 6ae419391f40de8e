//! Cross-host conformance and real-client tests.
//!
//! Shared helpers for the integration tests in `tests/tests/`:
//! [`daemon`] spawns the real `mentisdbd` binary on free loopback ports and
//! talks REST and MCP to it (the one daemon harness, crate
//! `mentisdb-daemon-harness`, which `host-native`'s tests use too);
//! [`spec_walk`] is the conformance sequence shared by the core and WASI tests;
//! [`bench`] holds the REST bench binaries' appends and event reader;
//! [`locomo`] and [`longmemeval`] read the retrieval benchmarks' files and
//! [`embedders`] gives the retrieval benches their embedding providers and
//! [`tool_target`] sends their tool calls in process or over REST.

pub mod bench;
/// The real `mentisdbd` process (crate `mentisdb-daemon-harness`).
pub use mentisdb_daemon_harness as daemon;
pub mod embedders;
pub mod locomo;
pub mod longmemeval;
pub mod spec_walk;
pub mod tool_target;
