#!/usr/bin/env bash
# The real side of SQL services, against a server: the session faults and the forced replay
# of a simulated trace.
#   1. Each SQL service in scenarios/sql-faults on both servers: `check` (the simulation ends
#      any one session, or restarts the server, at any one statement) and `confirm` (the
#      server's sessions ended by pg_terminate_backend or by closing the client's socket; a
#      throwaway server of its own restarted for server_restart) must both give the verdict
#      the spec expects, and confirm must have ended sessions. Passes: 20 iterations
#      unviolated; violations: seen within 300.
#   2. confirm --force: a trace of scenarios/sql/double-booking-no-lock.spec is seen on the
#      server step by step; one of tests/sql-specs/forced-pid.spec names the step whose output
#      differs (a backend pid); a trace that ends a session by the fault is refused (exit 2).
# Usage: sql_faults.sh LOCKSTEP_BINARY SOURCE_DIR CONNINFO
set -uo pipefail
lockstep="$1"
src="$2"
conninfo="$3"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

for spec in "$src"/scenarios/sql-faults/*.spec; do
  name=$(basename "$spec" .spec)
  if ! out=$("$lockstep" check "$spec" --trace-out "$work/$name.json" 2>&1); then fail "$name: check: $out"; continue; fi
  echo "$out" | grep -Eq "executions marked: (backend_terminated|server_restart)" || fail "$name: check marked no execution with the fault: $out"
  pg="$conninfo"
  grep -q '^fault server_restart' "$spec" && pg=auto  # a server of its own to restart
  if grep -q '^expect pass' "$spec"; then
    args=(--iterations 20)
  else
    args=(--iterations 300 --until-violation)
  fi
  if ! out=$("$lockstep" confirm "$spec" --pg "$pg" "${args[@]}" 2>&1); then fail "$name: confirm: $out"; continue; fi
  ended=$(echo "$out" | grep '^session faults:' | grep -oE '[0-9]+ (sessions ended|by closing|server restarts)' | awk '{n += $1} END {print n + 0}')
  if [ "$ended" -eq 0 ]; then fail "$name: confirm ended no session: $out"; continue; fi
  echo "ok: $name: $(echo "$out" | grep -E '^(iterations|violations|session faults|expected)' | tr '\n' ' ')"
done

# The forced replays.
"$lockstep" check "$src/scenarios/sql/double-booking-no-lock.spec" --trace-out "$work/booking.json" >/dev/null 2>&1
if out=$("$lockstep" confirm "$src/scenarios/sql/double-booking-no-lock.spec" --force "$work/booking.json" --pg "$conninfo" 2>&1) &&
   echo "$out" | grep -q '^seen on the server: every step'; then
  echo "ok: forced double-booking-no-lock: seen on the server"
else
  fail "forced double-booking-no-lock: $out"
fi
"$lockstep" check "$src/tests/sql-specs/forced-pid.spec" --trace-out "$work/pid.json" >/dev/null 2>&1
out=$("$lockstep" confirm "$src/tests/sql-specs/forced-pid.spec" --force "$work/pid.json" --pg "$conninfo" 2>&1)
code=$?
if [ $code -eq 1 ] && echo "$out" | grep -q 'the first outcome that differs is at a_pid'; then
  echo "ok: forced forced-pid: differs at a_pid"
else
  fail "forced forced-pid (exit $code): $out"
fi
out=$("$lockstep" confirm "$src/scenarios/sql-faults/transfer-autocommit.spec" --force "$work/transfer-autocommit.json" --pg "$conninfo" 2>&1)
code=$?
if [ $code -eq 2 ] && echo "$out" | grep -q 'ends a session (the backend_terminated fault)'; then
  echo "ok: a trace with the fault is refused"
else
  fail "forced transfer-autocommit (exit $code): $out"
fi
[ $failed -eq 0 ]
