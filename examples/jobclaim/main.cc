// jobclaim-lockstep: the lockstep command line, with the jobclaim system registered.
#include <lockstep/main.h>

#include "model.h"

LOCKSTEP_MAIN(lockstep::register_model_system(jobclaim::system()))
