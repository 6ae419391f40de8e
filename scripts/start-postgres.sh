#!/usr/bin/env bash
# Sourced (not run): starts a throwaway PostgreSQL server on a free loopback
# port (installing Debian's package when absent), exports
# MENTISDB_TEST_PG_URL (an admin URL of it), and stops it and removes its
# directory when the sourcing script exits. Used by
# scripts/stages/25-postgres.sh and scripts/pg-bench.sh.

"$(dirname "${BASH_SOURCE[0]}")/install.sh" --wait postgresql
find_pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
pg_bin="$(find_pg_bin)"
[ -x "$pg_bin/initdb" ] || { echo "no initdb under /usr/lib/postgresql/*/bin" >&2; exit 1; }

# initdb and the server refuse to run as root: run them as postgres (the
# Debian package creates that user) when we are root.
as_pg=()
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || useradd --system --home-dir /nonexistent --shell /usr/sbin/nologin postgres
  as_pg=(runuser -u postgres --)
fi

pg_dir="$(mktemp -d /tmp/mentisdb-pg.XXXXXX)"
chmod 755 "$pg_dir"
[ "$(id -u)" = 0 ] && chown postgres "$pg_dir"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
stop_pg() {
  "${as_pg[@]}" "$pg_bin/pg_ctl" -D "$pg_dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$pg_dir"
}
trap stop_pg EXIT

"${as_pg[@]}" "$pg_bin/initdb" -D "$pg_dir/data" -A trust -U mentisdb -E UTF8 --no-sync >"$pg_dir/initdb.log" 2>&1 \
  || { cat "$pg_dir/initdb.log" >&2; exit 1; }
# fsync stays on (the default): acknowledged means committed to disk, as in production.
"${as_pg[@]}" "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w -t 60 \
  -o "-k $pg_dir -p $port -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null \
  || { cat "$pg_dir/server.log" >&2; exit 1; }
echo "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port"
export MENTISDB_TEST_PG_URL="postgres://mentisdb@127.0.0.1:$port/postgres"
