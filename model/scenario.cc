#include "lockstep/model/scenario.h"
#include "lockstep/model/invariants_off.h"
#include "lockstep/model/systems/sql_spec.h"

#include <algorithm>
#include <iterator>
#include <sstream>
#include <vector>

#include <fmt/format.h>

namespace lockstep {
namespace {

ExploreSettings parse_explore(const JsonCursor& c) {
  c.expect_keys({"strategy", "seed", "max_steps", "max_executions", "max_seconds",
                 "stop_at_first", "time", "max_preemptions", "pct_depth", "fair", "livelock_steps", "symmetry",
                 "timing"});
  ExploreSettings s;
  if (auto v = c.find("strategy")) s.strategy = v->as_string();
  if (auto v = c.find("seed")) s.seed = v->as_uint();
  if (auto v = c.find("max_steps")) s.max_steps = static_cast<std::uint64_t>(v->as_int(1));
  if (auto v = c.find("max_executions")) s.max_executions = v->as_uint();
  if (auto v = c.find("max_seconds")) s.time_limit_s = v->as_number(0, 1e9);
  if (auto v = c.find("stop_at_first")) s.stop_at_first = v->as_bool();
  if (auto v = c.find("fair")) s.fair = v->as_bool();
  if (auto v = c.find("symmetry")) s.symmetry = v->as_bool();
  if (auto v = c.find("livelock_steps")) s.livelock_steps = static_cast<std::uint64_t>(v->as_int(1));
  if (auto v = c.find("max_preemptions")) s.max_preemptions = static_cast<int>(v->as_int(0, 1000));
  if (auto v = c.find("pct_depth")) s.pct_depth = static_cast<int>(v->as_int(1, 100));
  if (auto v = c.find("time")) {
    const std::string mode = v->as_string();
    if (mode == "untimed") {
      s.time = TimeMode::untimed;
    } else if (mode == "timed") {
      s.time = TimeMode::timed;
    } else {
      v->fail(fmt::format("expected \"untimed\" or \"timed\", got \"{}\"", mode));
    }
  }
  if (auto v = c.find("timing")) {
    s.timing = parse_timing(*v);
    if (s.timing.any() && s.time != TimeMode::timed) {
      v->fail("a timing model needs \"time\": \"timed\" (untimed mode already lets any timer fire at any moment)");
    }
  }
  return s;
}

}  // namespace

ExploreSettings with_overrides(ExploreSettings s, const SettingOverrides& o) {
  if (o.strategy) s.strategy = *o.strategy;
  if (o.seed) s.seed = *o.seed;
  if (o.max_executions) s.max_executions = *o.max_executions;
  if (o.max_steps) s.max_steps = *o.max_steps;
  if (o.time_limit_s) s.time_limit_s = *o.time_limit_s;
  if (o.max_preemptions) s.max_preemptions = *o.max_preemptions;
  if (o.pct_depth) s.pct_depth = *o.pct_depth;
  if (o.fair) s.fair = *o.fair;
  if (o.symmetry) s.symmetry = *o.symmetry;
  if (o.livelock_steps) s.livelock_steps = *o.livelock_steps;
  if (o.jobs) s.jobs = *o.jobs;
  return s;
}

nlohmann::json run_settings_json(const RunSettings& s) {
  nlohmann::json j = {{"seed", s.seed},          {"max_steps", s.max_steps},   {"time", std::string(time_mode_name(s.time))},
                      {"fair", s.fair},          {"livelock_steps", s.livelock_steps}, {"symmetry", s.symmetry}};
  if (s.timing.any()) j["timing"] = timing_json(s.timing);
  return j;
}

namespace {

Expectation parse_expect(const JsonCursor& c) {
  c.expect_keys({"verdict", "violation"});
  Expectation e;
  const JsonCursor verdict = c.at("verdict");
  const std::string name = verdict.as_string();
  const auto parsed = verdict_from_name(name);
  if (!parsed) {
    std::string known;
    for (Verdict v : kAllVerdicts) known += fmt::format("{}{}", known.empty() ? "" : ", ", verdict_name(v));
    verdict.fail(fmt::format("unknown verdict \"{}\" (expected one of: {})", name, known));
  }
  e.verdict = *parsed;
  if (auto v = c.find("violation")) {
    if (e.verdict != Verdict::violation && e.verdict != Verdict::liveness) {
      v->fail("\"violation\" names an invariant (verdict \"violation\") or an obligation (verdict \"liveness\")");
    }
    e.violation = v->as_string();
  }
  return e;
}

// A violation the scenario expects must be one the system declares (or lockstep's own
// cross-execution lock_order): a typo is bad input, not a verdict "NOT AS EXPECTED".
// A system that declares no invariants (script's checks are expressions) is not checked.
void check_expected_invariant(const SystemInfo& info, const Expectation& e, const JsonCursor& expect) {
  if (e.verdict != Verdict::violation || !e.violation || info.invariants.empty()) return;
  const std::string& name = *e.violation;
  if (name == "lock_order") return;
  std::string list;
  for (const auto& i : info.invariants) {
    if (i.name == name) return;
    list += fmt::format("{}{}", list.empty() ? "" : ", ", i.name);
  }
  expect.at("violation").fail(
      fmt::format("system \"{}\" declares no invariant \"{}\" (it declares: {})", info.name, name, list));
}

}  // namespace

namespace {

std::int64_t written_ms(const nlohmann::json& j, bool ms_key) {
  std::int64_t total = 0;
  if (j.is_number() && ms_key) return std::max<std::int64_t>(0, j.get<std::int64_t>());
  if (j.is_array() && ms_key) {
    std::int64_t most = 0;
    for (const auto& x : j) most = std::max(most, x.is_number() ? x.get<std::int64_t>() : 0);
    return most;
  }
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) total += written_ms(value, key.ends_with("_ms"));
  } else if (j.is_array()) {
    for (const auto& x : j) total += written_ms(x, false);
  } else if (j.is_string()) {  // a script's op
    std::istringstream words(j.get<std::string>());
    std::vector<std::string> w{std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
    const auto number = [](const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; };
    if (w.size() == 2 && w[0] == "sleep" && number(w[1])) total += std::stoll(w[1]);
    if (w.size() == 3 && w[0] == "hot" && number(w[2])) total += std::stoll(w[2]);
  }
  return std::min<std::int64_t>(total, 24LL * 3600 * 1000);
}

}  // namespace

Duration scenario_horizon(const nlohmann::json& document) {
  std::int64_t ms = 0;
  for (const char* part : {"config", "actors", "faults"}) {
    if (document.is_object() && document.contains(part)) ms += written_ms(document.at(part), false);
  }
  return std::chrono::milliseconds(ms);
}

std::string_view time_mode_name(TimeMode mode) {
  return mode == TimeMode::timed ? "timed" : "untimed";
}

Scenario parse_scenario(const nlohmann::json& document, const std::string& file,
                        const std::string& pointer) {
  const JsonCursor root(document, file, pointer);
  root.expect_keys({"format", "name", "description", "system", "variant", "config", "actors",
                    "faults", "invariants", "explore", "expect"});
  Scenario s;
  s.file = file;
  s.document = document;
  const JsonCursor format = root.at("format");
  if (format.as_string() != kScenarioFormat) {
    format.fail(fmt::format("unsupported format \"{}\" (this lockstep reads \"{}\")",
                            format.as_string(), kScenarioFormat));
  }
  s.name = root.at("name").as_string();
  if (s.name.empty()) root.at("name").fail("expected a non-empty name");
  if (auto d = root.find("description")) s.description = d->as_string();

  const JsonCursor system = root.at("system");
  s.system = system.as_string();
  const SystemInfo* info = find_system(s.system);
  if (info == nullptr) {
    std::string list;
    for (const auto& i : registered_systems()) list += fmt::format("{}{}", list.empty() ? "" : ", ", i.name);
    system.fail(fmt::format("unknown system \"{}\" (known: {}; a system of your own runs in your own executable, "
                            "built with lockstep::main: see examples/jobclaim)",
                            s.system, list));
  }

  s.variant = info->variants.front().name;
  if (auto v = root.find("variant")) {
    s.variant = v->as_string();
    bool known = false;
    for (const auto& variant : info->variants) known = known || variant.name == s.variant;
    if (!known) {
      std::string list;
      for (const auto& variant : info->variants) list += fmt::format("{}{}", list.empty() ? "" : ", ", variant.name);
      v->fail(fmt::format("system \"{}\" has no variant \"{}\" (it has: {})", s.system, s.variant, list));
    }
  }
  if (auto e = root.find("explore")) s.explore = parse_explore(*e);
  if (auto e = root.find("expect")) {
    s.expect = parse_expect(*e);
    check_expected_invariant(*info, s.expect, *e);
  }

  SystemInput input;
  input.variant = s.variant;
  input.config = root.find("config");
  input.actors = root.find("actors");
  input.faults = root.find("faults");
  input.timed = s.explore.time == TimeMode::timed;
  input.scenario = root;
  if (auto off = root.find("invariants")) {
    input.invariants_off = parse_invariants_off(*off, *info);
    if (s.expect.violation && !input.judges(*s.expect.violation)) {
      root.at("expect").at("violation").fail(
          fmt::format("expects a violation of \"{}\", which \"invariants\" switches off", *s.expect.violation));
    }
  }
  std::unique_ptr<System> configured = info->configure(input);
  // A model that asks for timed exploration (Model::timed()) gets it unless the scenario says.
  const std::optional<JsonCursor> explore = root.find("explore");
  const bool time_given = explore && explore->find("time").has_value();
  if (!time_given && !input.timed && configured->prefers_timed()) {
    s.explore.time = TimeMode::timed;
    input.timed = true;
    configured = info->configure(input);
  }
  s.configured = judged_only(std::move(configured), input.invariants_off);
  return s;
}

Scenario load_scenario(const std::string& path) {
  // A PostgreSQL isolation spec is a scenario of the sql system (model/systems/sql_spec.h).
  if (path.ends_with(".spec")) return parse_scenario(sql_spec::scenario_document(path), path);
  const nlohmann::json document = read_json_file(path);
  return parse_scenario(document, path);
}

}  // namespace lockstep
