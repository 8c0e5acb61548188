#include "lockstep/sim/sched/sim_objects.h"

#include <array>

#include <fmt/format.h>

namespace lockstep::sim {
namespace {

using Kind = StepResult::Kind;

// Shared shape of the simulated objects: a name in the scheduler's object table.
class SimObject {
 protected:
  SimObject(Scheduler& s, std::string name) : s_(s), id_(s.new_object(std::move(name))) {}
  const std::string& name() const { return s_.object_name(id_); }
  std::string holder_name(ActorId a) const {
    return a < 0 ? std::string("nobody") : std::string(s_.actor_name(a));
  }
  // The actor performing the operation, or -1 outside any actor.
  ActorId me() const { return s_.in_actor() ? s_.current() : -1; }
  // Ends a try operation that did not take the object: it only looked (a read).
  bool not_taken(Kind why) {
    s_.refine_access(Access::read);
    s_.note_result({why});
    return false;
  }
  // Ends a wait by its timer. The timeout changes nothing, but it is a read of the object:
  // it races with the object's release (had the release come first, the waiter's other
  // transition, the grant, would have run), so it must not commute with it.
  bool timed_out() {
    s_.refine_access(Access::read);
    s_.note_result({Kind::timeout});
    return false;
  }

  Scheduler& s_;
  ObjectId id_;
};

class SimMutex final : public Mutex, public WaitCondition, SimObject {
 public:
  SimMutex(Scheduler& s, std::string name) : SimObject(s, std::move(name)) {}

  void lock() override {
    s_.yield({"lock", {id_, Access::acquire}}, this);
    owner_ = me();
    s_.note_result({Kind::ok});
  }

  bool try_lock() override {
    s_.yield(narrowing({"try_lock", {id_, Access::acquire}}));
    if (owner_ != kFree) return not_taken(Kind::failed);
    owner_ = me();
    s_.note_result({Kind::ok});
    return true;
  }

  bool try_lock_for(Duration timeout) override {
    s_.yield(narrowing({"lock", {id_, Access::acquire}}));  // arrival: take it if free, else wait
    if (owner_ != kFree) {
      s_.refine_access(Access::read);
      s_.note_result({Kind::failed});
      if (s_.yield({"lock_wait", {id_, Access::acquire}}, this, timeout) == Wake::timer) return timed_out();
    }
    owner_ = me();
    s_.note_result({Kind::ok});
    return true;
  }

  void unlock() override {
    s_.yield({"unlock", {id_, Access::release}});
    if (owner_ != me() || owner_ == kFree) {
      throw ModelError(fmt::format("unlock of mutex {}, which {} does not hold (held by {})", name(),
                                   holder_name(me()), holder_name(owner_)));
    }
    owner_ = kFree;
  }

  bool ready(ActorId) const override { return owner_ == kFree; }
  std::string describe(ActorId waiter) const override {
    return fmt::format("mutex {} held by {}{}", name(), holder_name(owner_), owner_ == waiter ? " (itself)" : "");
  }

 private:
  static constexpr ActorId kFree = -2;  // -1 is "outside any actor"
  ActorId owner_ = kFree;
};

class SimRWMutex final : public RWMutex, SimObject {
 public:
  SimRWMutex(Scheduler& s, std::string name) : SimObject(s, std::move(name)), writer_guard_(*this), reader_guard_(*this) {}

  void lock() override {
    s_.yield({"lock", {id_, Access::acquire}});
    if (!writer_can_enter()) {
      // The writer announces itself; from now on new readers wait (Go's writer preference).
      ++writers_waiting_;
      s_.note_result({Kind::failed});
      s_.yield({"lock_wait", {id_, Access::acquire}}, &writer_guard_);
      --writers_waiting_;
    }
    writer_ = me();
    s_.note_result({Kind::ok});
  }

  bool try_lock() override {
    s_.yield(narrowing({"try_lock", {id_, Access::acquire}}));
    if (!writer_can_enter()) return not_taken(Kind::failed);
    writer_ = me();
    s_.note_result({Kind::ok});
    return true;
  }

  void unlock() override {
    s_.yield({"unlock", {id_, Access::release}});
    if (writer_ != me() || writer_ == kFree) {
      throw ModelError(fmt::format("unlock of rwmutex {}, which {} does not hold for writing", name(), holder_name(me())));
    }
    writer_ = kFree;
  }

  void rlock() override {
    s_.yield({"rlock", {id_, Access::acquire_shared}}, &reader_guard_);
    add_reader();
    s_.note_result({Kind::ok});
  }

  bool try_rlock() override {
    s_.yield(narrowing({"try_rlock", {id_, Access::acquire_shared}}));
    if (!reader_can_enter()) return not_taken(Kind::failed);
    add_reader();
    s_.note_result({Kind::ok});
    return true;
  }

  void runlock() override {
    s_.yield({"runlock", {id_, Access::release}});
    const ActorId a = me();
    if (a < 0 || readers_[a] == 0) {
      throw ModelError(fmt::format("runlock of rwmutex {}, which {} does not hold for reading", name(), holder_name(a)));
    }
    --readers_[a];
    --reader_count_;
  }

 private:
  static constexpr ActorId kFree = -2;

  struct WriterGuard final : WaitCondition {
    explicit WriterGuard(const SimRWMutex& m) : m(m) {}
    bool ready(ActorId) const override { return m.writer_can_enter(); }
    std::string describe(ActorId) const override { return m.describe_holders(); }
    const SimRWMutex& m;
  };
  struct ReaderGuard final : WaitCondition {
    explicit ReaderGuard(const SimRWMutex& m) : m(m) {}
    bool ready(ActorId) const override { return m.reader_can_enter(); }
    std::string describe(ActorId) const override { return m.describe_holders(); }
    const SimRWMutex& m;
  };

  bool writer_can_enter() const { return writer_ == kFree && reader_count_ == 0; }
  bool reader_can_enter() const { return writer_ == kFree && writers_waiting_ == 0; }
  void add_reader() {
    const ActorId a = me();
    if (a >= 0) ++readers_[a];
    ++reader_count_;
  }
  std::string describe_holders() const {
    std::string readers;
    for (ActorId a = 0; a < kMaxActors; ++a) {
      if (readers_[a] > 0) readers += fmt::format("{}{}", readers.empty() ? "" : ", ", s_.actor_name(a));
    }
    return fmt::format("rwmutex {} (writer: {}; readers: {}; writers waiting: {})", name(),
                       holder_name(writer_ == kFree ? -1 : writer_), readers.empty() ? "none" : readers,
                       writers_waiting_);
  }

  ActorId writer_ = kFree;
  int reader_count_ = 0;
  int writers_waiting_ = 0;
  std::array<int, kMaxActors> readers_{};
  WriterGuard writer_guard_;
  ReaderGuard reader_guard_;
};

class SimLock final : public Lock, public WaitCondition, SimObject {
 public:
  SimLock(Scheduler& s, std::string name) : SimObject(s, std::move(name)) {}

  void acquire() override {
    s_.yield({"acquire", {id_, Access::acquire}}, this);
    take();
  }

  bool acquire_for(Duration timeout) override {
    s_.yield(narrowing({"acquire", {id_, Access::acquire}}));  // arrival: take it if free, else wait
    if (locked_) {
      s_.refine_access(Access::read);
      s_.note_result({Kind::failed});
      if (s_.yield({"acquire_wait", {id_, Access::acquire}}, this, timeout) == Wake::timer) return timed_out();
    }
    take();
    return true;
  }

  bool try_acquire() override {
    s_.yield(narrowing({"try_acquire", {id_, Access::acquire}}));
    if (locked_) return not_taken(Kind::failed);
    take();
    return true;
  }

  void release() override {
    s_.yield({"release", {id_, Access::release}});
    if (!locked_) throw ModelError(fmt::format("release of lock {}, which is not locked", name()));
    locked_ = false;
    holder_ = -1;
  }

  bool locked() override {
    s_.yield({"locked", {id_, Access::read}});
    s_.note_result({Kind::value, locked_ ? 1 : 0});
    return locked_;
  }

  bool ready(ActorId) const override { return !locked_; }
  std::string describe(ActorId waiter) const override {
    return fmt::format("lock {} acquired by {}{}", name(), holder_name(holder_), holder_ == waiter ? " (itself)" : "");
  }

 private:
  void take() {
    locked_ = true;
    holder_ = me();
    s_.note_result({Kind::ok});
  }

  bool locked_ = false;
  ActorId holder_ = -1;  // who acquired it last, for reports only: asyncio locks have no owner
};

class SimSharedVar final : public SharedVar, SimObject {
 public:
  SimSharedVar(Scheduler& s, std::string name, std::int64_t initial) : SimObject(s, std::move(name)), value_(initial) {}

  std::int64_t load() override {
    s_.yield({"read", {id_, Access::read}});
    s_.note_var_step({value_, value_});
    s_.note_result({Kind::value, value_});
    return value_;
  }

  void store(std::int64_t value) override {
    s_.yield({"write", {id_, Access::write}, value, true});
    s_.note_var_step({value_, value});
    value_ = value;
  }

  bool compare_exchange(std::int64_t expected, std::int64_t desired) override {
    s_.yield(comparing({"cas", {id_, Access::read_write}, desired, true}));
    s_.note_var_step({value_, value_ == expected ? desired : value_, expected});
    if (value_ != expected) {
      s_.refine_access(Access::read);  // a failed CAS is a read
      s_.note_result({Kind::failed, value_});
      if (s_.logging()) s_.note_detail(fmt::format("({} is {}, not {})", name(), value_, expected));
      return false;
    }
    value_ = desired;
    s_.note_result({Kind::ok});
    if (s_.logging()) s_.note_detail(fmt::format("({} was {}, now {})", name(), expected, desired));
    return true;
  }

  std::int64_t fetch_add(std::int64_t delta) override {
    s_.yield({"add", {id_, Access::read_write}, delta, true});
    const std::int64_t before = value_;
    s_.note_var_step({before, before + delta});
    value_ += delta;
    s_.note_result({Kind::value, before});
    if (s_.logging()) s_.note_detail(fmt::format("(now {})", value_));
    return before;
  }

 private:
  std::int64_t value_;
};

}  // namespace

std::unique_ptr<Mutex> make_sim_mutex(Scheduler& s, std::string name) {
  return std::make_unique<SimMutex>(s, std::move(name));
}
std::unique_ptr<RWMutex> make_sim_rwmutex(Scheduler& s, std::string name) {
  return std::make_unique<SimRWMutex>(s, std::move(name));
}
std::unique_ptr<Lock> make_sim_lock(Scheduler& s, std::string name) {
  return std::make_unique<SimLock>(s, std::move(name));
}
std::unique_ptr<SharedVar> make_sim_shared_var(Scheduler& s, std::string name, std::int64_t initial) {
  return std::make_unique<SimSharedVar>(s, std::move(name), initial);
}

}  // namespace lockstep::sim
