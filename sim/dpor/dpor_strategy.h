// sim/dpor/dpor_strategy.h: the DPOR strategies ("dpor", "source-dpor"). Source-DPOR with sleep sets (Abdulla, Aronis, Jonsson, Sagonas: "Optimal Dynamic Partial
// Order Reduction", POPL 2014, Algorithm 1), over the scheduler's effective footprints.
//
// Exploration is stateless: every execution re-runs from the start, following the stack of
// nodes (one per decision) down to where it last branched. A scheduling node holds the
// actors enabled there, its backtrack (source) set, the actors already explored, and the
// sleep set it was entered with. Choice points, and the two ways one actor can move (run
// its operation, or fire its timer), are local branching: every value is explored (in
// source-DPOR; optimal mode below makes each transition a branch of its own).
//
// After each execution, every race between a new event e' and an earlier event e of
// another actor (dependent, and e not already happening-before e' through e's other
// dependencies or the program order of e''s actor) adds, at the node before e, an initial
// of notdep(e).e' unless one is there already. When no initial is enabled at that node (it
// was blocked there), every enabled actor is added instead, as classic DPOR does: an
// over-approximation that keeps the search sound.
//
// A footprint's domain (sim/sched/op.h) is a second, coarser object: races through it are found
// from its own history, with a domain write as a write and every other step in it as a
// read. Ordered observations are one more domain, their scopes its objects. A machine crash
// writes everything: it races with the latest step of every other actor.
//
// Sleep sets hold each explored actor with the effective footprints its step had, so an
// actor wakes exactly when a dependent step runs. With them no two complete executions are
// equivalent; an execution whose every enabled actor sleeps is redundant and is pruned
// (counted as sleep-set blocked).
//
// Optimal mode (strategy "dpor"; JACM 2017, Algorithm 2): each node also holds a wakeup
// tree (sim/wakeup_tree.h), and a race inserts the whole sequence notdep(e).e' there unless
// a sleeping transition is a weak initial of it; exploration follows the tree's branches, so
// no execution is sleep-set blocked. notdep(e) is every later event of the execution that
// does not happen after e (also those after e'), so every race of every execution is
// inserted again (one already covered changes nothing). A plain lock's waiting acquisition
// races with the lock's previous acquisition, not with the release between (Nidhugg's lock
// races); a waiting acquisition of a reader/writer lock, shared or exclusive, never races
// with the release of a holder that excluded it, but with that holder's acquisition, and a
// reader's wait races where it began, with the step that made it wait (readers wait while a
// writer holds the lock or waits for it; a writer's first step that only announced it is no
// acquisition). Each branch is one transition: a waiter's timer and its run are two, and the one
// not taken at a node is a branch of its own there (after notdep, as a race's reversal),
// as Nidhugg treats a nondeterministic choice. A plain lock's try is a read when it fails,
// and a reversed race knows which it will be (the lock is held or not where it runs). A wait
// for a grant (a pg lock request queued behind others: OpDesc::handed_over) races through
// its request, a step of its own, and never with the step that granted it or a step before
// that one. Timed, its deadlock check reads every object of the server (timer_footprint: one
// footprint wherever it fires, and it fires once nothing else can run). Every other
// operation that may narrow its access (a pg try, a conditional update) keeps its declared
// access, and the object it writes in some outcomes only (OpDesc::may_write: an UPDATE's
// heap) in all (optimal_dpor_footprint): a wakeup tree needs the footprint a step will have
// where a race moves it, and a superset is not enough unless the step has it in every
// outcome (a leaf ending in it covers sequences its branch never reaches). Optimal mode covers programs whose actors wait only for plain
// locks (exclusive or shared), grants and sleeps, whose timers are timeouts of those or a
// timed deadlock check, whose
// choices inside a step keep its footprint (a stall, a duration, Env::choose: each value of
// a choice is a transition of its own, the step's ChoicePath; reverse_choices). A CAS that
// fails is a read; moved by a race, what it does there is worked out from the values the
// steps on its variable found and left (cas_access_reversed). At the first sign of anything
// else (or should a step run with another footprint than its wakeup-tree branch said) the
// search begins again as above (strategy "source-dpor"), and take_restart() tells the
// explorer.
//
// Timed mode, both strategies: the clock moves on only when nothing can run, so every step
// after that happens after every step before it (StepObserver::clock_advanced): no race
// crosses it. A plain lock's waiter that then times out races through the acquisition it
// never made, with the lock's last acquisition (else nothing would give it the lock).
//
// Memory: the node stack and the event list of one execution: O(depth * actors); in optimal
// mode also the wakeup trees along the path.
#pragma once

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <unordered_map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/sim/dpor/execution.h"
#include "lockstep/sim/dpor/node.h"
#include "lockstep/sim/dpor/wakeup_tree.h"
#include "lockstep/sim/explore/speculation.h"
#include "lockstep/sim/strategies/strategy.h"
#include "lockstep/sim/strategies/strategy_makers.h"

namespace lockstep::sim::dpor {

class DporStrategy final : public Strategy,
                           public StepObserver,
                           public Checkpointing,
                           public Restarting,
                           public SpeculativeStrategy {
 public:
  // bounded: a preemption bound filters the transitions this strategy is offered. Then,
  // as in Coons, Musuvathi and McKinley's bounded partial-order reduction (OOPSLA 2013),
  // every backtrack point is also added where the racing step's actor began its run of
  // steps: reversing there needs no preemption, so the bound does not hide it.
  //
  // optimal: wakeup trees instead of source sets (the JACM 2017 paper's Algorithm 2): a
  // reversed race is followed along its whole sequence, so no execution ends with every
  // enabled actor asleep. With a preemption bound the search is source-DPOR (the bound
  // cuts sequences that the trees would need).
  explicit DporStrategy(DporSettings settings)
      : settings_(settings),
        name_(settings.mode == DporMode::optimal ? "dpor" : "source-dpor"),
        bounded_(settings.preemption_bounded),
        optimal_(settings.mode == DporMode::optimal && !settings.preemption_bounded) {}

  StrategyAbilities abilities() override {
    return {.observer = this, .checkpoints = this, .restarts = this, .speculation = this};
  }

  std::string_view name() const override { return name_; }

  bool next_execution() override;

  bool take_restart() override { return std::exchange(restarted_, false); }
  std::string restart_reason() const override { return fallback_why_; }

  void symmetric(const Symmetry& symmetry) override {
    symmetric_ = symmetry.any();
    previous_ = symmetry.previous;
  }

  void clock_advanced() override { race_.barriers.push_back(static_cast<std::uint32_t>(race_.events.size())); }
  // Fair mode's tail: its nodes offer one actor by design (StepObserver::round_robin_began).
  void round_robin_began() override { round_robin_from_ = depth_; }

  // The footprint the picked transition declared (t.op in executed() is already the
  // actor's next operation). The step begins: its choices are made until executed().
  std::size_t remember_declared(std::span<const Transition> enabled, std::size_t index) {
    declared_ = enabled[index].timer ? timer_footprint(*enabled[index].op) : enabled[index].op->footprint;
    declared_op_ = *enabled[index].op;
    declared_waits_ = enabled[index].waits && !enabled[index].timer;
    in_step_ = true;
    step_choices_.clear();
    return index;
  }

  void parked(std::span<const Transition> waiting) override;

  std::size_t pick(std::span<const Transition> enabled, std::uint64_t step) override;

  std::uint32_t choose(std::uint32_t n, std::string_view label, std::uint64_t step) override {
    return choose(n, label, step, false);
  }
  std::uint32_t choose_keeping_footprint(std::uint32_t n, std::string_view label, std::uint64_t step) override {
    return choose(n, label, step, true);
  }
  std::uint32_t choose(std::uint32_t n, std::string_view label, std::uint64_t step, bool keeps_footprint);
  void choice_not_offered(std::string_view label, std::uint64_t step) override {
    if (optimal_ && in_step_) (void)choose(1, label, step, true);
  }

  void var_step(const VarStep& v) override { step_var_ = v; }
  void executed(const Transition& t, const Footprint& ran) override;
  // Optimal mode: the choices the step at `node` made, checked against its path and kept
  // for reverse_choices.
  void note_choices(const Node& node);

  StrategyStatus status() const override { return {.exhausted = exhausted_, .explored_fraction = explored_fraction()}; }
  double explored_fraction() const;

  // Checkpoints (sim/dpor/dpor_checkpoint.cc): the path where the current execution began.
  void keep_resume_point() override;
  nlohmann::json checkpoint() const override;
  void resume(const nlohmann::json& state) override;

  // Speculation (sim/explore/speculation.h, sim/dpor/speculation.cc): optimal mode only. A subtree
  // explorer is a copy of the path down to the branch's node (its `sub_.floor`), which backtracks
  // no higher and records, instead of inserting, what its races add at or above that node.
  bool can_speculate() const override { return optimal_ && !fallback_; }
  std::optional<SubtreeOffer> offer(const std::vector<BranchKey>& taken) override;
  std::optional<BranchKey> starting() const override;
  std::string start_fingerprint() const override;
  void take_changed(std::vector<BranchKey>& out) override;
  void skip_branch(Strategy& explorer, const std::vector<ObjectId>& objects) override;
  bool subtree_done() const override { return exhausted_ && !sub_.aborted; }
  // For another process (sim/explore/subtree_exchange.h; sim/dpor/dpor_checkpoint.cc).
  nlohmann::json subtree_start() const override;
  void begin_subtree(const nlohmann::json& start) override;
  nlohmann::json subtree_outcome() const override;
  void take_subtree_outcome(const nlohmann::json& outcome) override;

 private:
  static constexpr std::size_t kNoFloor = std::numeric_limits<std::size_t>::max();
  // A sequence a subtree explorer's race inserts at node `node` (at or above its floor).
  struct LoggedInsert {
    std::uint32_t node;
    std::vector<WakeStep> steps;
  };
  // Inserts v into node's wakeup tree, or, on a subtree explorer at or above its floor,
  // records it (once: the same sequence again changes nothing). Under symmetry, a v that
  // starts a member of a class before the member before it is dropped: every execution
  // through it is a permutation of one with them in order (sim/explore/symmetry.h).
  void insert_into(Node& node, StepSequence v);
  // Symmetry: whether the path down to node `at`, then v, starts the members of each class
  // in order.
  bool starts_in_order(std::size_t at, StepSequence v) const;
  // The class members that started (Node::starts) on the path before node `at`.
  Mask started_before(std::size_t at) const;
  bool symmetric_ = false;
  std::array<std::int8_t, kMaxActors> previous_{};
  // The sleep entries the branch (actor, timer) of node n will begin with as explored there:
  // the explored ones, the current one, and each branch before it in the wakeup tree; false
  // when not all are known yet.
  bool explored_before(const Node& n, ActorId actor, bool timer, std::vector<SleepEntry>& out) const;  // (empty path)
  // Speculation's part (sim/dpor/speculation.cc): a subtree explorer's floor and record,
  // and the walk's branches whose subtrees changed.
  struct Subtree {
    std::size_t floor = kNoFloor;
    bool aborted = false;   // a subtree explorer left optimal mode: it stops
    bool skipped = false;   // the branch that began was explored elsewhere: nothing to analyse
    bool tracking = false;  // take_changed was called: changed is kept
    std::uint64_t next_uid = 0;
    std::vector<LoggedInsert> log;
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> logged;  // log entries by hash
    std::vector<BranchKey> changed;
  };
  Subtree sub_;

  // For explored_fraction: the branches scheduling nodes ended with, summed per depth.
  void note_finished(std::size_t branches) {
    const std::size_t depth = stack_.size() - 1;
    if (finished_.size() <= depth) finished_.resize(depth + 1);
    finished_[depth].branches += static_cast<double>(branches);
    ++finished_[depth].nodes;
  }
  struct Finished {
    double branches = 0;
    std::uint64_t nodes = 0;
  };
  std::vector<Finished> finished_;

  // The search's state as checkpoint() and subtree_start() write it: the path's first `size`
  // nodes, then what the next execution inherits.
  nlohmann::json state_json(std::size_t size, const WakeupTree& inherited, std::size_t diverge, bool optimal,
                            bool fallback) const;
  // Where the current execution began, for checkpoint(): the nodes below resume_.size are
  // only followed by it (their effects get the same footprints again), so the path is the
  // stack's first resume_.size nodes.
  void note_resume_point() {
    resume_.size = stack_.size();
    resume_.inherited = inherited_;
    resume_.diverge = diverge_;
    resume_.optimal = optimal_;
    resume_.fallback = fallback_;
  }

  static std::size_t index_of(std::span<const Transition> enabled, ActorId actor, bool timer);

  // The sleep set of a new node: the parent's sleepers and explored siblings that are
  // independent of the step just taken from the parent.
  void child_sleep_set(std::vector<SleepEntry>& out) const;

  // Optimal DPOR: whether n's wakeup tree has a branch that can be taken; its leftmost one
  // is then first. A branch whose transition sleeps here is covered by the sleep set and
  // dropped; one whose transition cannot be taken here (the race's reversal is not enabled:
  // a wait) is replaced by every awake actor, as source-DPOR does.
  bool next_from_wakeup(Node& n);

  // Adds every awake transition not explored here yet (each enabled: a parked waiter's
  // timer, not its run, which next_from_wakeup would drop and add again, for ever).
  static void add_every_awake(Node& n);

  // Moves to the next unexplored branch; false when none is left.
  bool backtrack();

  // Finds the races of the execution just finished and extends backtrack sets.
  void analyze_races();
  // Its phases: the scratch reset, one pass over the events, then the reversals that need
  // the whole execution's clocks (optimal mode), in this order.
  std::size_t begin_analysis();
  void check_parked_at(std::size_t state, std::size_t n);
  void analyze_event(std::size_t j, std::size_t n);
  // What a lock tells of event e in the pass (optimal mode).
  struct LockStep {
    bool acquisition = false;   // a waiting plain lock acquisition, not narrowed
    bool shared_wait = false;   // a waiting shared acquisition
    int race = -1;              // the lock's previous acquisition it races with
    int enabling_release = -1;  // the release it waited for
    int granted_by = -1;        // a grant wait: the step that granted it
  };
  std::uint32_t* begin_clock(std::size_t j, std::size_t n);
  void note_lock_order(const Event& e, std::size_t j, const std::uint32_t* vc, std::size_t n, LockStep& lock);
  void note_timeout(const Event& e, std::size_t j, std::size_t n);
  void collect_direct_races(const Event& e, const std::uint32_t* vc, std::size_t n, const LockStep& lock);
  void queue_reversals(const Event& e, std::size_t j, const std::uint32_t* vc, std::size_t n, int lock_race);
  void reverse_deferred(std::size_t n);
  void reverse_shared_waits(std::size_t n);
  void reverse_alternatives(std::size_t n);
  // Optimal mode: each other value of each choice a step made is a transition of its own at
  // the step's node, after notdep of the step, as the other transition of a waiter is, with
  // the step's footprint when its choices keep it (checked when it runs); beyond optimal
  // mode otherwise (a fault, a crash: what the step does is not known).
  void reverse_choices(std::size_t n);
  void reverse_timed_out(std::size_t n);

  // An actor parked on a pending operation races with the latest dependent steps it does
  // not know of: had it run before them, it would not have been blocked.
  void check_parked(const Parked& pk, std::size_t n, bool defer);

  // Adds the steps in h a pending operation would depend on, were it to run now; 1 when
  // there were any.
  std::size_t pending_candidates(const ObjectHistory& h, bool read) {
    const std::size_t before = race_.candidates.size();
    if (!read) race_.candidates.insert(race_.candidates.end(), h.reads_since.begin(), h.reads_since.end());
    if (h.last_write >= 0) race_.candidates.push_back(h.last_write);
    return race_.candidates.size() > before ? 1 : 0;
  }

  // Records step j's accesses (its object, its domain, its observations) in their histories,
  // adding its dependent predecessors to race_.candidates: the same relation as sim::dependent.
  // Observations are a domain of their own: a global one writes it, a scoped one reads it
  // and writes its scope.
  void record_access(const Footprint& fp, int j);

  ObjectHistory& scope_history(ScopeId scope) {
    for (auto& [id, h] : race_.scopes) {
      if (id == scope) return h;
    }
    return race_.scopes.emplace_back(scope, ObjectHistory()).second;
  }

  // Only when several histories added candidates: sorting reorders the races.
  void dedupe_candidates() {
    std::sort(race_.candidates.begin(), race_.candidates.end());
    race_.candidates.erase(std::unique(race_.candidates.begin(), race_.candidates.end()), race_.candidates.end());
  }

  // Whether actor q was parked in the state before event `state`, on `object` if given.
  bool parked_at(std::uint32_t state, ActorId q, std::optional<ObjectId> object) const;

  // Records what event j's actor holds of j's lock (plain, exclusive or shared) once j ran,
  // and, for a release, what it held right before it.
  void note_holding(const Event& e, std::size_t j, std::size_t n);

  // Whether release i was by an actor that held its lock in a way that excluded waiting
  // acquisition e: exclusively, or (for an exclusive e) at all.
  bool excluded_by_holder(int i, const Event& e) const;

  // Whether event i is a waiting exclusive acquisition of a reader/writer lock (object):
  // its writer announced itself before it (sim/sched/sim_objects.cc, RWMutex::lock: it waits only
  // once announced) and still waited right before it.
  bool writer_waited_before(int i, ObjectId object) const {
    const Event& w = race_.events[i];
    return w.waits && plain_lock_acquisition(w.fp) && w.fp.object == object;
  }

  // Whether event j only announced its actor as a writer of a reader/writer lock: a plain
  // acquisition that neither waits nor may fail, after which its actor waits for the lock
  // (sim/sched/sim_objects.cc, RWMutex::lock). It takes nothing: no lock race's partner.
  bool announces(std::size_t j) const;

  // Whether event i is the release that ended actor q's wait on its object.
  bool enabling_release_of_wait(int i, ActorId q) const {
    return race_.events[i].fp.access == Access::release && enabled_by(i, q);
  }

  // Whether event e's operation was a plain lock's acquisition (its footprint as declared).
  static bool waited_for_plain_lock(const Event& e) {
    Footprint declared = e.fp;
    declared.access = e.declared_access;
    return plain_lock_acquisition(declared);
  }

  // Whether event i, a release, is what let parked actor q run: q waited on i's object
  // before i and no longer waits after it.
  bool enabled_by(int i, ActorId q) const;

  std::uint32_t own_seq(int event, std::size_t n) const {
    return race_.vc[static_cast<std::size_t>(event) * n + race_.events[event].actor];
  }

  static void join(std::uint32_t* into, const std::uint32_t* from, std::size_t n) {
    for (std::size_t a = 0; a < n; ++a) into[a] = std::max(into[a], from[a]);
  }

  // Records event j's access to one object: its dependent predecessors become candidates.
  void touch(ObjectHistory& h, int j, bool read);

  static WakeStep wake_step(const Event& e) {
    // Every step of notdep(e) has, in the reversed order, the footprint it had: the events
    // it depends on stay before it. Only the race's later step, moved before e, may not.
    return WakeStep{e.actor, e.timer, e.fp, true};
  }

  // The access plain try j (a try of a plain lock, race partner of event i) has when the
  // race is reversed: it runs after the events before i and notdep(i) before j, none that
  // happens after i, so the lock is as the last of those left it (none writes it after j:
  // it would depend on j, so happen after i). Held: the try fails, a read; free: it takes
  // the lock. After a write that is neither an acquisition nor a release (a crash's) the
  // outcome is not known: nullopt.
  std::optional<Access> try_access_reversed(int i, int j, std::size_t n);
  // The same for CAS j: it runs where the variable holds what the last of those events
  // that wrote it left there (or, none, what the execution's first step on it found), and
  // succeeds (its declared access) when that is the value it expects, else reads. A writer
  // whose values are not known (a crash) leaves it unknown: nullopt.
  std::optional<Access> cas_access_reversed(int i, int j, std::size_t n) const;
  const VarStep* var_step_of(int event) const;

  // Optimal DPOR: adds v to node's wakeup tree unless a transition that sleeps there (or
  // was explored there) is a weak initial of v: then v's trace is explored elsewhere.
  // reverse_race's summary of v decides most of them at once: a sleeping actor other than
  // q (v's last step) with a step in v, the same step (one footprint), is a weak initial
  // exactly when that step is one of v's initials: it happens after no earlier step of v.
  // Its clock's chains back into v run through v alone (a step before it that happens after
  // the race's first step would put it after that step too), so by the clocks, which follow
  // the dependence relation, that is having no dependent step before it in v. Not so for q:
  // a lock race's acquisition knows the release after the first step (Nidhugg's lock races).
  void insert_unless_asleep(Node& node, StepSequence v, Mask seen, Mask initials);

  // Optimal mode, before v = notdep(i).q is built (notdep(i): the events in (i, notdep_end)
  // but `end` that do not happen after i): whether a transition asleep (or explored) at node
  // is a weak initial of v, which insert_unless_asleep would find, worked out from the run's
  // accesses per object instead of from v. Decided here only:
  // - a sleeper with no step in v, a footprint on one object (no domain, effects or extra
  //   objects) that no step of v touches in conflict, independent of q's step;
  // - q itself asleep, with no step in v but its last one, q_step, on one object, which no
  //   step of v touches in conflict (nor the sleeper's footprint, when it is another).
  // In a run with a machine crash (dependent with everything) nothing is decided here, nor
  // where v's first step cannot run at the node. False means only "not decided":
  // insert_unless_asleep then decides with v. Most races of a replayed prefix end here
  // (lastzero: three in four), without v.
  bool asleep_before_v(const Node& node, int i, int end, int notdep_end, const WakeStep& q_step, std::size_t n) const;

  // Adds q (or, when q cannot run there, every enabled actor) to node's backtrack set.
  static void add_backtrack(Node& node, Mask initials, ActorId q);

  // Race between event i and the step of actor q after the events before `end` (event
  // `end` itself, or a parked actor's pending operation), whose vector clock is q_vc: make
  // sure the node before i explores an initial of notdep(i).q, where notdep(i) is the events
  // before notdep_end (end unless given) but `end` that do not happen after i. From index
  // q_later on, q's steps are ones it took after that operation: none may be in notdep(i).
  void reverse_race(int i, int end, const WakeStep& q_step, const std::uint32_t* q_vc, std::size_t n, int notdep_end = -1,
                    int q_later = std::numeric_limits<int>::max());

  // Something beyond optimal mode (see the top of this file) ends it: the search begins
  // again as source-DPOR (take_restart).
  // `why` is said once, in the search's notes (Restarting::restart_reason).
  void unsupported(const char* why) {
    if (optimal_ && !fallback_) fallback_why_ = why;
    fallback_ = fallback_ || optimal_;
  }

  DporSettings settings_;  // as made: a subtree explorer is made with the same
  std::string name_;
  bool bounded_;
  bool optimal_;
  bool fallback_ = false;
  const char* fallback_why_ = "";
  Footprint declared_;
  OpDesc declared_op_;  // the picked transition's operation (Transition::op moves on as it runs)
  bool declared_waits_ = false;
  // Optimal mode: a step is running (pick to executed): its choices are its transition's
  // path (Node::current_path), each as made.
  bool in_step_ = false;
  struct Choice {
    std::uint32_t value, options;
    bool keeps_footprint;  // Strategy::choose_keeping_footprint
  };
  std::vector<Choice> step_choices_;
  std::optional<VarStep> step_var_;  // the running step's values, when it is on a shared variable
  bool restarted_ = false;
  NodeStack stack_;
  WakeupTree inherited_;  // optimal: the wakeup tree of the next new scheduling node
  std::size_t depth_ = 0;
  std::size_t round_robin_from_ = SIZE_MAX;  // the first node of fair mode's round-robin tail, this execution
  std::size_t diverge_ = 0;
  int last_sched_ = -1;
  Footprint last_effect_;
  bool started_ = false;
  bool exhausted_ = false;
  // Checkpoints' part (sim/dpor/dpor_checkpoint.cc): where the current execution began.
  struct ResumePoint {
    bool kept = false;  // keep_resume_point was called
    std::size_t size = 0;
    WakeupTree inherited;
    std::size_t diverge = 0;
    bool optimal = false;
    bool fallback = false;
  };
  ResumePoint resume_;

  // Race analysis's part (sim/dpor/races.cc, sim/dpor/reversal.cc): the execution's events,
  // and scratch kept to reuse its memory.
  struct RaceAnalysis {
    std::vector<Event> events;
    std::vector<Parked> parked;
    std::vector<std::uint32_t> barriers;  // timed mode: the events before which virtual time moved on
    // Scratch for analyze_races, kept to reuse their memory.
    std::vector<std::uint32_t> vc, seq, first_in_v, zero_vc, pending_vc, all_vc, barrier_vc;
    std::vector<int> last_of_actor, candidates, races;
    std::vector<int> last_parked;  // per actor: the last state it was parked in, so far in the pass
    std::vector<WakeStep> steps;             // optimal mode: each event as a wakeup step
    std::vector<const WakeStep*> sequence;   // scratch of reverse_race
    std::vector<const WakeStep*> first_step;  // scratch of reverse_race: each actor's first step in v
    std::vector<int> last_acquire;  // per object: its latest plain lock acquisition in the run analysed
    std::vector<int> first_release;  // per object: its first release after that acquisition (-1: none yet)
    std::vector<std::pair<int, int>> deferred;  // optimal mode: races (i, j) to reverse after the pass
    std::vector<std::pair<int, int>> alternatives;  // optimal mode: (event, its actor's event before)
    // Optimal mode: the steps that made choices, in order, each its choices at
    // choices_made[first..first + count); in the pass, (event, its actor's event before).
    struct ChoiceStep {
      std::uint32_t event, first, count;
    };
    std::vector<ChoiceStep> choice_steps;
    std::vector<Choice> choices_made;
    std::vector<std::pair<int, int>> choice_alternatives;
    std::size_t next_choice_step = 0;  // the pass: the first choice_steps entry not reached yet
    // The steps on shared variables, in order: each its event and values (a moved CAS is
    // worked out from them: cas_access_reversed).
    struct VarEvent {
      std::uint32_t event;
      VarStep values;
    };
    std::vector<VarEvent> var_events;
    struct TimedOut {
      int acquisition;  // the lock's last acquisition before the timeout
      int timeout;      // the waiter's timer event
      int before;       // the waiter's event before it (-1: none)
    };
    std::vector<TimedOut> timed_out;  // optimal mode: plain-lock waiters that timed out
    struct SharedWait {
      int race;               // the step that made it wait: the race's first step
      ActorId actor;          // the waiter
      Footprint fp;           // its pending shared acquisition
      std::uint32_t state;    // where its wait began
      std::size_t vc;         // its pending operation's clock, at race_.shared_wait_vcs[vc..vc + n)
    };
    std::vector<SharedWait> shared_waits;
    std::vector<Access> holding;           // optimal mode, per (object, actor): what it holds of that lock
    std::vector<Access> held_by_releaser;  // per event: for a release, what its actor held before it
    std::vector<int> held_since;               // per (object, actor): the acquisition it holds by
    std::vector<int> acquisition_released_by;  // per event: for a release, that acquisition (-1: none)
    std::vector<int> holder_races;             // scratch: lock races in place of skipped releases
    std::vector<int> next_of_actor;            // optimal mode, per event: its actor's next event (-1: none)
    std::vector<int> first_after_index;        // optimal mode, [k * n + a]: actor a's first event after event k (-1: none)
    std::vector<int> first_after;              // scratch of race_.next_of_actor's pass
    std::vector<std::uint32_t> shared_wait_vcs;  // the pending operations' clocks of race_.shared_waits
    std::vector<ObjectHistory> objects;
    std::vector<ObjectHistory> domains;
    // Per domain, its objects as one (Footprint::reads_every_object): a step that reads every
    // object writes it, one that writes an object reads it. Kept when a step of the execution
    // reads every object (every_object_read).
    std::vector<ObjectHistory> domain_objects;
    bool every_object_read = false;
    std::size_t next_parked = 0;   // the pass: the first race_.parked entry not checked yet
    std::size_t next_barrier = 0;  // the pass: the first barrier not passed yet
    int last_machine_crash = -1;                             // in the run being analysed
    ObjectHistory observations;                              // the domain of all observations
    std::vector<std::pair<ScopeId, ObjectHistory>> scopes;  // one per observation scope seen
  };
  using TimedOut = RaceAnalysis::TimedOut;
  using SharedWait = RaceAnalysis::SharedWait;
  RaceAnalysis race_;
};

}  // namespace lockstep::sim::dpor
