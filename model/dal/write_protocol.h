// model/dal/write_protocol.h: seed 002 section 5.1, the ten-step write of persistent state,
// over Env::filesystem() and the DAL lock, with its crash recovery and its readers.
//
// A target (one DAL resource) is a directory /<resource> with a tmp/ directory. One write:
//   1. acquire the DAL write lock (epoch e)          6. rename tmp/<id> -> /<resource>/v<e>
//   2. write the files into /<resource>/tmp/<id>/    7. fsync /<resource> (the parent)
//   3. fsync each file                                8. in one transaction: the manifest row
//   4. fsync the tmp directory                           says version e, state committed
//   5. check that tmp and target share st_dev         9. commit it
//                                                    10. release the DAL write lock
// Variants leave out or move one step (WriteOrder). A file's contents name its version and
// its index, so a reader can tell a complete directory from a partial one.
//
// Recovery, the writer's restarted process after a crash: waits out the lease and the grace
// period, force-releases its stale lock (seed 8.2, audited), takes the write lock, removes
// every tmp directory, and checks the manifest against the directory it names.
//
// Readers take no lock (a committed version's directory is immutable): they read the
// manifest and the directory it names, and every v* directory there is.
//
// Reports (facts, judged alone): "partial_final" (lock, version) a final directory a reader
// or recovery found incomplete; "committed_missing" (lock, version) the manifest names a
// version whose directory is not complete; "manifest_back" (lock, version) a commit found a
// newer version already committed; "write_aborted" (lock, step) a call of the protocol failed.
#pragma once

#include <cstdint>
#include <string>

#include "lockstep/model/dal/lock_manager.h"
#include "lockstep/model/env.h"
#include "lockstep/model/pg.h"

namespace lockstep::dal {

namespace events {
inline constexpr EventName kPartialFinal{"partial_final", 20};
inline constexpr EventName kCommittedMissing{"committed_missing", 21};
inline constexpr EventName kManifestBack{"manifest_back", 22};
inline constexpr EventName kWriteAborted{"write_aborted", 23};
}  // namespace events

// The seed's order, or one step left out or moved (the dal variants of the same names).
enum class WriteOrder {
  seed,
  no_tmp_dir_fsync,          // step 4 left out
  rename_before_file_fsync,  // step 3 after step 7
  no_parent_fsync,           // step 7 left out
  manifest_before_rename,    // steps 8-9 before step 6
  release_before_manifest,   // step 10 before steps 8-9
};

inline const std::string kManifest = "dal_manifest";

struct WriteProtocol {
  Env& env;
  WriteOrder order = WriteOrder::seed;
  int files = 2;
  DalOptions options;

  static std::string target(const std::string& resource);  // "/project-p" for "project:p"
  // The target directories, made durable; and the manifest row. Outside any actor.
  void prepare(pg::Connection& conn, int lock, const std::string& resource) const;

  // One write of version = the epoch granted. `id` names its tmp directory.
  void write(pg::Connection& conn, DalLockManager& dal, int lock, const std::string& resource, int owner,
             const std::string& id) const;
  void recover(pg::Connection& conn, DalLockManager& dal, int lock, const std::string& resource, int owner) const;
  void read(pg::Connection& conn, int lock, const std::string& resource) const;

  // Whether directory `dir` holds exactly the files of `version`, each complete.
  bool complete(const std::string& dir, std::int64_t version) const;
  // Every v* directory of the target complete (else reports partial_final), and the manifest's
  // committed version complete (else committed_missing).
  void check_target(pg::Connection& conn, int lock, const std::string& resource) const;

 private:
  void commit_manifest(pg::Connection& conn, int lock, std::int64_t version) const;
  bool ok(FsStatus status, int lock, int step) const;
};

}  // namespace lockstep::dal
