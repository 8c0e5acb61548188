// sim/explore/search_speculation.cc: a search's speculation: pending subtrees explored on
// other threads (ExploreOptions::jobs) or by other processes (ExploreOptions::exchange), and
// taken into the walk's counts when it reaches them unchanged (sim/explore/speculation.h).
#include <chrono>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/sim/explore/checkpoint.h"
#include "lockstep/sim/explore/search.h"
#include "lockstep/sim/invariant.h"

namespace lockstep::sim {
namespace detail {

Search::Taken Search::speculate() {
  if (speculative_ == nullptr || !speculative_->can_speculate()) return Taken::no;
  // A small search is over before giving work away pays: the walk alone, at first.
  if (!holds_slot_ && out_.stats.executions + out_.stats.redundant - base_count_ < options_.speculate_after) {
    return Taken::no;
  }
  changed_.clear();
  speculative_->take_changed(changed_);
  for (const BranchKey& key : changed_) {
    if (auto it = specs_.find(key); it != specs_.end()) {
      std::shared_ptr<Speculation> s = std::move(it->second);
      specs_.erase(it);
      drop(std::move(s));
    }
  }
  std::erase_if(dropped_, [this](const auto& s) {
    if (!s->finished.load()) return false;
    try {
      const SubtreeRun run = s->run.get();
      out_.speculation.dropped_executions += run.result.stats.executions + run.result.stats.redundant;
    } catch (...) {  // a dropped speculation's failure is not this search's
    }
    return true;
  });
  Taken taken = Taken::no;
  if (const auto key = speculative_->starting()) {
    if (auto it = specs_.find(*key); it != specs_.end()) {
      std::shared_ptr<Speculation> s = std::move(it->second);
      specs_.erase(it);
      if (s->fingerprint == speculative_->start_fingerprint()) {
        if (s->remote) --remote_out_;  // reached: taken back, waited for or given up
        if (std::optional<SubtreeRun> run = result_of(s)) {
          taken = commit(*s, *run);
          if (taken == Taken::no) ++out_.speculation.dropped;
          if (taken == Taken::no && s->remote) remote_dropped_ += run->result.stats.executions + run->result.stats.redundant;
        }
      } else {
        drop(std::move(s));
      }
    }
  }
  if (taken != Taken::stop) launch();
  return taken;
}

// The subtree's counts and failure as if explored here, in order; no when it cannot be
// (it stopped early, a bound would cut it, a lock-order cycle across it and the walk).
Search::Taken Search::commit(Speculation& s, SubtreeRun& run) {
  const ExploreResult& r = run.result;
  const SpeculativeStrategy& x = *s.explorer->abilities().speculation;
  LOCKSTEP_INVARIANT(s.fingerprint == speculative_->start_fingerprint(),
                     "a subtree is taken only where the walk reaches its start unchanged");
  LOCKSTEP_INVARIANT(r.stats.failures == 0 || r.first_failure.has_value(), "a subtree that failed names its first failure");
  const bool failed = r.first_failure.has_value() && options_.stop_at_first;
  if (r.interrupted || !(x.subtree_done() || failed)) return Taken::no;
  if (r.first_failure && r.first_failure->result.invariant == "lock_order") return Taken::no;
  ExploreStats& stats = out_.stats;
  const ExploreStats& add = r.stats;
  if (add.executions + add.redundant > options_.executions_left(stats.executions + stats.redundant - base_count_)) {
    return Taken::no;
  }
  const std::uint64_t base = stats.executions;
  if (!run.edges.empty()) {
    LockOrderGraph trial = lock_orders_;
    std::vector<EdgeRecord> new_here;  // for a subtree explorer's own record
    for (const EdgeRecord& e : run.edges) {
      const std::size_t known = trial.edge_count();
      if (trial.add(e.edges, e.decisions, base + e.execution)) return Taken::no;
      if (trial.edge_count() != known) new_here.push_back({base + e.execution, e.edges, e.decisions});
    }
    lock_orders_ = std::move(trial);
    if (edge_log_ != nullptr) edge_log_->insert(edge_log_->end(), new_here.begin(), new_here.end());
  }
  stats.executions += add.executions;
  stats.redundant += add.redundant;
  stats.skipped += add.skipped;
  stats.unfair += add.unfair;
  stats.steps += add.steps;
  stats.timer_steps += add.timer_steps;
  stats.unjudged_deadlines += add.unjudged_deadlines;
  stats.failures += add.failures;
  for (std::size_t v = 0; v < stats.by_verdict.size(); ++v) stats.by_verdict[v] += add.by_verdict[v];
  for (const auto& [mark, count] : add.marks) stats.marks[mark] += count;
  ++out_.speculation.taken;
  out_.speculation.taken_executions += add.executions + add.redundant;
  if (s.remote) {
    ++out_.speculation.remote_taken;
    out_.speculation.remote_taken_executions += add.executions + add.redundant;
  }
  LOCKSTEP_INVARIANT(stats.executions == base + add.executions, "a subtree's executions follow the walk's");
  if (r.first_failure && !out_.first_failure) {
    out_.first_failure = *r.first_failure;
    out_.first_failure->execution += base;
    LOCKSTEP_INVARIANT(out_.first_failure->execution > base && out_.first_failure->execution <= stats.executions,
                       "a subtree's failure is numbered among the executions it added");
  }
  if (failed) {
    out_.stop_reason = "stopped at the first failure";
    return Taken::stop;
  }
  // The explorer's object ids as this walk's (most often the same).
  std::vector<ObjectId> objects{kNoObject};
  bool same = true;
  for (const std::string& key : run.objects) {
    objects.push_back(scheduler_.object_of_key(key));
    same = same && objects.back() == objects.size() - 1;
  }
  if (same) objects.clear();
  speculative_->skip_branch(*s.explorer, objects);
  return Taken::yes;
}

// The result of a speculation this search takes: explored here when no thread began it
// yet (stopping as this search stops), else its thread's, waited for (a subtree explorer
// lends its slot meanwhile). Waiting, the search still stops at its bounds and at Ctrl-C
// (nullopt: the speculation is dropped, the branch is cut as an execution would be) and
// reports progress.
std::optional<SubtreeRun> Search::result_of(const std::shared_ptr<Speculation>& s) {
  if (s->remote) return remote_result_of(*s);
  int idle = 0;
  if (s->state.compare_exchange_strong(idle, 1)) {
    SubtreeRun run = run_subtree(system_, *s, options_, pool_, [this] { return limits_.stop(); });
    pool_->outstanding.fetch_sub(1);
    return run;
  }
  if (holds_slot_) pool_->outstanding.fetch_sub(1);
  bool stopped = false;
  while (s->run.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
    if (limits_.stop()) {
      stopped = true;
      break;
    }
    if (options_.progress) maybe_report_progress();
  }
  if (holds_slot_) pool_->outstanding.fetch_add(1);
  if (stopped) {
    drop(s);
    return std::nullopt;
  }
  return s->run.get();
}

// A published speculation (ExploreOptions::exchange) the walk reached: taken back and
// explored here when no worker began it, else the worker's result, waited for as a
// thread's is (nullopt when the search stops meanwhile).
std::optional<SubtreeRun> Search::remote_result_of(Speculation& s) {
  if (exchange_->take_back(*s.remote)) {
    ++out_.speculation.taken_back;
    pool_->outstanding.fetch_add(1);  // a subtree explorer's search holds a slot
    SubtreeRun run = run_subtree(system_, s, options_, pool_, [this] { return limits_.stop(); });
    pool_->outstanding.fetch_sub(1);
    s.remote.reset();
    return run;
  }
  for (;;) {
    if (std::optional<std::string> text = exchange_->result(*s.remote)) return read_remote(s, *text);
    if (limits_.stop()) {
      exchange_->withdraw(*s.remote);
      ++out_.speculation.withdrawn;
      given_up_.push_back(s.key);
      ++out_.speculation.dropped;
      return std::nullopt;
    }
    if (options_.progress) maybe_report_progress();
  }
}

// A worker's result (subtree_result_json) as a thread's would be; a malformed one (another
// lockstep, a damaged queue) ends the search with an error, never a verdict.
SubtreeRun Search::read_remote(Speculation& s, const std::string& text) {
  SubtreeRun run;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    run.result.stats = stats_of(j.at("stats"));
    run.result.interrupted = j.at("interrupted").get<bool>();
    if (!j.at("failure").is_null()) run.result.first_failure = failure_of_json(j.at("failure"));
    for (const auto& e : j.at("edges")) {
      EdgeRecord r;
      r.execution = e.at(0).get<std::uint64_t>();
      for (const auto& edge : e.at(1)) r.edges.push_back({edge.at(0), edge.at(1), edge.at(2)});
      for (const auto& d : e.at(2)) {
        Decision decision;
        if (!parse_decision(d.get<std::string>(), decision)) throw std::invalid_argument("a decision");
        r.decisions.push_back(decision);
      }
      run.edges.push_back(std::move(r));
    }
    run.objects = j.at("objects").get<std::vector<std::string>>();
    s.explorer->abilities().speculation->take_subtree_outcome(j.at("outcome"));
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("a worker's result for task {} is malformed: {}", *s.remote, e.what()));
  }
  return run;
}

// Gives the pool's free slots the next pending branches, then the exchange's (other
// processes). Finished speculations wait for the walk to reach them; at most
// kSpeculationsPerJob per thread, and the exchange's capacity, are kept (memory).
void Search::launch() {
  const std::size_t remote_room = exchange_ != nullptr ? static_cast<std::size_t>(exchange_->capacity()) : 0;
  for (;;) {
    if (specs_.size() >= kSpeculationsPerJob * static_cast<std::size_t>(pool_->jobs) + remote_room) return;
    bool local = false;
    // Read first: every search asks before every execution, and a write each time would
    // bounce the counter's cache line between the threads.
    if (pool_->spawn && pool_->outstanding.load(std::memory_order_relaxed) < pool_->jobs) {
      if (pool_->outstanding.fetch_add(1) >= pool_->jobs) {
        pool_->outstanding.fetch_sub(1);
      } else {
        local = true;
      }
    }
    if (!local && (remote_out_ >= remote_room || !may_publish())) return;
    taken_ = given_up_;
    for (const auto& [key, s] : specs_) taken_.push_back(key);
    std::optional<SubtreeOffer> offer = speculative_->offer(taken_);
    if (!offer) {
      if (local) pool_->outstanding.fetch_sub(1);
      return;
    }
    auto s = std::make_shared<Speculation>();
    s->key = offer->key;
    s->fingerprint = std::move(offer->fingerprint);
    s->explorer = std::move(offer->explorer);
    s->objects = scheduler_.object_keys();
    if (!local) {
      const nlohmann::json task = {{"start", s->explorer->abilities().speculation->subtree_start()},
                                   {"objects", s->objects}};
      s->remote = exchange_->publish(task.dump());
      ++remote_out_;
      ++out_.speculation.published;
      specs_.emplace(s->key, std::move(s));
      continue;
    }
    // The task holds the speculation: it lives until the task is done with it. The search
    // (system_, options_) outlives every task that begins it: end_speculation waits for
    // those, and a task that did not begin touches nothing but the speculation.
    pool_->spawn([s, this, pool = pool_] {
      int idle = 0;
      if (!s->state.compare_exchange_strong(idle, 1)) return;  // taken by the search that waits for it
      try {
        s->promise.set_value(run_subtree(system_, *s, options_, pool));
      } catch (...) {
        s->promise.set_exception(std::current_exception());
      }
      s->finished.store(true);
      pool->outstanding.fetch_sub(1);
    });
    specs_.emplace(s->key, std::move(s));
  }
}

// check --queue: whether the walk may publish more. Not while the redundant work known
// (workers' withdrawn tasks, and their results the walk could not take) is over
// ExploreOptions::max_redundant of the executions so far: giving less away keeps it near.
bool Search::may_publish() {
  const auto done = static_cast<double>(out_.stats.executions + out_.stats.redundant);
  const bool open = static_cast<double>(exchange_->redundant() + remote_dropped_) <= options_.max_redundant * done;
  if (!open && publishing_) ++out_.speculation.held_back;
  publishing_ = open;
  return open;
}

void Search::drop(std::shared_ptr<Speculation> s) {
  if (s->remote) {
    exchange_->withdraw(*s->remote);
    --remote_out_;
    ++out_.speculation.withdrawn;
    given_up_.push_back(s->key);
    ++out_.speculation.dropped;
    return;
  }
  s->cancel.store(true);
  given_up_.push_back(s->key);
  ++out_.speculation.dropped;
  dropped_.push_back(std::move(s));
}

// Cancels every speculation: one not begun never will be; one begun is waited for.
void Search::end_speculation() {
  if (pool_ == nullptr) return;
  for (auto* list : {&dropped_}) {
    for (auto& s : *list) end(*s);
  }
  for (auto& [key, s] : specs_) end(*s);
  specs_.clear();
  dropped_.clear();
}

void Search::end(Speculation& s) {
  if (s.remote) {
    exchange_->withdraw(*s.remote);
    ++out_.speculation.withdrawn;
    s.remote.reset();
    --remote_out_;
    return;
  }
  s.cancel.store(true);
  int idle = 0;
  if (s.state.compare_exchange_strong(idle, 1)) {
    pool_->outstanding.fetch_sub(1);
  } else {
    s.run.wait();
  }
}

SubtreeRun run_subtree(const System& system, Speculation& s, const ExploreOptions& parent,
                       const std::shared_ptr<SpeculationPool>& pool, std::function<bool()> also_stop) {
  ExploreOptions options;
  options.limits = parent.limits;
  options.limits.stop = nullptr;  // the walk's own; this one stops when cancelled
  options.stop_at_first = parent.stop_at_first;
  options.stop_requested = [&s, also_stop = std::move(also_stop)] {
    return s.cancel.load(std::memory_order_relaxed) || (also_stop && also_stop());
  };
  SubtreeRun out;
  Search search(system, *s.explorer, options, s.objects, &out.edges, pool);
  out.result = search.run();
  out.objects = search.object_keys();
  return out;
}

// A subtree explorer's search as text, for the exchange (read back by read_remote).
nlohmann::json subtree_result_json(const SubtreeRun& run, nlohmann::json outcome) {
  nlohmann::json edges = nlohmann::json::array();
  for (const EdgeRecord& r : run.edges) {
    nlohmann::json list = nlohmann::json::array();
    for (const LockOrderEdge& e : r.edges) list.push_back({e.from, e.to, e.how});
    nlohmann::json decisions = nlohmann::json::array();
    for (const Decision d : r.decisions) decisions.push_back(decision_text(d));
    edges.push_back({r.execution, std::move(list), std::move(decisions)});
  }
  const auto& failure = run.result.first_failure;
  return {{"stats", stats_json(run.result.stats)},
          {"interrupted", run.result.interrupted},
          {"failure", failure ? failure_json(*failure) : nlohmann::json()},
          {"edges", std::move(edges)},
          {"objects", run.objects},
          {"outcome", std::move(outcome)}};
}

}  // namespace detail

SubtreeTaskRun explore_subtree_task(const System& system, Strategy& fresh, const std::string& task,
                                    const ExploreOptions& options) {
  SpeculativeStrategy* x = fresh.abilities().speculation;
  if (x == nullptr) throw std::invalid_argument("a subtree task needs a strategy that speculates (dpor)");
  std::vector<std::string> objects;
  try {
    const nlohmann::json j = nlohmann::json::parse(task);
    x->begin_subtree(j.at("start"));
    objects = j.at("objects").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("malformed subtree task: ") + e.what());
  }
  auto pool = std::make_shared<detail::SpeculationPool>();
  pool->jobs = std::max(1, options.jobs);
  if (options.jobs > 1) pool->spawn = options.spawn;
  pool->outstanding.store(1);  // this search's own
  ExploreOptions o;
  o.limits = options.limits;
  o.limits.stop = nullptr;
  o.stop_at_first = options.stop_at_first;
  o.stop_requested = options.stop_requested;
  detail::SubtreeRun run;
  {
    detail::Search search(system, fresh, o, objects, &run.edges, pool);
    run.result = search.run();
    run.objects = search.object_keys();
  }
  SubtreeTaskRun out;
  out.explored = run.result.stats.executions + run.result.stats.redundant;
  out.interrupted = run.result.interrupted;
  out.result = detail::subtree_result_json(run, x->subtree_outcome()).dump();
  return out;
}

}  // namespace lockstep::sim
