#!/usr/bin/env bash
# Builds host-wasm/pkg: the ES module + .wasm + TypeScript declarations of
# mentisdb-wasm (wasm-bindgen --target web), size-optimised with wasm-opt -Oz
# from npm's binaryen, and prints the raw and gzipped size of the .wasm.
# Needs: rustup target wasm32-unknown-unknown, wasm-bindgen-cli of the pinned
# version, node + npm (scripts/stages/40-wasm.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
e2e=host-wasm/e2e
if [ ! -x "$e2e/node_modules/.bin/wasm-opt" ]; then
  (cd "$e2e" && npm ci --no-audit --no-fund)
fi
cargo build --release --target wasm32-unknown-unknown -p mentisdb-wasm
rm -rf host-wasm/pkg
wasm-bindgen --target web --out-dir host-wasm/pkg "$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/mentisdb_wasm.wasm"
wasm=host-wasm/pkg/mentisdb_wasm_bg.wasm
"$e2e/node_modules/.bin/wasm-opt" -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue "$wasm" -o "$wasm.opt"
mv "$wasm.opt" "$wasm"
raw=$(wc -c < "$wasm")
gz=$(gzip -9 -c "$wasm" | wc -c)
echo "host-wasm/pkg/mentisdb_wasm_bg.wasm: ${raw} bytes raw, ${gz} bytes gzipped (gzip -9)"
