// sim/explore/search_checkpoint.cc: a search's checkpoints and its resumption from one
// (ExploreOptions::checkpoint, ExploreOptions::resume; sim/explore/checkpoint.h).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/model/scenario.h"
#include "lockstep/sim/explore/checkpoint.h"
#include "lockstep/sim/explore/search.h"
#include "lockstep/sim/invariant.h"

namespace lockstep::sim::detail {

// A checkpoint's search state (ExploreOptions::resume).
void Search::restore(const nlohmann::json& s) {
  try {
    restore_state(s);
  } catch (const std::exception& e) {
    throw InputError(fmt::format("{}: /search: not a state this search can go on from: {}", options_.resume_source,
                                 e.what()));
  }
}

void Search::restore_state(const nlohmann::json& s) {
  out_.resumed = true;
  out_.stats = stats_of(s.at("stats"));
  base_elapsed_ = out_.stats.elapsed_s;
  base_count_ = out_.stats.executions + out_.stats.redundant;
  for (const auto& n : s.at("notes")) out_.notes.push_back(n.get<std::string>());
  out_.fallback = s.value("fallback", std::string());
  out_.fallback_at = s.value("fallback_at", std::uint64_t{0});
  for (const auto& w : s.at("lock_order")) lock_orders_.restore(witness_of(w));
  if (!s.at("failure").is_null()) out_.first_failure = failure_of_json(s.at("failure"));
  complete_ = s.at("complete").get<bool>();
  if (complete_) return;
  if (abilities_.checkpoints == nullptr) {
    throw std::invalid_argument(fmt::format("strategy {} has no checkpoints", strategy_.name()));
  }
  scheduler_.restore_objects(s.at("objects").get<std::vector<std::string>>());
  abilities_.checkpoints->resume(s.at("strategy"));
}

nlohmann::json Search::state(bool complete) const {
  LOCKSTEP_INVARIANT(abilities_.checkpoints != nullptr, "a checkpoint is written only of a strategy that has them");
  nlohmann::json lock_order = nlohmann::json::array();
  for (const auto& w : lock_orders_.edges()) lock_order.push_back(witness_json(w));
  ExploreStats stats = out_.stats;
  stats.elapsed_s = total_elapsed();
  return {{"complete", complete},
          {"stats", stats_json(stats)},
          {"notes", out_.notes},
          {"fallback", out_.fallback},
          {"fallback_at", out_.fallback_at},
          {"lock_order", std::move(lock_order)},
          {"failure", out_.first_failure ? failure_json(*out_.first_failure) : nlohmann::json()},
          {"objects", complete ? nlohmann::json() : nlohmann::json(scheduler_.object_keys())},
          {"strategy", complete ? nlohmann::json() : abilities_.checkpoints->checkpoint()}};
}

// Every checkpoint_interval_s seconds, at the start of an execution.
void Search::periodic_checkpoint() {
  if (!options_.checkpoint || abilities_.checkpoints == nullptr || options_.checkpoint_interval_s <= 0) return;
  const double now = elapsed();
  if (now - last_checkpoint_ < options_.checkpoint_interval_s) return;
  last_checkpoint_ = now;
  options_.checkpoint(state(false));
}

// The last checkpoint: the search complete, or where the next execution begins. Not for a
// search that stopped at its first failure (it decided), nor one cut by a stop nobody
// asked for.
void Search::final_checkpoint() {
  if (!options_.checkpoint || abilities_.checkpoints == nullptr) return;
  if (strategy_.status().exhausted) {
    options_.checkpoint(state(true));
    return;
  }
  if (out_.first_failure && options_.stop_at_first) return;
  if (out_.stop_reason == "stopped inside an execution") return;
  // Between executions the last one is not analysed yet: the strategy does that now, and
  // finds where the next one begins (or that there is none).
  if (!cut_inside_) {
    if (!strategy_.next_execution()) {
      out_.stop_reason = "every execution explored";
      out_.interrupted = false;
      options_.checkpoint(state(true));
      return;
    }
    note_restart();
  }
  options_.checkpoint(state(false));
}

}  // namespace lockstep::sim::detail
