#!/usr/bin/env bash
# tests/sweep_counts.sh LOCKSTEP ROOT: the sweep of ROOT/scenarios gives every scenario of the
# baseline (tests/data/sweep-counts.json, scripts/record-sweep-counts) the same verdict,
# executions, sleep-set-blocked executions, steps and strategy that ran (a scenario that
# leaves optimal DPOR where it did not is a change). Scenarios added later are not in it:
# a new feature that is absent from a scenario changes nothing it explores (issue 48: a
# scenario without a timing model gives the counts of the commit before the timing model).
set -euo pipefail
lockstep=$1
root=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && "$lockstep" sweep scenarios --out "$work" > "$work/sweep.log" 2>&1) || true  # judged below
python3 - "$root/tests/data/sweep-counts.json" "$work/results.json" <<'PY'
import json, sys
baseline = json.load(open(sys.argv[1]))
now = {r["file"]: r for r in json.load(open(sys.argv[2]))}
bad = []
for file, want in baseline.items():
    got = now.get(file)
    if got is None:
        bad.append(f"{file}: not in the sweep")
        continue
    for key, value in want.items():
        if got.get(key) != value:
            bad.append(f"{file}: {key} {got.get(key)!r}, the baseline {value!r}")
for line in bad:
    print("FAIL", line)
total = sum(w["executions"] for w in baseline.values())
print(f"{len(baseline) - len({b.split(':')[0] for b in bad})} of {len(baseline)} baseline scenarios give the same "
      f"verdict, executions, blocked executions, steps and strategy ({total} executions in the baseline)")
sys.exit(1 if bad else 0)
PY
