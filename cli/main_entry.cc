// lockstep::main (include/lockstep/main.h): the command line over the registered systems.
#include "lockstep/main.h"

#include <iostream>

#include "lockstep/cli/commands.h"

namespace lockstep {

int main(int argc, char** argv) { return cli::run_cli(argc, argv, std::cout, std::cerr); }

int registration_failed(const std::exception& error) {
  std::cerr << "lockstep: cannot register a system: " << error.what() << '\n';
  return cli::kExitInternal;
}

}  // namespace lockstep
