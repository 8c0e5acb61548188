// tests/scratch_dir.h: a test program's scratch directories (traces, reports, files the
// command line writes), named `<gtest temp dir>/<name>_<pid>` so concurrent runs of the suite
// do not collide, and removed when the program exits with every test passed (kept after a
// failure, or with LOCKSTEP_KEEP_TEST_FILES set, to look at).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>

namespace lockstep::testing {

inline std::string scratch_dir(std::string_view name) {
  struct Made {
    std::vector<std::filesystem::path> dirs;
    Made() = default;
    Made(const Made&) = delete;
    Made& operator=(const Made&) = delete;
    ~Made() {
      const bool passed = ::testing::UnitTest::GetInstance()->Passed();
      if (!passed || std::getenv("LOCKSTEP_KEEP_TEST_FILES") != nullptr) return;
      for (const auto& d : dirs) {
        std::error_code ignored;
        std::filesystem::remove_all(d, ignored);
      }
    }
  };
  static Made made;
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / (std::string(name) + "_" + std::to_string(::getpid()));
  if (std::find(made.dirs.begin(), made.dirs.end(), dir) == made.dirs.end()) made.dirs.push_back(dir);
  return dir.string();
}

}  // namespace lockstep::testing
