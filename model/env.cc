#include "lockstep/model/env.h"

#include "lockstep/model/pg.h"

namespace lockstep {

std::unique_ptr<pg::Pool> Env::new_pg_pool(const pg::PoolConfig& /*config*/) {
  throw ModelError("this Env has no PostgreSQL backend");
}

Filesystem& Env::filesystem() { throw ModelError("this Env has no filesystem"); }
void Env::crash_points(CrashKind /*kind*/) {}
void Env::no_crash_points() {}

std::string_view fs_status_name(FsStatus status) {
  switch (status) {
    case FsStatus::ok: return "ok";
    case FsStatus::not_found: return "ENOENT";
    case FsStatus::exists: return "EEXIST";
    case FsStatus::not_empty: return "ENOTEMPTY";
    case FsStatus::not_a_directory: return "ENOTDIR";
    case FsStatus::is_a_directory: return "EISDIR";
    case FsStatus::io_error: return "EIO";
  }
  return "?";
}

std::string_view crash_kind_name(CrashKind kind) { return kind == CrashKind::machine ? "machine" : "process"; }

void Env::hot(std::string_view, Duration) {}
void Env::cold(std::string_view) {}

}  // namespace lockstep
