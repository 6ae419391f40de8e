#!/usr/bin/env bash
# REST load bench: a release mentisdbd on a temp directory (default settings,
# verbose interaction logging on, fsync per acknowledged append) driven by wrk
# from a second process on loopback.
#   0. the HTTP floor: an unknown path answering 404 (no work), 64 connections
#   1. durable appends to one chain, 16 connections (after 2 s of them to
#      another chain, a warm-up), and the daemon's resident memory (VmRSS)
#      before and after it: bytes per appended thought, at once, once freed
#      pages went back, and after one ranked query
#   2. filtered search over a 1,000-thought chain, 64 connections
#   3. GET /health, 64 connections
# then each phase as a share of the floor measured in the same run.
# Needs wrk (Debian: apt-get install wrk). Prints wrk's figures; asserts nothing.
# Usage: [MENTISDBD=<mentisdbd binary>] scripts/loadbench.sh [seconds per phase, default 10]
set -euo pipefail
usage="usage: [MENTISDBD=<mentisdbd binary>] scripts/loadbench.sh [seconds per phase, default 10]"
case "${1:-}" in
  -h|--help) echo "$usage"; exit 0 ;;
  ''|*[!0-9]*) [ -z "${1:-}" ] || { echo "$usage (not a whole number of seconds: $1)" >&2; exit 2; } ;;
esac
# MENTISDBD=<binary> measures that build instead of building one (A/B runs of
# two builds); resolved here, before the cd, so a relative path works.
if [ -n "${MENTISDBD:-}" ]; then
  MENTISDBD="$(realpath -e -- "$MENTISDBD" 2>/dev/null)" && [ -x "$MENTISDBD" ] || { echo "MENTISDBD is not an executable file" >&2; exit 2; }
fi
cd "$(dirname "$0")/.."
secs="${1:-10}"
command -v wrk >/dev/null || { echo "wrk not found: apt-get install wrk" >&2; exit 1; }
if [ -n "${MENTISDBD:-}" ]; then bin="$MENTISDBD"; else
  cargo build --release -p mentisdb-native --bin mentisdbd
  bin="${CARGO_TARGET_DIR:-target}/release/mentisdbd"
fi
dir="$(mktemp -d)"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
mcp_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
MENTISDB_DIR="$dir" MENTISDB_REST_PORT="$port" MENTISDB_MCP_PORT="$mcp_port" "$bin" >"$dir.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir" "$dir.log" "$dir.wrk"' EXIT
base="http://127.0.0.1:$port"
for _ in $(seq 50); do curl -sf "$base/health" >/dev/null && break; sleep 0.1; done
scripts/loadbench/seed_search.py "$base"
out="$dir.wrk"
# phase <name> <wrk args...>: runs wrk, prints its report, keeps its requests/s.
phase() {
  local name="$1"; shift
  echo "== $name, ${secs}s"
  wrk -t2 -d"${secs}s" --latency "$@" | tee "$out"
  rate["$name"]="$(awk '/^Requests\/sec:/ {print $2}' "$out")"
}
declare -A rate
phase "floor (404)" -c64 "$base/no-such-path"
rss() { awk '/^VmRSS:/ {print $2 * 1024}' "/proc/$pid/status"; }
# Resident memory is read once the pages a burst of work freed have gone back
# to the system: jemalloc's background thread returns them after its
# dirty_decay_ms (10 s). A warm-up of 2 s of appends to another chain first
# pages in the append path's code and the connections' buffers, so the
# growth over the measured run is what its thoughts cost; the growth from
# before the warm-up is printed too.
settle() { sleep 12; }
rss_cold="$(rss)"
echo "== warm-up: 2 s of appends to another chain, then 12 s to settle"
LOADBENCH_CHAIN=bench-warm wrk -t2 -c16 -d2s -s scripts/loadbench/append.lua "$base/v1/thoughts" >/dev/null
settle
rss_before="$(rss)"
phase "durable appends, one chain, 16 connections" -c16 -s scripts/loadbench/append.lua "$base/v1/thoughts"
python3 - "$base" "$pid" "$rss_cold" "$rss_before" <<'PY'
import json, sys, time, urllib.request
base, pid, cold, before = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def post(path, body):
    req = urllib.request.Request(base + path, json.dumps(body).encode(), {"content-type": "application/json"})
    return json.loads(urllib.request.urlopen(req).read())
def rss():
    return next(int(l.split()[1]) * 1024 for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS:"))
n = post("/v1/head", {"chain_key": "bench-append"})["thought_count"]
warm = post("/v1/head", {"chain_key": "bench-warm"})["thought_count"]
def report(when):
    now = rss()
    print(f"   {when}: {(now - before) / n:,.0f} B per thought of the run; from cold, warm-up included: {(now - cold) / (n + warm):,.0f} B per thought")
time.sleep(2)  # the index worker catches up with the appends
print(f"== resident memory growth, {n:,} thoughts appended ({warm:,} in the warm-up), index worker caught up")
report("at once")
time.sleep(12)
report("12 s later, freed pages returned")
post("/v1/ranked-search", {"chain_key": "bench-append", "text": "database latency", "limit": 10})
time.sleep(12)
report("after one ranked query, 12 s later")
PY
phase "filtered search, 64 connections" -c64 -s scripts/loadbench/search.lua "$base/v1/search"
phase "GET /health, 64 connections" -c64 "$base/health"
echo "== requests/s, and as a share of the floor measured in this run"
for name in "floor (404)" "durable appends, one chain, 16 connections" "filtered search, 64 connections" "GET /health, 64 connections"; do
  python3 -c 'import sys; r, f = float(sys.argv[2]), float(sys.argv[3]); print(f"{sys.argv[1]}: {r:,.0f}/s = {100 * r / f:.0f}% of the floor")' "$name" "${rate[$name]}" "${rate["floor (404)"]}"
done
