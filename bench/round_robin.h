// bench/round_robin.h: a strategy for benchmarks that run one execution on the scheduler
// directly: it picks the enabled transitions in turn (two actors alternate at every step;
// one actor always runs) and takes the first option of every choice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "lockstep/sim/strategies/strategy.h"

namespace lockstep::bench {

class RoundRobin final : public sim::Strategy {
 public:
  std::string_view name() const override { return "round-robin"; }
  bool next_execution() override { return true; }
  std::size_t pick(std::span<const sim::Transition> enabled, std::uint64_t) override { return turn_++ % enabled.size(); }
  std::uint32_t choose(std::uint32_t, std::string_view, std::uint64_t) override { return 0; }

 private:
  std::size_t turn_ = 0;
};

}  // namespace lockstep::bench
