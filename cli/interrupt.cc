#include "lockstep/cli/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>

namespace lockstep::cli {
namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

struct sigaction g_previous_int, g_previous_term;

extern "C" void on_signal(int signo) {
  int none = 0;
  if (!g_signal.compare_exchange_strong(none, signo)) _exit(128 + signo);  // the second one
}

}  // namespace

InterruptScope::InterruptScope() {
  g_signal.store(0);
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a blocking read or wait returns EINTR and looks again
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
}

InterruptScope::~InterruptScope() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
}

bool interrupted() { return g_signal.load(std::memory_order_relaxed) != 0; }

int interrupted_exit_code() {
  const int s = g_signal.load();
  return s == 0 ? 0 : 128 + s;
}

}  // namespace lockstep::cli
