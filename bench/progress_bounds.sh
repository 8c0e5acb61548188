#!/usr/bin/env bash
# Benchmark (figures, not pass/fail): time and peak memory of `lockstep check` on spinning
# programs, at the default bounds and with a step bound in the millions, and how long a
# first SIGINT takes to end it. Targets: under 10 s and under 500 MB at 3,000,000 steps.
# Usage: bench/progress_bounds.sh [LOCKSTEP_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
lockstep=$(realpath "${1:-build/lockstep}")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
measure() {  # label, args...: wall time and peak RSS of one run (its own process)
  local label=$1; shift
  python3 - "$label" "$lockstep" "$out" "$@" <<'PY'
import json, resource, subprocess, sys, time
label, binary, out, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
start = time.monotonic()
p = subprocess.run([binary, "check", *args, "--json", "--trace-out", out + "/trace.json"], capture_output=True, text=True)
elapsed = time.monotonic() - start
peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
try:
    verdict = json.loads(p.stdout)["verdict"]
except Exception:
    verdict = f"exit {p.returncode}"
print(f"{label:<52} {elapsed:7.2f} s {peak_mb:8.1f} MB  {verdict}")
PY
}
sigint() {  # label, delay, args...: seconds from a first SIGINT to the exit
  local label=$1 delay=$2; shift 2
  python3 - "$label" "$delay" "$lockstep" "$out" "$@" <<'PY'
import signal, subprocess, sys, time
label, delay, binary, out, args = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
p = subprocess.Popen([binary, "check", *args, "--trace-out", out + "/trace.json"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
time.sleep(delay)
sent = time.monotonic()
p.send_signal(signal.SIGINT)
_, err = p.communicate()
print(f"{label:<52} exit {p.returncode} {time.monotonic() - sent:6.2f} s after SIGINT  {err.strip().splitlines()[-1] if err.strip() else ''}")
PY
}
echo "== time and peak memory (target at 3,000,000 steps: under 10 s, under 500 MB)"
for n in 28 64; do
  measure "filesystem($n), default bounds" bench/progress/filesystem-$n.json
  measure "filesystem($n), --max-steps 3000000 --max-seconds 5" bench/progress/filesystem-$n.json --max-steps 3000000 --max-seconds 5
  measure "filesystem($n), --max-steps 3000000" bench/progress/filesystem-$n.json --max-steps 3000000
done
measure "spin on an abandoned lock, --max-steps 3000000" scenarios/progress/spin-on-abandoned-lock.json --max-steps 3000000
measure "lastzero(10), --max-steps 3000000 (no loop)" scenarios/bench/lastzero-10.json --max-steps 3000000
echo "== the first SIGINT, in each phase (target: exit within 1 s)"
sigint "search: lastzero(15), SIGINT at 1 s" 1 bench/progress/lastzero-15.json
sigint "shrinking: filesystem(64), SIGINT at 1 s" 1 bench/progress/filesystem-64.json
sigint "shrinking: filesystem(64) at 3M steps, SIGINT at 0.3 s" 0.3 bench/progress/filesystem-64.json --max-steps 3000000
