#!/usr/bin/env bash
# Interrupts and lost servers, as a user meets them:
#  1. SIGINT during a sweep: exit 130; results.json, summary.md and the JUnit file are
#     written, the interrupted scenario marked, the scenarios after it not run.
#  2. SIGTERM during `confirm --pg auto`: exit 143; the throwaway server is stopped and its
#     directory removed (no postgres process, no cluster directory left).
#  3. The server stopped with `pg_ctl -m immediate` in the middle of a confirm: exit 2, the
#     finished iterations reported, the iteration, actor and SQLSTATE of the loss named.
# Usage: interrupts.sh LOCKSTEP SOURCE_DIR. Exits 77 (skipped) for parts 2 and 3 when there
# are no PostgreSQL server binaries. Ends only the processes it started.
set -uo pipefail
lockstep=$1
src=$2
work=$(mktemp -d /tmp/lsi.XXXXXX)
chmod 755 "$work"  # the postgres user passes through it (the cluster lives under it)
fail=0
own_pg=""
cleanup() {
  if [ -n "$own_pg" ]; then bash "$src/scripts/pg-throwaway" stop "$own_pg" > /dev/null 2>&1; fi
  rm -rf "$work"
}
trap cleanup EXIT
check() {  # check DESCRIPTION COMMAND...: a failed expectation is reported, the rest still run
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; fail=1; fi
}
# Waits up to $2 seconds for file $1 to exist.
wait_for() {
  for _ in $(seq 1 $(($2 * 10))); do
    if compgen -G "$1" > /dev/null; then return 0; fi
    sleep 0.1
  done
  return 1
}

# 1. SIGINT during a sweep: a quick scenario, a long one (interrupted), one after it.
mkdir -p "$work/sweep"
cp "$src/scenarios/bench/lockinc-2.json" "$work/sweep/a.json"
sed 's/"n": 10/"n": 16/; s/"name": "lastzero-10"/"name": "lastzero-16"/' "$src/scenarios/bench/lastzero-10.json" > "$work/sweep/b.json"
cp "$src/scenarios/bench/lockinc-3.json" "$work/sweep/c.json"
"$lockstep" sweep "$work/sweep" --out "$work/out" --junit "$work/out/junit.xml" --json > "$work/sweep.out" 2> "$work/sweep.err" &
pid=$!
# lastzero-16 runs for minutes: once a's line is out, b is being explored.
for _ in $(seq 1 100); do grep -q lockinc-2 "$work/sweep.out" 2> /dev/null && break; sleep 0.1; done
sleep 1
kill -INT "$pid"
wait "$pid"
code=$?
check "SIGINT during a sweep exits 130 (got $code)" test "$code" = 130
check "results.json written" test -s "$work/out/results.json"
check "summary.md says it was interrupted" grep -q "Interrupted during scenario 2 of 3" "$work/out/summary.md"
check "the JUnit file is written" grep -q 'testcase .*name="lastzero-16"' "$work/out/junit.xml"
check "the interrupted scenario is marked" python3 -c "
import json, sys
r = json.load(open('$work/out/results.json'))
assert [x['scenario'] for x in r] == ['lockinc-2', 'lastzero-16'], r
assert r[0]['verdict'] == 'pass' and not r[0]['interrupted']
assert r[1]['verdict'] == 'incomplete' and r[1]['interrupted'] and r[1]['stop_reason'] == 'interrupted', r[1]
assert r[1]['executions'] > 0
"
cat "$work/sweep.err"

# 1b. SIGINT, then SIGTERM, during a check with --checkpoint: exit 130, then 143; each time
# the checkpoint is written and the next run goes on from it, reporting the total so far.
cp="$work/lastzero-16.checkpoint.json"
for sig in INT TERM; do
  resume=()
  if [ -f "$cp" ]; then resume=(--resume "$cp"); fi
  before=$(python3 -c "import json; print(json.load(open('$cp'))['search']['stats']['executions'])" 2> /dev/null || echo 0)
  "$lockstep" check "$work/sweep/b.json" --checkpoint "$cp" "${resume[@]}" --json > "$work/cp.out" 2> "$work/cp.err" &
  pid=$!
  sleep 1.5
  kill -"$sig" "$pid"
  wait "$pid"
  code=$?
  want=130; [ "$sig" = TERM ] && want=143
  check "SIG$sig during check --checkpoint exits $want (got $code)" test "$code" = "$want"
  check "SIG$sig: the checkpoint is written and named" grep -q "go on with --resume $cp" "$work/cp.err"
  check "SIG$sig: the run reports the total so far" python3 -c "
import json
r = json.load(open('$work/cp.out')); c = json.load(open('$cp'))['search']
assert r['interrupted'] and r['resumed'] == ($before > 0), r
assert r['executions'] == c['stats']['executions'] > $before, (r['executions'], c['stats']['executions'], $before)
"
done
"$lockstep" check "$work/sweep/b.json" --resume "$cp" --max-executions 100 --json > "$work/cp.out" 2> "$work/cp.err"
check "a resumed run's bound counts its own executions" python3 -c "
import json
r = json.load(open('$work/cp.out')); c = json.load(open('$cp'))['search']
assert r['executions'] == c['stats']['executions'] + 100, (r['executions'], c['stats']['executions'])
"

# 1c. SIGINT during a check --jobs 2 --checkpoint, then resumed on 2 threads to the end: the
# serial search's count and steps (lastzero-14, about a second), nothing lost or twice.
sed 's/"n": 10/"n": 14/; s/"name": "lastzero-10"/"name": "lastzero-14"/' "$src/scenarios/bench/lastzero-10.json" > "$work/d.json"
"$lockstep" check "$work/d.json" --json > "$work/serial.out" 2> /dev/null
cpj="$work/jobs.checkpoint.json"
"$lockstep" check "$work/d.json" --jobs 2 --checkpoint "$cpj" --json > "$work/cpj.out" 2> "$work/cpj.err" &
pid=$!
sleep 0.4
kill -INT "$pid"
wait "$pid"
code=$?
check "SIGINT during check --jobs 2 --checkpoint exits 130 (got $code)" test "$code" = 130
"$lockstep" check "$work/d.json" --jobs 2 --resume "$cpj" --json > "$work/cpj2.out" 2> "$work/cpj2.err"
check "--jobs 2 interrupted and resumed on 2 threads gives the serial count and steps" python3 -c "
import json
s = json.load(open('$work/serial.out')); r = json.load(open('$work/cpj2.out'))
assert s['exhaustive'] and s['executions'] > 1000, s['executions']
assert r['exhaustive'] and r['executions'] == s['executions'] and r['steps'] == s['steps'], (r['executions'], r['steps'], s['steps'])
"

# 1d. SIGTERM during `isolation` and `check` of a spec on the simulated server: isolation of
# every interleaving (6,930 of them, a few seconds) stops between permutations, printing the
# ones that finished; check stops its search and reports it interrupted. Both exit 143.
{
  printf 'setup { CREATE TABLE t (id int PRIMARY KEY, n int); INSERT INTO t VALUES (1, 0); }\n'
  for session in a:5 b:4 c:2; do
    s=${session%%:*}
    printf 'session %s\n' "$s"
    for i in $(seq "${session##*:}"); do
      printf 'step %s%d { UPDATE t SET n = n + %d WHERE id = 1; UPDATE t SET n = n - 1 WHERE id = 1; SELECT n FROM t; }\n' "$s" "$i" "$i"
    done
  done
} > "$work/many.spec"
"$lockstep" isolation "$work/many.spec" > "$work/many-iso.out" 2> "$work/many-iso.err" &
pid=$!
sleep 0.5
kill -TERM "$pid"
wait "$pid"
code=$?
check "SIGTERM during isolation (simulated) exits 143 (got $code)" test "$code" = 143
check "isolation prints the permutations that finished" grep -q "starting permutation:" "$work/many-iso.out"
check "isolation says it was interrupted (simulated)" grep -q "isolation: interrupted" "$work/many-iso.err"
"$lockstep" check "$work/many.spec" --json > "$work/many-check.out" 2> "$work/many-check.err" &
pid=$!
sleep 1
kill -TERM "$pid"
wait "$pid"
code=$?
check "SIGTERM during check of a spec exits 143 (got $code)" test "$code" = 143
check "check of a spec reports the search interrupted" python3 -c "
import json
r = json.load(open('$work/many-check.out'))
assert r['interrupted'] and r['executions'] > 0, r
"

pgbin=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2> /dev/null | sort -V | tail -n 1)}
if [ -z "$pgbin" ] || [ ! -x "$pgbin/initdb" ]; then
  echo "no PostgreSQL server binaries: parts 2 and 3 skipped"
  [ "$fail" = 0 ] && exit 77
  exit 1
fi

# 2. SIGTERM during confirm --pg auto: the throwaway cluster lives under $TMPDIR.
mkdir -p "$work/tmp"
chmod 755 "$work/tmp"
TMPDIR="$work/tmp" "$lockstep" confirm "$src/scenarios/headspace/canonical.json" --pg auto --iterations 100000 \
  > "$work/confirm.out" 2> "$work/confirm.err" &
pid=$!
check "the throwaway server starts" wait_for "$work/tmp/lockstep-pg.*/data/postmaster.pid" 60
sleep 2  # inside the iterations
kill -TERM "$pid"
wait "$pid"
code=$?
check "SIGTERM during confirm exits 143 (got $code)" test "$code" = 143
check "confirm reports the iterations it finished" grep -q "then interrupted: the run stopped" "$work/confirm.out"
check "no cluster directory left" test -z "$(ls -A "$work/tmp")"
no_process() { ! pgrep -f "$1" > /dev/null; }  # (a function: pgrep never matches itself)
check "no postgres process left" no_process "$work/tmp/lockstep-pg"
cat "$work/confirm.err"

# 2b. SIGTERM during `isolation --pg auto` while a step waits for a lock (it would be waited
# for 300 s before its cancel): exit 143 at once, the permutations before it printed, the
# throwaway server stopped and removed.
printf 'setup { CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1); }\nteardown { DROP TABLE t; }\nsession a\nstep a1 { BEGIN; }\nstep a2 { UPDATE t SET id = 1; }\nstep a3 { COMMIT; }\nsession b\nstep b1 { BEGIN; }\nstep b2 { UPDATE t SET id = 1; }\nstep b3 { COMMIT; }\npermutation a1 a2 a3 b1 b2 b3\npermutation a1 a2 b1 b2 b3 a3\n' > "$work/stuck.spec"
TMPDIR="$work/tmp" "$lockstep" isolation "$work/stuck.spec" --pg auto > "$work/iso.out" 2> "$work/iso.err" &
pid=$!
check "the throwaway server starts (isolation)" wait_for "$work/tmp/lockstep-pg.*/data/postmaster.pid" 60
# The first permutation is printed when it ends; the second waits at b2 for 300 s.
for _ in $(seq 1 300); do grep -q "starting permutation: a1 a2 a3 b1 b2 b3" "$work/iso.out" 2> /dev/null && break; sleep 0.1; done
sleep 2
started=$(date +%s)
kill -TERM "$pid"
wait "$pid"
code=$?
check "SIGTERM during isolation --pg auto exits 143 (got $code)" test "$code" = 143
check "isolation stops within 30 s of SIGTERM" test $(($(date +%s) - started)) -lt 30
check "the finished permutation is printed" grep -q "starting permutation: a1 a2 a3 b1 b2 b3" "$work/iso.out"
check "isolation says it was interrupted" grep -q "isolation: interrupted" "$work/iso.err"
check "no cluster directory left (isolation)" test -z "$(ls -A "$work/tmp")"
check "no postgres process left (isolation)" no_process "$work/tmp/lockstep-pg"
cat "$work/iso.err"

# 3. A server stopped with -m immediate mid-confirm.
own_pg="$work/pg"
PGT_PORT=54391 bash "$src/scripts/pg-throwaway" restart "$own_pg" > /dev/null || { echo "FAILED: cannot start a server"; exit 1; }
conninfo="host=$own_pg port=54391 user=postgres dbname=postgres"
"$lockstep" confirm "$src/scenarios/headspace/canonical.json" --pg "$conninfo" --iterations 100000 \
  > "$work/lost.out" 2> "$work/lost.err" &
pid=$!
sleep 5  # an iteration of canonical takes about 1.3 s: some have finished
as_owner() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
as_owner "$pgbin/pg_ctl" -D "$own_pg/data" -m immediate stop > /dev/null
wait "$pid"
code=$?
check "a lost server exits 2 (got $code)" test "$code" = 2
check "the loss is named: iteration and SQLSTATE" grep -Eq "the server was lost in iteration [0-9]+.*: (08|57P)" "$work/lost.err"
check "the finished iterations are reported" grep -Eq "^iterations: [0-9]+" "$work/lost.out"
check "no internal error" bash -c "! grep -q 'internal error' '$work/lost.err'"
cat "$work/lost.err"
grep -E "^iterations:" "$work/lost.out"
exit "$fail"
