// The phase_lock system (seed 003): resume requests against the PhaseExecutionLockManager,
// each running its phase as the background task when it gets the lock.
#include "lockstep/model/phase_lock/system.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "lockstep/model/phase_lock/lock_manager.h"
#include "lockstep/model/system_input.h"

namespace lockstep::phase_lock {
namespace {

constexpr std::size_t kMaxResumeRequests = 12;

struct Resume {
  std::string name;
  std::string flow;
  std::string phase;
  Duration at{0};          // when the /resume call arrives
  Duration duration{0};    // how long its phase runs, once started
  bool crash = false;      // the background task dies without its finally block
};

struct Config {
  Duration timeout = PhaseExecutionLockManager::kDefaultTimeout;
  bool owner_tokens = false;
  std::vector<Resume> resumes;
  std::vector<std::string> skip_invariants;
};

// no_duplicate_execution and release_by_owner, from the manager's and the tasks' events.
class Checker {
 public:
  explicit Checker(const Config& c) : c_(c) {}

  std::optional<Violation> on_event(const Event& e) {
    switch (e.kind) {
      case events::kExecStart.kind: {
        auto& running = running_[e.subject];
        if (!running.empty()) {
          return judge({"no_duplicate_execution",
                        fmt::format("execution {} of phase lock {} started while execution {} was still running", e.value,
                                    e.subject, *running.begin())});
        }
        running.insert(e.value);
        break;
      }
      case events::kExecEnd.kind:
        running_[e.subject].erase(e.value);
        break;
      case events::kReleasing.kind:
        releasing_[e.subject] = e.value;
        break;
      case events::kReleased.kind: {
        const std::int64_t by = releasing_[e.subject];
        if (by != e.value) {
          return judge({"release_by_owner", fmt::format("execution {}'s release_lock freed the lock of execution {} (phase lock {})",
                                                        by, e.value, e.subject)});
        }
        break;
      }
      default:
        break;  // the others are facts for the trace
    }
    return std::nullopt;
  }

 private:
  std::optional<Violation> judge(Violation v) const {
    if (!judged(c_.skip_invariants, v)) return std::nullopt;
    return v;
  }

  const Config& c_;
  std::map<std::int64_t, std::set<std::int64_t>> running_;  // key -> executions running
  std::map<std::int64_t, std::int64_t> releasing_;          // key -> token of the caller
};

class PhaseLockInstance final : public Instance {
 public:
  PhaseLockInstance(Env& env, const Config& c) : env_(env), c_(c), manager_(env, c.timeout, c.owner_tokens), checker_(c) {
    for (const Resume& r : c_.resumes) manager_.key_of(r.flow, r.phase);  // objects made up front
  }

  int actor_count() const override { return static_cast<int>(c_.resumes.size()); }
  std::string_view actor_name(ActorId a) const override { return c_.resumes[static_cast<std::size_t>(a)].name; }

  // The /resume endpoint, then (when it got the lock) continue_assessment_flow.
  void run_actor(ActorId a) override {
    const Resume& r = c_.resumes[static_cast<std::size_t>(a)];
    if (r.at.count() > 0) env_.sleep_for(r.at);
    const std::int64_t token = manager_.try_acquire_lock(r.flow, r.phase);
    const int key = manager_.key_of(r.flow, r.phase);
    if (token == 0) {
      env_.observe(events::kAlreadyRunning.fact(key, a));
      return;
    }
    env_.observe(events::kExecStart.scoped(key, token));
    env_.sleep_for(r.duration);
    env_.observe(events::kExecEnd.scoped(key, token));
    if (r.crash) return;  // the process died: no finally block
    manager_.release_lock(r.flow, r.phase, token);
  }

  std::optional<Violation> on_event(const Event& e) override { return checker_.on_event(e); }

 private:
  Env& env_;
  const Config& c_;
  PhaseExecutionLockManager manager_;
  Checker checker_;
};

Config parse(const SystemInput& input) {
  Config c;
  c.owner_tokens = input.variant == "owner_tokens";
  enabled_faults(system_info(), input.faults);  // none
  if (input.config) {
    input.config->expect_keys({"timeout_ms", "skip_invariants"});
    if (auto t = input.config->find("timeout_ms")) c.timeout = as_millis(*t);
    if (auto s = input.config->find("skip_invariants")) c.skip_invariants = parse_skip_invariants(*s, system_info());
  }
  c.skip_invariants.insert(c.skip_invariants.end(), input.invariants_off.begin(), input.invariants_off.end());
  if (!input.actors) input.fail("", "missing \"actors\": [{\"flow\": ..., \"phase\": ..., \"at_ms\": ..., \"duration_ms\": ...}]");
  const auto items = input.actors->items();
  if (items.empty() || items.size() > kMaxResumeRequests) input.actors->fail(fmt::format("expected 1 to {} resume requests", kMaxResumeRequests));
  std::set<std::string> names;
  for (const auto& j : items) {
    j.expect_keys({"name", "flow", "phase", "at_ms", "duration_ms", "crash"});
    Resume r;
    r.flow = j.at("flow").as_string();
    r.phase = j.at("phase").as_string();
    if (auto v = j.find("at_ms")) r.at = as_millis(*v);
    r.duration = as_millis(j.at("duration_ms"));
    if (auto v = j.find("crash")) r.crash = v->as_bool();
    r.name = j.find("name") ? j.at("name").as_string() : fmt::format("resume#{}", c.resumes.size() + 1);
    if (!names.insert(r.name).second) j.fail(fmt::format("two actors are named \"{}\"", r.name));
    c.resumes.push_back(std::move(r));
  }
  if (!input.timed) input.fail("/explore", "phase_lock scenarios need \"explore\": {\"time\": \"timed\"} (arrivals, durations and the timeout are times)");
  return c;
}

}  // namespace

const SystemInfo& system_info() {
  static const SystemInfo info = [] {
    SystemInfo i;
    i.name = "phase_lock";
    i.description =
        "seed 003: the in-memory PhaseExecutionLockManager; actors are /resume requests {flow, phase, at_ms, duration_ms, crash}, "
        "config {timeout_ms (300000), skip_invariants}";
    i.variants = {{"correct", "the seed's design: release_lock frees whatever holds the lock; forced release after the timeout"},
                  {"owner_tokens", "try_acquire_lock returns a token; release_lock releases only the holder's token"}};
    i.invariants = {{"no_duplicate_execution", "never two executions of one (flow, phase) at once"},
                    {"release_by_owner", "a release never frees another execution's lock"}};
    i.configure = [](const SystemInput& input) -> std::unique_ptr<System> {
      return std::make_unique<SystemOf<PhaseLockInstance, Config>>(parse(input));
    };
    return i;
  }();
  return info;
}

}  // namespace lockstep::phase_lock
