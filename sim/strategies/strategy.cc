#include "lockstep/sim/strategies/strategy.h"

#include <charconv>

#include <nlohmann/json.hpp>

#include "lockstep/model/scenario.h"
#include "lockstep/sim/strategies/preemption_bound.h"
#include "lockstep/sim/strategies/strategy_makers.h"

namespace lockstep::sim {


std::string decision_text(Decision d) {
  const char prefix = d.kind == Decision::Kind::run ? 'a' : d.kind == Decision::Kind::timer ? 't' : 'c';
  return prefix + std::to_string(d.value);
}

bool parse_decision(std::string_view text, Decision& out) {
  if (text.size() < 2) return false;
  switch (text[0]) {
    case 'a': out.kind = Decision::Kind::run; break;
    case 't': out.kind = Decision::Kind::timer; break;
    case 'c': out.kind = Decision::Kind::choice; break;
    default: return false;
  }
  auto [ptr, ec] = std::from_chars(text.data() + 1, text.data() + text.size(), out.value);
  return ec == std::errc() && ptr == text.data() + text.size();
}

namespace {

DporSettings dpor_settings(const StrategyOptions& o, DporMode mode) {
  return {.mode = mode, .preemption_bounded = o.max_preemptions >= 0};
}
std::unique_ptr<Strategy> make_dpor(const StrategyOptions& o) {
  return make_dpor_strategy(dpor_settings(o, DporMode::optimal));
}
std::unique_ptr<Strategy> make_source_dpor(const StrategyOptions& o) {
  return make_dpor_strategy(dpor_settings(o, DporMode::source));
}
std::unique_ptr<Strategy> make_dfs(const StrategyOptions& o) { return make_dfs_strategy(o.shard); }
std::unique_ptr<Strategy> make_random(const StrategyOptions& o) { return make_random_strategy(o.seed); }
std::unique_ptr<Strategy> make_pct(const StrategyOptions& o) { return make_pct_strategy(o.seed, o.pct_depth); }

}  // namespace

std::span<const StrategyInfo> strategy_catalog() {
  // Every strategy runs under the same fair mode (RunLimits::fair, the default): an execution
  // that repeats a cycle while another actor could run and never does is cut, and a fair
  // round-robin continuation decides whether the cycle is a livelock (sim/progress/progress.h).
  static constexpr std::string_view kExhaustiveFair =
      "fair (CHESS): an execution that repeats a cycle 4 times while another actor could run and never does is cut "
      "there (continuations with more repetitions are not explored) and a fair round-robin continuation judges "
      "whether the cycle is a livelock; with --unfair every schedule runs to its step bound";
  static constexpr std::string_view kSampledFair =
      "fair: the executions it samples are cut at unfair cycles as in dpor (it proves nothing about progress: a "
      "livelock it does not sample goes unseen)";
  static constexpr StrategyInfo kCatalog[] = {
      {.name = "dpor",
       .help = "optimal DPOR (source sets and wakeup trees): one execution per Mazurkiewicz trace (exhaustive; the "
               "default)",
       .fairness = kExhaustiveFair,
       .exhaustive = true,
       .make = make_dpor},
      {.name = "source-dpor",
       .help = "source-DPOR with sleep sets: one execution per Mazurkiewicz trace, plus sleep-set-blocked ones "
               "(exhaustive; the reference for dpor)",
       .fairness = kExhaustiveFair,
       .exhaustive = true,
       .make = make_source_dpor},
      {.name = "dfs",
       .help = "naive depth-first search over every interleaving and every choice (exhaustive; the reference)",
       .fairness = kExhaustiveFair,
       .exhaustive = true,
       .make = make_dfs},
      {.name = "random",
       .help = "seeded random walk: each execution picks uniformly at every decision (never exhaustive)",
       .fairness = kSampledFair,
       .exhaustive = false,
       .make = make_random},
      {.name = "pct",
       .help = "probabilistic concurrency testing (seeded, --depth d): one execution finds a bug of depth d among n "
               "actors and k steps with probability at least 1/(n*k^(d-1)) (never exhaustive)",
       .fairness = kSampledFair,
       .exhaustive = false,
       .make = make_pct},
  };
  static_assert(kCatalog[0].name == kDefaultStrategy, "the default strategy is the catalog's first row");
  return kCatalog;
}

const StrategyInfo* find_strategy(std::string_view name) {
  for (const auto& s : strategy_catalog()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string strategy_names_text() {
  std::string known;
  for (const auto& s : strategy_catalog()) known += std::string(known.empty() ? "" : ", ") + std::string(s.name);
  return known;
}

bool strategy_has_checkpoints(const StrategyInfo& info) {
  return info.make(StrategyOptions{})->abilities().checkpoints != nullptr;
}

bool strategy_is_shardable(const StrategyInfo& info) {
  return info.make(StrategyOptions{})->abilities().shard != nullptr;
}

std::unique_ptr<Strategy> make_strategy(std::string_view name, std::uint64_t seed) {
  StrategyOptions options;
  options.seed = seed;
  return make_strategy(name, options);
}

std::unique_ptr<Strategy> make_strategy(std::string_view name, const StrategyOptions& options) {
  const StrategyInfo* info = find_strategy(name);
  if (info == nullptr) return nullptr;
  std::unique_ptr<Strategy> s = info->make(options);
  if (options.max_preemptions >= 0) s = make_preemption_bounded(std::move(s), options.max_preemptions);
  return s;
}

}  // namespace lockstep::sim
