// lockstep/env.h: the world your lock service is written against (Env: time, sleep,
// in-memory locks, flock, shared variables, seeded randomness, explored choices and
// observations). The contract for model code is in lockstep/model/env.h.
#pragma once

#include "lockstep/model/env.h"
