// Seeded random walk: every decision uniform among the options. Execution k uses a
// generator seeded from (seed, k), so any execution can be reproduced on its own.
#include "lockstep/sim/random.h"
#include "lockstep/sim/strategies/strategy_makers.h"

namespace lockstep::sim {
namespace {

class RandomStrategy final : public Strategy, public IndependentExecutions {
 public:
  explicit RandomStrategy(std::uint64_t seed) : seed_(seed) {}

  std::string_view name() const override { return "random"; }

  bool next_execution() override {
    rng_ = Random(seed_ ^ (0x9E3779B97F4A7C15ULL * ++execution_));
    return true;
  }

  StrategyAbilities abilities() override { return {.independent = this}; }

  std::unique_ptr<Strategy> fresh_copy() const override { return std::make_unique<RandomStrategy>(seed_); }
  void begin_at(std::uint64_t execution) override { execution_ = execution - 1; }

  std::size_t pick(std::span<const Transition> enabled, std::uint64_t) override {
    return rng_.uniform(enabled.size());
  }

  std::uint32_t choose(std::uint32_t n, std::string_view, std::uint64_t) override {
    return static_cast<std::uint32_t>(rng_.uniform(n));
  }

 private:
  std::uint64_t seed_;
  std::uint64_t execution_ = 0;
  Random rng_;
};

}  // namespace

std::unique_ptr<Strategy> make_random_strategy(std::uint64_t seed) {
  return std::make_unique<RandomStrategy>(seed);
}

}  // namespace lockstep::sim
