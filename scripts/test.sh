#!/usr/bin/env bash
# The one test command: installs what the tests need (rustup targets,
# wasm-bindgen-cli, Chromium, Python clients) and runs every test stage in
# scripts/stages/ in order. Usage: ./scripts/test.sh [stage-name-substring]
set -euo pipefail
cd "$(dirname "$0")/.."
stages=$(cd scripts/stages && ls ./*.sh | sed 's|^\./||; s|\.sh$||' | tr '\n' ' ' | sed 's/ $//')
case "${1:-}" in
  -h | --help)
    echo "usage: ./scripts/test.sh [STAGE]   every stage in order, or those whose name contains STAGE"
    echo "stages: $stages"
    exit 0 ;;
esac
if [ "$#" -gt 1 ]; then
  echo "test.sh: one stage name at most (got $#: $*); see ./scripts/test.sh --help" >&2
  exit 2
fi
matches=0
for name in $stages; do
  case "$name" in *"${1:-}"*) matches=$((matches + 1)) ;; esac
done
if [ "$matches" -eq 0 ]; then
  echo "test.sh: no stage name contains '$1' (stages: $stages)" >&2
  exit 2
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# A clean CI checkout gains nothing from incremental caches, which cost
# gigabytes of disk; a developer can still set CARGO_INCREMENTAL=1.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
mkdir -p test-output "$CARGO_TARGET_DIR"
echo "=== start: disk free $(df -h --output=avail "$CARGO_TARGET_DIR" | tail -1 | tr -d ' '), $(nproc) cores"
filter="${1:-}"
# What later stages need installs in the background while stage 10
# compiles: Debian's packages, and wasm-bindgen-cli built at the lowest CPU
# priority (stage 40 only). A stage waits for its item
# (`scripts/install.sh --wait ITEM`); output: test-output/install-ITEM.log.
# Each writes its exit status to test-output/install-ITEM.exit when done.
rm -f test-output/install-*.exit
(set +e; scripts/install.sh debian; echo $? >test-output/install-debian.exit) >test-output/install-debian.log 2>&1 &
export MENTISDB_INSTALL_DEBIAN_PID=$!
case 40-wasm in *"$filter"*)
  (set +e; nice -n 19 scripts/install.sh wasm-bindgen; echo $? >test-output/install-wasm-bindgen.exit) \
    >test-output/install-wasm-bindgen.log 2>&1 &
  export MENTISDB_INSTALL_WASM_BINDGEN_PID=$! ;;
esac
for stage in scripts/stages/*.sh; do
  case "$(basename "$stage" .sh)" in *"$filter"*) ;; *) continue ;; esac
  echo "=== stage $(basename "$stage")"
  start=$(date +%s)
  outcome=passed
  bash "$stage" || outcome=FAILED
  # Disk and memory on every line: a linker killed by SIGBUS (disk full) or
  # SIGKILL (memory) says which from the last lines of a CI log.
  echo "=== stage $(basename "$stage") $outcome in $(( $(date +%s) - start ))s;" \
    "target dir $(du -sh "$CARGO_TARGET_DIR" 2>/dev/null | cut -f1)," \
    "disk free $(df -h --output=avail "$CARGO_TARGET_DIR" | tail -1 | tr -d ' ')," \
    "memory available $(awk '/MemAvailable/ {printf "%.1fG", $2 / 1048576}' /proc/meminfo)"
  [ "$outcome" = passed ] || exit 1
done
echo "=== all stages passed"
