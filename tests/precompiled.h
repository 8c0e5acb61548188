// tests/precompiled.h: the headers most test programs include, precompiled once per build
// and reused by every test program (tests/CMakeLists.txt), so GoogleTest, RapidCheck,
// nlohmann::json and lockstep's own headers are parsed once, not once per program. Each
// test still includes what it uses; this file only makes that cheaper.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "lockstep/lockstep.h"
#include "lockstep/model/scenario.h"
#include "lockstep/sim/check.h"
#include "test_support.h"
