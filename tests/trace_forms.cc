// tests/trace_forms.cc: the Foata normal form of an execution's steps.
#include "trace_forms.h"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockstep/sim/sched/op.h"

namespace lockstep::testing {

std::vector<std::vector<ActorId>> permutations_of(const std::vector<std::vector<ActorId>>& classes, int n) {
  std::vector<ActorId> identity(static_cast<std::size_t>(n));
  for (int a = 0; a < n; ++a) identity[a] = a;
  std::vector<std::vector<ActorId>> out = {identity};
  for (const auto& members : classes) {
    std::vector<std::vector<ActorId>> more;
    for (const auto& base : out) {
      std::vector<ActorId> sorted = members;
      std::sort(sorted.begin(), sorted.end());
      std::vector<ActorId> order = sorted;
      do {
        auto renamed = base;
        for (std::size_t k = 0; k < sorted.size(); ++k) renamed[sorted[k]] = order[k];
        more.push_back(std::move(renamed));
      } while (std::next_permutation(order.begin(), order.end()));
    }
    out = std::move(more);
  }
  return out;
}

std::string FoataRecorder::form_up_to_permutations() const {
  int n = 0;
  for (const Step& s : steps_) n = std::max(n, s.actor + 1);
  for (const auto& c : classes_) {
    for (const ActorId a : c) n = std::max(n, a + 1);
  }
  std::string best;
  bool first = true;
  for (const auto& rename : permutations_of(classes_, n)) {
    std::string f = form(declared_classes_, rename);
    if (first || f < best) best = std::move(f);
    first = false;
  }
  // The choices made before the first step (each actor's first `choose`) are not told whose
  // they are, so no renaming can move them with their actor: up to permutations they are a
  // multiset (in order, the images "0,1|" and "1,0|" of one class counted as two).
  if (const auto bar = best.find('|'); !first_choices_.empty() && bar != std::string::npos) {
    std::vector<std::uint32_t> sorted = first_choices_;
    std::sort(sorted.begin(), sorted.end());
    best = fmt::format("{}{}", fmt::join(sorted, ","), best.substr(bar));
  }
  return best;
}

std::string FoataRecorder::form(bool optimal, const std::vector<ActorId>& rename) const {
  auto fp = [optimal](const Step& s) -> sim::Footprint { return sim::without_symmetry(optimal ? s.optimal_fp : s.fp); };
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
    // An actor's own pool is renamed with it.
    const auto number = [&](sim::ObjectId o) {
      return std::to_string(o - std::distance(symmetry_objects_.begin(), symmetry_objects_.lower_bound(o)));
    };
    const auto name = [&](sim::ObjectId o) {
      for (const auto& [actor, pool] : own_pool_) {
        if (pool == o && !rename.empty()) {
          const auto renamed = own_pool_.find(rename[actor]);
          return renamed == own_pool_.end() ? number(o) : "p" + number(renamed->second);
        }
      }
      return number(o);
    };
    std::string objects = name(fp(s).object);
    for (std::size_t x = 0; x < fp(s).extra_count; ++x) objects += "+" + name(fp(s).extra[x]);
    by_level[level[k]].push_back(fmt::format("{}#{}{}:{}:{}:{}{}", rename.empty() ? s.actor : rename[s.actor], count_of_actor[s.actor]++, s.timer ? "t" : "",
                                             objects, static_cast<int>(fp(s).access), static_cast<int>(fp(s).effects),
                                             s.choices.empty() ? std::string() : fmt::format("={}", fmt::join(s.choices, ","))));
  }
  std::string out = first_choices_.empty() ? std::string() : fmt::format("{}|", fmt::join(first_choices_, ","));
  for (auto& [lvl, labels] : by_level) {
    std::sort(labels.begin(), labels.end());
    out += "[";
    for (const auto& l : labels) out += l + " ";
    out += "]";
  }
  return out;
}

void FoataRecorder::finish() {
  if (steps_.empty()) first_choices_ = std::exchange(choices_, {});  // an execution of no step
  if (keep_) {
    forms_.push_back(form(false));
    optimal_forms_.push_back(form(true));
    if (!classes_.empty()) up_to_forms_.push_back(form_up_to_permutations());
  }
  keep_ = false;
  steps_.clear();
  choices_.clear();
  first_choices_.clear();
}

}  // namespace lockstep::testing
