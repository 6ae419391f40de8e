#!/usr/bin/env bash
# Core: lint, unit, property and dispatcher tests; wasm builds; the core's wasm imports nothing.
set -euo pipefail
rustup target add wasm32-unknown-unknown wasm32-wasip2 >/dev/null 2>&1 || rustup target add wasm32-unknown-unknown wasm32-wasip2
# Every clippy warning is an error; core/clippy.toml disallows the
# OS-seeded HashMap/HashSet (the core promises no randomness).
rustup component add clippy >/dev/null 2>&1 || true
cargo clippy -p mentisdb-core --all-targets -- -D warnings
# Every crate of the workspace (the core's stricter clippy.toml applies to it alone).
cargo clippy --workspace --all-targets -- -D warnings
# Each crate's modules stand in the layers ARCHITECTURE.md draws (no cycle).
python3 scripts/module_layers.py
cargo test -p mentisdb-core --lib --tests --examples
# Benches are not built here: the clippy runs above type-check them
# (`--all-targets`), and their figures come from `cargo bench`.
cargo test -p mentisdb-core --doc
cargo build -p mentisdb-core --target wasm32-wasip2
# A cdylib that drives the dispatcher end to end, so the linker keeps the
# whole engine; its import section must be empty (no host functions at all).
# It also proves the core builds for wasm32-unknown-unknown. A debug build:
# it keeps at least what a release build keeps (no inlining or constant
# folding removes a call), so an import would show here too.
cargo build -p mentisdb-core-wasm-probe --target wasm32-unknown-unknown
python3 scripts/wasm_imports.py "$CARGO_TARGET_DIR/wasm32-unknown-unknown/debug/mentisdb_core_wasm_probe.wasm" --expect-none
