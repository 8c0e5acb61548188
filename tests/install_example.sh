#!/usr/bin/env bash
# Installs lockstep from BUILD_DIR into a temporary prefix, builds examples/ against the
# installed package, and runs the example's tests (one of which finds a planted bug).
# Usage: install_example.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$1"
src="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/examples" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$work/build" -j 2 >/dev/null
cd "$work/build"
./ticket_lock_test | tee "$work/out.txt"
grep -q "lockstep: violation mutual_exclusion" "$work/out.txt"
grep -q "replay: LOCKSTEP_REPLAY=" "$work/out.txt"
echo "example built against the installed package; its planted bug was found"
