#!/usr/bin/env bash
# Installs what the test stages need, when the machine lacks it:
#   tmux          stage 20 (the wizard test types into a real terminal)
#   postgresql    stage 25 (a throwaway server: scripts/start-postgres.sh)
#   curl          stages 30 and 35
#   chromium      stages 40 and 45 (Chromium and ChromeDriver)
#   python3-venv  Debian's python3 and python3-venv (scripts/python-venv.sh,
#                 when the machine's python3 cannot make a venv)
#   debian        tmux, postgresql, curl and chromium in one apt run (as root)
#   wasm-bindgen  wasm-bindgen-cli at exactly the version host-wasm/Cargo.toml
#                 pins (stage 40), built by `cargo install`
#   nightly       the nightly toolchain scripts/build-wasm-pkg.sh pins, with
#                 rust-src (the browser's size-tuned build; stage 90's check)
# scripts/test.sh runs `debian` and `wasm-bindgen` in the background before
# stage 10, so the downloads and the CLI's build overlap the first compiles
# (the build at the lowest CPU priority, in the cores stage 10 leaves idle).
# With --wait, a stage first waits for test.sh's background run of its items,
# then installs what is still missing itself, so a stage also runs alone.
# Usage: scripts/install.sh [--wait] ITEM...
set -euo pipefail
cd "$(dirname "$0")/.."

wait_for() { # pid item: until test.sh's background job writes its exit status
  # (the pid only guards against a job killed before it could; the file
  # guards against the pid being reused by then)
  local done="test-output/install-$2.exit"
  if [ -n "$1" ] && [ ! -e "$done" ] && kill -0 "$1" 2>/dev/null; then
    echo "waiting for test.sh's background install of $2 (pid $1; log test-output/install-$2.log)"
    while [ ! -e "$done" ] && kill -0 "$1" 2>/dev/null; do sleep 1; done
  fi
}

debian() { # the Debian items asked for
  # As the stages always installed them: PostgreSQL without its recommended
  # packages, Chromium with them (its fonts draw the explorer's screenshots).
  local plain=() with_recommends=() item
  for item in "$@"; do
    case "$item" in
      tmux) command -v tmux >/dev/null || plain+=(tmux) ;;
      python3-venv) plain+=(python3 python3-venv) ;;
      curl) command -v curl >/dev/null || plain+=(curl) ;;
      postgresql) ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || plain+=(postgresql) ;;
      chromium)
        [ -x /usr/bin/chromium ] || with_recommends+=(chromium)
        [ -x /usr/bin/chromedriver ] || with_recommends+=(chromium-driver) ;;
    esac
  done
  if [ "${#plain[@]}" -eq 0 ] && [ "${#with_recommends[@]}" -eq 0 ]; then
    echo "installed already: $*"
    return
  fi
  echo "installing from Debian's packages: ${plain[*]} ${with_recommends[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  if [ "${#plain[@]}" -gt 0 ]; then
    apt-get install -y -qq --no-install-recommends "${plain[@]}" >/dev/null
  fi
  if [ "${#with_recommends[@]}" -gt 0 ]; then
    apt-get install -y -qq "${with_recommends[@]}" >/dev/null
  fi
  echo "installed: ${plain[*]} ${with_recommends[*]}"
}

wasm_bindgen() {
  local version
  version=$(sed -n 's/^wasm-bindgen = "=\([0-9.]*\)".*/\1/p' host-wasm/Cargo.toml)
  [ -n "$version" ] || { echo "no pinned wasm-bindgen version in host-wasm/Cargo.toml" >&2; exit 1; }
  if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" = "$version" ]; then
    echo "installed already: wasm-bindgen-cli $version"
    return
  fi
  echo "installing wasm-bindgen-cli $version (cargo install)"
  # A directory of its own inside the target dir: cargo locks a target dir
  # per build, and this build runs beside the tests' (it shares nothing with
  # them: a release build of other crates). --force: cargo's own record of
  # installs can name a CLI whose binary is gone.
  CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}/wasm-bindgen-cli" cargo install --force wasm-bindgen-cli --version "$version"
}

if [ "${1:-}" = --help ] || [ "${1:-}" = -h ]; then
  sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
nightly() {
  local toolchain installed
  toolchain=$(sed -n 's/^nightly=//p' scripts/build-wasm-pkg.sh)
  [ -n "$toolchain" ] || { echo "no nightly pin (nightly=...) in scripts/build-wasm-pkg.sh" >&2; exit 1; }
  # Captured first: `grep -q` on a pipe could end rustup with SIGPIPE.
  installed=$(rustup component list --toolchain "$toolchain" --installed 2>/dev/null || true)
  if ! grep -q '^rust-src' <<<"$installed"; then
    rustup toolchain install "$toolchain" --profile minimal --component rust-src
  fi
}

wait=false
if [ "${1:-}" = --wait ]; then
  wait=true
  shift
fi
[ "$#" -gt 0 ] || { echo "usage: scripts/install.sh [--wait] tmux|postgresql|curl|chromium|python3-venv|debian|wasm-bindgen|nightly..." >&2; exit 2; }
debian_items=()
for item in "$@"; do
  case "$item" in
    tmux | postgresql | curl | chromium | python3-venv) debian_items+=("$item") ;;
    debian) debian_items+=(tmux postgresql curl chromium) ;;
    wasm-bindgen | nightly) ;;
    *) echo "scripts/install.sh: unknown item '$item' (tmux, postgresql, curl, chromium, python3-venv, debian, wasm-bindgen, nightly)" >&2; exit 2 ;;
  esac
done
if [ "${#debian_items[@]}" -gt 0 ]; then
  $wait && wait_for "${MENTISDB_INSTALL_DEBIAN_PID:-}" debian
  debian "${debian_items[@]}"
fi
for item in "$@"; do
  if [ "$item" = wasm-bindgen ]; then
    $wait && wait_for "${MENTISDB_INSTALL_WASM_BINDGEN_PID:-}" wasm-bindgen
    wasm_bindgen
  elif [ "$item" = nightly ]; then
    nightly
  fi
done
