#include "lockstep/model/phase_lock/lock_manager.h"

#include <fmt/format.h>

namespace lockstep::phase_lock {

PhaseExecutionLockManager::Entry& PhaseExecutionLockManager::entry(const std::string& flow, const std::string& phase) {
  Entry& e = locks_[{flow, phase}];
  if (!e.word) {
    e.number = static_cast<int>(locks_.size());
    e.word = env_.new_shared_var(fmt::format("phase_lock({}:{})", flow, phase), 0);
  }
  return e;
}

int PhaseExecutionLockManager::key_of(const std::string& flow, const std::string& phase) { return entry(flow, phase).number; }

std::int64_t PhaseExecutionLockManager::try_acquire_lock(const std::string& flow, const std::string& phase) {
  Entry& e = entry(flow, phase);
  for (;;) {
    const std::int64_t holder = e.word->load();
    // "Lock timeout ... forcing release": the holder may still be running.
    const bool expired = holder != 0 && env_.now() - e.taken[holder] > timeout_;
    if (holder != 0 && !expired) return 0;  // "already executing, skipping"
    const std::int64_t token = next_token_;
    if (!e.word->compare_exchange(holder, token)) continue;  // changed meanwhile: decide again
    ++next_token_;
    if (expired) env_.observe(events::kForcedRelease.scoped(e.number, holder));
    e.taken[token] = env_.now();
    env_.observe(events::kAcquired.scoped(e.number, token));
    return token;
  }
}

void PhaseExecutionLockManager::release_lock(const std::string& flow, const std::string& phase, std::int64_t token) {
  Entry& e = entry(flow, phase);
  for (;;) {
    const std::int64_t holder = e.word->load();
    if (owner_tokens_ && token != holder) {
      env_.observe(events::kReleaseRefused.scoped(e.number, token));
      return;
    }
    if (holder == 0) return;  // safe to call without acquire
    if (!e.word->compare_exchange(holder, 0)) continue;
    env_.observe(events::kReleasing.scoped(e.number, token));  // who asked
    env_.observe(events::kReleased.scoped(e.number, holder));  // whose lock went
    return;
  }
}

}  // namespace lockstep::phase_lock
