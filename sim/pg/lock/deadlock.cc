// sim/pg/lock/deadlock.cc: the deadlock check of sim/pg/lock/deadlock.h, with deadlock.c's search:
// DeadLockCheckRecurse tries the soft edges of a cycle one at a time as constraints,
// TestConfiguration expands them into queue orders (TopoSort) and looks for cycles again
// from the sessions they name and from the checking one.
#include "lockstep/sim/pg/lock/deadlock.h"

#include <algorithm>
#include <optional>

#include "lockstep/sim/invariant.h"

namespace lockstep::sim::pg {

class DeadlockDetector {
 public:
  explicit DeadlockDetector(std::initializer_list<LockTable*> tables) : tables_(tables) {}

  DeadlockVerdict run(const Waiter& start) {
    for (LockTable* t : tables_) {
      for (const auto& [key, l] : t->locks_) max_constraints_ += l.queue.size();
    }
    if (search(start.session)) return DeadlockVerdict::hard;
    if (orders_.empty()) return DeadlockVerdict::none;
    for (Order& o : orders_) {
      LOCKSTEP_INVARIANT(o.procs.size() == o.lock->queue.size(), "deadlock check: a reordered queue keeps its waiters");
      o.lock->queue.assign(o.procs.begin(), o.procs.end());
      owner(*o.lock).wake(*o.lock);
    }
    return DeadlockVerdict::soft;
  }

 private:
  using Lock = LockTable::Lock;
  using WaiterPtr = std::shared_ptr<Waiter>;
  // `waiter` waits behind `blocker` in `lock`'s queue; as a constraint: put it before.
  struct Edge {
    int waiter = 0;
    int blocker = 0;
    Lock* lock = nullptr;
  };
  struct Order {
    Lock* lock = nullptr;
    std::vector<WaiterPtr> procs;
  };
  struct Waiting {
    Lock* lock = nullptr;
    const Waiter* waiter = nullptr;
  };

  // The table a reordered queue belongs to (its queue rule says how it wakes).
  LockTable& owner(const Lock& lock) const {
    for (LockTable* t : tables_) {
      for (const auto& [key, l] : t->locks_) {
        if (&l == &lock) return *t;
      }
    }
    LOCKSTEP_INVARIANT(false, "deadlock check: a reordered queue belongs to a table it checked");
    return *tables_.front();
  }

  std::optional<Waiting> waiting_of(int session) const {
    for (LockTable* t : tables_) {
      for (auto& [key, l] : t->locks_) {
        for (const WaiterPtr& w : l.queue) {
          if (w->session == session && w->state == Waiter::State::waiting) return Waiting{&l, w.get()};
        }
      }
    }
    return std::nullopt;
  }

  // DeadLockCheckRecurse: true when no configuration undoes every cycle (orders_ then holds
  // nothing of use); false with orders_ holding the one found.
  bool search(int start) {
    std::vector<Edge> soft;
    const int found = test(start, soft);
    if (found < 0) return true;
    if (found == 0) return false;
    if (constraints_.size() >= max_constraints_) return true;
    for (const Edge& e : soft) {
      constraints_.push_back(e);
      if (!search(start)) return false;
      constraints_.pop_back();
    }
    return true;
  }

  // TestConfiguration: -1 for a hard cycle (or constraints that contradict each other), else
  // the number of soft edges of a cycle still there (0: none), those edges in `soft`.
  int test(int start, std::vector<Edge>& soft) {
    if (!expand()) return -1;
    int found = 0;
    auto cycle_from = [&](int session) {  // true: a hard cycle
      std::vector<Edge> edges;
      if (!find_cycle(session, edges)) return false;
      if (edges.empty()) return true;
      found = static_cast<int>(edges.size());
      soft = std::move(edges);
      return false;
    };
    for (const Edge& c : constraints_) {
      if (cycle_from(c.waiter) || cycle_from(c.blocker)) return -1;
    }
    if (cycle_from(start)) return -1;
    return found;
  }

  // ExpandConstraints: a queue order per lock the constraints name, the newest constraint
  // first (the only one that can make them inconsistent).
  bool expand() {
    orders_.clear();
    for (std::size_t i = constraints_.size(); i-- > 0;) {
      Lock* lock = constraints_[i].lock;
      if (std::any_of(orders_.begin(), orders_.end(), [&](const Order& o) { return o.lock == lock; })) continue;
      Order o{lock, {}};
      if (!topo_sort(*lock, i + 1, o.procs)) return false;
      orders_.push_back(std::move(o));
    }
    return true;
  }

  // TopoSort: the queue's waiters in an order that puts each constraint's waiter before its
  // blocker (the first `n` constraints), otherwise as close to the queue's order as it can:
  // filled from the back with the last waiter nothing must follow.
  bool topo_sort(const Lock& lock, std::size_t n, std::vector<WaiterPtr>& out) const {
    std::vector<WaiterPtr> procs(lock.queue.begin(), lock.queue.end());
    const std::size_t size = procs.size();
    auto index_of = [&](int session) -> std::optional<std::size_t> {
      for (std::size_t j = size; j-- > 0;) {
        if (procs[j]->session == session) return j;
      }
      return std::nullopt;
    };
    std::vector<int> before(size, 0);               // constraints saying it must come before another
    std::vector<std::vector<std::size_t>> after(size);  // per blocker: the waiters to come before it
    for (std::size_t i = 0; i < n; ++i) {
      const auto w = index_of(constraints_[i].waiter);
      const auto b = index_of(constraints_[i].blocker);
      if (!w || !b) continue;  // not about this queue
      ++before[*w];
      after[*b].push_back(*w);
    }
    out.assign(size, nullptr);
    for (std::size_t i = size; i-- > 0;) {
      std::optional<std::size_t> next;
      for (std::size_t j = size; j-- > 0;) {
        if (procs[j] != nullptr && before[j] == 0) {
          next = j;
          break;
        }
      }
      if (!next) return false;  // the constraints form a cycle
      out[i] = std::move(procs[*next]);
      procs[*next] = nullptr;
      for (const std::size_t w : after[*next]) --before[w];
    }
    return true;
  }

  // FindLockCycle: whether a cycle of waits-for edges returns to `session`; the soft edges
  // on it in `soft` (deepest first).
  bool find_cycle(int session, std::vector<Edge>& soft) {
    visited_.clear();
    soft.clear();
    return cycle_through(session, soft);
  }

  bool cycle_through(int session, std::vector<Edge>& soft) {
    for (std::size_t i = 0; i < visited_.size(); ++i) {
      if (visited_[i] == session) return i == 0;  // back at the start, or a cycle elsewhere
    }
    visited_.push_back(session);
    const std::optional<Waiting> w = waiting_of(session);
    if (!w) return false;
    const Mode mode = w->waiter->mode;
    // Hard edges first: one who both holds and queues ahead is a hard edge. A row-lock
    // waiter not behind another waits for the holders it saw (Waiter::waits_for) only.
    const auto& seen = w->waiter->waits_for;
    const bool all_holders = w->waiter->behind || seen.empty();
    for (const auto& [holder, hold] : w->lock->holders) {
      if (holder == session || !LockTable::conflicts_with_held(mode, hold)) continue;
      if (!all_holders && std::find(seen.begin(), seen.end(), holder) == seen.end()) continue;
      if (cycle_through(holder, soft)) return true;
    }
    auto soft_edges = [&](const auto& queue) {
      for (const WaiterPtr& q : queue) {
        if (q->session == session) break;
        if (LockTable::conflicts(q->mode, mode) && cycle_through(q->session, soft)) {
          soft.push_back({session, q->session, w->lock});
          return true;
        }
      }
      return false;
    };
    for (const Order& o : orders_) {
      if (o.lock == w->lock) return soft_edges(o.procs);  // the order being tried
    }
    return soft_edges(w->lock->queue);
  }

  std::vector<LockTable*> tables_;
  std::size_t max_constraints_ = 0;  // deadlock.c's MaxBackends bound: the waiters there are
  std::vector<Edge> constraints_;
  std::vector<Order> orders_;
  std::vector<int> visited_;
};

DeadlockVerdict check_deadlock(const Waiter& start, std::initializer_list<LockTable*> tables) {
  return DeadlockDetector(tables).run(start);
}

}  // namespace lockstep::sim::pg
