// model/phase_lock/lock_manager.h: seed 003's PhaseExecutionLockManager, on Env.
//
// One asyncio.Lock per (flow_id, phase) plus the time it was taken. try_acquire_lock first
// force-releases a lock held longer than the timeout (5 minutes: "prevents deadlocks from
// crashes"), then takes the lock if it is free. release_lock releases whatever holds the
// lock ("safe to call without acquire"): it does not know who took it.
//
// On one asyncio event loop each of these calls runs without interruption (asyncio.Lock's
// acquire of a free lock does not suspend). Here each is a read of the key's lock word (the
// holder's token, 0 when free) and one compare-and-swap that applies the whole decision,
// retried should another actor have changed the word in between: the same atomicity.
//
// The corrected variant (owner_tokens): try_acquire_lock returns a token and release_lock
// only releases when given the token of the current holder. It fixes the release of
// another execution's lock; the forced release after the timeout remains, and with it a
// second execution beside a first that is merely slow.
//
// Reports (Env::observe): "acquired" (key, token), "forced_release" (key, token of the
// holder it evicted), "releasing" (key, the caller's token) followed by "released" (key,
// the token whose lock went), and "release_refused" (key, token).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "lockstep/model/env.h"

namespace lockstep::phase_lock {

// What the phase lock reports for its invariants (subject: the phase lock's key).
namespace events {
inline constexpr EventName kAcquired{"acquired", 1};              // key, token (ordered per key)
inline constexpr EventName kForcedRelease{"forced_release", 2};   // key, the expired holder
inline constexpr EventName kReleaseRefused{"release_refused", 3}; // key, token
inline constexpr EventName kReleasing{"releasing", 4};            // key, the caller's token
inline constexpr EventName kReleased{"released", 5};              // key, whose lock went
inline constexpr EventName kAlreadyRunning{"already_running", 6}; // key, actor
inline constexpr EventName kExecStart{"exec_start", 7};           // key, token
inline constexpr EventName kExecEnd{"exec_end", 8};               // key, token
}  // namespace events


class PhaseExecutionLockManager {
 public:
  static constexpr Duration kDefaultTimeout = std::chrono::minutes(5);

  PhaseExecutionLockManager(Env& env, Duration timeout, bool owner_tokens)
      : env_(env), timeout_(timeout), owner_tokens_(owner_tokens) {}

  // The key's number in events and object names (keys numbered as first used).
  int key_of(const std::string& flow, const std::string& phase);

  // A token (> 0) when acquired, 0 when the phase is already executing.
  std::int64_t try_acquire_lock(const std::string& flow, const std::string& phase);
  // `token` is ignored unless owner_tokens: then only the current holder's token releases.
  void release_lock(const std::string& flow, const std::string& phase, std::int64_t token);

 private:
  struct Entry {
    std::unique_ptr<SharedVar> word;  // the holder's token; 0 when free
    std::map<std::int64_t, Time> taken;  // when each token took the lock
    int number = 0;
  };
  Entry& entry(const std::string& flow, const std::string& phase);

  Env& env_;
  Duration timeout_;
  bool owner_tokens_;
  std::map<std::pair<std::string, std::string>, Entry> locks_;
  std::int64_t next_token_ = 1;
};

}  // namespace lockstep::phase_lock
