// model/systems/script_program.h: the `script` system's programs as data.
//
// A script is a few actors, each a straight-line list of operations on named shared
// variables and mutexes, plus optional checks on the final values:
//   read x r        load x into the actor's register r
//   write x 3       store a literal; `write x r`, `write x r+1`, `write x r-2` use a register
//   cas x 0 1 [ok]  compare-and-swap (operands as for write); ok := 1 on success, else 0
//   lock m | unlock m | rlock m | runlock m    (rlock/runlock make m a reader/writer mutex)
//   lockfor m 10 ok try to lock m for 10 ms; ok := 1 when acquired, 0 on timeout
//   trylock m ok    try to lock m without waiting; ok := 1 when acquired, else 0
//   unlockif m ok   unlock m when ok is not 0 (ends the critical section of a trylock or lockfor)
//   sleep 5         sleep 5 ms (virtual time)
//   clock r         r := the actor's clock (Env::now) in ms; not a step of its own (the
//                   timing model may stall the actor there: model/timing.h)
//   observe 3 v     report an ordered event with value v (0..9, or a register) in scope 3;
//                   `observe * v` reports it in the global scope. It belongs to the actor's
//                   step before it (or is a step of its own when the actor has none yet).
//   fwrite f v      write the file /f (Env::filesystem) with the value v (as for write)
//   fread f r       r := the number in /f, or -1 when there is no such file
//   fsync f         fsync /f; `fsync /` fsyncs the root directory (which holds the names)
//   frename f g     rename /f to /g
//   crash machine   from here on the actor may crash (Env::crash_points; or `crash process`):
//                   a crashed actor stops, its registers as they were
//   goto 2          go on at the actor's op 2 (0-based); `jz r 2` / `jnz r 2` when r is zero /
//                   not zero. Not steps: a jump back must pass a step, so a loop always yields
//   hot due [MS]    progress obligation `due` (Env::hot), met within MS ms when given;
//   cold due        ... and met (Env::cold)
//   sql r TEXT      run the SQL TEXT on the actor's own connection to the simulated server
//                   (docs/sql.md); `$x` in it is register x, sent as a parameter. r := the
//                   first value of the first row when it is an integer (t/f: 1/0), else the
//                   rows it returned or changed; -1 when it fails. `sql - TEXT` keeps nothing.
//                   config.sql_setup: statements run first, outside the actors (CREATE TABLE...);
//                   config.sql_check: queries of one boolean run at the end, each a check;
//                   config.own_pools: true gives each actor a pool of its own (PoolConfig::owner)
// With files, the final state also lists every file and its contents.
// Checks: "x == 2", "a.r != 0" (actor a's register r), "@3 == 12" (the values observed in
// scope 3, global events included, in their order, as decimal digits: 1 then 2), "@* == 5"
// (the global events only); operators == != < <= > >=. A scope's log depends only on the
// order within the scope, so the checks keep Event::scope's contract.
// Every register starts at 0; variables start at config.vars (default 0).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/model/system.h"

namespace lockstep::script {

// An integer literal, or a register plus an offset.
struct Operand {
  bool is_register = false;
  int reg = -1;
  std::int64_t value = 0;  // the literal, or the offset added to the register
};

enum class OpKind { read, write, cas, lock, unlock, rlock, runlock, lockfor, trylock, unlockif, sleep, clock, choose, observe, fwrite, fread, fsync, frename, crash, goto_, jz, jnz, hot, cold, sql };

struct Op {
  OpKind kind = OpKind::read;
  int object = -1;  // index into vars or locks
  int reg = -1;     // destination register, or -1
  Operand a, b;
  std::int64_t ms = 0;       // sleep, lockfor; choose: the number of values
  std::int64_t scope = 0;  // observe: the scope, or kGlobalScope
  std::string path, path2;  // the file operations: "/f" (fsync: "/" too), and rename's target
  std::size_t target = 0;   // goto, jz, jnz: the op to go on at
  std::string obligation;   // hot, cold
  CrashKind crash = CrashKind::machine;
  std::string sql;                 // sql: the text, its `$x` numbered $1, $2, ...
  std::vector<int> sql_registers;  // sql: the register each $n is, in order
};

struct Actor {
  std::string name;
  std::vector<Op> ops;
  std::vector<std::string> registers;
};

enum class Compare { eq, ne, lt, le, gt, ge };

struct Check {
  std::string text;
  int scope = -1;  // index into Program::scopes when comparing a scope's log, else -1
  int var = -1;    // the variable compared, or -1 for a register or a scope
  int actor = -1;  // with reg, when comparing a register
  int reg = -1;
  Compare compare = Compare::eq;
  std::int64_t expected = 0;
};

struct LockDecl {
  std::string name;
  bool reader_writer = false;
};

struct Program {
  std::vector<std::string> vars;
  std::vector<std::int64_t> initial;
  std::vector<LockDecl> locks;
  std::vector<Actor> actors;
  std::vector<Check> checks;
  std::vector<std::int64_t> scopes;  // the scopes observed in, kGlobalScope included if used
  bool uses_files = false;
  bool uses_sql = false;
  std::vector<std::string> sql_setup;   // config.sql_setup
  std::vector<std::string> sql_checks;  // config.sql_check
  // config.own_pools: each actor's sql ops use a pool of its own (PoolConfig::owner), not one
  // pool of all actors.
  bool own_pools = false;
  // config.symmetric: classes of interchangeable actors (Instance::symmetric_actors): each
  // of two or more actors with the same ops, none of whose registers a check compares.
  std::vector<std::vector<ActorId>> symmetric;
};

// Reads config and actors; throws InputError with the JSON pointer of anything malformed.
Program parse_program(const SystemInput& input);

bool compare(Compare c, std::int64_t lhs, std::int64_t rhs);
std::string_view compare_text(Compare c);

}  // namespace lockstep::script
