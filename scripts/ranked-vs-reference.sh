#!/usr/bin/env bash
# Ranked queries, one client over REST, side by side with MentisDB 0.10.10
# (issue 45): each daemon on a fresh temp directory gets the five LoCoMo
# conversations turn by turn (locomo-bench --rest, which reports R@5/R@10 and
# queries/s with p50/p99 through a reqwest client), then wrk with one
# connection asks 50 conv-26 questions in turn for 5 s (p50/p99 with a
# minimal client). Both daemons run with their defaults; the reference's
# interaction log is off (MENTISDB_VERBOSE=false), ours is on.
# The reference is built as ../shared/peers/CLIENTS.md says:
#   cargo install mentisdb --version 0.10.10 --locked --no-default-features \
#     --features server,llm-extraction --root DIR
# Usage: scripts/ranked-vs-reference.sh DIR/bin/mentisdb   (needs wrk)
set -euo pipefail
cd "$(dirname "$0")/.."
ref_bin="${1:?usage: scripts/ranked-vs-reference.sh <reference mentisdb binary>}"
[ -x "$ref_bin" ] || { echo "not an executable: $ref_bin" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk not found: apt-get install wrk" >&2; exit 1; }
cargo build --release -p mentisdb-native --bin mentisdbd -p mentisdb-tests --bin locomo-bench
target="${CARGO_TARGET_DIR:-target}/release"
work="$(mktemp -d)"
# Four free ports at once (REST and MCP of each daemon), so no two are the same.
read -r ours_port ours_mcp ref_port ref_mcp < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(4)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
start() { # start <name> <rest port> <mcp port> <command...>
  local name="$1" port="$2" mcp="$3"; shift 3
  mkdir -p "$work/$name/home"
  env HOME="$work/$name/home" MENTISDB_DIR="$work/$name/data" MENTISDB_REST_PORT="$port" MENTISDB_MCP_PORT="$mcp" \
    MENTISDB_HTTPS_MCP_PORT=0 MENTISDB_HTTPS_REST_PORT=0 MENTISDB_DASHBOARD_PORT=0 MENTISDB_UPDATE_CHECK=false \
    MENTISDB_STARTUP_SOUND=false MENTISDB_THOUGHT_SOUNDS=false MENTISDB_BIND_HOST=127.0.0.1 "$@" >"$work/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && return; sleep 0.1; done
  echo "$name did not start; its log:" >&2; cat "$work/$name.log" >&2; exit 1
}
start ours "$ours_port" "$ours_mcp" "$target/mentisdbd"
start reference "$ref_port" "$ref_mcp" env MENTISDB_VERBOSE=false "$ref_bin" --headless
for side in "ours $ours_port" "reference $ref_port"; do
  set -- $side
  echo "== $1: locomo-bench --rest (ingest, then every question once)"
  "$target/locomo-bench" ../shared/bench/locomo --rest "http://127.0.0.1:$2" | grep -E "^mean-left-out R@|^ingest"
  key="$(curl -s "http://127.0.0.1:$2/v1/chains" | python3 -c 'import json, sys; print(next(k for k in json.load(sys.stdin)["chain_keys"] if k.startswith("locomo-conv-26")))')"
  python3 - "$key" "$work/$1.lua" <<'PY'
import json, sys
conv = json.load(open("../shared/bench/locomo/conv-26.json"))
questions = [q["question"] for q in conv["qa"] if q.get("category") != 5][:50]
bodies = "\n".join("  " + json.dumps(json.dumps({"chain_key": sys.argv[1], "text": q, "limit": 10})) + "," for q in questions)
open(sys.argv[2], "w").write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nlocal bodies = {\n' + bodies +
    '\n}\nlocal n = 0\nrequest = function()\n  n = n + 1\n  return wrk.format(nil, nil, nil, bodies[n % #bodies + 1])\nend\n')
PY
  echo "== $1: wrk, one connection, 5 s"
  wrk -t1 -c1 -d5s --latency -s "$work/$1.lua" "http://127.0.0.1:$2/v1/ranked-search" | grep -E "Requests/sec| 50%| 99%"
done
