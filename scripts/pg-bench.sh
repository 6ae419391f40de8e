#!/usr/bin/env bash
# Figures of several mentisdbd instances on one PostgreSQL database (README,
# Performance): starts a throwaway server as the test command does, then runs
# the release bench. Usage: ./scripts/pg-bench.sh [mentisdb-pgbench flags]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/start-postgres.sh
cargo run --release -p mentisdb-tests --bin mentisdb-pgbench -- --pg-url "$MENTISDB_TEST_PG_URL" "$@"
