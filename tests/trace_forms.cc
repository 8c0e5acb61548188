// tests/trace_forms.cc: the Foata normal form of an execution's steps.
#include "trace_forms.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "lockstep/sim/op.h"

namespace lockstep::testing {

std::string FoataRecorder::form(bool optimal) const {
  auto fp = [optimal](const Step& s) -> const sim::Footprint& { return optimal ? s.optimal_fp : s.fp; };
  std::vector<int> level(steps_.size(), 0);
  std::vector<int> count_of_actor(64, 0);
  std::map<int, std::vector<std::string>> by_level;
  for (std::size_t k = 0; k < steps_.size(); ++k) {
    for (std::size_t i = 0; i < k; ++i) {
      if (steps_[i].actor == steps_[k].actor || sim::dependent(fp(steps_[i]), fp(steps_[k]))) {
        level[k] = std::max(level[k], level[i] + 1);
      }
    }
    const Step& s = steps_[k];
    std::string objects = std::to_string(fp(s).object);
    for (std::size_t x = 0; x < fp(s).extra_count; ++x) objects += "+" + std::to_string(fp(s).extra[x]);
    by_level[level[k]].push_back(fmt::format("{}#{}{}:{}:{}:{}", s.actor, count_of_actor[s.actor]++, s.timer ? "t" : "",
                                             objects, static_cast<int>(fp(s).access), static_cast<int>(fp(s).effects)));
  }
  std::string out;
  for (auto& [lvl, labels] : by_level) {
    std::sort(labels.begin(), labels.end());
    out += "[";
    for (const auto& l : labels) out += l + " ";
    out += "]";
  }
  return out;
}

void FoataRecorder::finish() {
  if (keep_) {
    forms_.push_back(form(false));
    optimal_forms_.push_back(form(true));
  }
  keep_ = false;
  steps_.clear();
}

}  // namespace lockstep::testing
