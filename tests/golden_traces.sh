#!/usr/bin/env bash
# Every trace kept in traces/ must replay to its recorded event log and verdict.
# Usage: golden_traces.sh LOCKSTEP_BINARY TRACES_DIR
set -uo pipefail
lockstep="$1"
dir="$2"
passed=0
failed=0
shopt -s nullglob
for t in "$dir"/*.json; do
  if out=$("$lockstep" replay "$t" --json 2>&1); then
    passed=$((passed + 1))
    echo "ok: $t: $out"
  else
    failed=$((failed + 1))
    echo "FAIL: $t: $out"
  fi
done
if [ $((passed + failed)) -eq 0 ]; then
  echo "no traces in $dir"
  exit 1
fi
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
