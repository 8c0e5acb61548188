#include "lockstep/sim/sched/sim_env.h"

#include <fmt/format.h>

#include "lockstep/model/pg.h"
#include "lockstep/sim/pg/server/sim_pg.h"
#include "lockstep/sim/fs/sim_fs.h"
#include "lockstep/sim/sched/sim_objects.h"

namespace lockstep::sim {

namespace {
constexpr OpDesc kSleep{"sleep", {}, 0, false};

const TimerOnly kNever("its sleep to end");
const TimerOnly kStall("its stall to end");
}  // namespace

// ---- flock -------------------------------------------------------------------------------

struct SimEnv::Inode {
  ObjectId id = kNoObject;
  std::string path;
  int exclusive = -1;           // the file holding LOCK_EX, or -1
  std::map<int, int> shared;    // files holding LOCK_SH (file -> 1)

  bool can_take(int file, FlockMode mode) const {
    if (mode == FlockMode::exclusive) {
      return (exclusive < 0 || exclusive == file) &&
             (shared.empty() || (shared.size() == 1 && shared.count(file)));
    }
    return exclusive < 0 || exclusive == file;
  }
  std::string describe() const {
    std::string holders;
    if (exclusive >= 0) holders = fmt::format("file #{} (exclusive)", exclusive);
    for (const auto& [f, one] : shared) holders += fmt::format("{}file #{} (shared)", holders.empty() ? "" : ", ", f);
    return fmt::format("flock on {} held by {}", path, holders.empty() ? "nobody" : holders);
  }
};

namespace {

class SimFile final : public File, public WaitCondition {
 public:
  SimFile(Scheduler& s, SimEnv::Inode& inode, int number) : s_(s), inode_(inode), number_(number) {}
  ~SimFile() override {
    // Closing is a release: safe in a destructor, even while an actor unwinds.
    if (open_) close();
  }

  void flock(FlockMode mode) override {
    check_open();
    const Access access = mode == FlockMode::exclusive ? Access::acquire : Access::acquire_shared;
    const std::string_view verb = mode == FlockMode::exclusive ? "flock_ex" : "flock_sh";
    if (holds(mode)) {
      s_.yield({verb, {inode_.id, access}, number_, true});
      s_.note_result({StepResult::Kind::ok});
      return;
    }
    if (holds_any()) {  // a conversion: the old lock goes first, then the new one is waited for
      s_.yield({"flock_drop", {inode_.id, Access::release}, number_, true});
      drop();
      s_.note_result({StepResult::Kind::ok});
    }
    want_ = mode;
    s_.yield({verb, {inode_.id, access}, number_, true}, this);
    take(mode);
    s_.note_result({StepResult::Kind::ok});
  }

  bool try_flock(FlockMode mode) override {
    check_open();
    const Access access = mode == FlockMode::exclusive ? Access::acquire : Access::acquire_shared;
    s_.yield(narrowing({mode == FlockMode::exclusive ? "try_flock_ex" : "try_flock_sh", {inode_.id, access}, number_, true}));
    if (holds(mode)) {
      s_.note_result({StepResult::Kind::ok});
      return true;
    }
    const bool dropped = holds_any();
    drop();  // Linux drops the old lock before trying the new one, even with LOCK_NB
    if (!inode_.can_take(number_, mode)) {
      if (!dropped) s_.refine_access(Access::read);  // only looked
      s_.note_result({StepResult::Kind::failed});
      return false;
    }
    take(mode);
    s_.note_result({StepResult::Kind::ok});
    return true;
  }

  void unlock() override {
    check_open();
    s_.yield({"flock_un", {inode_.id, Access::release}, number_, true});
    drop();
  }

  void close() override {
    check_open();
    s_.yield({"close", {inode_.id, Access::release}, number_, true});
    drop();
    open_ = false;
  }

  bool ready(ActorId) const override { return inode_.can_take(number_, want_); }
  std::string describe(ActorId) const override { return inode_.describe(); }

 private:
  void check_open() const {
    if (!open_) throw ModelError(fmt::format("file #{} ({}) used after close", number_, inode_.path));
  }
  bool holds(FlockMode mode) const {
    return mode == FlockMode::exclusive ? inode_.exclusive == number_ : inode_.shared.count(number_) > 0;
  }
  bool holds_any() const { return holds(FlockMode::exclusive) || holds(FlockMode::shared); }
  void drop() {
    if (inode_.exclusive == number_) inode_.exclusive = -1;
    inode_.shared.erase(number_);
  }
  void take(FlockMode mode) {
    if (mode == FlockMode::exclusive) {
      inode_.exclusive = number_;
    } else {
      inode_.shared[number_] = 1;
    }
  }

  Scheduler& s_;
  SimEnv::Inode& inode_;
  int number_;
  bool open_ = true;
  FlockMode want_ = FlockMode::exclusive;
};

}  // namespace

// ---- Env ---------------------------------------------------------------------------------

class PgServerHolder {
 public:
  explicit PgServerHolder(Scheduler& s) : server(s) {}
  pg::Server server;
};

SimEnv::SimEnv() = default;
SimEnv::~SimEnv() = default;

void SimEnv::begin_execution(Scheduler& scheduler) {
  scheduler_ = &scheduler;
  inodes_.clear();
  pg_.reset();
  fs_.reset();
  crashes_.clear();
  next_file_ = 0;
  if (scheduler.limits().timing.skew_ms > 0) skew_.fill(std::nullopt);  // else never set: no cost per execution
}

Time SimEnv::now() {
  const Time read = clock();
  // The timing model's stall after a clock read: the actor acts on what it read M ms late (a
  // GC pause between a lease's expiry check and the write it guards).
  if (scheduler_->choose_stall(" after reading its clock")) {
    const Duration stall = std::chrono::milliseconds(scheduler_->limits().timing.stall_ms);
    const std::int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(stall).count();
    scheduler_->yield_exact({"stall", {}, us, true}, &kStall, stall);
    scheduler_->note_result({StepResult::Kind::woke});
  }
  return read;
}

Time SimEnv::clock() {
  const Time server = scheduler_->now();
  const RunLimits& limits = scheduler_->limits();
  if (limits.timing.skew_ms == 0 || limits.time != TimeMode::timed || !scheduler_->in_actor()) return server;
  std::optional<Duration>& skew = skew_[static_cast<std::size_t>(scheduler_->current())];
  if (!skew) {  // 0, behind or ahead: an explored choice, once per actor and execution
    const Duration s = std::chrono::milliseconds(limits.timing.skew_ms);
    const std::uint32_t c = scheduler_->choose(3, "clock_skew", /*keeps_footprint=*/true);
    skew = c == 0 ? Duration{0} : c == 1 ? -s : s;
    scheduler_->describe_choice(c == 0   ? std::string("clock right")
                                : c == 1 ? fmt::format("clock {} behind", duration_text(s))
                                         : fmt::format("clock {} ahead", duration_text(s)));
  }
  return server + *skew;
}

void SimEnv::sleep_for(Duration duration) {
  OpDesc op = kSleep;
  op.arg = std::chrono::duration_cast<std::chrono::milliseconds>(duration).count();
  op.has_arg = true;
  scheduler_->yield(op, &kNever, duration);
  scheduler_->note_result({StepResult::Kind::woke});
}

ActorId SimEnv::current_actor() { return scheduler_->current(); }

std::uint64_t SimEnv::random(std::uint64_t bound) {
  if (bound == 0) throw ModelError("random(0): the bound must be positive");
  return scheduler_->random(bound);
}

int SimEnv::choose(int n, std::string_view label) {
  if (n <= 0) throw ModelError(fmt::format("choose({}, \"{}\"): needs at least one option", n, label));
  // Model code chooses between its steps: the step it runs in has taken its effect.
  return static_cast<int>(scheduler_->choose(static_cast<std::uint32_t>(n), label, /*keeps_footprint=*/true));
}

void SimEnv::observe(const Event& event) { scheduler_->observe(event); }
void SimEnv::hot(std::string_view obligation, Duration within) { scheduler_->hot(obligation, within); }
void SimEnv::cold(std::string_view obligation) { scheduler_->cold(obligation); }

std::unique_ptr<Mutex> SimEnv::new_mutex(std::string name) { return make_sim_mutex(*scheduler_, std::move(name)); }
std::unique_ptr<RWMutex> SimEnv::new_rwmutex(std::string name) { return make_sim_rwmutex(*scheduler_, std::move(name)); }
std::unique_ptr<Lock> SimEnv::new_lock(std::string name) { return make_sim_lock(*scheduler_, std::move(name)); }
std::unique_ptr<SharedVar> SimEnv::new_shared_var(std::string name, std::int64_t initial) {
  return make_sim_shared_var(*scheduler_, std::move(name), initial);
}

std::unique_ptr<lockstep::pg::Pool> SimEnv::new_pg_pool(const lockstep::pg::PoolConfig& config) {
  if (!pg_) {
    pg_ = std::make_unique<PgServerHolder>(*scheduler_);
    pg_->server.set_statement_log(statements_);
  }
  return pg::make_pool(pg_->server, config);
}

std::vector<std::string> SimEnv::injected_faults() const {
  std::vector<std::string> faults;
  if (pg_ && pg_->server.termination_used()) faults.emplace_back("backend_terminated");
  if (pg_ && pg_->server.restart_used()) faults.emplace_back("server_restart");
  for (CrashKind kind : crashes_) faults.push_back(fmt::format("crash({})", crash_kind_name(kind)));
  return faults;
}

Filesystem& SimEnv::filesystem() {
  if (!fs_) fs_ = std::make_unique<SimFilesystem>(*scheduler_);
  return *fs_;
}

void SimEnv::crash_points(CrashKind kind) { scheduler_->arm_crash(kind); }
void SimEnv::no_crash_points() { scheduler_->arm_crash(std::nullopt); }

void SimEnv::crash(CrashKind kind) {
  crashes_.push_back(kind);
  if (kind == CrashKind::machine && fs_) fs_->crash();
}

std::unique_ptr<File> SimEnv::open_file(std::string path) {
  auto& inode = inodes_[path];
  if (!inode) {
    inode = std::make_unique<Inode>();
    inode->path = path;
    inode->id = scheduler_->new_object("file:" + path);
  }
  return std::make_unique<SimFile>(*scheduler_, *inode, next_file_++);
}

}  // namespace lockstep::sim
