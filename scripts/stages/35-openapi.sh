#!/usr/bin/env bash
# The generated OpenAPI document against the real daemon: schemathesis
# (pinned in tests/schemathesis/requirements.txt) runs every check on every
# REST operation of /openapi.json, with a fixed seed so that a CI run repeats
# a run made here. Intended answers are listed, with why, in
# tests/schemathesis/schemathesis.toml and the README.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
scripts/install.sh --wait curl
cargo build -p mentisdb-native --bin mentisdbd
venv="$(scripts/python-venv.sh)"
"$venv/bin/pip" install -q --disable-pip-version-check -r tests/schemathesis/requirements.txt
work="$(mktemp -d)"
port="$("$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
HOME="$work" "$CARGO_TARGET_DIR/debug/mentisdbd" --dir "$work/data" --bind-host 127.0.0.1 --rest-port "$port" --mcp-port 0 >"$work/daemon.log" 2>&1 &
daemon=$!
trap 'kill "$daemon" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
  sleep 0.1
done
mkdir -p test-output
"$venv/bin/st" --config-file tests/schemathesis/schemathesis.toml run "http://127.0.0.1:$port/openapi.json" \
  --max-examples 20 --seed 20261123 --generation-deterministic --workers 1 \
  --report junit --report-junit-path test-output/schemathesis.xml
# The daemon survived the whole run and still serves.
curl -sf "http://127.0.0.1:$port/health" >/dev/null || { echo "mentisdbd stopped serving during the schemathesis run" >&2; cat "$work/daemon.log" >&2; exit 1; }
