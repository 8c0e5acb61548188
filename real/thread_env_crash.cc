// real/thread_env_crash.cc: ThreadEnv's crash fault by SIGKILL (ThreadEnvOptions::
// sigkill_crashes): the armed actor's crashable part runs in a forked child, which its thread
// here kills at a random moment; the child's observations come back through a pipe.
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "lockstep/real/thread_env.h"

namespace lockstep::real {
namespace {

using Clock = std::chrono::steady_clock;

// One observation of a child as it crosses the pipe: smaller than PIPE_BUF, so one write(2)
// is whole or not at all, even when the child is killed during it.
struct ChildEvent {
  std::int64_t at_ns = 0;
  std::int64_t subject = 0;
  std::int64_t value = 0;
  std::int64_t scope = 0;
  std::uint16_t kind = 0;
  std::uint8_t ordered = 0;
  std::uint8_t name_size = 0;
  char name[60] = {};
};
static_assert(sizeof(ChildEvent) <= PIPE_BUF);

// When the child is killed: a random moment within the crash window, or never for none.
Duration kill_delay(Duration crash_window, std::mt19937_64& rng) {
  const std::int64_t window = crash_window.count();
  return window <= 0 ? Duration::max() : Duration(std::uniform_int_distribution<std::int64_t>(0, window - 1)(rng));
}

// Appends what the (non-blocking) pipe end fd holds now to bytes.
void drain(int fd, std::string& bytes) {
  char chunk[4096];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) {
      bytes.append(chunk, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return;
    }
  }
}

// Waits for the child pid, draining its pipe fd into bytes, and kills it once delay has
// passed since start; returns its wait status.
int wait_or_kill(pid_t pid, int fd, std::string& bytes, Clock::time_point start, Duration delay) {
  int status = 0;
  for (;;) {
    drain(fd, bytes);
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
    if (Clock::now() - start >= delay) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return status;
}

// Hands the child's observations in bytes to sink as the actor's, keeping their names alive in names.
void deliver(const std::string& bytes, ActorId actor, std::deque<std::string>& names, const ThreadEnv::EventSink& sink) {
  for (std::size_t at = 0; at + sizeof(ChildEvent) <= bytes.size(); at += sizeof(ChildEvent)) {
    ChildEvent c;
    std::memcpy(&c, bytes.data() + at, sizeof c);
    names.emplace_back(c.name, c.name_size);
    const Event e{names.back(), c.subject, c.value, c.ordered != 0, c.scope, c.kind};
    if (sink) sink(actor, Time(c.at_ns), e);
  }
}

// Ends the parent's side of the actor as its child ended (wait status): Crashed if killed,
// ModelError if it failed, else ActorDone.
[[noreturn]] void end_as_child_did(int status) {
  if (WIFSIGNALED(status)) throw Crashed{CrashKind::process};  // the restarted process: its recovery
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw ModelError(fmt::format("the crashable process of this actor exited with status {} (its message is on stderr)",
                                 WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  }
  throw ActorDone{};  // it finished in the child: nothing is left to do here
}

}  // namespace

void ThreadEnv::crash_points(CrashKind /*kind: a real kill is always a process crash*/) {
  if (!options_.sigkill_crashes || child_pipe_ >= 0) return;
  const ActorId actor = current_actor();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw ModelError(fmt::format("crash fault: pipe failed: {}", std::strerror(errno)));
  Duration delay{0};
  pid_t pid = -1;
  {
    // The child gets this mutex as this thread holds it, and releases it like the parent.
    std::lock_guard l(m_);
    delay = kill_delay(options_.crash_window, rng_);
    pid = ::fork();
    if (pid > 0) ++sigkill_.forked;
  }
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw ModelError(fmt::format("crash fault: fork failed: {}", std::strerror(errno)));
  }
  if (pid == 0) {  // the child: the actor runs on here, until no_crash_points or its end
    ::close(fds[0]);
    child_pipe_ = fds[1];
    return;
  }
  ::close(fds[1]);
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  std::string bytes;
  const auto start = Clock::now();
  const int status = wait_or_kill(pid, fds[0], bytes, start, delay);
  const Duration took = Clock::now() - start;
  drain(fds[0], bytes);
  ::close(fds[0]);
  {
    std::lock_guard l(m_);
    deliver(bytes, actor, child_names_, sink_);
    if (WIFSIGNALED(status)) {
      ++sigkill_.killed;
    } else {
      ++sigkill_.finished;
      sigkill_.longest_finished = std::max(sigkill_.longest_finished, took);
    }
  }
  end_as_child_did(status);
}

void ThreadEnv::no_crash_points() { end_if_child(0, ""); }

void ThreadEnv::end_if_child(int code, std::string_view message) {
  if (child_pipe_ < 0) return;
  if (!message.empty()) {
    const std::string line = fmt::format("lockstep: in a crashable child process: {}\n", message);
    (void)!::write(STDERR_FILENO, line.data(), line.size());
  }
  ::_exit(code);  // no destructors, no stdio flush: they belong to the parent
}

SigkillStats ThreadEnv::sigkill_stats() const {
  std::lock_guard l(m_);
  return sigkill_;
}

// In a child, an observation goes to the pipe (see ChildEvent); the parent delivers it.
bool ThreadEnv::observe_in_child(const Event& event) {
  if (child_pipe_ < 0) return false;
  ChildEvent c;
  c.at_ns = wall_now().count();
  c.subject = event.subject;
  c.value = event.value;
  c.scope = event.scope;
  c.kind = event.kind;
  c.ordered = event.ordered ? 1 : 0;
  c.name_size = static_cast<std::uint8_t>(std::min(event.name.size(), sizeof c.name));
  std::memcpy(c.name, event.name.data(), c.name_size);
  while (::write(child_pipe_, &c, sizeof c) < 0 && errno == EINTR) {
  }
  return true;
}

}  // namespace lockstep::real
