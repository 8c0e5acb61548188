// The dal system (seed 002): writers, readers, an upgrader, a recovery sweeper and jobs over
// DAL lease locks in a simulated PostgreSQL table, on the virtual clock.
#include "lockstep/model/dal/system.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "lockstep/model/dal/lock_manager.h"
#include "lockstep/model/dal/write_protocol.h"
#include "lockstep/model/pg.h"
#include "lockstep/model/system_input.h"

namespace lockstep::dal {
namespace {

constexpr std::size_t kMaxDalActors = 8;
const std::string kData = "dal_data";
const std::string kJobs = "dal_jobs";

enum class Kind { writer, reader, upgrader, sweeper, job, file_writer, file_reader };

// The crash fault: {"actor": NAME, "kind": "process" | "machine", "budget": N}. NAME (a
// file_writer) may crash at any visible step, at most N times; each time its restarted
// process runs the recovery.
struct CrashFault {
  std::string actor;
  CrashKind kind = CrashKind::machine;
  int budget = 1;
};

struct ActorSpec {
  Kind kind = Kind::writer;
  std::string name;
  std::vector<std::string> resources;  // "project:p", "map:m1", "sketch:s1"; a job may name several
  Duration start{0};
  Duration work{0};
  Duration interval = std::chrono::seconds(10);  // the sweeper's period
  int cycles = 1;
};

struct Config {
  DalOptions options;
  Duration heartbeat = std::chrono::seconds(10);
  bool fencing = false;
  bool out_of_order = false;
  int max_global_jobs = 4, max_jobs_per_project = 2, max_map_jobs_per_project = 1;
  std::vector<ActorSpec> actors;
  std::vector<std::string> resources;  // in the global order: projects, maps, sketches, each sorted
  StallFault stall;  // the holder's process pauses before its write
  CrashFault crash;
  WriteOrder order = WriteOrder::seed;
  int files = 2;  // per write of the protocol
  std::vector<std::string> off;  // invariants the scenario switches off
};

int level(const std::string& r) { return r.rfind("project:", 0) == 0 ? 0 : r.rfind("map:", 0) == 0 ? 1 : 2; }

class DalInstance final : public Instance {
 public:
  DalInstance(Env& env, const Config& c) : env_(env), c_(c), protocol_{env, c.order, c.files, c.options} {
    pg::PoolConfig one{.pool_size = 1, .max_overflow = 0};
    for (const auto& a : c_.actors) {
      one.application_name = a.name;
      pools_.push_back(env.new_pg_pool(one));
    }
    auto setup = env.new_pg_pool(pg::PoolConfig{});
    auto conn = setup->checkout().value();
    for (std::size_t i = 0; i < c_.resources.size(); ++i) {
      const auto id = static_cast<std::int64_t>(i) + 1;
      (void)conn->insert_row(kLocks, id, {{"lock_id", c_.resources[i]}, {"mode", ""}, {"owners", ""}, {"upgrader", ""},
                                          {"lease_expires", "0"}, {"heartbeat_ts", "0"}, {"epoch", "0"}, {"metadata", "{}"}});
      (void)conn->insert_row(kData, id, {{"value", "0"}, {"fence", "0"}});
    }
    (void)conn->insert_row(kJobs, 0, {{"global", "0"}});
    for (const auto& r : file_targets()) protocol_.prepare(*conn, id(r), r);
    audit_ = std::move(setup);
  }

  int actor_count() const override { return static_cast<int>(c_.actors.size()); }
  std::string_view actor_name(ActorId a) const override { return c_.actors[static_cast<std::size_t>(a)].name; }
  // Writers of the same resources with the same timing are interchangeable, unless a stall
  // or crash fault names one of them.
  std::vector<std::vector<ActorId>> symmetric_actors() const override {
    return interchangeable_actors(actor_count(), [&](ActorId x, ActorId y) {
      const ActorSpec& a = c_.actors[static_cast<std::size_t>(x)];
      const ActorSpec& b = c_.actors[static_cast<std::size_t>(y)];
      auto faulted = [&](const ActorSpec& s) { return s.name == c_.stall.actor || s.name == c_.crash.actor; };
      return a.kind == Kind::writer && b.kind == Kind::writer && !faulted(a) && !faulted(b) &&
             a.resources == b.resources && a.start == b.start && a.work == b.work && a.interval == b.interval &&
             a.cycles == b.cycles;
    });
  }

  void run_actor(ActorId a) override {
    const ActorSpec& s = c_.actors[static_cast<std::size_t>(a)];
    if (s.kind == Kind::file_writer) return file_writer(s, a);
    auto conn = pools_[static_cast<std::size_t>(a)]->checkout().value();
    DalLockManager dal(env_, *conn, c_.options);
    if (s.start.count() > 0) env_.sleep_for(s.start);
    switch (s.kind) {
      case Kind::writer: writer(s, a, *conn, dal); break;
      case Kind::reader: reader(s, a, *conn, dal); break;
      case Kind::upgrader: upgrader(s, a, *conn, dal); break;
      case Kind::sweeper: sweeper(s, dal); break;
      case Kind::job: job(s, a, *conn, dal); break;
      case Kind::file_reader:
        for (int cycle = 0; cycle < s.cycles; ++cycle) {
          if (cycle > 0) env_.sleep_for(s.interval);
          protocol_.read(*conn, id(s.resources.front()), s.resources.front());
        }
        break;
      case Kind::file_writer: break;
    }
  }

  std::optional<Violation> on_event(const Event& e) override;
  std::optional<Violation> at_end() override;

 private:
  int id(const std::string& r) const {
    return static_cast<int>(std::find(c_.resources.begin(), c_.resources.end(), r) - c_.resources.begin()) + 1;
  }
  // Works for `d`, heartbeating every c_.heartbeat (a holder's heartbeat thread).
  void work(Duration d, int lock, ActorId a, DalLockManager& dal) {
    while (d.count() > 0) {
      const Duration step = std::min(d, c_.heartbeat);
      env_.sleep_for(step);
      d -= step;
      dal.heartbeat(lock, a + 1);
    }
  }
  // The process pauses (the stall fault): no work, no heartbeat.
  void maybe_stall(const ActorSpec& s) {
    if (s.name != c_.stall.actor) return;
    const auto& options = c_.stall.durations;
    const Duration d = options[static_cast<std::size_t>(env_.choose(static_cast<int>(options.size()), "stall"))];
    if (d.count() > 0) env_.sleep_for(d);
  }
  // The protected write: the data row of `lock`, checked against the fence when fencing.
  void protected_write(pg::Connection& conn, int lock, std::int64_t epoch, std::int64_t expect_value = -1) {
    (void)conn.begin();
    const pg::Row row = *conn.select_for_update(kData, lock, false).value();
    if (c_.fencing && std::stoll(row.at("fence")) > epoch) {
      (void)conn.rollback();
      env_.observe(events::kWriteFenced.fact(lock, epoch));
      return;
    }
    const std::int64_t value = std::stoll(row.at("value"));
    if (expect_value >= 0 && value != expect_value) env_.observe(events::kUpgradeLost.fact(lock, value));
    (void)conn.update_row(kData, lock, {{"value", std::to_string(value + 1)}, {"fence", std::to_string(epoch)}});
    (void)conn.commit();
    env_.observe(events::kWrote.scoped(lock, epoch));
  }

  void writer(const ActorSpec& s, ActorId a, pg::Connection& conn, DalLockManager& dal) {
    const int lock = id(s.resources.front());
    const std::int64_t epoch = dal.acquire(lock, Mode::write, a + 1);
    if (epoch == 0) return;  // gave up after bounded retries
    work(s.work, lock, a, dal);
    maybe_stall(s);
    protected_write(conn, lock, epoch);
    dal.release(lock, a + 1);
  }

  void reader(const ActorSpec& s, ActorId a, pg::Connection& conn, DalLockManager& dal) {
    const int lock = id(s.resources.front());
    if (dal.acquire(lock, Mode::read, a + 1) == 0) return;
    const std::string before = conn.read_row(kData, lock).value()->at("value");
    work(s.work, lock, a, dal);
    const std::string after = conn.read_row(kData, lock).value()->at("value");
    if (before != after) env_.observe(events::kReadChanged.fact(lock, a));
    dal.release(lock, a + 1);
  }

  void upgrader(const ActorSpec& s, ActorId a, pg::Connection& conn, DalLockManager& dal) {
    const int lock = id(s.resources.front());
    if (dal.acquire(lock, Mode::upgradeable, a + 1) == 0) return;
    const std::int64_t seen = std::stoll(conn.read_row(kData, lock).value()->at("value"));
    const std::int64_t epoch = dal.upgrade(lock, a + 1);
    if (epoch == 0) {
      dal.release(lock, a + 1);
      return;
    }
    protected_write(conn, lock, epoch, seen);  // must still be what it read
    dal.release(lock, a + 1);
  }

  void sweeper(const ActorSpec& s, DalLockManager& dal) {
    for (int cycle = 0; cycle < s.cycles; ++cycle) {
      env_.sleep_for(s.interval);
      for (const auto& r : s.resources) {
        if (dal.recover(id(r), /*claimed=*/false)) ++recoveries_;
      }
    }
  }

  // A job: a slot under the caps, then its locks in the global order (or reversed, in the
  // variant), its work, and everything released.
  void job(const ActorSpec& s, ActorId a, pg::Connection& conn, DalLockManager& dal) {
    const std::string project = s.resources.front();
    const bool map_job = std::any_of(s.resources.begin(), s.resources.end(), [](const std::string& r) { return level(r) == 1; });
    if (!take_slot(conn, project, map_job, +1)) {
      env_.observe(events::kJobRefused.fact(a, 0));
      return;
    }
    std::vector<std::string> order = s.resources;
    if (c_.out_of_order && a % 2 == 1) std::reverse(order.begin(), order.end());
    std::vector<int> held;
    for (const auto& r : order) {
      if (dal.acquire(id(r), Mode::write, a + 1) == 0) {
        if (!held.empty()) env_.observe(events::kGaveUpHolding.fact(id(r), a));
        break;
      }
      held.push_back(id(r));
    }
    if (held.size() == order.size()) work(s.work, held.front(), a, dal);
    for (int lock : held) dal.release(lock, a + 1);
    (void)take_slot(conn, project, map_job, -1);
  }

  // The resources that file actors write or read.
  std::set<std::string> file_targets() const {
    std::set<std::string> out;
    for (const auto& a : c_.actors) {
      if (a.kind == Kind::file_writer || a.kind == Kind::file_reader) out.insert(a.resources.front());
    }
    return out;
  }

  // Seed 002 section 5.1's write, `cycles` times; when the crash fault names this actor, each
  // crash (within the budget) is followed by its restarted process's recovery.
  void file_writer(const ActorSpec& s, ActorId a) {
    const int lock = id(s.resources.front());
    int crashes_left = c_.crash.actor == s.name ? c_.crash.budget : 0;
    int cycle = 0;
    for (int generation = 0;; ++generation) {
      try {
        // Inside the try: the real Env's SIGKILL crash throws Crashed from here, in the
        // restarted process.
        if (crashes_left > 0) env_.crash_points(c_.crash.kind);
        auto conn = pools_[static_cast<std::size_t>(a)]->checkout().value();
        DalLockManager dal(env_, *conn, c_.options);
        const int owner = a + 1 + 100 * generation;  // a restarted process is another owner
        if (generation == 0 && s.start.count() > 0) env_.sleep_for(s.start);
        if (generation > 0) protocol_.recover(*conn, dal, lock, s.resources.front(), owner);
        for (; cycle < s.cycles; ++cycle) {
          protocol_.write(*conn, dal, lock, s.resources.front(), owner, fmt::format("w{}-{}", a + 1, cycle + 1));
        }
        env_.no_crash_points();
        return;
      } catch (const Crashed&) {
        --crashes_left;
        ++cycle;  // the write that crashed is not retried
      }
    }
  }

  // Counts a job in or out under the caps, in one transaction on the counters row.
  bool take_slot(pg::Connection& conn, const std::string& project, bool map_job, int delta) {
    for (int attempt = 0; attempt < c_.options.max_attempts; ++attempt) {
      (void)conn.begin();
      pg::Row row = *conn.select_for_update(kJobs, 0, false).value();
      auto count = [&](const std::string& k) { return row.count(k) ? std::stoi(row.at(k)) : 0; };
      const int global = count("global"), in_project = count(project), maps = count(project + "/maps");
      if (delta > 0 && (global >= c_.max_global_jobs || in_project >= c_.max_jobs_per_project ||
                        (map_job && maps >= c_.max_map_jobs_per_project))) {
        (void)conn.rollback();
        env_.sleep_for(c_.options.backoff * (1 << attempt));
        continue;
      }
      pg::Row update = {{"global", std::to_string(global + delta)}, {project, std::to_string(in_project + delta)}};
      if (map_job) update[project + "/maps"] = std::to_string(maps + delta);
      (void)conn.update_row(kJobs, 0, update);
      (void)conn.commit();
      // Counts read and written in this transaction: judged alone, whatever the order.
      env_.observe(events::kJobs.fact(global + delta, in_project + delta));
      if (map_job) env_.observe(events::kMapJobs.fact(0, maps + delta));
      return true;
    }
    return false;
  }

  Env& env_;
  const Config& c_;
  std::vector<std::unique_ptr<pg::Pool>> pools_;
  std::unique_ptr<pg::Pool> audit_;
  WriteProtocol protocol_;
  std::map<std::int64_t, std::int64_t> granted_;  // lock -> newest epoch granted
  int recoveries_ = 0;
  int recovered_events_ = 0;
  std::optional<Violation> protocol_violation_;  // from at_end's own checks
};

std::optional<Violation> DalInstance::on_event(const Event& e) {
  auto resource = [&](std::int64_t lock) { return c_.resources[static_cast<std::size_t>(lock) - 1]; };
  // A violation found by at_end's own reads is also returned from at_end.
  auto keep = [&](Violation v) {
    if (!protocol_violation_ && judged(c_.off, v)) protocol_violation_ = v;
    return std::optional<Violation>(std::move(v));
  };
  switch (e.kind) {
    case events::kGranted.kind:
      granted_[e.subject] = std::max(granted_[e.subject], e.value);
      break;
    case events::kWrote.kind:
      if (e.value < granted_[e.subject]) {
        return Violation{"single_writer", fmt::format("{} was written by the holder of epoch {} after epoch {} was granted: two writers",
                                                      c_.resources[static_cast<std::size_t>(e.subject) - 1], e.value, granted_[e.subject])};
      }
      break;
    case events::kReadChanged.kind:
      return Violation{"single_writer", fmt::format("{} changed while {} held its read lock: a writer with a reader",
                                                    c_.resources[static_cast<std::size_t>(e.subject) - 1],
                                                    c_.actors[static_cast<std::size_t>(e.value)].name)};
    case events::kUpgradeLost.kind:
      return Violation{"upgrade_atomic", fmt::format("{} changed between the upgrader's read and its write (now {})",
                                                     c_.resources[static_cast<std::size_t>(e.subject) - 1], e.value)};
    case events::kRecovered.kind:
      ++recovered_events_;
      break;
    case events::kGaveUpHolding.kind:
      return Violation{"no_deadlock_with_ordering",
                       fmt::format("{} gave up on {} while holding other locks: jobs wait for each other's locks (a lock-order "
                                   "deadlock, broken only by running out of retries)",
                                   c_.actors[static_cast<std::size_t>(e.value)].name,
                                   c_.resources[static_cast<std::size_t>(e.subject) - 1])};
    case events::kAttempt.kind:
      if (e.value > c_.options.max_attempts) {
        return Violation{"retries_bounded", fmt::format("attempt {} at lock {}, past the bound of {}", e.value, e.subject,
                                                        c_.options.max_attempts)};
      }
      break;
    case events::kJobs.kind:
      if (e.subject > c_.max_global_jobs || e.value > c_.max_jobs_per_project) {
        return Violation{"job_caps_respected", fmt::format("{} jobs running ({} in one project): over the caps", e.subject, e.value)};
      }
      break;
    case events::kMapJobs.kind:
      if (e.value > c_.max_map_jobs_per_project) {
        return Violation{"job_caps_respected", fmt::format("{} map jobs running in one project: over the cap", e.value)};
      }
      break;
    case events::kPartialFinal.kind:
      return keep(Violation{"final_dirs_complete", fmt::format("{}/v{} is incomplete where a reader looks (a partial final directory)",
                                                               WriteProtocol::target(resource(e.subject)), e.value)});
    case events::kCommittedMissing.kind:
      return keep(Violation{"committed_is_durable",
                            fmt::format("the manifest says version {} of {} is committed, but {}/v{} is missing or incomplete",
                                        e.value, resource(e.subject), WriteProtocol::target(resource(e.subject)), e.value)});
    case events::kManifestBack.kind:
      return Violation{"manifest_never_back",
                       fmt::format("the manifest of {} went back to version {} over a newer committed one (a commit outside the lock)",
                                   resource(e.subject), e.value)};
    default:
      break;  // released, write_fenced, job_refused, write_aborted: facts for the trace
  }
  return std::nullopt;
}

std::optional<Violation> DalInstance::at_end() {
  auto conn = audit_->checkout().value();
  int audited = 0;
  for (std::int64_t epoch = 1; epoch <= 64; ++epoch) {
    for (std::size_t lock = 1; lock <= c_.resources.size(); ++lock) {
      if (conn->read_row(kAudit, epoch * 1000 + static_cast<std::int64_t>(lock)).value()) ++audited;
    }
  }
  if (audited != recovered_events_ && judged(c_.off, "recovery_audited")) {
    return Violation{"recovery_audited", fmt::format("{} recoveries but {} audit rows", recovered_events_, audited)};
  }
  for (const auto& r : file_targets()) {
    protocol_.check_target(*conn, id(r), r);  // reports partial_final, committed_missing
    if (protocol_violation_) return protocol_violation_;
    const auto left = env_.filesystem().list(WriteProtocol::target(r) + "/tmp").value_or(std::vector<std::string>{});
    if (!left.empty() && judged(c_.off, "no_tmp_after_recovery")) {
      return Violation{"no_tmp_after_recovery", fmt::format("{}/tmp still holds {} at the end", WriteProtocol::target(r), fmt::join(left, ", "))};
    }
  }
  return std::nullopt;
}

// The global acquisition order (seed 8.1): projects, then maps, then sketches, each by name.
bool in_global_order(const std::string& x, const std::string& y) {
  return std::make_pair(level(x), x) < std::make_pair(level(y), y);
}

// The configuration a variant starts from: its switches and its write order.
Config variant_config(const std::string& variant) {
  Config c;
  c.fencing = variant == "fencing";
  c.out_of_order = variant == "out_of_order";
  c.options.recovery_checks_heartbeat = variant != "recovery_skips_heartbeat";
  c.options.atomic_upgrade = variant != "upgrade_release_then_acquire";
  const std::map<std::string, WriteOrder> orders = {{"no_tmp_dir_fsync", WriteOrder::no_tmp_dir_fsync},
                                                    {"rename_before_file_fsync", WriteOrder::rename_before_file_fsync},
                                                    {"no_parent_fsync", WriteOrder::no_parent_fsync},
                                                    {"manifest_before_rename", WriteOrder::manifest_before_rename},
                                                    {"release_before_manifest", WriteOrder::release_before_manifest}};
  if (orders.count(variant)) c.order = orders.at(variant);
  return c;
}

// The scenario's "config": leases, retries, job caps and the files per write.
void parse_limits(const JsonCursor& j, Config& c) {
  j.expect_keys({"lease_ms", "grace_ms", "heartbeat_ms", "max_attempts", "backoff_ms", "max_global_jobs", "max_jobs_per_project",
                 "max_map_jobs_per_project", "files"});
  if (auto x = j.find("lease_ms")) c.options.lease = as_millis(*x);
  if (auto x = j.find("grace_ms")) c.options.grace = as_millis(*x);
  if (auto x = j.find("heartbeat_ms")) c.heartbeat = std::max(as_millis(*x), Duration(std::chrono::milliseconds(1)));
  if (auto x = j.find("max_attempts")) c.options.max_attempts = static_cast<int>(x->as_int(1, 10));
  if (auto x = j.find("backoff_ms")) c.options.backoff = as_millis(*x);
  if (auto x = j.find("max_global_jobs")) c.max_global_jobs = static_cast<int>(x->as_int(1, 100));
  if (auto x = j.find("max_jobs_per_project")) c.max_jobs_per_project = static_cast<int>(x->as_int(1, 100));
  if (auto x = j.find("max_map_jobs_per_project")) c.max_map_jobs_per_project = static_cast<int>(x->as_int(1, 100));
  if (auto x = j.find("files")) c.files = static_cast<int>(x->as_int(1, 8));
}

// An actor's "resource" and "resources", each checked to be project:, map: or sketch:.
std::vector<std::string> parse_resources(const JsonCursor& j) {
  std::vector<std::string> resources;
  if (auto r = j.find("resource")) resources.push_back(r->as_string());
  if (auto rs = j.find("resources")) {
    for (const auto& r : rs->items()) resources.push_back(r.as_string());
  }
  if (resources.empty()) j.fail("expected \"resource\" or \"resources\"");
  for (const auto& r : resources) {
    if (r.rfind("project:", 0) != 0 && r.rfind("map:", 0) != 0 && r.rfind("sketch:", 0) != 0) {
      j.fail(fmt::format("resource \"{}\" is not project:ID, map:ID or sketch:ID", r));
    }
  }
  return resources;
}

// One actor of "actors", the number-th; unnamed, it is called KIND#number.
ActorSpec parse_actor(const JsonCursor& j, std::size_t number) {
  j.expect_keys({"kind", "name", "resource", "resources", "start_ms", "work_ms", "interval_ms", "cycles"});
  ActorSpec a;
  const std::string kind = j.at("kind").as_string();
  const std::map<std::string, Kind> kinds = {{"writer", Kind::writer}, {"reader", Kind::reader}, {"upgrader", Kind::upgrader},
                                             {"sweeper", Kind::sweeper}, {"job", Kind::job},
                                             {"file_writer", Kind::file_writer}, {"file_reader", Kind::file_reader}};
  if (!kinds.count(kind)) {
    j.at("kind").fail(fmt::format("unknown kind \"{}\" (known: writer, reader, upgrader, sweeper, job, file_writer, file_reader)", kind));
  }
  a.kind = kinds.at(kind);
  a.resources = parse_resources(j);
  if (a.kind == Kind::job && level(a.resources.front()) != 0) j.fail("a job names its project first");
  if (auto x = j.find("start_ms")) a.start = as_millis(*x);
  if (auto x = j.find("work_ms")) a.work = as_millis(*x);
  if (auto x = j.find("interval_ms")) a.interval = as_millis(*x);
  if (auto x = j.find("cycles")) a.cycles = static_cast<int>(x->as_int(1, 8));
  a.name = j.find("name") ? j.at("name").as_string() : fmt::format("{}#{}", kind, number);
  if (a.kind == Kind::job) std::sort(a.resources.begin() + 1, a.resources.end(), in_global_order);
  return a;
}

// The actors into c.actors and the resources they name into c.resources, in the global
// order; returns the actors' names.
std::set<std::string> parse_actors(const SystemInput& input, Config& c) {
  if (!input.actors) input.fail("", "missing \"actors\"");
  const auto items = input.actors->items();
  if (items.empty() || items.size() > kMaxDalActors) input.actors->fail(fmt::format("expected 1 to {} actors", kMaxDalActors));
  std::set<std::string> resources, names;
  for (const auto& j : items) {
    ActorSpec a = parse_actor(j, c.actors.size() + 1);
    if (!names.insert(a.name).second) j.fail(fmt::format("two actors are named \"{}\"", a.name));
    resources.insert(a.resources.begin(), a.resources.end());
    c.actors.push_back(std::move(a));
  }
  c.resources.assign(resources.begin(), resources.end());
  std::sort(c.resources.begin(), c.resources.end(), in_global_order);
  return names;
}

// The crash fault f (see CrashFault); its actor must be one of the file_writers.
CrashFault parse_crash_fault(const JsonCursor& f, const std::vector<ActorSpec>& actors) {
  CrashFault crash;
  f.expect_keys({"actor", "kind", "budget"});
  crash.actor = f.at("actor").as_string();
  const auto named = std::find_if(actors.begin(), actors.end(), [&](const ActorSpec& a) { return a.name == crash.actor; });
  if (named == actors.end() || named->kind != Kind::file_writer) {
    f.at("actor").fail(fmt::format("\"{}\" is not a file_writer of this scenario (only a file_writer restarts into recovery)", crash.actor));
  }
  if (auto k = f.find("kind")) {
    const std::string kind = k->as_string();
    if (kind != "process" && kind != "machine") k->fail(fmt::format("unknown crash kind \"{}\" (known: process, machine)", kind));
    crash.kind = kind == "process" ? CrashKind::process : CrashKind::machine;
  }
  if (auto b = f.find("budget")) crash.budget = static_cast<int>(b->as_int(1, 3));
  return crash;
}

Config parse(const SystemInput& input) {
  Config c = variant_config(input.variant);
  c.off = input.invariants_off;
  if (input.config) parse_limits(*input.config, c);
  const std::set<std::string> names = parse_actors(input, c);
  for (const std::string& fault : enabled_faults(system_info(), input.faults)) {
    if (fault == "stall") c.stall = parse_stall_fault(input.faults->at("stall"), {names.begin(), names.end()}, input.timed);
    if (fault == "crash") c.crash = parse_crash_fault(input.faults->at("crash"), c.actors);
  }
  if (!input.timed) input.fail("/explore", "dal scenarios need \"explore\": {\"time\": \"timed\"} (leases and heartbeats are times)");
  return c;
}

}  // namespace

const SystemInfo& system_info() {
  static const SystemInfo info = [] {
    SystemInfo i;
    i.name = "dal";
    i.description =
        "seed 002: DAL lease locks in a database table (read / write / upgradeable, leases, heartbeats, audited stale-lock "
        "recovery, global acquisition order, bounded retries, job caps) and section 5.1's write protocol under crashes; actors "
        "writer, reader, upgrader, sweeper, job, file_writer, file_reader";
    i.variants = {{"correct", "the seed's design"},
                  {"out_of_order", "every second job takes its locks in reverse of the global order"},
                  {"recovery_skips_heartbeat", "stale-lock recovery without the heartbeat test"},
                  {"upgrade_release_then_acquire", "upgrade as release, then acquire write"},
                  {"fencing", "the standard remedy: the protected write refuses an epoch older than the last written"},
                  {"no_tmp_dir_fsync", "the write protocol (file_writer) without step 4, the fsync of the tmp directory"},
                  {"rename_before_file_fsync", "the write protocol with step 3 (fsync each file) after the rename and the parent's fsync"},
                  {"no_parent_fsync", "the write protocol without step 7, the fsync of the final directory's parent"},
                  {"manifest_before_rename", "the write protocol committing the manifest (steps 8-9) before the rename (step 6)"},
                  {"release_before_manifest", "the write protocol releasing the DAL lock (step 10) before the manifest commit"}};
    i.invariants = {{"single_writer", "never two writers, never a writer with readers, judged by the protected writes"},
                    {"upgrade_atomic", "nothing is written between an upgrader's read and its write"},
                    {"recovery_audited", "every recovery has its audit row"},
                    {"no_deadlock_with_ordering", "no job gives up on a lock while holding others"},
                    {"retries_bounded", "acquisition attempts stay within the bound"},
                    {"job_caps_respected", "maxGlobalJobs, maxJobsPerProject, maxConcurrentMapJobsPerProject hold"},
                    {"committed_is_durable", "after any crash and recovery, the manifest says committed only for a complete final directory"},
                    {"final_dirs_complete", "no reader (nor recovery) ever sees a partial final directory"},
                    {"no_tmp_after_recovery", "no tmp directory outlives recovery"},
                    {"manifest_never_back", "a committed manifest version is never replaced by an older one"}};
    i.faults = {{"stall", "{\"actor\": NAME, \"durations_ms\": [...]}: the holder's process pauses before its write (no heartbeat)"},
                {"crash", "{\"actor\": NAME, \"kind\": \"process\" | \"machine\", \"budget\": N}: the file_writer NAME crashes at any "
                          "visible step (at most N times, default 1; kind default machine: what was not fsynced may be lost); its "
                          "restarted process recovers"}};
    i.configure = [](const SystemInput& input) -> std::unique_ptr<System> {
      return std::make_unique<SystemOf<DalInstance, Config>>(parse(input));
    };
    return i;
  }();
  return info;
}

}  // namespace lockstep::dal
