#!/usr/bin/env bash
# Renders HTML trace reports in headless Chromium, as a user sees them, and checks the
# rendered page: one lane per actor, the failure marked, one arrow per cause pair, the
# holding bars, and a 1,200-step trace collapsed to a readable page. Keeps two screenshots
# in reports/ (a script trace and a headspace trace), which docs/cause.md shows.
# Usage: report_browser.sh LOCKSTEP SOURCE_DIR
set -uo pipefail
lockstep="$1"
src="$2"
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  if [ "${CI:-}" = "true" ]; then
    echo "FAIL: chromium is missing (scripts/install-deps installs it)"
    exit 1
  fi
  echo "skipped: chromium is not installed (run scripts/install-deps)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Reports say "lockstep replay traces/..." as a user in the source tree would type it.
mkdir -p "$work/bin"
ln -s "$(cd "$(dirname "$lockstep")" && pwd)/$(basename "$lockstep")" "$work/bin/lockstep"
export PATH="$work/bin:$PATH"
lockstep=lockstep
cd "$src" || exit 1
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --disable-background-networking --disable-component-update
       --disable-sync --no-first-run --user-data-dir="$work/profile")
passed=0
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
count() { grep -o "$1" <<<"$2" | wc -l; }

# check TRACE LANES [MARKER...]: the report of TRACE rendered; LANES lanes, the violation,
# as many cause arrows as the trace has cause pairs (at least one), and each MARKER present.
check() {
  local trace="$1" lanes="$2" name dom pairs
  shift 2
  name=$(basename "$trace" .json)
  "$lockstep" report "$trace" -o "$work/$name.html" >/dev/null || { fail "report $trace"; return; }
  dom=$(timeout 60 "$browser" "${flags[@]}" --dump-dom "file://$work/$name.html" 2>/dev/null)
  pairs=$(count '"sentence"' "$(cat "$trace")")
  local found arrows
  found=$(count 'class="lane-name"' "$dom")
  arrows=$(count 'class="cause-arrow"' "$dom")
  if [ "$found" -ne "$lanes" ]; then
    fail "$name: $found lanes rendered, expected $lanes"
  elif ! grep -q 'id="violation"' <<<"$dom"; then
    fail "$name: the failure is not marked"
  elif [ "$pairs" -lt 1 ] || [ "$arrows" -ne "$pairs" ]; then
    fail "$name: $arrows cause arrows rendered for $pairs cause pairs in the trace"
  else
    for marker in "$@"; do
      grep -q -- "$marker" <<<"$dom" || { fail "$name: no $marker in the rendered page"; return; }
    done
    echo "ok: $name: $lanes lanes, the failure marked, $arrows cause arrow(s)${*:+, and $*}, as rendered by $(basename "$browser")"
    passed=$((passed + 1))
  fi
}
check traces/lost-update.json 2
check traces/lockinc-no-lock-3.json 3
check traces/headspace/bug-skill-no-refresh.json 2 'class="hold"' 'read_row agents#1 1 → {handoff=0'
check traces/headspace/bug-deferred-stop-no-recheck.json 2 'class="hold"' 'state=processing'
check traces/headspace/bug-conditional-unlock-blocks-hook.json 3 'class="hold"' 'class="wait"' 'class="wait-arrow"' \
  'queued behind 1003' 'phantom grant'

# A long trace: 150 locked increments per actor, then one without the lock (1,205 steps).
ops=""
for _ in $(seq 150); do ops+='"lock m","read x r","write x r+1","unlock m",'; done
cat >"$work/long.json" <<EOF
{"format": "lockstep-scenario/1", "name": "long-lost-update", "system": "script",
 "actors": [{"name": "a", "ops": [${ops}"read x r","write x r+1"]},
            {"name": "b", "ops": ["read y r",${ops}"read x r","write x r+1"]}],
 "config": {"vars": {"x": 0, "y": 0}, "check": ["x == 302"]},
 "expect": {"verdict": "violation", "violation": "final_state"}}
EOF
"$lockstep" check "$work/long.json" --trace-out "$work/long-trace.json" >/dev/null
check "$work/long-trace.json" 2 'class="collapsed"'

mkdir -p reports
shoot() {  # trace, screenshot name, window size
  local name
  name=$(basename "$1" .json)
  timeout 60 "$browser" "${flags[@]}" --window-size="$3" --screenshot="$PWD/reports/$2" "file://$work/$name.html" >/dev/null 2>&1
  if [ -s "reports/$2" ]; then
    echo "ok: screenshot of $name in reports/$2"
    passed=$((passed + 1))
  else
    fail "no screenshot reports/$2"
  fi
}
shoot traces/lost-update.json report-script.png 1150,640
shoot traces/headspace/bug-skill-no-refresh.json report-headspace.png 1400,1480
echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
