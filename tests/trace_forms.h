// tests/trace_forms.h: a strategy wrapper that names the Mazurkiewicz trace of each
// execution (its Foata normal form under sim::dependent plus program order), so a property
// can compare the traces a reduction explores with those of naive dfs: the same set, and
// one complete execution per trace.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockstep/sim/strategies/strategy.h"

namespace lockstep::testing {

// Wraps a strategy and computes the Foata normal form of each execution from the steps it
// is told about: a canonical form of its Mazurkiewicz trace under the dependence relation
// of footprints (sim::dependent, plus program order). Two forms: with the footprints the
// steps ran with, and with those optimal DPOR works with (sim::optimal_dpor_footprint, where
// a conditional update keeps its declared access), whose traces it runs one execution each.
class FoataRecorder final : public sim::Strategy, public sim::Restarting, public sim::StepObserver {
 public:
  explicit FoataRecorder(std::unique_ptr<sim::Strategy> inner) : inner_(std::move(inner)) {}
  std::string_view name() const override { return inner_->name(); }
  bool next_execution() override {
    finish();
    return inner_->next_execution();
  }
  std::size_t pick(std::span<const sim::Transition> enabled, std::uint64_t step) override {
    const std::size_t index = inner_->pick(enabled, step);
    if (steps_.empty()) first_choices_ = std::exchange(choices_, {});
    if (index < enabled.size()) {
      picked_op_ = *enabled[index].op;
      picked_waits_ = enabled[index].waits;
      if (rename_pools_ && picked_op_.verb == "checkout") own_pool_[enabled[index].actor] = picked_op_.footprint.object;
    }
    return index;
  }
  // A choice's value belongs to the step making it (before any step: to the execution).
  std::uint32_t choose(std::uint32_t n, std::string_view label, std::uint64_t step) override {
    return chosen(inner_->choose(n, label, step));
  }
  std::uint32_t choose_keeping_footprint(std::uint32_t n, std::string_view label, std::uint64_t step) override {
    return chosen(inner_->choose_keeping_footprint(n, label, step));
  }
  void choice_not_offered(std::string_view label, std::uint64_t step) override {
    inner_->choice_not_offered(label, step);
    chosen(0);
  }
  void var_step(const sim::VarStep& v) override { inner_->var_step(v); }
  void executed(const sim::Transition& t, const sim::Footprint& f) override {
    inner_->executed(t, f);
    // As dpor names a step's transition: a choice beyond its values takes the first, so a
    // step that made no choice and one whose choices took their first values are one.
    while (!choices_.empty() && choices_.back() == 0) choices_.pop_back();
    steps_.push_back({t.actor, t.timer, f, sim::optimal_dpor_footprint(picked_op_, picked_waits_, t.timer, f), std::move(choices_)});
    choices_.clear();
  }
  sim::StrategyStatus status() const override { return inner_->status(); }
  // The inner strategy's abilities, but a restart is seen here first.
  sim::StrategyAbilities abilities() override {
    const sim::StrategyAbilities inner = inner_->abilities();
    inner_restarts_ = inner.restarts;
    inner_observer_ = inner.observer;
    return {.observer = this, .checkpoints = inner.checkpoints, .restarts = inner.restarts ? this : nullptr};
  }
  // Seen on the way to the inner strategy's observer: the classes' objects, which a
  // search without symmetry never makes, are left out of the forms' object numbers.
  void parked(std::span<const sim::Transition> waiting) override {
    if (inner_observer_ != nullptr) inner_observer_->parked(waiting);
  }
  void symmetric(const sim::Symmetry& symmetry) override {
    symmetry_objects_.clear();
    for (ActorId a = 0; a < kMaxActors; ++a) {
      if (symmetry.in_class(a)) symmetry_objects_.insert(symmetry.object[a]);
    }
    if (inner_observer_ != nullptr) inner_observer_->symmetric(symmetry);
  }
  void clock_advanced() override {
    if (inner_observer_ != nullptr) inner_observer_->clock_advanced();
  }
  void round_robin_began() override {
    if (inner_observer_ != nullptr) inner_observer_->round_robin_began();
  }
  std::string restart_reason() const override { return inner_restarts_->restart_reason(); }
  bool take_restart() override {
    const bool restarted = inner_restarts_->take_restart();
    if (restarted) {
      forms_.clear();  // the search began anew: only what follows counts
      optimal_forms_.clear();
      up_to_forms_.clear();
      restarted_ = true;
    }
    return restarted;
  }
  bool restarted() const { return restarted_; }

  // Also names each trace up to a permutation of each class's actors: the least form over the
  // permutations (a symmetry reduction explores one trace of each such class). Footprints
  // are taken without a symmetry class's object (Footprint::symmetry_extra) in every form.
  void up_to_permutations_of(std::vector<std::vector<ActorId>> classes) { classes_ = std::move(classes); }
  // Also renames each actor's own pool with it: the object an actor's checkout names is its
  // own (a script with config.own_pools), learned as the executions run.
  void rename_own_pools() { rename_pools_ = true; }
  // Forms up to permutations from the footprints optimal DPOR works with
  // (sim::optimal_dpor_footprint): a deadlock check's reads of every lock held are left out
  // (what it reads beyond its footprint is not ordered: docs/notes.md).
  void classes_by_declared_footprints() { declared_classes_ = true; }

  // Forms of the executions that ended with a verdict (the caller says which did).
  void keep_last() { keep_ = true; }
  const std::vector<std::string>& forms() const { return forms_; }
  const std::vector<std::string>& optimal_forms() const { return optimal_forms_; }
  // With up_to_permutations_of: each kept execution's form up to the permutations.
  const std::vector<std::string>& forms_up_to_permutations() const { return up_to_forms_; }
  void flush() { finish(); }

 private:
  struct Step {
    ActorId actor;
    bool timer;
    sim::Footprint fp;
    sim::Footprint optimal_fp;
    std::vector<std::uint32_t> choices;  // the values the step's choices took
  };
  std::uint32_t chosen(std::uint32_t value) {
    choices_.push_back(value);
    return value;
  }
  std::vector<std::uint32_t> choices_;  // of the step running
  std::vector<std::uint32_t> first_choices_;  // made before the first step

  void finish();
  std::string form(bool optimal) const { return form(optimal, {}); }
  std::string form_up_to_permutations() const;
  // The form with actor a named rename[a] (empty: as they are).
  std::string form(bool optimal, const std::vector<ActorId>& rename) const;

  std::unique_ptr<sim::Strategy> inner_;
  sim::Restarting* inner_restarts_ = nullptr;
  std::vector<Step> steps_;
  std::vector<std::string> forms_, optimal_forms_, up_to_forms_;
  sim::OpDesc picked_op_;
  bool picked_waits_ = false;
  bool keep_ = false;
  bool restarted_ = false;
  std::vector<std::vector<ActorId>> classes_;
  bool rename_pools_ = false;
  bool declared_classes_ = false;
  sim::StepObserver* inner_observer_ = nullptr;
  std::set<sim::ObjectId> symmetry_objects_;
  std::map<ActorId, sim::ObjectId> own_pool_;
};

// Every renaming of actors 0..n-1 that permutes each class's members among themselves (the
// identity first).
std::vector<std::vector<ActorId>> permutations_of(const std::vector<std::vector<ActorId>>& classes, int n);

}  // namespace lockstep::testing
