#!/usr/bin/env bash
# The acceptance commands of the foundation issue, run against the real binary the way a
# user runs them, plus determinism across two processes.
# Usage: cli_acceptance.sh LOCKSTEP_BINARY SOURCE_DIR
set -uo pipefail
lockstep="$1"
src="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$src"
failures=0
passes=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; passes=$((passes + 1)); }

# 1. lockinc-3 --json reports verdict pass and the number of executions dfs explored.
out=$("$lockstep" check scenarios/bench/lockinc-3.json --json); code=$?
if [ $code -eq 0 ] && python3 -c 'import json,sys; j=json.loads(sys.argv[1]); assert j["verdict"]=="pass" and j["executions"]==6, j' "$out"; then
  pass "lockinc-3: $(python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print(j["verdict"], j["executions"], "executions")' "$out")"
else
  fail "lockinc-3 --json (exit $code): $out"
fi

# 2. A lost update is a violation with a trace, and replay reproduces it.
out=$("$lockstep" check scenarios/script/lost-update.json --trace-out "$work/lost.json" --json); code=$?
if [ $code -eq 0 ] && python3 -c 'import json,sys; j=json.loads(sys.argv[1]); assert j["verdict"]=="violation" and j["violation"]=="final_state" and j["trace"], j' "$out"; then
  pass "lost-update: violation final_state, trace $work/lost.json"
else
  fail "lost-update (exit $code): $out"
fi
out=$("$lockstep" replay "$work/lost.json"); code=$?
if [ $code -eq 0 ] && grep -q "verdict: violation final_state" <<<"$out" && grep -q "identical to the trace" <<<"$out"; then
  pass "replay reproduces the lost update"
else
  fail "replay (exit $code): $out"
fi

# 3. A malformed scenario exits 2 with the file name and JSON pointer.
printf '{"format": "lockstep-scenario/1", "name": "m", "system": "script",\n "actors": [{"name": "a", "ops": ["read x r"]}], "explore": {"max_steps": "ten"}}\n' > "$work/malformed.json"
out=$("$lockstep" check "$work/malformed.json" 2>&1); code=$?
if [ $code -eq 2 ] && grep -qF "$work/malformed.json: /explore/max_steps: expected an integer" <<<"$out"; then
  pass "malformed scenario: exit 2: $out"
else
  fail "malformed scenario (exit $code): $out"
fi

# 4. The sweep exits 0 and writes summary.md.
"$lockstep" sweep scenarios --out "$work/reports" >"$work/sweep.log" 2>&1; code=$?
if [ $code -eq 0 ] && [ -s "$work/reports/summary.md" ] && [ -s "$work/reports/results.json" ]; then
  pass "sweep: $(tail -n 1 "$work/sweep.log")"
else
  fail "sweep (exit $code): $(cat "$work/sweep.log")"
fi

# 5. Determinism across processes: the same scenario and seed give byte-identical traces.
for i in 1 2; do
  "$lockstep" check scenarios/script/lost-update.json --strategy random --seed 1234 --max-executions 100 \
    --trace-out "$work/random-$i.json" >/dev/null
done
if cmp -s "$work/random-1.json" "$work/random-2.json"; then
  pass "same seed, byte-identical traces across processes"
else
  fail "traces differ between two runs with seed 1234"
fi

# 6. Shards: a dfs scenario of 34,650 executions split four ways explores exactly those
#    executions between the shards, and merged shard sweeps give the unsharded verdicts.
total=0
for k in 1 2 3 4; do
  n=$("$lockstep" check scenarios/script/interleavings-34650.json --shard "$k/4" --json |
      python3 -c 'import json,sys; j=json.loads(sys.stdin.read()); assert j["verdict"]=="pass", j; print(j["executions"])')
  total=$((total + n))
done
if [ "$total" -eq 34650 ]; then
  pass "4 shards explored $total executions, exactly the unsharded 34650"
else
  fail "4 shards explored $total executions, not 34650"
fi
"$lockstep" sweep scenarios/script --out "$work/all" >/dev/null 2>&1
for k in 1 2 3; do "$lockstep" sweep scenarios/script --shard "$k/3" --out "$work/s$k" >/dev/null 2>&1; done
"$lockstep" merge "$work"/s{1,2,3}/results.json --out "$work/merged" >/dev/null 2>&1
if python3 - "$work/all/results.json" "$work/merged/results.json" <<'PY'
import json, sys
a = {r["file"]: r for r in json.load(open(sys.argv[1]))}
m = {r["file"]: r for r in json.load(open(sys.argv[2]))}
assert a.keys() == m.keys(), (a.keys() ^ m.keys())
for f in a:
    assert (a[f]["verdict"], a[f]["violation"], a[f]["as_expected"]) == (m[f]["verdict"], m[f]["violation"], m[f]["as_expected"]), f
    if a[f]["verdict"] == "pass":
        assert a[f]["executions"] == m[f]["executions"], f
PY
then
  pass "merged shard sweeps give the unsharded verdicts (and counts where they pass)"
else
  fail "merged shard sweeps differ from the unsharded sweep"
fi

# 7. JUnit XML for CI dashboards.
"$lockstep" sweep scenarios/script --junit "$work/j.xml" --out "$work/junit" >/dev/null 2>&1
if python3 -c 'import sys, xml.etree.ElementTree as ET; r=ET.parse(sys.argv[1]).getroot(); c=r.findall(".//testcase"); assert r.tag=="testsuites" and len(c)>=10, len(c); print(len(c))' "$work/j.xml" >/dev/null; then
  pass "sweep --junit writes valid JUnit XML"
else
  fail "sweep --junit"
fi

echo "$passes passed, $failures failed"
[ $failures -eq 0 ]
