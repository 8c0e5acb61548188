#include "lockstep/real/schedule_gate.h"

#include <stdexcept>

namespace lockstep::real {

ScheduleGate::ScheduleGate(std::vector<ActorId> order, Duration blocked_after, Duration missing_after)
    : order_(std::move(order)), blocked_after_(blocked_after), missing_after_(missing_after), since_(Clock::now()) {
  if (blocked_after_ <= Duration{0} || missing_after_ <= Duration{0}) {
    throw std::invalid_argument("ScheduleGate: blocked_after and missing_after must be positive");
  }
}

void ScheduleGate::advance(Clock::time_point now) {
  running_ = -1;
  ++next_;
  since_ = now;
  cv_.notify_all();
}

bool ScheduleGate::before(ActorId actor) {
  std::unique_lock l(m_);
  if (running_ == actor) advance(Clock::now());  // its step is over: it came back
  while (next_ < order_.size()) {
    const auto now = Clock::now();
    if (running_ < 0 && order_[next_] == actor) {
      running_ = actor;
      since_ = now;
      ++followed_;
      return true;
    }
    if (running_ < 0 && has_ended(order_[next_])) {
      ++skipped_;
      advance(now);
      continue;
    }
    if (running_ >= 0 && now - since_ >= blocked_after_) {
      advance(now);  // the running step waits (a lock): the next one goes
      continue;
    }
    if (running_ < 0 && now - since_ >= missing_after_) {
      ++skipped_;
      advance(now);  // its actor does not come
      continue;
    }
    cv_.wait_until(l, since_ + (running_ >= 0 ? blocked_after_ : missing_after_));
  }
  return false;
}

bool ScheduleGate::has_ended(ActorId actor) const {
  return actor >= 0 && static_cast<std::size_t>(actor) < ended_.size() && ended_[static_cast<std::size_t>(actor)];
}

void ScheduleGate::ended(ActorId actor) {
  std::lock_guard l(m_);
  if (actor < 0) return;
  if (ended_.size() <= static_cast<std::size_t>(actor)) ended_.resize(static_cast<std::size_t>(actor) + 1, false);
  ended_[static_cast<std::size_t>(actor)] = true;
  if (running_ == actor) {
    advance(Clock::now());
  } else {
    cv_.notify_all();  // a waiter may skip its steps now
  }
}

std::size_t ScheduleGate::followed() const {
  std::lock_guard l(m_);
  return followed_;
}

std::size_t ScheduleGate::skipped() const {
  std::lock_guard l(m_);
  return skipped_;
}

}  // namespace lockstep::real
