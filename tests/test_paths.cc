#include "test_paths.h"

const char* lockstep_source_dir() { return LOCKSTEP_SOURCE_DIR; }
const char* lockstep_binary() { return LOCKSTEP_BINARY; }
