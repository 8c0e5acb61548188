#!/usr/bin/env bash
# Renders an HTML trace report in headless Chromium, as a user sees it, and checks the page:
# one lane per actor, the failure marked. Keeps a screenshot in reports/.
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
flags=(--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update
       --disable-sync --no-first-run --user-data-dir="$work/profile")
failures=0
check() {  # trace, expected lanes
  local trace="$1" lanes="$2" name
  name=$(basename "$trace" .json)
  "$lockstep" report "$trace" -o "$work/$name.html" >/dev/null || { echo "FAIL: report $trace"; failures=$((failures + 1)); return; }
  local dom
  dom=$(timeout 60 "$browser" "${flags[@]}" --dump-dom "file://$work/$name.html" 2>/dev/null)
  local found
  found=$(grep -o 'class="lane"' <<<"$dom" | wc -l)
  if [ "$found" -ne "$lanes" ]; then
    echo "FAIL: $name: $found lanes rendered, expected $lanes"
    failures=$((failures + 1))
  elif ! grep -q 'id="violation"' <<<"$dom"; then
    echo "FAIL: $name: the failure is not marked"
    failures=$((failures + 1))
  else
    echo "ok: $name: $lanes lanes and the failure marked, as rendered by $(basename "$browser")"
  fi
}
check "$src/traces/rwmutex-recursive-read.json" 2
check "$src/traces/lockinc-no-lock-3.json" 3
mkdir -p "$src/reports"
timeout 60 "$browser" "${flags[@]}" --window-size=1100,650 --screenshot="$src/reports/report-screenshot.png" \
  "file://$work/lockinc-no-lock-3.html" >/dev/null 2>&1
if [ -s "$src/reports/report-screenshot.png" ]; then
  echo "ok: screenshot in reports/report-screenshot.png"
else
  echo "FAIL: no screenshot"
  failures=$((failures + 1))
fi
echo "$((3 - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
