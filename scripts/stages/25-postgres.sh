#!/usr/bin/env bash
# PostgreSQL backend (issue 15): a throwaway PostgreSQL server on a free
# loopback port (installed from Debian's packages when absent), the core's
# storage conformance suite and three engines on one database
# (mentisdb-pg-storage), then mentisdbd processes on one database (two and
# three, an outage, a kill), and the Python MCP client and the REST spec's
# examples against daemons on PostgreSQL.
# The server is stopped and its directory removed whatever happens.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

# curl: the REST spec's examples below.
scripts/install.sh --wait curl
source scripts/start-postgres.sh

cargo test -p mentisdb-pg-storage
cargo test -p mentisdb-native --test integration postgres::

# The Python `mcp` SDK's spec workflow and every curl example of
# MENTISDB_REST.md against daemons on PostgreSQL (a fresh database each).
cargo build -p mentisdb-native --bin mentisdbd
venv="$(scripts/python-venv.sh)"
"$venv/bin/pip" install -q --disable-pip-version-check -r tests/python/requirements.txt
MENTISDB_PY_PG_URL="$MENTISDB_TEST_PG_URL" MENTISDB_PG_BIN="$pg_bin" MENTISDBD_BIN="$CARGO_TARGET_DIR/debug/mentisdbd" \
  MENTISDB_SPEC_DIR="${MENTISDB_SPEC_DIR:-$(cd .. && pwd)/shared/spec}" \
  "$venv/bin/python" -m pytest tests/python/test_mcp.py tests/python/test_rest_spec.py -k "not stdio" -rs -q
