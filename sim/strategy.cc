#include "sim/strategy.h"

#include <charconv>

namespace lockstep::sim {

std::unique_ptr<Strategy> make_dfs_strategy();
std::unique_ptr<Strategy> make_dpor_strategy();
std::unique_ptr<Strategy> make_random_strategy(std::uint64_t seed);

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

std::span<const StrategyInfo> strategy_catalog() {
  static constexpr StrategyInfo kCatalog[] = {
      {"dpor", "source-DPOR with sleep sets: one execution per Mazurkiewicz trace, plus sleep-set-blocked ones (exhaustive; the default)"},
      {"dfs", "naive depth-first search over every interleaving and every choice (exhaustive; the reference)"},
      {"random", "seeded random walk: each execution picks uniformly at every decision (never exhaustive)"},
  };
  return kCatalog;
}

std::unique_ptr<Strategy> make_strategy(std::string_view name, std::uint64_t seed) {
  if (name == "dfs") return make_dfs_strategy();
  if (name == "dpor") return make_dpor_strategy();
  if (name == "random") return make_random_strategy(seed);
  return nullptr;
}

}  // namespace lockstep::sim
