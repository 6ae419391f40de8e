#!/usr/bin/env bash
# Reliability (RELIABILITY.md): fuzz crashers and seeds replayed, fault
# injection at every storage call of a workload, the bad-input matrix over
# REST and MCP, the SIGKILL crash harness and short load runs against the
# real mentisdbd. CI runs modest counts; RELIABILITY.md has the long commands.
set -euo pipefail
# The daemon binary the process tests spawn (cargo does not build another
# package's binary for this crate's tests).
cargo build -p mentisdb-native --bin mentisdbd
cargo test -p mentisdb-tests --test reliability -- fuzz_replay:: faults:: bad_input::
MENTISDB_CRASH_CYCLES="${MENTISDB_CRASH_CYCLES:-12}" \
MENTISDB_LOAD_WRITER_SECS="${MENTISDB_LOAD_WRITER_SECS:-4}" \
MENTISDB_LOAD_MIXED_SECS="${MENTISDB_LOAD_MIXED_SECS:-5}" \
  cargo test -p mentisdb-tests --test reliability -- crash:: load:: --test-threads 1 --nocapture
