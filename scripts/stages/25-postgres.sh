#!/usr/bin/env bash
# PostgreSQL backend (issue 15): a throwaway PostgreSQL server on a free
# loopback port (installed from Debian's packages when absent), the core's
# storage conformance suite and three engines on one database
# (mentisdb-pg-storage), then two mentisdbd processes on one database.
# The server is stopped and its directory removed whatever happens.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

source scripts/start-postgres.sh

cargo test -p mentisdb-pg-storage
cargo test -p mentisdb-native --test postgres
