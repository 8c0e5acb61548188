// lockstep::main (include/lockstep/main.h): the command line over the registered systems.
#include <iostream>

#include "lockstep/cli/commands.h"

namespace lockstep {

int main(int argc, char** argv) { return cli::run_cli(argc, argv, std::cout, std::cerr); }

}  // namespace lockstep
