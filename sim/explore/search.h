// sim/explore/search.h: one search's parts (internal to sim/explore/): the serial walk
// (explorer.cc), checkpoint and resume (search_checkpoint.cc), the speculation pool on
// threads and the remote exchange (search_speculation.cc).
//
// Guarantees: a search on several threads or processes counts, judges and fails exactly as
// the serial walk alone does: a speculation's subtree is taken only when its start is the
// one the walk reaches, and its counts are added in the walk's order (Search::commit).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "lockstep/sim/explain/lock_order.h"
#include "lockstep/sim/explore/explorer.h"
#include "lockstep/sim/explore/portfolio.h"
#include "lockstep/sim/explore/speculation.h"
#include "lockstep/sim/explore/subtree_exchange.h"
#include "lockstep/sim/sched/sim_env.h"

namespace lockstep::sim::detail {

// The search size from which untimed mode's cost is worth a note (note_untimed_cost).
inline constexpr std::uint64_t kUntimedNoteExecutions = 1000;
// ExploreOptions::jobs: the speculations one search keeps per thread, begun or finished.
inline constexpr std::size_t kSpeculationsPerJob = 64;

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

// A subtree explorer's search as text, for the exchange (read back by Search::read_remote).
nlohmann::json subtree_result_json(const SubtreeRun& run, nlohmann::json outcome);

// One search: the loop's state and its steps.
class Search {
 public:
  Search(const System& system, Strategy& strategy, const ExploreOptions& options);
  // A subtree explorer's search (ExploreOptions::jobs): the serial walk's object ids, its
  // new lock-order edges recorded; it gives out its own pending branches too.
  Search(const System& system, Strategy& strategy, const ExploreOptions& options, const std::vector<std::string>& objects,
         std::vector<EdgeRecord>* edges, std::shared_ptr<SpeculationPool> pool);
  ~Search() { end_speculation(); }
  Search(const Search&) = delete;
  Search& operator=(const Search&) = delete;

  std::vector<std::string> object_keys() const { return scheduler_.object_keys(); }

  ExploreResult run();

 private:
  double elapsed() const { return options_.elapsed_seconds ? options_.elapsed_seconds() : 0.0; }

  void maybe_report_progress();
  void report_progress();

  // After next_execution(): when the search began anew, what it counted so far is not its count.
  void note_restart();
  // This run's and those before it (a resumed search).
  double total_elapsed() const { return base_elapsed_ + elapsed(); }

  // A checkpoint's search state (ExploreOptions::resume).
  void restore(const nlohmann::json& s);
  void restore_state(const nlohmann::json& s);

  nlohmann::json state(bool complete) const;

  // Every checkpoint_interval_s seconds, at the start of an execution.
  void periodic_checkpoint();

  // The last checkpoint: the search complete, or where the next execution begins. Not for a
  // search that stopped at its first failure (it decided), nor one cut by a stop nobody
  // asked for.
  void final_checkpoint();
  bool out_of_time() const { return options_.time_limit_s > 0 && elapsed() >= options_.time_limit_s; }
  bool stop_asked() const { return options_.stop_requested && options_.stop_requested(); }

  // Whether the search ends before another execution (a bound, an interrupt, or the
  // strategy has none left), with out_.stop_reason saying why.
  bool stopped_before_next();

  // Runs one execution, counts it and reports progress; false when the search must end at
  // once (an execution cut inside by a stop nobody asked for, or the first failure found).
  bool run_one();

  // A complete execution: counted by verdict, and remembered when it (or a lock-order
  // cycle it closes) fails; false when the search stops at the first failure.
  bool judge(const ExecutionResult& result);

  std::optional<FoundFailure> failure_of(const ExecutionResult& result);

  // The search's verdict: its first failure's, else pass when it was exhaustive.
  void conclude();

  // Untimed mode lets every timer fire at any moment: code that sleeps or retries pays for
  // it in executions, which a user should hear about once the search is large.
  void note_untimed_cost();

  // Speculation (ExploreOptions::jobs, sim/explore/speculation.h), before each execution: stale
  // speculations are dropped; the branch that begins is taken from its speculation when its
  // start is unchanged (yes), which may end the search at a failure (stop); idle threads
  // are given the next pending branches.
  enum class Taken { no, yes, stop };
  Taken speculate();

  // The subtree's counts and failure as if explored here, in order; no when it cannot be
  // (it stopped early, a bound would cut it, a lock-order cycle across it and the walk).
  Taken commit(Speculation& s, SubtreeRun& run);

  // The result of a speculation this search takes: explored here when no thread began it
  // yet (stopping as this search stops), else its thread's, waited for (a subtree explorer
  // lends its slot meanwhile). Waiting, the search still stops at its bounds and at Ctrl-C
  // (nullopt: the speculation is dropped, the branch is cut as an execution would be) and
  // reports progress.
  std::optional<SubtreeRun> result_of(const std::shared_ptr<Speculation>& s);

  // A published speculation (ExploreOptions::exchange) the walk reached: taken back and
  // explored here when no worker began it, else the worker's result, waited for as a
  // thread's is (nullopt when the search stops meanwhile).
  std::optional<SubtreeRun> remote_result_of(Speculation& s);
  // A worker's result (subtree_result_json) as a thread's would be; a malformed one (another
  // lockstep, a damaged queue) ends the search with an error, never a verdict.
  SubtreeRun read_remote(Speculation& s, const std::string& text);

  // Gives the pool's free slots the next pending branches, then the exchange's (other
  // processes). Finished speculations wait for the walk to reach them; at most
  // kSpeculationsPerJob per thread, and the exchange's capacity, are kept (memory).
  void launch();
  // check --queue: whether the walk may publish more. Not while the redundant work known
  // (workers' withdrawn tasks, and their results the walk could not take) is over
  // ExploreOptions::max_redundant of the executions so far: giving less away keeps it near.
  bool may_publish();
  void drop(std::shared_ptr<Speculation> s);
  // Cancels every speculation: one not begun never will be; one begun is waited for.
  void end_speculation();
  void end(Speculation& s);

  const System& system_;
  // The decisions of the execution just run: the scheduler's, or the portfolio's outcome's.
  const std::vector<Decision>& decisions() const { return portfolio_ ? decisions_ : scheduler_.decisions(); }

  Strategy& strategy_;
  const StrategyAbilities abilities_;  // asked for once
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

}  // namespace lockstep::sim::detail
