// lockstep/real.h: the real backend (link lockstep::real, which lockstep::lockstep brings):
// a model's actors on OS threads against a real PostgreSQL through libpq.
//  - ThrowawayServer: a private server on a Unix socket for tests (`--pg auto`);
//  - confirm: a system's actors and invariants, many iterations with seeded jitter;
//  - conform: a simulated trace's statements against the real server, outcome by outcome;
//  - ThreadEnv, LibpqPool: the Env and pg::Pool of real runs, for code of your own;
//  - run_phantom_rounds: PostgreSQL Bug #17686, round after round, with your lock client.
#pragma once

#include "lockstep/real/confirm.h"
#include "lockstep/real/conform.h"
#include "lockstep/real/libpq_backend.h"
#include "lockstep/real/phantom_rounds.h"
#include "lockstep/real/thread_env.h"
#include "lockstep/real/throwaway_server.h"
