// real/thread_env_crash.cc: ThreadEnv's crash fault (ThreadEnvOptions::crashes), in the
// actor's own thread as in the simulation: an armed actor's visible operations are crash
// points, and the drawn one throws Crashed instead of running.
#include <exception>

#include "lockstep/real/thread_env.h"

namespace lockstep::real {
namespace {

thread_local std::optional<CrashKind> armed;  // the calling actor's crash points, when armed

}  // namespace

void ThreadEnv::crash_points(CrashKind kind) {
  if (!in_actor()) throw ModelError("crash_points: called outside any actor");  // as the simulation refuses it
  if (!options_.crashes) return;
  armed = kind;
  std::lock_guard l(m_);
  ++crashes_.armed;
}

void ThreadEnv::no_crash_points() {
  if (!armed) return;
  armed.reset();
  std::lock_guard l(m_);
  ++crashes_.finished;
}

void ThreadEnv::maybe_crash() {
  // Not while unwinding: the dead process's releases are the kernel's.
  if (!armed || std::uncaught_exceptions() > 0) return;
  {
    std::lock_guard l(m_);
    if (++crashes_.points != options_.crash_at) return;
    ++crashes_.injected;
  }
  const CrashKind kind = *armed;
  armed.reset();
  throw Crashed{kind};
}

void ThreadEnv::disarm_crash_points() { armed.reset(); }

CrashStats ThreadEnv::crash_stats() const {
  std::lock_guard l(m_);
  return crashes_;
}

}  // namespace lockstep::real
