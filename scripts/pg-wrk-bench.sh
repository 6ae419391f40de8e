#!/usr/bin/env bash
# Durable appends through 3 mentisdbd processes on one PostgreSQL database,
# driven by wrk (a light C load generator, as scripts/loadbench.sh uses)
# instead of the in-process Rust clients of mentisdb-pgbench: 16 chains, each
# written through all 3 daemons at once (one connection per chain per
# daemon), then one chain through the 3. Starts a throwaway server as the test
# command does. Prints appends/s and what the whole machine spent (CPU-ms per
# 1,000 appends, from /proc/stat). Needs wrk (apt-get install wrk).
# Usage: scripts/pg-wrk-bench.sh [seconds per phase, default 10]
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-10}"
command -v wrk >/dev/null || { echo "wrk not found: apt-get install wrk" >&2; exit 1; }
cargo build --release -p mentisdb-native --bin mentisdbd
bin="${CARGO_TARGET_DIR:-target}/release/mentisdbd"
source scripts/start-postgres.sh
db="mentisdb_wrk_$$"
psql -q "$MENTISDB_TEST_PG_URL" -c "CREATE DATABASE $db"
url="${MENTISDB_TEST_PG_URL%/*}/$db"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pids=()
bases=()
work="$(mktemp -d)"
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true; rm -rf "$work"; stop_pg; }
trap cleanup EXIT
for i in 0 1 2; do
  port="$(free_port)"
  MENTISDB_VERBOSE="${MENTISDB_VERBOSE:-true}" MENTISDB_STORAGE_URL="$url" MENTISDB_REST_PORT="$port" MENTISDB_MCP_PORT="$(free_port)" MENTISDB_DIR="$work/unused" "$bin" >"$work/daemon-$i.log" 2>&1 &
  pids+=($!)
  bases+=("http://127.0.0.1:$port")
done
for base in "${bases[@]}"; do
  for _ in $(seq 100); do curl -sf "$base/health" >/dev/null && break; sleep 0.1; done
done
busy_jiffies() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
phase() { # label wrk-script-arguments...
  local label="$1" before after total=0 n
  shift
  before="$(busy_jiffies)"
  local loads=()
  for i in 0 1 2; do
    wrk -t16 -c16 -d"${secs}s" -s scripts/loadbench/append-per-thread.lua "${bases[$i]}/v1/thoughts" -- "$@" >"$work/wrk-$i.txt" &
    loads+=($!)
  done
  wait "${loads[@]}"
  after="$(busy_jiffies)"
  for i in 0 1 2; do
    if grep -q "Non-2xx" "$work/wrk-$i.txt"; then echo "$label: some appends failed:"; cat "$work/wrk-$i.txt"; exit 1; fi
    n="$(awk '/requests in/ { print $1 }' "$work/wrk-$i.txt")"
    total=$((total + n))
  done
  python3 - "$label" "$total" "$secs" "$before" "$after" "$(getconf CLK_TCK)" <<'PY'
import sys
label, total, secs, before, after, hz = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
cpu_ms = (after - before) * 1000 / hz
print(f"{label}: {total / secs:.0f} durable appends/s ({total} in {secs:.0f} s; {cpu_ms * 1000 / max(total, 1):.0f} CPU-ms of the whole machine per 1,000 appends)")
PY
}
phase "16 chains, each through all 3 daemons (wrk, 16 connections per daemon)" many
phase "one chain through 3 daemons (wrk, 16 connections per daemon)" one one
for base in "${bases[@]}"; do
  echo "$base/health: $(curl -s "$base/health")"
done
