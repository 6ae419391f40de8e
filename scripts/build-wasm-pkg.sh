#!/usr/bin/env bash
# Builds host-wasm/pkg: the ES module + .wasm + TypeScript declarations of
# mentisdb-wasm (wasm-bindgen --target web), size-optimised with wasm-opt (-Oz and the passes below)
# from npm's binaryen, and prints the raw and gzipped size of the .wasm.
# Needs: rustup (it installs the pinned nightly toolchain below), wasm-bindgen-cli
# of the pinned version (`scripts/install.sh wasm-bindgen`), node + npm.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
e2e=host-wasm/e2e
if [ ! -x "$e2e/node_modules/.bin/wasm-opt" ]; then
  (cd "$e2e" && npm ci --no-audit --no-fund)
fi
# Size-tuned release settings for this one build only (environment overrides
# of [profile.release]; native release builds keep the workspace profile).
export CARGO_PROFILE_RELEASE_OPT_LEVEL=z CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1
# The page's module is built by a pinned nightly toolchain that rebuilds the
# standard library for size (-Zbuild-std with std's `optimize_for_size`) and
# makes a panic abort at once (-Cpanic=immediate-abort: no panic messages and
# none of their formatting code): 471,769 -> 430,281 B gzipped. A panic (a
# bug: every tool answers bad input with an error) then reaches JavaScript as
# `RuntimeError: unreachable` without its message;
# MENTISDB_WASM_PANIC_MESSAGES=1 builds with the stable toolchain instead and
# keeps them. Also: derived `Debug` prints only the type or variant name
# (-Zfmt-debug=shallow; the core formats no derived `Debug` of a type with
# fields into a message, only strings, lists and field-less enums, which read
# the same) and no panic locations (-Zlocation-detail=none): -2.1 KB.
nightly=nightly-2026-05-19
if [ "${MENTISDB_WASM_PANIC_MESSAGES:-}" = 1 ]; then
  cargo build --release --target wasm32-unknown-unknown -p mentisdb-wasm
else
  scripts/install.sh nightly
  RUSTFLAGS="-Zunstable-options -Cpanic=immediate-abort -Zfmt-debug=shallow -Zlocation-detail=none" \
    cargo "+$nightly" build --release --target wasm32-unknown-unknown -p mentisdb-wasm \
    -Zbuild-std=std,panic_abort -Zbuild-std-features=optimize_for_size
fi
rm -rf host-wasm/pkg
wasm-bindgen --target web --out-dir host-wasm/pkg "$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/mentisdb_wasm.wasm"
wasm=host-wasm/pkg/mentisdb_wasm_bg.wasm
# wasm-opt: -Oz twice after flattening and re-deriving the control flow
# (--flatten --rereloop: -3.4 KB gzipped), functions that differ only in
# constants merged into one (--merge-similar-functions: -0.9 KB), no
# producers or target-features sections (-0.2 KB), and
# --low-memory-unused (-3.4 KB),
# which lets it fold constant offsets into loads and stores on the promise
# that no pointer points into the first 1 KiB of memory: Rust puts the stack
# there (1 MiB growing down to 0, static data after it), so only a stack
# already about to overflow would reach it.
"$e2e/node_modules/.bin/wasm-opt" --low-memory-unused --flatten --rereloop --merge-similar-functions -Oz -Oz --strip-producers --strip-target-features --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue "$wasm" -o "$wasm.opt"
mv "$wasm.opt" "$wasm"
raw=$(wc -c < "$wasm")
gz=$(gzip -9 -c "$wasm" | wc -c)
echo "host-wasm/pkg/mentisdb_wasm_bg.wasm: ${raw} bytes raw, ${gz} bytes gzipped (gzip -9)"
