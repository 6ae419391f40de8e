#!/usr/bin/env bash
# Distills all-MiniLM-L6-v2 (model.safetensors + tokenizer.json in DIR, see
# scripts/fetch-minilm.sh) into a static word-embedding model file OUT for
# mentisdb-embed-static: the browser's `MentisDb.open(name, { embeddingModel })`
# and `locomo-bench --static OUT`. Extra arguments go to the distiller
# (embed-minilm/examples/distill_static.rs), replacing the defaults
# (`--dim 128 --zipf`: PCA to 128 dimensions, Zipf weights; about 4.1 MB).
# Usage: scripts/make-static-model.sh DIR OUT [--dim N] [--pca|--random] [--center] [--zipf]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  echo "usage: $0 MODEL_DIR OUT [distill options]" >&2
  exit 2
fi
dir="$(realpath "$1")"
out="$(realpath -m "$2")"
shift 2
opts=("$@")
if [ ${#opts[@]} -eq 0 ]; then
  opts=(--dim 128 --zipf)
fi
# The dev profile: the model crates are optimized in dev builds too (top-level
# Cargo.toml), so this needs no separate release build (~15 s on 2 cores).
cargo run -p mentisdb-embed-minilm --example distill_static -- "$dir" "$out" "${opts[@]}"
