// The `lockstep` executable: see cli/commands.h.
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) { return lockstep::cli::run_cli(argc, argv, std::cout, std::cerr); }
