// An example model test, as a user of lockstep writes one in their own project.
//
// A ticket lock: take a ticket, wait until it is served, do the work, serve the next. The
// buggy version takes its ticket with a load and a store instead of one atomic step, so two
// actors can draw the same ticket and enter together (an actor whose turn went by gives
// up rather than wait forever, which would be a second bug). lockstep finds it, prints the
// interleaving, writes the trace and says how to replay it; the correct version passes. A
// third version never serves the next ticket: the waiter's obligation to enter stays hot.
#include <lockstep/gtest.h>
#include <lockstep/lockstep.h>

namespace {

using lockstep::ActorId;
using lockstep::Env;

struct TicketLock {
  explicit TicketLock(Env& env)
      : next(env.new_shared_var("next", 0)), serving(env.new_shared_var("serving", 0)), work(env.new_shared_var("work", 0)) {}
  std::unique_ptr<lockstep::SharedVar> next, serving, work;
};

std::int64_t take_ticket_atomically(TicketLock& l) {
  for (;;) {
    const auto t = l.next->load();
    if (l.next->compare_exchange(t, t + 1)) return t;
  }
}

std::int64_t take_ticket_racy(TicketLock& l) {
  const auto t = l.next->load();
  l.next->store(t + 1);  // the planted bug: another actor may have drawn t meanwhile
  return t;
}

template <typename TakeTicket>
lockstep::Model<TicketLock> ticket_lock(const char* name, TakeTicket take, bool serve_next = true) {
  return lockstep::Model<TicketLock>(name)
      .actors(2, [take, serve_next](TicketLock& l, Env& env, ActorId self) {
        lockstep::Obligation enter(env, "enter", self);  // "enter_a", "enter_b": each gets in or gives up
        const auto ticket = take(l);
        for (;;) {
          const auto now_serving = l.serving->load();
          if (now_serving == ticket) break;
          if (now_serving > ticket) {  // our turn went by (a duplicate ticket): give up
            enter.met();
            return;
          }
          env.sleep_for(std::chrono::milliseconds(1));  // back off: a scheduling point
        }
        enter.met();
        env.observe(lockstep::Event::scoped("enter", 0, self));  // lock 0, held by self
        l.work->store(self + 1);  // the protected work: a step others may interleave with
        env.observe(lockstep::Event::scoped("leave", 0, self));
        if (serve_next) l.serving->store(ticket + 1);
      })
      .at_most_one_holder("mutual_exclusion")
      .timed()
      .max_steps(500);
}

TEST(TicketLock, AtomicTicketsGiveMutualExclusion) {
  LOCKSTEP_EXPECT_PASS(ticket_lock("ticket-lock", take_ticket_atomically));
}

TEST(TicketLock, RacyTicketsAreCaught) {
  LOCKSTEP_EXPECT_VIOLATION(ticket_lock("ticket-lock-racy", take_ticket_racy), "mutual_exclusion");
}

// The first holder never serves the next ticket: the second waits forever (a fair cycle).
TEST(TicketLock, NotServingTheNextTicketStarvesTheWaiter) {
  LOCKSTEP_EXPECT_LIVENESS(ticket_lock("ticket-lock-no-serve", take_ticket_atomically, false), "enter_b");
}

}  // namespace
