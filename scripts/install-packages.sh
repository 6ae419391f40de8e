#!/usr/bin/env bash
# Installs, in one apt transaction, every Debian package the test stages
# need and the machine lacks: tmux (stage 20's wizard test), PostgreSQL
# (stage 25), curl (stages 30, 35), Chromium and ChromeDriver (stages 40,
# 45). scripts/test.sh starts it in the background before stage 10, so the
# downloads overlap the first compiles; each stage waits for it with
# `scripts/install-packages.sh --wait` and still installs what it needs
# itself when run without test.sh. Usage:
#   scripts/install-packages.sh          install what is missing (needs root)
#   scripts/install-packages.sh --wait   wait until test.sh's background run ends
set -euo pipefail

if [ "${1:-}" = --wait ]; then
  pid="${MENTISDB_INSTALL_PACKAGES_PID:-}"
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    echo "waiting for the package install started by test.sh (pid $pid)"
    while kill -0 "$pid" 2>/dev/null; do sleep 1; done
  fi
  log="${MENTISDB_INSTALL_PACKAGES_LOG:-}"
  if [ -n "$log" ] && [ -s "$log" ]; then
    echo "package install (test.sh, in the background): $(tail -n 1 "$log")"
  fi
  exit 0
fi

# As the stages install them: PostgreSQL without its recommended packages,
# Chromium with them (its fonts draw the explorer's screenshots).
plain=() with_recommends=()
command -v tmux >/dev/null || plain+=(tmux)
command -v curl >/dev/null || plain+=(curl)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || plain+=(postgresql)
[ -x /usr/bin/chromium ] || with_recommends+=(chromium)
[ -x /usr/bin/chromedriver ] || with_recommends+=(chromium-driver)
if [ "${#plain[@]}" -eq 0 ] && [ "${#with_recommends[@]}" -eq 0 ]; then
  echo "every package the stages need is installed"
  exit 0
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
