#!/usr/bin/env bash
# The floor for bench/pg_lock_scope: the bare statements of one lock scope through pgbench
# (one client, simple protocol), against a throwaway server of its own.
#   bench/pgbench_lock_scope.sh [SECONDS]
set -euo pipefail
seconds=${1:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
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
as_owner env PGHOST="$PGHOST" PGPORT="$PGPORT" "$PGBIN/pgbench" -n -c 1 -T "$seconds" -f "$script" -U postgres postgres 2>&1 \
  | grep -E "^(tps|latency average|number of transactions actually processed)"
