#!/usr/bin/env bash
# Native host: the shared file backend (mentisdb-fs-storage: conformance,
# temp-file rule, group commit, file-backend crash checks), crash tests for
# both formats, the mentisdbd binary's REST/MCP/auth/restart tests.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
# `mentisdbd wizard` is tested in a real terminal (tmux), typed into as a person would.
scripts/install.sh --wait tmux
cargo test -p mentisdb-fs-storage -p mentisdb-std-host
cargo test -p mentisdb-native --all-targets
cargo test -p mentisdb-native --doc
