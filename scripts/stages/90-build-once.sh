#!/usr/bin/env bash
# Build speed, checked after every test has run (a failure here hides no test
# result): the stages' cargo lines build each of our crates once natively,
# which needs one feature set per third-party crate (workspace-hack/Cargo.toml).
# scripts/feature_splits.py asks cargo's --unit-graph, which needs the
# nightly the browser build pins (scripts/install.sh nightly); nothing is compiled.
# On failure it prints the features to add to workspace-hack/Cargo.toml.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install.sh nightly
python3 scripts/feature_splits.py
