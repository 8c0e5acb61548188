#include "lockstep/real/thread_env.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "lockstep/real/libpq_backend.h"
#include "lockstep/real/posix_fs.h"

namespace lockstep::real {
namespace {

using Clock = std::chrono::steady_clock;

thread_local ActorId current = -1;

// Times an acquisition: `attempt` without waiting first, then `block` if that failed.
template <typename Try, typename Block>
bool timed_acquire(ThreadEnv& env, Try attempt, Block block) {
  env.jitter();
  if (attempt()) {
    env.record_acquisition(false, Duration{0});
    return true;
  }
  const auto start = Clock::now();
  const bool got = block();
  env.record_acquisition(true, Clock::now() - start);
  return got;
}

class ThreadMutex final : public Mutex {
 public:
  ThreadMutex(ThreadEnv& env, std::string name) : env_(env), name_(std::move(name)) {}
  void lock() override {
    timed_acquire(env_, [&] { return m_.try_lock(); }, [&] { m_.lock(); return true; });
    owner_ = current;
  }
  bool try_lock() override {
    env_.jitter();
    if (!m_.try_lock()) return false;
    owner_ = current;
    return true;
  }
  bool try_lock_for(Duration timeout) override {
    if (!timed_acquire(env_, [&] { return m_.try_lock(); }, [&] { return m_.try_lock_for(timeout); })) return false;
    owner_ = current;
    return true;
  }
  void unlock() override {
    if (owner_ != current) throw ModelError(fmt::format("unlock of mutex {} not held by this actor", name_));
    owner_ = -2;
    m_.unlock();
  }

 private:
  ThreadEnv& env_;
  std::string name_;
  std::timed_mutex m_;
  std::atomic<ActorId> owner_{-2};
};

// Go's sync.RWMutex: writers announce themselves, and from then on new readers wait.
class ThreadRWMutex final : public RWMutex {
 public:
  ThreadRWMutex(ThreadEnv& env, std::string name) : env_(env), name_(std::move(name)) {}
  void lock() override {
    env_.jitter();
    std::unique_lock l(m_);
    ++writers_waiting_;
    const auto start = Clock::now();
    const bool waits = writer_ || readers_ > 0;
    cv_.wait(l, [&] { return !writer_ && readers_ == 0; });
    --writers_waiting_;
    writer_ = true;
    writer_actor_ = current;
    env_.record_acquisition(waits, waits ? Clock::now() - start : Duration{0});
  }
  bool try_lock() override {
    env_.jitter();
    std::lock_guard l(m_);
    if (writer_ || readers_ > 0) return false;
    writer_ = true;
    writer_actor_ = current;
    return true;
  }
  void unlock() override {
    std::lock_guard l(m_);
    if (!writer_ || writer_actor_ != current) throw ModelError(fmt::format("unlock of rwmutex {} not write-held by this actor", name_));
    writer_ = false;
    cv_.notify_all();
  }
  void rlock() override {
    env_.jitter();
    std::unique_lock l(m_);
    const auto start = Clock::now();
    const bool waits = writer_ || writers_waiting_ > 0;
    cv_.wait(l, [&] { return !writer_ && writers_waiting_ == 0; });
    ++readers_;
    ++read_holds_[current];
    env_.record_acquisition(waits, waits ? Clock::now() - start : Duration{0});
  }
  bool try_rlock() override {
    env_.jitter();
    std::lock_guard l(m_);
    if (writer_ || writers_waiting_ > 0) return false;
    ++readers_;
    ++read_holds_[current];
    return true;
  }
  void runlock() override {
    std::lock_guard l(m_);
    auto it = read_holds_.find(current);
    if (it == read_holds_.end()) throw ModelError(fmt::format("runlock of rwmutex {} not read-held by this actor", name_));
    if (--it->second == 0) read_holds_.erase(it);
    --readers_;
    cv_.notify_all();
  }

 private:
  ThreadEnv& env_;
  std::string name_;
  std::mutex m_;
  std::condition_variable cv_;
  bool writer_ = false;
  ActorId writer_actor_ = -2;
  int readers_ = 0;
  int writers_waiting_ = 0;
  std::map<ActorId, int> read_holds_;
};

// asyncio.Lock: not owned, not reentrant.
class ThreadLock final : public Lock {
 public:
  ThreadLock(ThreadEnv& env, std::string name) : env_(env), name_(std::move(name)) {}
  void acquire() override { (void)acquire_until(std::nullopt); }
  bool acquire_for(Duration timeout) override { return acquire_until(Clock::now() + timeout); }
  bool try_acquire() override {
    env_.jitter();
    std::lock_guard l(m_);
    if (locked_) return false;
    locked_ = true;
    return true;
  }
  void release() override {
    std::lock_guard l(m_);
    if (!locked_) throw ModelError(fmt::format("release of unlocked lock {}", name_));
    locked_ = false;
    cv_.notify_one();
  }
  bool locked() override {
    env_.jitter();
    std::lock_guard l(m_);
    return locked_;
  }

 private:
  bool acquire_until(std::optional<Clock::time_point> deadline) {
    env_.jitter();
    std::unique_lock l(m_);
    const bool waits = locked_;
    const auto start = Clock::now();
    if (deadline) {
      if (!cv_.wait_until(l, *deadline, [&] { return !locked_; })) {
        env_.record_acquisition(true, Clock::now() - start);
        return false;
      }
    } else {
      cv_.wait(l, [&] { return !locked_; });
    }
    locked_ = true;
    env_.record_acquisition(waits, waits ? Clock::now() - start : Duration{0});
    return true;
  }

  ThreadEnv& env_;
  std::string name_;
  std::mutex m_;
  std::condition_variable cv_;
  bool locked_ = false;
};

class ThreadFile final : public File {
 public:
  ThreadFile(ThreadEnv& env, const std::filesystem::path& path) : env_(env), path_(path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) throw ModelError(fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
  }
  ~ThreadFile() override { close(); }
  void flock(FlockMode mode) override {
    timed_acquire(env_, [&] { return call(op(mode) | LOCK_NB); }, [&] { return call(op(mode)); });
  }
  bool try_flock(FlockMode mode) override {
    env_.jitter();
    return call(op(mode) | LOCK_NB);
  }
  void unlock() override {
    env_.jitter();
    (void)call(LOCK_UN);
  }
  void close() override {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  static int op(FlockMode mode) { return mode == FlockMode::exclusive ? LOCK_EX : LOCK_SH; }
  bool call(int operation) {
    if (fd_ < 0) throw ModelError(fmt::format("flock on closed file {}", path_.string()));
    for (;;) {
      if (::flock(fd_, operation) == 0) return true;
      if (errno == EWOULDBLOCK) return false;
      if (errno != EINTR) throw ModelError(fmt::format("flock {}: {}", path_.string(), std::strerror(errno)));
    }
  }

  ThreadEnv& env_;
  std::filesystem::path path_;
  int fd_ = -1;
};

class ThreadSharedVar final : public SharedVar {
 public:
  ThreadSharedVar(ThreadEnv& env, std::int64_t initial) : env_(env), value_(initial) {}
  std::int64_t load() override {
    env_.jitter();
    return value_.load();
  }
  void store(std::int64_t value) override {
    env_.jitter();
    value_.store(value);
  }
  bool compare_exchange(std::int64_t expected, std::int64_t desired) override {
    env_.jitter();
    return value_.compare_exchange_strong(expected, desired);
  }
  std::int64_t fetch_add(std::int64_t delta) override {
    env_.jitter();
    return value_.fetch_add(delta);
  }

 private:
  ThreadEnv& env_;
  std::atomic<std::int64_t> value_;
};

std::string file_safe(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c : '_';
  return out;
}

}  // namespace

ThreadEnv::ThreadEnv(ThreadEnvOptions options, EventSink sink)
    : options_(std::move(options)), sink_(std::move(sink)), start_(Clock::now()), rng_(options_.seed) {
  if (!options_.order.empty()) gate_ = std::make_unique<ScheduleGate>(options_.order, options_.blocked_after, options_.missing_after);
  std::string pattern = (std::filesystem::temp_directory_path() / "lockstep-files.XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw ModelError(fmt::format("cannot create a directory for files: {}", std::strerror(errno)));
  dir_ = pattern;
  std::filesystem::create_directory(dir_ / "fs");
  fs_ = std::make_unique<PosixFilesystem>(dir_ / "fs", [this] { jitter(); });
}

Filesystem& ThreadEnv::filesystem() { return *fs_; }

ThreadEnv::~ThreadEnv() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void ThreadEnv::run_actors(int n, const std::function<void(ActorId)>& body) {
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> thrown(static_cast<std::size_t>(std::max(n, 0)));
  threads.reserve(static_cast<std::size_t>(n));
  for (ActorId a = 0; a < n; ++a) {
    threads.emplace_back([this, &body, &thrown, a] {
      current = a;
      try {
        body(a);
      } catch (const ActorDone&) {
        // Its crashable part finished in a child process (SIGKILL crashes).
      } catch (const Crashed&) {
        // Killed, and the model did not restart it: a dead process, finished.
      } catch (...) {
        thrown[static_cast<std::size_t>(a)] = std::current_exception();
      }
      if (gate_) gate_->ended(a);
      disarm_crash_points();
      current = -1;
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : thrown) {
    if (e) std::rethrow_exception(e);
  }
}

std::optional<ThreadEnv::LostConnection> ThreadEnv::lost_connection() const {
  std::lock_guard l(m_);
  return lost_;
}

Time ThreadEnv::wall_now() const { return std::chrono::duration_cast<Time>(Clock::now() - start_); }

// The timing model's clock skew (ThreadEnvOptions::timing): the actor's clock is behind,
// right or ahead by skew_ms, drawn once per actor (seeded), as the simulation explores it.
Time ThreadEnv::now() {
  const Time t = skewed_now();
  maybe_stall();  // the timing model's stall after a clock read, drawn as before a statement
  return t;
}

Time ThreadEnv::skewed_now() {
  const Time wall = wall_now();
  if (options_.timing.skew_ms <= 0 || current < 0) return wall;
  std::lock_guard l(m_);
  auto [it, fresh] = skew_.try_emplace(current, Duration{0});
  if (fresh) {
    const Duration s = std::chrono::milliseconds(options_.timing.skew_ms);
    const auto c = std::uniform_int_distribution<int>(0, 2)(rng_);
    it->second = c == 0 ? Duration{0} : c == 1 ? -s : s;
  }
  return wall + it->second;
}

// The timing model's jitter: a sleep lasts anywhere within its range (drawn, seeded).
void ThreadEnv::sleep_for(Duration duration) {
  jitter();
  if (options_.timing.jitter > 0 && duration > Duration{0}) {
    std::lock_guard l(m_);
    const double j = options_.timing.jitter;
    const double factor = std::uniform_real_distribution<double>(1 - j, 1 + j)(rng_);
    duration = Duration{static_cast<Duration::rep>(static_cast<double>(duration.count()) * factor)};
  }
  std::this_thread::sleep_for(duration);
}

// The timing model's stalls: before a statement, while the iteration has stalls left, a
// pause of the thread for stall_ms with probability 1/4 (seeded).
void ThreadEnv::maybe_stall() {
  if (options_.timing.stalls <= 0 || current < 0) return;
  {
    std::lock_guard l(m_);
    if (stalls_taken_ >= options_.timing.stalls || std::uniform_int_distribution<int>(0, 3)(rng_) != 0) return;
    ++stalls_taken_;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(options_.timing.stall_ms));
}

bool ThreadEnv::in_actor() { return current >= 0; }

ActorId ThreadEnv::current_actor() {
  if (current < 0) throw ModelError("current_actor() outside any actor");
  return current;
}

std::uint64_t ThreadEnv::random(std::uint64_t bound) {
  if (bound == 0) throw ModelError("random(0)");
  std::lock_guard l(m_);
  return std::uniform_int_distribution<std::uint64_t>(0, bound - 1)(rng_);
}

int ThreadEnv::choose(int n, std::string_view /*label*/) {
  if (n <= 0) throw ModelError("choose(n) needs n > 0");
  return static_cast<int>(random(static_cast<std::uint64_t>(n)));
}

void ThreadEnv::observe(const Event& event) {
  if (event.ordered) jitter(false);  // a visible operation of its own, as in the simulation (maybe in a destructor)
  std::lock_guard l(m_);
  if (sink_) sink_(current, wall_now(), event);
}

std::unique_ptr<Mutex> ThreadEnv::new_mutex(std::string name) { return std::make_unique<ThreadMutex>(*this, std::move(name)); }
std::unique_ptr<RWMutex> ThreadEnv::new_rwmutex(std::string name) { return std::make_unique<ThreadRWMutex>(*this, std::move(name)); }
std::unique_ptr<Lock> ThreadEnv::new_lock(std::string name) { return std::make_unique<ThreadLock>(*this, std::move(name)); }
std::unique_ptr<SharedVar> ThreadEnv::new_shared_var(std::string /*name*/, std::int64_t initial) {
  return std::make_unique<ThreadSharedVar>(*this, initial);
}
std::unique_ptr<File> ThreadEnv::open_file(std::string path) { return std::make_unique<ThreadFile>(*this, dir_ / file_safe(path)); }

namespace {

// Whether a statement lets go of something (an unlock, the end of a transaction): not a
// crash point, as it may run in a destructor, and a death lets go of the same.
bool statement_releases(std::string_view statement) {
  std::string head;
  for (char ch : statement.substr(0, 64)) head += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const std::size_t from = head.find_first_not_of(" \t\n");
  if (from == std::string::npos) return false;
  head.erase(0, from);
  for (const char* word : {"commit", "rollback", "end", "abort", "release"}) {
    if (head.starts_with(word)) return true;
  }
  return head.find("unlock") != std::string::npos;
}

}  // namespace

std::unique_ptr<pg::Pool> ThreadEnv::new_pg_pool(const pg::PoolConfig& config) {
  StatementHooks hooks;
  std::vector<ThreadEnvOptions::SessionFault> ways;  // how the pool's faults may end a session
  if (config.backend_terminated) ways = {ThreadEnvOptions::SessionFault::terminate, ThreadEnvOptions::SessionFault::close};
  if (config.server_restart && options_.restart_server) ways.push_back(ThreadEnvOptions::SessionFault::restart);
  hooks.before = [this, ways](pg::Connection& c, std::string_view statement) {
    jitter(false);  // a statement may release in a destructor: an abandoned actor unwinds elsewhere
    if (!statement_releases(statement)) maybe_crash();  // a crash point, as in the simulation
    maybe_stall();
    if (!ways.empty() && current >= 0 && may_end_session_at(statement)) maybe_end_session(c, ways);
  };
  hooks.after = [this](std::optional<pg::Stmt> op, Duration took) { record_pg(op, took); };
  hooks.pool_op = [this](bool returning) { jitter(!returning); };
  hooks.failed = [this](std::string_view op, const pg::Error& e) {
    if (!connection_lost(e)) return;
    std::lock_guard l(m_);
    if (restarted_ || (current >= 0 && faulted_.count(current) > 0)) return;  // the fault's doing
    if (!lost_) lost_ = LostConnection{current, std::string(op), e};
  };
  return make_libpq_pool(options_.conninfo, config, std::move(hooks));
}

void ThreadEnv::jitter(bool may_unwind) {
  if (may_unwind && abandoned_ && current >= 0 && std::uncaught_exceptions() == 0) throw ActorDone{};
  const bool turn = gate_ && current >= 0 && gate_->before(current);  // its turn in the aimed order
  if (may_unwind) maybe_crash();  // a crash point (releases, observations and statements pass false)
  if (turn) return;
  if (options_.max_jitter.count() <= 0) return;
  Duration d;
  {
    std::lock_guard l(m_);
    d = Duration(std::uniform_int_distribution<std::int64_t>(0, options_.max_jitter.count() - 1)(rng_));
  }
  std::this_thread::sleep_for(d);
}

void ThreadEnv::record_acquisition(bool waited, Duration how_long) {
  std::lock_guard l(m_);
  ++memory_.acquisitions;
  if (!waited) return;
  ++memory_.waits;
  memory_.waited += how_long;
  memory_.longest = std::max(memory_.longest, how_long);
}

void ThreadEnv::record_pg(std::optional<pg::Stmt> op, Duration took) {
  if (!op || !pg::info(*op).may_wait) return;
  std::lock_guard l(m_);
  ++pg_.acquisitions;
  if (took < options_.pg_wait_threshold) return;
  ++pg_.waits;
  pg_.waited += took;
  pg_.longest = std::max(pg_.longest, took);
}

LockWaitStats ThreadEnv::memory_lock_stats() const {
  std::lock_guard l(m_);
  return memory_;
}

LockWaitStats ThreadEnv::pg_lock_stats() const {
  std::lock_guard l(m_);
  return pg_;
}

void ThreadEnv::hot(std::string_view obligation, Duration within) {
  jitter(false);  // a visible operation, as in the simulation
  const Time at = wall_now();
  std::lock_guard l(m_);
  const auto it = std::find_if(hot_.begin(), hot_.end(), [&](const HotObligation& h) { return h.name == obligation; });
  if (it == hot_.end()) hot_.push_back({std::string(obligation), at, within});
}

void ThreadEnv::cold(std::string_view obligation) {
  jitter(false);  // a visible operation, as in the simulation
  const Time at = wall_now();
  std::lock_guard l(m_);
  const auto it = std::find_if(hot_.begin(), hot_.end(), [&](const HotObligation& h) { return h.name == obligation; });
  if (it == hot_.end()) return;
  if (!late_ && it->within != Duration::max() && at - it->since > it->within) {
    late_ = Violation{it->name, fmt::format("\"{}\" was met {} ms after it went hot: more than its {} ms (on the server, in "
                                            "wall time)",
                                            it->name, std::chrono::duration_cast<std::chrono::milliseconds>(at - it->since).count(),
                                            std::chrono::duration_cast<std::chrono::milliseconds>(it->within).count())};
  }
  hot_.erase(it);
}

std::optional<Violation> ThreadEnv::obligation_at_end() const {
  std::lock_guard l(m_);
  if (late_) return late_;
  if (hot_.empty()) return std::nullopt;
  return Violation{hot_.front().name, fmt::format("every actor finished with \"{}\" still hot (on the server)", hot_.front().name)};
}

}  // namespace lockstep::real
