// sim/explore/explorer.cc: the exploration loop: one execution after another as the strategy asks,
// counted by kind, bounded, and judged (sim/explore/explorer.h).
#include "lockstep/sim/explore/explorer.h"
#include "lockstep/sim/explore/portfolio.h"

#include <atomic>
#include <chrono>
#include <future>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/model/json_cursor.h"
#include "lockstep/sim/explore/checkpoint.h"
#include "lockstep/sim/sched/sim_env.h"
#include "lockstep/sim/explore/speculation.h"
#include "lockstep/sim/explore/subtree_exchange.h"

namespace lockstep::sim {

// The search size from which untimed mode's cost is worth a note (note_untimed_cost).
constexpr std::uint64_t kUntimedNoteExecutions = 1000;
// ExploreOptions::jobs: the speculations one search keeps per thread, begun or finished.
constexpr std::size_t kSpeculationsPerJob = 64;
namespace {

// A subtree explorer's execution whose lock-order edges were new there, to be added to the
// serial walk's graph in order (ExploreOptions::jobs).
struct EdgeRecord {
  std::uint64_t execution = 0;
  std::vector<LockOrderEdge> edges;
  std::vector<Decision> decisions;
};

// What a subtree explorer's search gives back.
struct SubtreeRun {
  ExploreResult result;
  std::vector<EdgeRecord> edges;
  std::vector<std::string> objects;  // its scheduler's object keys at the end
};

// A pending branch's subtree, explored on another thread.
struct Speculation {
  BranchKey key;
  std::string fingerprint;
  std::unique_ptr<Strategy> explorer;
  std::vector<std::string> objects;  // the walk's object keys when it began (the explorer's ids)
  std::optional<std::uint64_t> remote;  // published for other processes: the task's id
  std::atomic<bool> cancel{false};
  // 0: not begun; 1: begun, on a thread of the pool or by the search that waits for it
  // (whoever moves it from 0 to 1 explores it); finished: its result is set.
  std::atomic<int> state{0};
  std::atomic<bool> finished{false};
  std::promise<SubtreeRun> promise;
  std::future<SubtreeRun> run = promise.get_future();
};

// What the searches of one search on several threads share: the threads, and how many
// speculations are given out and not finished (at most `jobs`).
struct SpeculationPool {
  int jobs = 1;
  std::function<void(std::function<void()>)> spawn;
  std::atomic<int> outstanding{0};
};

// `also_stop`: a search that explores a speculation itself stops it as it stops.
SubtreeRun run_subtree(const System& system, Speculation& s, const ExploreOptions& parent,
                       const std::shared_ptr<SpeculationPool>& pool, std::function<bool()> also_stop = {});

// One search: the loop's state and its steps.
class Search {
 public:
  Search(const System& system, Strategy& strategy, const ExploreOptions& options)
      : system_(system), strategy_(strategy), options_(options), limits_(options.limits) {
    limits_.stop = [this, inner = options.limits.stop] { return stop_asked() || out_of_time() || (inner && inner()); };
    if (options.resume) restore(*options.resume);
    if (options.checkpoint && strategy.can_checkpoint()) strategy.keep_resume_point();
    if (((options.jobs > 1 && options.spawn) || options.exchange) && !options.on_execution) {
      speculative_ = dynamic_cast<SpeculativeStrategy*>(&strategy);
      if (speculative_ != nullptr) exchange_ = options.exchange.get();
    }
    if (options.jobs > 1 && options.spawn && speculative_ == nullptr && strategy.fresh_copy() != nullptr) {
      out_.speculation.jobs = options.jobs;
      out_.speculation.portfolio = true;
      portfolio_ = std::make_unique<Portfolio>(system, strategy, limits_, options.jobs, options.spawn, 1);
    }
    if (speculative_ != nullptr) {
      out_.speculation.jobs = options.jobs;
      out_.speculation.exchange = exchange_ != nullptr;
      pool_ = std::make_shared<SpeculationPool>();
      pool_->jobs = options.jobs;
      if (options.jobs > 1) pool_->spawn = options.spawn;
    }
  }
  // A subtree explorer's search (ExploreOptions::jobs): the serial walk's object ids, its
  // new lock-order edges recorded; it gives out its own pending branches too.
  Search(const System& system, Strategy& strategy, const ExploreOptions& options, const std::vector<std::string>& objects,
         std::vector<EdgeRecord>* edges, std::shared_ptr<SpeculationPool> pool)
      : Search(system, strategy, options) {
    scheduler_.restore_objects(objects);
    edge_log_ = edges;
    pool_ = std::move(pool);
    holds_slot_ = true;
    speculative_ = dynamic_cast<SpeculativeStrategy*>(&strategy);
    // Only the serial walk publishes: a worker's subtree publishing its own branches too
    // flooded the queue with branches that changed before they were reached (docs/notes.md).
    exchange_ = nullptr;
  }
  ~Search() { end_speculation(); }
  Search(const Search&) = delete;
  Search& operator=(const Search&) = delete;

  std::vector<std::string> object_keys() const { return scheduler_.object_keys(); }

  ExploreResult run() {
    if (complete_) {  // resumed from the checkpoint of a finished search: its result again
      out_.stop_reason = "every execution explored";
      conclude();
      return std::move(out_);
    }
    while (!stopped_before_next()) {
      const Taken taken = speculate();
      if (taken == Taken::stop) break;
      if (taken == Taken::yes) {
        if (options_.progress) maybe_report_progress();
        continue;
      }
      if (!run_one()) break;
    }
    end_speculation();
    out_.stats.elapsed_s = total_elapsed();
    final_checkpoint();
    if (options_.progress) report_progress();
    conclude();
    return std::move(out_);
  }

 private:
  double elapsed() const { return options_.elapsed_seconds ? options_.elapsed_seconds() : 0.0; }

  void maybe_report_progress() {
    const ExploreStats& stats = out_.stats;
    const bool by_count = (stats.executions + stats.redundant) % options_.progress_every == 0;
    if (!by_count && !(options_.elapsed_seconds && elapsed() - last_progress_ >= options_.progress_seconds)) return;
    report_progress();
  }
  void report_progress() {
    last_progress_ = elapsed();
    out_.stats.elapsed_s = total_elapsed();
    out_.stats.explored_fraction = strategy_.explored_fraction();
    options_.progress(out_.stats);
  }

  // After next_execution(): when the search began anew, what it counted so far is not its count.
  void note_restart() {
    if (!strategy_.take_restart()) return;
    out_.notes.push_back(fmt::format("optimal DPOR does not cover this model: {}. The search began again at "
                                     "execution {} as source-dpor, which may run sleep-set-blocked executions",
                                     strategy_.restart_reason(), out_.stats.executions));
    out_.stats = ExploreStats{};
    base_count_ = 0;
    lock_orders_ = LockOrderGraph();
    out_.first_failure.reset();
  }
  // This run's and those before it (a resumed search).
  double total_elapsed() const { return base_elapsed_ + elapsed(); }

  // A checkpoint's search state (ExploreOptions::resume).
  void restore(const nlohmann::json& s) {
    try {
      restore_state(s);
    } catch (const std::exception& e) {
      throw InputError(fmt::format("{}: /search: not a state this search can go on from: {}", options_.resume_source,
                                   e.what()));
    }
  }
  void restore_state(const nlohmann::json& s) {
    out_.resumed = true;
    out_.stats = stats_of(s.at("stats"));
    base_elapsed_ = out_.stats.elapsed_s;
    base_count_ = out_.stats.executions + out_.stats.redundant;
    for (const auto& n : s.at("notes")) out_.notes.push_back(n.get<std::string>());
    for (const auto& w : s.at("lock_order")) lock_orders_.restore(witness_of(w));
    if (!s.at("failure").is_null()) out_.first_failure = failure_of_json(s.at("failure"));
    complete_ = s.at("complete").get<bool>();
    if (complete_) return;
    scheduler_.restore_objects(s.at("objects").get<std::vector<std::string>>());
    strategy_.resume(s.at("strategy"));
  }

  nlohmann::json state(bool complete) const {
    nlohmann::json lock_order = nlohmann::json::array();
    for (const auto& w : lock_orders_.edges()) lock_order.push_back(witness_json(w));
    ExploreStats stats = out_.stats;
    stats.elapsed_s = total_elapsed();
    return {{"complete", complete},
            {"stats", stats_json(stats)},
            {"notes", out_.notes},
            {"lock_order", std::move(lock_order)},
            {"failure", out_.first_failure ? failure_json(*out_.first_failure) : nlohmann::json()},
            {"objects", complete ? nlohmann::json() : nlohmann::json(scheduler_.object_keys())},
            {"strategy", complete ? nlohmann::json() : strategy_.checkpoint()}};
  }

  // Every checkpoint_every seconds, at the start of an execution.
  void periodic_checkpoint() {
    if (!options_.checkpoint || !strategy_.can_checkpoint() || options_.checkpoint_every <= 0) return;
    const double now = elapsed();
    if (now - last_checkpoint_ < options_.checkpoint_every) return;
    last_checkpoint_ = now;
    options_.checkpoint(state(false));
  }

  // The last checkpoint: the search complete, or where the next execution begins. Not for a
  // search that stopped at its first failure (it decided), nor one cut by a stop nobody
  // asked for.
  void final_checkpoint() {
    if (!options_.checkpoint || !strategy_.can_checkpoint()) return;
    if (strategy_.exhausted()) {
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
  bool out_of_time() const { return options_.max_seconds > 0 && elapsed() >= options_.max_seconds; }
  bool stop_asked() const { return options_.stop_requested && options_.stop_requested(); }

  // Whether the search ends before another execution (a bound, an interrupt, or the
  // strategy has none left), with out_.stop_reason saying why.
  bool stopped_before_next() {
    const ExploreStats& stats = out_.stats;
    if (options_.max_executions != 0 && stats.executions + stats.redundant - base_count_ >= options_.max_executions) {
      out_.stop_reason = fmt::format("bound of {} executions reached", options_.max_executions);
      return true;
    }
    if (stop_asked()) {
      out_.stop_reason = "interrupted";
      out_.interrupted = true;
      return true;
    }
    if (out_of_time()) {
      out_.stop_reason = fmt::format("bound of {} s of wall time reached", options_.max_seconds);
      return true;
    }
    if (!strategy_.next_execution()) {
      out_.stop_reason = "every execution explored";
      return true;
    }
    cut_inside_ = false;
    note_restart();
    periodic_checkpoint();
    return false;
  }

  // Runs one execution, counts it and reports progress; false when the search must end at
  // once (an execution cut inside by a stop nobody asked for, or the first failure found).
  bool run_one() {
    ExecutionResult result;
    if (portfolio_) {
      auto outcome = portfolio_->next([this] { return stop_asked() || out_of_time(); });
      if (!outcome) {
        result.interrupted = true;  // stopped while waiting: as a run cut inside
      } else {
        if (outcome->error) std::rethrow_exception(outcome->error);
        result = std::move(outcome->result);
        decisions_ = std::move(outcome->decisions);
        if (outcome->symmetric_actors > 0 && out_.symmetry.actors == 0) {
          out_.symmetry = {outcome->symmetric_actors, outcome->permutations};
        }
      }
    } else try {
      result = scheduler_.run(system_, env_, strategy_, limits_);
      if (const Symmetry& sym = scheduler_.symmetry(); sym.any() && out_.symmetry.actors == 0) {
        out_.symmetry = {sym.actors, sym.permutations};
      }
    } catch (const Divergence& d) {
      result.verdict = Verdict::model_error;
      result.message = d.what();
      result.steps = d.step();
    }
    ExploreStats& stats = out_.stats;
    stats.steps += result.steps;
    stats.timer_steps += result.timer_steps;
    if (result.interrupted) {  // cut inside the execution: the next turn of the loop says why
      stats.elapsed_s = total_elapsed();
      cut_inside_ = true;  // the strategy's resume point is this execution's start
      if (!stop_asked() && !out_of_time()) {
        out_.stop_reason = "stopped inside an execution";
        return false;
      }
      return true;
    }
    if (result.unfair) {
      ++stats.unfair;  // at its bound, an unfair cycle fairness could not break: nothing to judge
    } else if (result.skipped || (!result.pruned && !strategy_.owns_execution())) {
      ++stats.skipped;
    } else if (result.pruned) {
      ++stats.redundant;
    } else if (!judge(result)) {
      return false;
    }
    if (options_.progress) maybe_report_progress();
    return true;
  }

  // A complete execution: counted by verdict, and remembered when it (or a lock-order
  // cycle it closes) fails; false when the search stops at the first failure.
  bool judge(const ExecutionResult& result) {
    ExploreStats& stats = out_.stats;
    ++stats.executions;
    ++stats.by_verdict[static_cast<std::size_t>(result.verdict)];
    for (const auto& m : result.marks) ++stats.marks[m];
    if (options_.on_execution) options_.on_execution(result);
    std::optional<FoundFailure> found = failure_of(result);
    if (!found) return true;
    ++stats.failures;
    if (!out_.first_failure) out_.first_failure = std::move(found);
    if (options_.stop_at_first) {
      out_.stop_reason = "stopped at the first failure";
      return false;
    }
    return true;
  }

  std::optional<FoundFailure> failure_of(const ExecutionResult& result) {
    const std::uint64_t execution = out_.stats.executions;
    if (is_failure(result.verdict)) return FoundFailure{result, decisions(), execution, {}};
    if (result.lock_order_edges.empty()) return std::nullopt;
    const std::size_t known = lock_orders_.edge_count();
    auto cycle = lock_orders_.add(result.lock_order_edges, decisions(), execution);
    if (edge_log_ != nullptr && (cycle || lock_orders_.edge_count() != known)) {
      edge_log_->push_back({execution, result.lock_order_edges, decisions()});
    }
    if (!cycle) return std::nullopt;
    ExecutionResult across;
    across.verdict = Verdict::violation;
    across.invariant = "lock_order";
    across.message = std::move(cycle->message);
    across.steps = result.steps;
    return FoundFailure{std::move(across), decisions(), execution, std::move(cycle->witnesses)};
  }

  // The search's verdict: its first failure's, else pass when it was exhaustive.
  void conclude() {
    note_untimed_cost();
    out_.exhaustive = complete_ || (!out_.interrupted && strategy_.exhausted());
    if (out_.first_failure) {
      out_.verdict = out_.first_failure->result.verdict;
    } else if (out_.exhaustive) {
      out_.verdict = Verdict::pass;
    } else {
      out_.verdict = Verdict::incomplete;
      if (out_.stop_reason.empty() || out_.stop_reason == "every execution explored") {
        out_.stop_reason = strategy_.limitation().empty()
                               ? fmt::format("strategy {} is not exhaustive", strategy_.name())
                               : strategy_.limitation();
      }
    }
  }

  // Untimed mode lets every timer fire at any moment: code that sleeps or retries pays for
  // it in executions, which a user should hear about once the search is large.
  void note_untimed_cost() {
    const ExploreStats& stats = out_.stats;
    if (limits_.time != TimeMode::untimed || stats.timer_steps == 0) return;
    if (stats.executions + stats.redundant < kUntimedNoteExecutions) return;
    out_.notes.push_back(fmt::format(
        "untimed mode: {} of the {} steps were timers firing (sleeps ending, timeouts), each explored at every "
        "moment it could happen. If durations are part of the design, timed mode (\"time\": \"timed\", "
        "Model::timed()) explores far fewer executions",
        stats.timer_steps, stats.steps));
  }

  // Speculation (ExploreOptions::jobs, sim/explore/speculation.h), before each execution: stale
  // speculations are dropped; the branch that begins is taken from its speculation when its
  // start is unchanged (yes), which may end the search at a failure (stop); idle threads
  // are given the next pending branches.
  enum class Taken { no, yes, stop };
  Taken speculate() {
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
  Taken commit(Speculation& s, SubtreeRun& run) {
    const ExploreResult& r = run.result;
    const auto& x = dynamic_cast<const SpeculativeStrategy&>(*s.explorer);
    const bool failed = r.first_failure.has_value() && options_.stop_at_first;
    if (r.interrupted || !(x.subtree_done() || failed)) return Taken::no;
    if (r.first_failure && r.first_failure->result.invariant == "lock_order") return Taken::no;
    ExploreStats& stats = out_.stats;
    const ExploreStats& add = r.stats;
    if (options_.max_executions != 0 &&
        stats.executions + stats.redundant - base_count_ + add.executions + add.redundant > options_.max_executions) {
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
    stats.failures += add.failures;
    for (std::size_t v = 0; v < stats.by_verdict.size(); ++v) stats.by_verdict[v] += add.by_verdict[v];
    for (const auto& [mark, count] : add.marks) stats.marks[mark] += count;
    ++out_.speculation.taken;
    out_.speculation.taken_executions += add.executions + add.redundant;
    if (s.remote) {
      ++out_.speculation.remote_taken;
      out_.speculation.remote_taken_executions += add.executions + add.redundant;
    }
    if (r.first_failure && !out_.first_failure) {
      out_.first_failure = *r.first_failure;
      out_.first_failure->execution += base;
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
  std::optional<SubtreeRun> result_of(const std::shared_ptr<Speculation>& s) {
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
  std::optional<SubtreeRun> remote_result_of(Speculation& s) {
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
  SubtreeRun read_remote(Speculation& s, const std::string& text) {
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
      dynamic_cast<SpeculativeStrategy&>(*s.explorer).take_subtree_outcome(j.at("outcome"));
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("a worker's result for task {} is malformed: {}", *s.remote, e.what()));
    }
    return run;
  }

  // Gives the pool's free slots the next pending branches, then the exchange's (other
  // processes). Finished speculations wait for the walk to reach them; at most
  // kSpeculationsPerJob per thread, and the exchange's capacity, are kept (memory).
  void launch() {
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
        const nlohmann::json task = {{"start", dynamic_cast<SpeculativeStrategy&>(*s->explorer).subtree_start()},
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
  bool may_publish() {
    const auto done = static_cast<double>(out_.stats.executions + out_.stats.redundant);
    const bool open = static_cast<double>(exchange_->redundant() + remote_dropped_) <= options_.max_redundant * done;
    if (!open && publishing_) ++out_.speculation.held_back;
    publishing_ = open;
    return open;
  }
  void drop(std::shared_ptr<Speculation> s) {
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
  void end_speculation() {
    if (pool_ == nullptr) return;
    for (auto* list : {&dropped_}) {
      for (auto& s : *list) end(*s);
    }
    for (auto& [key, s] : specs_) end(*s);
    specs_.clear();
    dropped_.clear();
  }
  void end(Speculation& s) {
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

  const System& system_;
  // The decisions of the execution just run: the scheduler's, or the portfolio's outcome's.
  const std::vector<Decision>& decisions() const { return portfolio_ ? decisions_ : scheduler_.decisions(); }

  Strategy& strategy_;
  const ExploreOptions& options_;
  RunLimits limits_;
  Scheduler scheduler_;
  // Independent executions on several threads (sim/explore/portfolio.h), and the decisions of the
  // outcome taken last.
  std::unique_ptr<Portfolio> portfolio_;
  std::vector<Decision> decisions_;
  SimEnv env_;
  LockOrderGraph lock_orders_;
  ExploreResult out_;
  // Checkpoints: what the runs before this one counted, whether the search was complete
  // there, whether this run's last execution was cut inside, and when the last was written.
  double base_elapsed_ = 0;
  std::uint64_t base_count_ = 0;
  bool complete_ = false;
  bool cut_inside_ = false;
  double last_checkpoint_ = 0;
  double last_progress_ = 0;
  // Speculation (ExploreOptions::jobs): the strategy's side, the speculations by branch,
  // those dropped but still running, and, on a subtree explorer, its new lock-order edges.
  SpeculativeStrategy* speculative_ = nullptr;
  std::shared_ptr<SpeculationPool> pool_;
  bool holds_slot_ = false;  // a subtree explorer's search: its thread is one of the pool's
  std::map<BranchKey, std::shared_ptr<Speculation>> specs_;
  std::vector<std::shared_ptr<Speculation>> dropped_;
  std::vector<BranchKey> changed_, taken_;
  std::vector<BranchKey> given_up_;  // dropped once: not offered again
  std::vector<EdgeRecord>* edge_log_ = nullptr;
  // Other processes (ExploreOptions::exchange; the serial walk's search only), and its
  // speculations published there that the walk has not reached.
  SubtreeExchange* exchange_ = nullptr;
  std::size_t remote_out_ = 0;
  std::uint64_t remote_dropped_ = 0;  // executions of workers' results the walk could not take
  bool publishing_ = true;            // may_publish() said yes last time
};

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

}  // namespace

SubtreeTaskRun explore_subtree_task(const System& system, Strategy& fresh, const std::string& task,
                                    const ExploreOptions& options) {
  auto* x = dynamic_cast<SpeculativeStrategy*>(&fresh);
  if (x == nullptr) throw std::invalid_argument("a subtree task needs a strategy that speculates (dpor)");
  std::vector<std::string> objects;
  try {
    const nlohmann::json j = nlohmann::json::parse(task);
    x->begin_subtree(j.at("start"));
    objects = j.at("objects").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("malformed subtree task: ") + e.what());
  }
  auto pool = std::make_shared<SpeculationPool>();
  pool->jobs = std::max(1, options.jobs);
  if (options.jobs > 1) pool->spawn = options.spawn;
  pool->outstanding.store(1);  // this search's own
  ExploreOptions o;
  o.limits = options.limits;
  o.limits.stop = nullptr;
  o.stop_at_first = options.stop_at_first;
  o.stop_requested = options.stop_requested;
  SubtreeRun run;
  {
    Search search(system, fresh, o, objects, &run.edges, pool);
    run.result = search.run();
    run.objects = search.object_keys();
  }
  SubtreeTaskRun out;
  out.explored = run.result.stats.executions + run.result.stats.redundant;
  out.interrupted = run.result.interrupted;
  out.result = subtree_result_json(run, x->subtree_outcome()).dump();
  return out;
}

ExploreResult explore_system(const System& system, Strategy& strategy, const ExploreOptions& options) {
  return Search(system, strategy, options).run();
}

}  // namespace lockstep::sim
