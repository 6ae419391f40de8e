#!/usr/bin/env bash
# cloudllm 0.16.0, as published on crates.io, on our engine: its `mentisdb`
# dependency (0.10.10) is patched to compat-mentisdb/ and its own tests run.
# Nothing in cloudllm is edited: its Cargo.lock is dropped and one
# `[patch.crates-io]` line is appended. Fails when ort-sys (the ONNX Runtime
# download of mentisdb's default features) is still in the tree, when our
# crate is not the one used, when any test fails, or when fewer pass than
# with the real mentisdb 0.10.10 (default features off) on the same targets.
#
# CI runs the test targets that touch MentisDB plus the doc tests. The whole
# suite (docs/embedding.md):  CLOUDLLM_WHOLE_SUITE=1 ./scripts/test.sh cloudllm
set -euo pipefail
root="$PWD"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
# cloudllm's tree is large: no debug info keeps its artifacts (in the shared
# target dir) a third of the size and links faster.
export CARGO_PROFILE_DEV_DEBUG=0
version=0.16.0
# Passed with the real mentisdb 0.10.10 (default features off), measured once:
# the five MentisDB test targets + the doc tests, and the whole suite.
FLOOR_TARGETS=203 # 27 in the five targets + 176 doc tests (62 doc tests ignored)
FLOOR_WHOLE=631

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Fetch the published crate through cargo itself (a throwaway project that
# depends on it), then copy its source out of the registry cache.
src="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cloudllm-$version 2>/dev/null | head -1 || true)"
if [ -z "$src" ]; then
  mkdir -p "$work/fetch/src"
  printf '[package]\nname = "fetch-cloudllm"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\ncloudllm = "=%s"\n' "$version" > "$work/fetch/Cargo.toml"
  : > "$work/fetch/src/lib.rs"
  (cd "$work/fetch" && cargo fetch --quiet)
  src="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cloudllm-$version | head -1)"
fi
cp -r "$src" "$work/cloudllm"
cd "$work/cloudllm"
rm -f Cargo.lock
printf '\n[patch.crates-io]\nmentisdb = { path = "%s/compat-mentisdb" }\n' "$root" >> Cargo.toml

tree="$(cargo tree --target all -e normal,build,dev --prefix none)"
if grep -q '^ort-sys ' <<<"$tree"; then
  echo "ort-sys is still in cloudllm's dependency tree" >&2
  exit 1
fi
if ! grep -q "^mentisdb v0\.10\.[0-9]* ($root/compat-mentisdb)" <<<"$tree"; then
  echo "cloudllm does not use $root/compat-mentisdb:" >&2
  grep '^mentisdb ' <<<"$tree" >&2 || true
  exit 1
fi

log="$work/test.log"
if [ -n "${CLOUDLLM_WHOLE_SUITE:-}" ]; then
  floor=$FLOOR_WHOLE
  cargo test --no-fail-fast 2>&1 | tee "$log" || true
else
  floor=$FLOOR_TARGETS
  { cargo test --no-fail-fast --test agent_tests --test live_console_tests --test context_strategy_tests \
      --test mentisdb_tests --test mentisdb_memory_tests 2>&1 || true
    cargo test --no-fail-fast --doc 2>&1 || true; } | tee "$log"
fi
passed=$(grep '^test result:' "$log" | grep -o '[0-9]* passed' | awk '{s += $1} END {print s + 0}')
failed=$(grep '^test result:' "$log" | grep -o '[0-9]* failed' | awk '{s += $1} END {print s + 0}')
ignored=$(grep '^test result:' "$log" | grep -o '[0-9]* ignored' | awk '{s += $1} END {print s + 0}')
binaries=$(grep -c '^test result:' "$log" || true)
echo "cloudllm $version on compat-mentisdb: $passed passed, $failed failed, $ignored ignored in $binaries test binaries (floor $floor)"
if grep -q 'error: could not compile' "$log"; then
  echo "cloudllm did not build against compat-mentisdb" >&2
  exit 1
fi
if [ "$failed" -ne 0 ] || [ "$passed" -lt "$floor" ]; then
  exit 1
fi
