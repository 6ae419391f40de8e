#!/usr/bin/env bash
# Browser host: mentisdb-wasm unit tests (native), wasm-bindgen-test in headless
# Chromium, the packaged module, the real-browser demo test, sync with a
# real daemon in Chromium, and both
# directions of browser <-> daemon chain interop. Installs what it needs.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

# --- installs (idempotent) ----------------------------------------------------
rustup target add wasm32-unknown-unknown >/dev/null 2>&1 || rustup target add wasm32-unknown-unknown
# wasm-bindgen-cli at exactly the version host-wasm/Cargo.toml pins; Chromium.
scripts/install.sh --wait wasm-bindgen chromium
(cd host-wasm/e2e && npm ci --no-audit --no-fund)

# --- tests --------------------------------------------------------------------
# Native: the image storage (conformance, segments, retries) and the
# daemon-side fixture (the core writes exactly the committed bytes).
cargo test -p mentisdb-wasm

# The JS API inside headless Chromium (flags in host-wasm/webdriver.json).
export CHROMEDRIVER=/usr/bin/chromedriver
export WASM_BINDGEN_TEST_TIMEOUT=120
(cd host-wasm && CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test --target wasm32-unknown-unknown -p mentisdb-wasm --test browser)

# The packaged ES module, and the demo page in a real browser (it exports a
# chain to test-output/ and imports the daemon-written fixture).
./scripts/build-wasm-pkg.sh | tee test-output/wasm-size.txt
(cd host-wasm/e2e && node_modules/.bin/tsc -p tsconfig.json && echo "TypeScript declarations: types-check.ts compiles")
(cd host-wasm/e2e && node --test demo.test.mjs)
# Hybrid ranked search in the page with a static word-embedding model.
(cd host-wasm/e2e && node --test embedding.test.mjs)

# Offline-first sync between the page and a real mentisdbd (stopped while
# the page writes, restarted, then rewritten to prove fork detection).
cargo build -p mentisdb-native --bin mentisdbd
(cd host-wasm/e2e && node --test sync.test.mjs)

# The chain the browser exported opens and verifies as the daemon opens it.
cargo test -p mentisdb-wasm --test interop_native -- --ignored
