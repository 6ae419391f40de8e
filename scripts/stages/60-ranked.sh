#!/usr/bin/env bash
# Ranked retrieval smoke test: the LoCoMo bench (debug build, lexical, in
# process) on one conversation, with a floor on R@10 so a retrieval
# regression fails loudly. The full five-conversation figures come from
# `cargo run --release -p mentisdb-tests --bin locomo-bench -- ../shared/bench/locomo`.
set -euo pipefail
# Unit tests of the optional local embedding model (no model files needed),
# and the daemon built with it (`--features minilm`: the model-directory
# setting; MENTISDB_TEST_MINILM_DIR, when set, also runs a real-model test).
cargo test -p mentisdb-embed-minilm
cargo test -p mentisdb-native --features minilm --lib
data="${LOCOMO_DIR:-../shared/bench/locomo}"
if [ ! -f "$data/conv-30.json" ]; then
  echo "skipping: $data/conv-30.json not found"
  exit 0
fi
one="$(mktemp -d)"
trap 'rm -rf "$one"' EXIT
ln -s "$(cd "$data" && pwd)/conv-30.json" "$one/conv-30.json"
cargo build -p mentisdb-tests --bin locomo-bench
out="$("$CARGO_TARGET_DIR/debug/locomo-bench" "$one")"
echo "$out"
r10="$(echo "$out" | awk '/^overall/ { for (i = 1; i <= NF; i++) if ($i == "R@10") { gsub("%", "", $(i+1)); print $(i+1) } }')"
python3 - "$r10" <<'PY'
import sys
r10 = float(sys.argv[1])
floor = 80.0
assert r10 >= floor, f"conv-30 R@10 {r10}% fell below {floor}%"
print(f"ranked smoke: conv-30 R@10 {r10}% >= {floor}%")
PY
