// sim/explore/subtree_exchange.h: one dpor search split among processes (check --queue): the
// interface its serial walk uses to give pending subtrees to other processes, the one a
// worker uses to take them, and the worker's exploration of one. real/pg_work_queue.h
// implements both on PostgreSQL; sim/ knows no engine.
//
// The coordinator (the process whose search is the serial walk, as with --jobs) publishes
// subtrees it offers (sim/explore/speculation.h) as tasks. Workers (processes running the same
// scenario with the same settings) take tasks, explore each subtree from its start exactly
// as a thread of the coordinator would, and write the result: counts, first failure, new
// lock-order edges and what the subtree adds above itself. When the walk reaches a
// published branch whose start is unchanged, it takes the task back if no worker began it
// (and explores it itself), else waits for its result and takes it as a thread's. So the
// count, the verdict, the first failure and the trace are the one process's, for any number
// of workers; a task whose start changed is withdrawn, and what a worker explored for it is
// the redundant work (counted by the workers, see ExploreResult::Speculation). The walk
// publishes only while the redundant work known so far is at most
// ExploreOptions::max_redundant of its executions, so that it stays near that bound.
//
// Guarantee: tasks and results are plain text (JSON); a worker never changes the
// coordinator's state except through a result the walk chooses to take.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "lockstep/model/system.h"
#include "lockstep/sim/explore/explorer.h"
#include "lockstep/sim/strategies/strategy.h"

namespace lockstep::sim {

// The coordinator's side. Called from the serial walk's thread only.
class SubtreeExchange {
 public:
  virtual ~SubtreeExchange() = default;
  // How many tasks may be published and not yet reached by the walk.
  virtual int capacity() const = 0;
  // Queues a task; returns its id.
  virtual std::uint64_t publish(const std::string& task) = 0;
  // True when no worker had begun the task: it is withdrawn and the caller explores it.
  virtual bool take_back(std::uint64_t id) = 0;
  // The task's result once a worker finished it; may wait a little (tens of milliseconds)
  // before answering nullopt.
  virtual std::optional<std::string> result(std::uint64_t id) = 0;
  // The task is not wanted any more (its start changed, or the search ended).
  virtual void withdraw(std::uint64_t id) = 0;
  // The executions workers explored for tasks withdrawn after they began them (redundant
  // work), as far as known now: may lag by tens of milliseconds.
  virtual std::uint64_t redundant() = 0;
};

// A worker's side: the tasks of one run.
class SubtreeSource {
 public:
  virtual ~SubtreeSource() = default;
  struct Task {
    std::uint64_t id = 0;
    std::string text;
  };
  // Waits until a task is taken (returned), the run is over or stop() (nullopt).
  virtual std::optional<Task> next(const std::function<bool()>& stop) = 0;
  // Whether the coordinator withdrew task `id` (asked often: may answer from a cache).
  virtual bool withdrawn(std::uint64_t id) = 0;
  // `explored`: the task's complete and redundant executions (SubtreeTaskRun::explored).
  virtual void finish(std::uint64_t id, const std::string& result, std::uint64_t explored) = 0;
};

// What a worker explored for one task: the subtree's complete and redundant executions.
struct SubtreeTaskRun {
  std::string result;  // for SubtreeExchange::result
  std::uint64_t explored = 0;
  bool interrupted = false;
};

// Explores the subtree of `task` (SubtreeExchange::publish's text) with `fresh`, a new
// strategy of the same search (same name and settings), under `options` (the bounds per
// execution, stop_at_first; stop_requested ends it early). Throws std::invalid_argument for a
// malformed task or one of another strategy.
SubtreeTaskRun explore_subtree_task(const System& system, Strategy& fresh, const std::string& task,
                                    const ExploreOptions& options);

}  // namespace lockstep::sim
