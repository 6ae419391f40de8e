#!/usr/bin/env bash
# Build speed, checked after every test has run (a failure here hides no test
# result): the stages' cargo lines build each of our crates once natively,
# which needs one feature set per third-party crate (workspace-hack/Cargo.toml).
# scripts/feature_splits.py asks cargo's --unit-graph, which needs the
# nightly the browser build pins (stage 40 installs it); nothing is compiled.
# On failure it prints the features to add to workspace-hack/Cargo.toml.
set -euo pipefail
cd "$(dirname "$0")/../.."
nightly=$(sed -n 's/^nightly=//p' scripts/build-wasm-pkg.sh)
installed=$(rustup component list --toolchain "$nightly" --installed 2>/dev/null || true)
if ! grep -q '^rust-src' <<<"$installed"; then
  rustup toolchain install "$nightly" --profile minimal --component rust-src
fi
python3 scripts/feature_splits.py --toolchain "$nightly"
