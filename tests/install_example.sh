#!/usr/bin/env bash
# Installs lockstep from BUILD_DIR into a temporary prefix and, against that prefix only:
#  1. builds a fresh project that includes <rapidcheck.h>, <lockstep/lockstep.h> and
#     <lockstep/real.h> in one file (nothing installed may shadow another library's headers);
#  2. builds a one-file project that only simulates, with libpq and CLI11 hidden from CMake
#     (as on a machine without their development files): nothing it links reaches libpq,
#     and LOCKSTEP_PG there says what to link instead of failing to link;
#  3. builds examples/ticket_lock and runs its tests (one finds a planted bug);
#  4. builds examples/jobclaim and runs every command its README shows ("$ " lines), in
#     order, from its build directory, then the deliberately failing RapidCheck property and
#     the replay command it prints;
#  5. builds examples/leases (then examples/jobqueue) and runs every command its README shows, in order, from its
#     build directory: the correct designs pass exhaustively, each planted bug is found;
#  6. lockstep_add_scenarios in a fresh project: one test per scenario file, read from the
#     source tree, and a file added after configuring is a test after the next build.
# Usage: install_example.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$1"
src=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
# The installed headers: the public ones at the top of include/lockstep/, the rest under internal/.
unexpected=$(cd "$work/prefix/include/lockstep" && find . -mindepth 1 -maxdepth 1 ! -name '*.h' ! -name internal)
[ -z "$unexpected" ] || { echo "installed outside include/lockstep/internal/: $unexpected" >&2; exit 1; }
[ -f "$work/prefix/include/lockstep/internal/lockstep/model/env.h" ] || { echo "internal headers not under internal/" >&2; exit 1; }
# Optimised as a user's build (NDEBUG, as the installed library), at -O1 without debug
# information: what is tested is that the package builds and runs, not how fast.
configure() {
  cmake -S "$1" -B "$2" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" >/dev/null
}

# 1. One file with RapidCheck, the model API and the real backend.
mkdir -p "$work/fresh"
cat >"$work/fresh/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(fresh LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(lockstep REQUIRED)
find_package(rapidcheck REQUIRED)
add_executable(fresh main.cc)
target_link_libraries(fresh PRIVATE lockstep::lockstep lockstep::real rapidcheck)
CMAKE
cat >"$work/fresh/main.cc" <<'CC'
#include <rapidcheck.h>
#include <lockstep/lockstep.h>
#include <lockstep/real.h>
struct S { explicit S(lockstep::Env& env) : x(env.new_shared_var("x", 0)) {} std::unique_ptr<lockstep::SharedVar> x; };
int main() {
  const bool ok = rc::check("a model passes", [] {
    const int n = *rc::gen::inRange(1, 3);
    auto report = lockstep::Model<S>("fresh").actors(n, [](S& s, lockstep::Env&, lockstep::ActorId) { s.x->store(1); }).run();
    RC_ASSERT(report.passed());
  });
  lockstep::real::ConfirmOptions unused;
  return ok && unused.iterations > 0 ? 0 : 1;
}
CC
configure "$work/fresh" "$work/fresh/build"
cmake --build "$work/fresh/build" -j 2 >/dev/null
"$work/fresh/build/fresh" >/dev/null 2>&1
echo "a project including <rapidcheck.h>, <lockstep/lockstep.h> and <lockstep/real.h> builds and runs"

# 2. Simulation only: find_package(lockstep) must not need libpq or CLI11.
mkdir -p "$work/simonly"
cat >"$work/simonly/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(simonly LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(lockstep REQUIRED)
find_package(GTest REQUIRED)
if(TARGET lockstep::real OR TARGET lockstep::cli)
  message(FATAL_ERROR "lockstep::real or lockstep::cli was defined without libpq and CLI11")
endif()
add_executable(simonly main.cc)
target_link_libraries(simonly PRIVATE lockstep::lockstep GTest::gtest_main)
CMAKE
cat >"$work/simonly/main.cc" <<'CC'
#include <lockstep/gtest.h>
#include <lockstep/lockstep.h>
struct S { explicit S(lockstep::Env& env) : x(env.new_shared_var("x", 0)) {} std::unique_ptr<lockstep::SharedVar> x; };
TEST(SimOnly, AModelRuns) {
  LOCKSTEP_EXPECT_PASS(lockstep::Model<S>("simonly").actors(2, [](S& s, lockstep::Env&, lockstep::ActorId) { s.x->fetch_add(1); }));
}
TEST(SimOnly, AModelRunsOnTwoThreads) {  // Model::jobs: lockstep::threads comes with lockstep::lockstep
  auto m = lockstep::Model<S>("simonly-jobs").actors(4, [](S& s, lockstep::Env&, lockstep::ActorId) { s.x->fetch_add(1); s.x->fetch_add(1); });
  const auto one = m.run();
  const auto two = lockstep::Model<S>(m).jobs(2).run();
  EXPECT_EQ(two.jobs, 2);
  EXPECT_EQ(two.executions, one.executions);
}
CC
cmake -S "$work/simonly" -B "$work/simonly/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_DISABLE_FIND_PACKAGE_PostgreSQL=ON -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON >"$work/simonly.txt" 2>&1 || {
  cat "$work/simonly.txt" >&2; echo "find_package(lockstep) needs libpq or CLI11" >&2; exit 1; }
cmake --build "$work/simonly/build" -j 2 >/dev/null
if grep -rqE 'lpq|libpq|CLI11' "$work/simonly/build/CMakeFiles/simonly.dir/link.txt"; then
  cat "$work/simonly/build/CMakeFiles/simonly.dir/link.txt" >&2; echo "the simulation-only link line reaches libpq or CLI11" >&2; exit 1
fi
! ldd "$work/simonly/build/simonly" | grep -q libpq || { echo "the simulation-only program loads libpq" >&2; exit 1; }
"$work/simonly/build/simonly" >/dev/null
LOCKSTEP_PG=auto "$work/simonly/build/simonly" >"$work/simonly-pg.txt" 2>&1 && { echo "LOCKSTEP_PG passed without a real backend" >&2; exit 1; }
grep -q "LOCKSTEP_PG needs lockstep's real backend: link lockstep::real and include <lockstep/real.h>" "$work/simonly-pg.txt" || {
  cat "$work/simonly-pg.txt" >&2; exit 1; }
echo "a simulation-only project builds without libpq and CLI11, and LOCKSTEP_PG there says what to link"

# 3. ticket_lock.
configure "$src/examples/ticket_lock" "$work/ticket"
cmake --build "$work/ticket" -j 2 >/dev/null
(cd "$work/ticket" && ./ticket_lock_test) >"$work/ticket.txt"
grep -q "lockstep: violation mutual_exclusion" "$work/ticket.txt"
grep -q "replay: LOCKSTEP_REPLAY=" "$work/ticket.txt"
echo "ticket_lock: built against the installed package; its planted bug was found"

# Builds examples/NAME and runs every "$ " command of its README in order, from its build
# directory; command K's output goes to $work/NAME-K.txt.
run_readme() {
  local name="$1" command step=0 commands
  configure "$src/examples/$name" "$work/$name"
  cmake --build "$work/$name" -j 2 >/dev/null
  cd "$work/$name"
  commands=$(sed -n 's/^\$ //p' "$src/examples/$name/README.md")
  [ -n "$commands" ] || { echo "no commands found in examples/$name/README.md" >&2; exit 1; }
  while IFS= read -r command; do
    step=$((step + 1))
    echo "\$ $command"
    bash -c "$command" >"$work/$name-$step.txt" 2>&1 || { cat "$work/$name-$step.txt" >&2; echo "FAILED: $command" >&2; exit 1; }
    tail -n 1 "$work/$name-$step.txt"
  done <<<"$commands"
}

# 4. jobclaim: the README's commands, as written.
run_readme jobclaim
# What those commands must have shown.
[ "$(grep -o '"as_expected": *true' reports/results.json | wc -l)" = 4 ] || { cat reports/results.json >&2; exit 1; }
[ -f reports/traces/check-before-lock.json ]

# The failing property, and the replay command it printed: the same configuration replays.
./jobclaim_test --gtest_also_run_disabled_tests --gtest_filter='JobClaimProperties.DISABLED_*' >"$work/rc.txt" 2>&1 && {
  echo "the deliberately failing property passed" >&2; exit 1; }
replay=$(grep -m1 '^  replay: RC_PARAMS=' "$work/rc.txt" | sed 's/^  replay: //')
[ -n "$replay" ] || { cat "$work/rc.txt" >&2; echo "no RC_PARAMS replay command printed" >&2; exit 1; }
shrunk=$(sed -n '/^Falsifiable/,/^lockstep:/p' "$work/rc.txt" | grep -A1 '^int:' | grep -v '^int:\|^--')
echo "\$ $replay"
bash -c "$replay" >"$work/replay.txt" 2>&1 && { echo "the replay passed" >&2; exit 1; }
grep -q "replayed from the trace" "$work/replay.txt" || { cat "$work/replay.txt" >&2; echo "the trace was not replayed" >&2; exit 1; }
again=$(sed -n '/^Falsifiable/,/^lockstep:/p' "$work/replay.txt" | grep -A1 '^int:' | grep -v '^int:\|^--')
[ "$shrunk" = "$again" ] || { echo "the replay reached another configuration: [$shrunk] vs [$again]" >&2; exit 1; }
grep -q "lockstep: violation each_job_once" "$work/replay.txt"
echo "jobclaim: every README command ran; the property's failure replayed with the same configuration ($(echo $shrunk))"

# 5. leases: the README's commands, as written; the first runs every model test.
run_readme leases
# What ./leases_test must have shown: four passes, every execution explored, and each bug.
[ "$(grep -c 'every execution explored' "$work/leases-1.txt")" = 4 ] || { cat "$work/leases-1.txt" >&2; exit 1; }
for invariant in tokens_increase renewal_in_time_keeps_lease writes_never_go_back each_job_claimed_once; do
  grep -q "lockstep: violation $invariant" "$work/leases-1.txt" || { echo "leases: $invariant was not violated" >&2; exit 1; }
done
grep -q "replayed from the trace" "$work/leases-2.txt"
# Under LOCKSTEP_PG each planted bug showed on the server too, along its failing trace.
[ "$(grep -c 'seen on the server (aimed at the failing trace)' "$work/leases-3.txt")" = 4 ] || { cat "$work/leases-3.txt" >&2; exit 1; }
echo "leases: every README command ran; the correct designs passed exhaustively and each planted bug was found"

# 5b. jobqueue: the README's commands, as written.
run_readme jobqueue
grep -q 'every execution explored' "$work/jobqueue-1.txt" || { cat "$work/jobqueue-1.txt" >&2; exit 1; }
for invariant in claimed_once_per_attempt completed_once one_rescuer; do
  grep -q "lockstep: violation $invariant" "$work/jobqueue-1.txt" || { echo "jobqueue: $invariant was not violated" >&2; exit 1; }
done
# On the server: the correct design passed its iterations, and each planted bug showed.
grep -q 'lockstep confirm: 5 iterations, 0 with a violation' "$work/jobqueue-2.txt" || { cat "$work/jobqueue-2.txt" >&2; exit 1; }
[ "$(grep -c 'seen on the server (aimed at the failing trace)' "$work/jobqueue-2.txt")" = 3 ] || { cat "$work/jobqueue-2.txt" >&2; exit 1; }
echo "jobqueue: every README command ran; the correct design passed exhaustively and on the server, each planted bug was found on both"

# 6. lockstep_add_scenarios: the team's files, one test each; a file added later joins.
mkdir -p "$work/scen/scenarios"
cat >"$work/scen/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(scen LANGUAGES CXX)
find_package(lockstep REQUIRED COMPONENTS command)
enable_testing()
lockstep_add_scenarios(TARGET lockstep::command DIR scenarios)
CMAKE
cp "$src/scenarios/sql/lease-acquire.spec" "$work/scen/scenarios/"
configure "$work/scen" "$work/scen/build"
cmake --build "$work/scen/build" >/dev/null
[ "$(cd "$work/scen/build" && ctest -N | grep -c 'scenarios/')" = 1 ] || { (cd "$work/scen/build" && ctest -N) >&2; exit 1; }
cp "$src/scenarios/sql/double-booking-no-lock.spec" "$work/scen/scenarios/"
cmake --build "$work/scen/build" >/dev/null  # the glob is looked at again
(cd "$work/scen/build" && ctest --output-on-failure >"$work/scen.txt" 2>&1) || { cat "$work/scen.txt" >&2; exit 1; }
grep -q "100% tests passed, 0 tests failed out of 2" "$work/scen.txt" || { cat "$work/scen.txt" >&2; exit 1; }
echo "lockstep_add_scenarios: one test per file, from the source tree; a file added after configuring ran at the next build"
