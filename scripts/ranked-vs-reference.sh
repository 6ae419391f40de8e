#!/usr/bin/env bash
# Ranked queries, one client over REST, side by side with MentisDB 0.10.10
# (issue 45): each daemon on a fresh temp directory gets the five LoCoMo
# conversations turn by turn (locomo-bench --rest, which reports R@5/R@10 and
# queries/s with p50/p99 through a reqwest client), then wrk with one
# connection asks 50 conv-26 questions in turn, the two daemons taking
# turns for a few rounds (p50/p99 with a minimal client; medians). Both
# daemons run with their defaults; the reference's interaction log is off
# (MENTISDB_VERBOSE=false), ours is on.
# The reference is built as ../shared/peers/CLIENTS.md says:
#   cargo install mentisdb --version 0.10.10 --locked --no-default-features \
#     --features server,llm-extraction --root DIR
# Usage: scripts/ranked-vs-reference.sh DIR/bin/mentisdb [rounds, default 7] [seconds a round, default 3]   (needs wrk)
set -euo pipefail
cd "$(dirname "$0")/.."
ref_bin="${1:?usage: scripts/ranked-vs-reference.sh <reference mentisdb binary> [rounds] [seconds a round]}"
rounds="${2:-7}"
secs="${3:-3}"
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
done
# The two daemons in turn, so that a machine whose speed drifts (shared
# cores) moves both alike: the ratio of the medians is the figure.
echo "== wrk, one connection, $rounds rounds of ${secs}s each, the two daemons in turn"
for r in $(seq "$rounds"); do
  for side in "ours $ours_port" "reference $ref_port"; do
    set -- $side
    wrk -t1 -c1 -d"${secs}s" --latency -s "$work/$1.lua" "http://127.0.0.1:$2/v1/ranked-search" |
      awk -v side="$1" -v r="$r" '/ 50%/ {p50 = $2} / 99%/ {p99 = $2} /^Requests\/sec:/ {rate = $2} END {print r, side, rate, p50, p99}' | tee -a "$work/rounds"
  done
done
python3 - "$work/rounds" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def us(t):  # wrk's latency text (e.g. 283.00us, 1.29ms) in microseconds
    for unit, f in (("us", 1), ("ms", 1e3), ("s", 1e6)):
        if t.endswith(unit):
            return float(t[: -len(unit)]) * f
med = {}
for side in ("ours", "reference"):
    mine = [r for r in rows if r[1] == side]
    med[side] = (statistics.median(float(r[2]) for r in mine), statistics.median(us(r[3]) for r in mine), statistics.median(us(r[4]) for r in mine))
    print(f"{side}: median {med[side][0]:,.0f} requests/s, p50 {med[side][1]:.0f} us, p99 {med[side][2]:.0f} us")
print(f"ours / reference: {med['ours'][0] / med['reference'][0]:.2f}x requests/s, {med['reference'][1] / med['ours'][1]:.2f}x at p50")
PY
