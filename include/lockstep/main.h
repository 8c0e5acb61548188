// lockstep/main.h: the `lockstep` command line in your own executable (link lockstep::cli).
//
// lockstep::main runs exactly what the installed `lockstep` binary runs (the same commands,
// outputs and exit codes), over the built-in systems and every system this program
// registered before calling it (<lockstep/system.h>):
//
//   int main(int argc, char** argv) {
//     lockstep::register_model_system(jobclaim::system());
//     return lockstep::main(argc, argv);
//   }
//
// or, the same: LOCKSTEP_MAIN(lockstep::register_model_system(jobclaim::system())).
// Traces it writes name this executable in their replay commands (argv[0]).
#pragma once

#include <exception>

namespace lockstep {

// Exit codes: 0 every verdict as expected, 1 some verdict not as expected, 2 bad input,
// 3 an internal error of lockstep, 128+N interrupted by signal N.
int main(int argc, char** argv);

// Prints "lockstep: cannot register a system: <what>" and returns exit code 3 (a program
// that registers a taken or malformed name is broken, not its input).
int registration_failed(const std::exception& error);

}  // namespace lockstep

// A main() that runs the registrations given as arguments, then lockstep::main.
#define LOCKSTEP_MAIN(...)                                  \
  int main(int argc, char** argv) {                         \
    try {                                                   \
      __VA_ARGS__;                                          \
    } catch (const std::exception& lockstep_error_) {       \
      return ::lockstep::registration_failed(lockstep_error_); \
    }                                                       \
    return ::lockstep::main(argc, argv);                    \
  }
