#!/usr/bin/env bash
# What one request costs the daemon in CPU time and context switches, under
# load: a release mentisdbd on a temp directory, wrk warming it for 3 s, then
# `perf stat` on the daemon's process while wrk runs for the given seconds.
# Prints requests/s, then per request: the daemon's CPU microseconds and its
# context switches (the thread hand-offs that issue 45's append lever is about).
#   scripts/loadbench/switches.sh append [seconds]   durable appends, one chain, 16 connections
#   scripts/loadbench/switches.sh search [seconds]   filtered search over 1,000 thoughts, 64 connections
#   scripts/loadbench/switches.sh floor  [seconds]   an unknown path answering 404, 64 connections
# Needs wrk and perf (Debian: apt-get install wrk linux-perf). Asserts nothing.
set -euo pipefail
# MENTISDBD=<binary> measures that build instead of building one (A/B runs of
# two builds); resolved here, before the cd, so a relative path works.
if [ -n "${MENTISDBD:-}" ]; then
  MENTISDBD="$(realpath -e -- "$MENTISDBD" 2>/dev/null)" && [ -x "$MENTISDBD" ] || { echo "MENTISDBD is not an executable file" >&2; exit 2; }
fi
cd "$(dirname "$0")/../.."
usage="usage: [MENTISDBD=<mentisdbd binary>] scripts/loadbench/switches.sh append|search|floor [seconds, default 10]"
case "${1:-}" in
  -h|--help) echo "$usage"; exit 0 ;;
  append) conns=16; path=/v1/thoughts; script=(-s scripts/loadbench/append.lua) ;;
  search) conns=64; path=/v1/search; script=(-s scripts/loadbench/search.lua) ;;
  floor) conns=64; path=/no-such-path; script=() ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
secs="${2:-10}"
command -v wrk >/dev/null || { echo "wrk not found: apt-get install wrk" >&2; exit 1; }
command -v perf >/dev/null || { echo "perf not found: apt-get install linux-perf" >&2; exit 1; }
if [ -n "${MENTISDBD:-}" ]; then bin="$MENTISDBD"; else
  cargo build --release -p mentisdb-native --bin mentisdbd
  bin="${CARGO_TARGET_DIR:-target}/release/mentisdbd"
fi
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
dir="$(mktemp -d)"
port="$(free_port)"
MENTISDB_DIR="$dir" MENTISDB_REST_PORT="$port" MENTISDB_MCP_PORT="$(free_port)" "$bin" >"$dir.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir" "$dir.log" "$dir.perf" "$dir.wrk"' EXIT
url="http://127.0.0.1:$port$path"
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
if [ "$1" = search ]; then scripts/loadbench/seed_search.py "http://127.0.0.1:$port" >/dev/null; fi
wrk -t2 -c"$conns" -d3s "${script[@]}" "$url" >/dev/null
perf stat -x, -e context-switches,task-clock -p "$pid" -o "$dir.perf" -- sleep "$secs" &
stat=$!
wrk -t2 -c"$conns" -d"${secs}s" "${script[@]}" "$url" >"$dir.wrk"
wait "$stat"
python3 - "$dir.wrk" "$dir.perf" "$1" <<'PY'
import sys
wrk, perf, name = open(sys.argv[1]).read(), open(sys.argv[2]).read(), sys.argv[3]
requests = int(next(l for l in wrk.splitlines() if "requests in" in l).split()[0])
rate = float(next(l for l in wrk.splitlines() if l.startswith("Requests/sec:")).split()[1])
counts = {f[2]: float(f[0]) for f in (l.split(",") for l in perf.splitlines() if l and not l.startswith("#")) if len(f) > 2}
cpu_ms = next(v for k, v in counts.items() if k.startswith("task-clock"))
switches = counts["context-switches"]
print(f"{name}: {rate:,.0f} requests/s; per request the daemon spent {1000 * cpu_ms / requests:.0f} us of CPU "
      f"and {switches / requests:.2f} context switches ({requests:,} requests)")
PY
