# lockstep: one-command set-up and runs on a fresh Debian 12 machine.
#   make sweep      install what is missing, build, sweep scenarios/ on the simulated backend
#   make test       install what is missing, build, run the whole test suite
#   make test-asan  the tests that find memory errors, under AddressSanitizer + UndefinedBehaviorSanitizer
#   make test-long  the soundness properties at scale (30,000 programs each): by hand, before a
#                   change to dpor, footprints or the simulated server (docs/engine.md)
#   make build-release  build the library and the command as Release (-O3), as users may
#                   (CI builds the suite itself as Release instead: .ci/run)
#   make bench      build and run the benchmarks (figures, not pass/fail), progress bounds among them
#   make scaling    the explorer's scaling table (docs/benchmarks.md): executions, blocked, steps/s, s
BUILD      ?= build
ASAN_BUILD ?= build-asan
RELEASE_BUILD ?= build-release
JOBS       ?= 2
CMAKE_ARGS ?=
# The libraries as unity builds (about half their build time: the first `make sweep` on a new
# machine builds the command in half the time); UNITY=OFF for a tree you edit, where a change
# to one file should recompile that file only. CI passes its own CMAKE_ARGS (.ci/run).
UNITY      ?= ON

.PHONY: all deps deps-build build sweep test test-asan test-long build-release bench scaling clean

all: build

deps:
	@scripts/install-deps

deps-build:
	@scripts/install-deps --build

$(BUILD)/CMakeCache.txt: | deps-build
	@echo "make: configuring $(BUILD)/ with cmake (RelWithDebInfo, unity-built libraries: UNITY=$(UNITY))"
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOCKSTEP_UNITY_BUILD=$(UNITY) $(CMAKE_ARGS)

build: deps $(BUILD)/CMakeCache.txt
	@echo "make: building the library, the command and every test program into $(BUILD)/"
	cmake --build $(BUILD) -j $(JOBS)

# The sweep needs the command only: its build leaves the test programs to `make test`.
sweep: deps-build $(BUILD)/CMakeCache.txt
	@echo "make sweep: building the lockstep command (the tests are built by make test)"
	cmake --build $(BUILD) -j $(JOBS) --target lockstep
	@echo "make sweep: sweeping scenarios/ on the simulated backend"
	$(BUILD)/lockstep sweep scenarios --out reports

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The sanitizers look for memory errors and undefined behaviour, not for missed traces: every
# test that runs the engine once or a few times runs here, and the properties at reduced sizes;
# what only repeats coverage the others have is left out (LOCKSTEP_ASAN_SKIP, tests/CMakeLists.txt).
test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DLOCKSTEP_SANITIZE=ON -DLOCKSTEP_BUILD_BENCH=OFF $(CMAKE_ARGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS)

# The dfs-oracle properties at scale: run by hand before a change to dpor, footprints or the
# simulated server (about an hour on two cores); LONG_RUNS sets the programs per property.
LONG_RUNS ?= 30000
test-long: build
	RC_PARAMS=max_success=$(LONG_RUNS) $(BUILD)/tests/dpor_test --gtest_filter='DporProperties.*'
	RC_PARAMS=max_success=$(LONG_RUNS) $(BUILD)/tests/sim_pg_test --gtest_filter='SimPgProperties.*'
	RC_PARAMS=max_success=$(LONG_RUNS) $(BUILD)/tests/sql_sim_test --gtest_filter='SqlSimProperties.*'

# GCC warns differently at -O3 (a user's Release build), and -Werror makes that fatal.
build-release: deps
	cmake -S . -B $(RELEASE_BUILD) -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_BUILD_TESTS=OFF -DLOCKSTEP_BUILD_BENCH=OFF $(CMAKE_ARGS)
	cmake --build $(RELEASE_BUILD) -j $(JOBS)

bench: build
	$(BUILD)/bench/lockstep_bench
	bench/pgbench_lock_scope.sh $(BUILD)/bench/pg_lock_scope
	bench/progress_bounds.sh $(BUILD)/lockstep

scaling: build
	$(BUILD)/bench/scaling_table

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(RELEASE_BUILD)
