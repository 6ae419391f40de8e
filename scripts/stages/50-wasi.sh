#!/usr/bin/env bash
# WASI: the component builds for wasm32-wasip2 (a component directly, via
# wit-bindgen) with the daemon's file backend (mentisdb-fs-storage) compiled
# for WASI, and the wasmtime loader tests run it: spec walk through `call` and
# the typed exports, the backend's conformance and crash checks inside the
# component (`self-test`), instances sharing a directory,
# chains moving between the component and the core's verification, and the
# `--features sync` component syncing with a real mentisdbd over wasi:http.
set -euo pipefail
rustup target add wasm32-wasip2 >/dev/null 2>&1 || rustup target add wasm32-wasip2
# The sync build first (world plugin-sync, imports wasi:http), kept aside;
# then the default build (no network imports) at the usual path.
cargo build -p mentisdb-wasi --target wasm32-wasip2 --features sync
sync_component="$CARGO_TARGET_DIR/wasm32-wasip2/debug/mentisdb_wasi_sync.wasm"
cp "$CARGO_TARGET_DIR/wasm32-wasip2/debug/mentisdb_wasi.wasm" "$sync_component"
cargo build -p mentisdb-wasi --target wasm32-wasip2
component="$CARGO_TARGET_DIR/wasm32-wasip2/debug/mentisdb_wasi.wasm"
test -s "$component"
cargo test -p mentisdb-wasi
# The component tests and the sync tests (the sync component against the
# real daemon, stopped while the component writes, restarted, then rewritten
# to prove fork detection) are one test binary: one link of wasmtime.
cargo build -p mentisdb-native --bin mentisdbd
MENTISDB_WASI_COMPONENT="$component" MENTISDB_WASI_SYNC_COMPONENT="$sync_component" \
  cargo test -p mentisdb-tests --test wasi
# The figures bench (host-wasi/README.md, `cargo bench -p mentisdb-tests
# --bench wasi_component`) is type-checked by stage 10's clippy of every
# target; not linking it here saves a third link of wasmtime.
