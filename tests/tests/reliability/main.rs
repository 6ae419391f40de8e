//! Reliability (RELIABILITY.md), one test binary (one link, not five):
//! fuzz crashers and seeds replayed (`fuzz_replay`), fault injection at
//! every storage call of a workload (`faults`), the bad-input matrix over
//! REST and MCP (`bad_input`), the SIGKILL crash harness (`crash`) and load
//! runs (`load`) against the real `mentisdbd`. One part alone:
//! `cargo test -p mentisdb-tests --test reliability crash:: -- --nocapture`.

mod bad_input;
mod crash;
mod faults;
mod fuzz_replay;
mod load;

/// The functions the cargo-fuzz targets run (`fuzz/src/targets.rs`).
#[path = "../../../fuzz/src/targets.rs"]
#[allow(dead_code)]
mod targets;
