#!/usr/bin/env bash
# The one test command: installs what the tests need (rustup targets,
# wasm-bindgen-cli, Chromium, Python clients) and runs every test stage in
# scripts/stages/ in order. Usage: ./scripts/test.sh [stage-name-substring]
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
mkdir -p test-output
filter="${1:-}"
for stage in scripts/stages/*.sh; do
  case "$stage" in *"$filter"*) ;; *) continue ;; esac
  echo "=== stage $(basename "$stage")"
  start=$(date +%s)
  bash "$stage"
  echo "=== stage $(basename "$stage") passed in $(( $(date +%s) - start ))s"
done
echo "=== all stages passed"
