#!/usr/bin/env bash
# Native host: file storage conformance and group commit, crash tests for
# both formats, the mentisdbd binary's REST/MCP/auth/restart tests.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
cargo test -p mentisdb-native --all-targets
cargo test -p mentisdb-native --doc
