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

namespace lockstep {

// Exit codes: 0 every verdict as expected, 1 some verdict not as expected, 2 bad input,
// 3 an internal error of lockstep, 128+N interrupted by signal N.
int main(int argc, char** argv);

}  // namespace lockstep

// A main() that runs the registrations given as arguments, then lockstep::main.
#define LOCKSTEP_MAIN(...)                       \
  int main(int argc, char** argv) {              \
    __VA_ARGS__;                                 \
    return ::lockstep::main(argc, argv);         \
  }
