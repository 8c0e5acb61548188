// tests/test_paths.h: where this tree's sources and its built `lockstep` command are, for the
// test programs. The paths are compiled into one small file (test_paths.cc) only, so the test
// programs' own sources hold no path of their tree: ccache gives another clone (CI's fresh
// one) their objects from the cache instead of compiling them again.
#pragma once

// The source tree's root (PROJECT_SOURCE_DIR), without a trailing slash.
const char* lockstep_source_dir();
// The `lockstep` command this tree built.
const char* lockstep_binary();
