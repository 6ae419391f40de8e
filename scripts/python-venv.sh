#!/usr/bin/env bash
# Makes (once) the Python venv the test stages use, under the cargo target
# dir, and prints its path. Debian's python3 has no pip of its own.
set -euo pipefail
command -v python3 >/dev/null || "$(dirname "$0")/install.sh" --wait python3-venv >&2
venv="${CARGO_TARGET_DIR:?}/python-venv"
# A venv whose scripts cannot run (its target dir was moved: their #! lines
# name the old path) is made again.
if ! "$venv/bin/pip" --version >/dev/null 2>&1; then
  rm -rf "$venv"
  # Debian's python3 lacks ensurepip until python3-venv is installed.
  python3 -m venv "$venv" 2>/dev/null || { rm -rf "$venv"; "$(dirname "$0")/install.sh" --wait python3-venv >&2 && python3 -m venv "$venv"; }
fi
echo "$venv"
