#!/usr/bin/env bash
# Real clients against the real mentisdbd: the Python `mcp` SDK over
# streamable HTTP and stdio, pymentisdb / requests over REST, every curl
# example of MENTISDB_REST.md, restart durability. Pinned in
# tests/python/requirements.txt, installed into a venv under the target dir.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install.sh --wait curl
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
cargo build -p mentisdb-native --bin mentisdbd --bin mentisdb
venv="$(scripts/python-venv.sh)"
"$venv/bin/pip" install -q --disable-pip-version-check -r tests/python/requirements.txt
export MENTISDBD_BIN="$CARGO_TARGET_DIR/debug/mentisdbd"
export MENTISDB_SPEC_DIR="${MENTISDB_SPEC_DIR:-$(cd .. && pwd)/shared/spec}"
mkdir -p test-output
set +e
"$venv/bin/python" -m pytest tests/python -rs -v --junitxml=test-output/python-clients.xml
status=$?
set -e
# pytest exit 5 = no tests collected: a failure, never a pass.
if [ "$status" -ne 0 ]; then
  echo "python client tests failed (pytest exit $status)" >&2
  exit 1
fi
