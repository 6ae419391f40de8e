#!/usr/bin/env bash
# The explorer page (/explorer of mentisdbd) in headless Chromium: for each
# view what a person does, screenshots in test-output/explorer-*.png, no
# console errors, no serious axe-core violations; plus the Rust tests of its
# serving (CSP, content types, the on/off switch). Installs what it needs.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

# --- installs (idempotent) ----------------------------------------------------
scripts/install.sh --wait chromium
(cd host-native/explorer/e2e && npm ci --no-audit --no-fund)

# --- tests --------------------------------------------------------------------
cargo build -p mentisdb-native --bin mentisdbd
cargo test -p mentisdb-native --test integration explorer::
cargo test -p mentisdb-native --lib -- explorer config::tests::the_explorer
mkdir -p test-output
(cd host-native/explorer/e2e && node --test units.test.mjs explorer.test.mjs security.test.mjs)
