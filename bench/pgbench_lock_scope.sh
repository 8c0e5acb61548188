#!/usr/bin/env bash
# One lock scope (lock with its timeout, unlock) against one throwaway server, measured two
# ways in the same run: the bare two statements through pgbench (one client, simple
# protocol: the floor), then lockstep's advisory lock service through the libpq backend
# (bench/pg_lock_scope). Prints both, the round trips per scope and the service's share of
# the floor.
#   bench/pgbench_lock_scope.sh [PG_LOCK_SCOPE_BINARY] [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
scope_bin=${1:-$here/build/bench/pg_lock_scope}
seconds=${2:-5}
dir=$(mktemp -d /tmp/lockstep-pgbench.XXXXXX)
chmod 755 "$dir"  # the postgres user must reach the cluster inside
trap 'bash "$here/scripts/pg-throwaway" stop "$dir/pg"; rm -rf "$dir"' EXIT
eval "$(PGT_PORT=54331 bash "$here/scripts/pg-throwaway" start "$dir/pg")"
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
script="$dir/pg/scope.sql"
# Two round trips: the lock with its timeout setting (one statement), then the unlock.
printf "SELECT set_config('lock_timeout', '15000ms', false), pg_advisory_lock(1, 42);\nSELECT pg_advisory_unlock(1, 42);\n" > "$script"
chmod a+r "$script"
as_owner() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
floor=$(as_owner env PGHOST="$PGHOST" PGPORT="$PGPORT" "$PGBIN/pgbench" -n -c 1 -T "$seconds" -f "$script" -U postgres postgres 2>&1 \
  | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
echo "pgbench, the bare scope (2 statements, simple protocol): ${floor} scopes/s"
service=$("$scope_bin" "host=$PGHOST port=$PGPORT user=postgres dbname=postgres" "$seconds")
echo "$service"
rate=$(echo "$service" | sed -n 's/.* = \([0-9.]*\) scopes\/s.*/\1/p')
python3 -c "import sys; print(f'the service reaches {100 * float(sys.argv[1]) / float(sys.argv[2]):.1f}% of the pgbench floor')" "$rate" "$floor"
