// cli/interrupt.h: Ctrl-C and SIGTERM for the command line.
//
// While an InterruptScope lives, the first SIGINT or SIGTERM only sets a flag: the running
// command sees interrupted() at its next execution, shrinking attempt or confirm iteration,
// stops there, writes what it knows (verdict so far, results.json, summary.md, JUnit),
// stops the throwaway server it started, and exits with interrupted_exit_code() (130 for
// SIGINT, 143 for SIGTERM, as shells report them). A second signal exits at once. The
// handler only stores to a lock-free atomic (async-signal-safe) or calls _exit.
#pragma once

namespace lockstep::cli {

class InterruptScope {
 public:
  InterruptScope();   // installs the handlers, clears the flag
  ~InterruptScope();  // restores the handlers that were there before
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
};

bool interrupted();
// 128 + the signal that interrupted; 0 when none did.
int interrupted_exit_code();

}  // namespace lockstep::cli
