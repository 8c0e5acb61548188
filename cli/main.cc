// The `lockstep` executable: the built-in systems' command line (cli/commands.h). A team's
// own executable is the same thing plus its registrations (include/lockstep/main.h).
#include "lockstep/main.h"

int main(int argc, char** argv) { return lockstep::main(argc, argv); }
