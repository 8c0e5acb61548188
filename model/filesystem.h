// model/filesystem.h: files and directories that a crash can tear, and the crash fault.
//
// Env::filesystem() gives every actor of one run the same directory tree (one machine's
// disk). Paths are absolute, '/'-separated, without "." or ".."; "/" is the root. Every call
// is a visible operation (model/env.h). Failures are returned, as the system calls return
// errno, never thrown; misuse (a relative path) throws ModelError.
//
// What a crash keeps. The simulation (sim/fs/sim_fs.h) keeps, besides the tree every process
// sees, what has reached the disk, by the rules Linux promises and no more:
//  1. A file's contents survive a crash once the file was fsynced (fsync(2): "transfers
//     ("flushes") all modified in-core data of ... the file ... to the disk device").
//  2. A new name, a rename or an unlink survives once the directory that holds the name was
//     fsynced (fsync(2): "Calling fsync() does not necessarily ensure that the entry in the
//     directory containing the file has also reached disk. For that an explicit fsync() on a
//     file descriptor for the directory is also needed."). A rename is durable once the
//     directory of its new name was fsynced.
//  3. Anything not yet durable may or may not survive, each directory operation and each
//     file's unsynced contents independently, and the explorer tries both ("abstract
//     persistence model" of ALICE, Pillai et al., OSDI 2014: without fsync, operations reach
//     the disk in any order). A rename survives whole or not at all, never as two names
//     (rename(2): "atomically"; ALICE found rename atomic on the file systems it studied).
//  4. A process crash loses nothing: the page cache belongs to the kernel (only a machine
//     crash loses what is not durable).
// Not modelled: torn writes within one write_file (it survives whole or not at all),
// ext4's replace-by-rename heuristics, fsync errors, full disks.
//
// The real Env (real/thread_env.h) runs the same calls with POSIX system calls in its
// private directory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep {

enum class FsStatus : std::uint8_t {
  ok,
  not_found,        // ENOENT: the path, or a directory on the way, does not exist
  exists,           // EEXIST: mkdir of a name already there
  not_empty,        // ENOTEMPTY: rmdir, or rename onto, a directory with entries
  not_a_directory,  // ENOTDIR
  is_a_directory,   // EISDIR: write_file, read_file or unlink of a directory
  io_error,         // anything else the real system call reported
};

std::string_view fs_status_name(FsStatus status);

class Filesystem {
 public:
  virtual ~Filesystem() = default;

  // mkdir(2), mode 0755.
  virtual FsStatus mkdir(std::string_view path) = 0;
  // open(O_WRONLY | O_CREAT | O_TRUNC), one write(2) of `contents`, close(2).
  virtual FsStatus write_file(std::string_view path, std::string_view contents) = 0;
  // open(2) and fsync(2) of a file or a directory.
  virtual FsStatus fsync(std::string_view path) = 0;
  // rename(2): a file onto a file, or a directory onto a missing or empty directory.
  virtual FsStatus rename(std::string_view from, std::string_view to) = 0;
  // unlink(2) of a file; rmdir(2) of an empty directory.
  virtual FsStatus unlink(std::string_view path) = 0;
  virtual FsStatus rmdir(std::string_view path) = 0;
  // The names in a directory, sorted; nullopt when it is not a directory.
  virtual std::optional<std::vector<std::string>> list(std::string_view dir) = 0;
  // A file's contents; nullopt when it is not a file.
  virtual std::optional<std::string> read_file(std::string_view path) = 0;
  // stat(2)'s st_dev: which filesystem holds the path; nullopt when it does not exist.
  virtual std::optional<std::uint64_t> device(std::string_view path) = 0;
};

// The crash fault: Env::crash_points(kind) arms the calling actor. From then on the explorer
// tries, at each of its visible operations, crashing instead of running it. The actor's code
// then unwinds with a Crashed exception (its destructors' releases run, as the kernel closes
// a dead process's files and sockets); the code that catches it is the restarted process
// (the recovery). A machine crash also reverts the filesystem to one of the states a crash
// may leave (rule 3 above, explored); the simulated PostgreSQL, another machine, keeps what
// was committed and ends the dead process's sessions.
//
// Deliberately not a std::exception: model code that catches std::exception does not
// swallow it; model code that catches (...) must rethrow.
enum class CrashKind : std::uint8_t { process, machine };

struct Crashed {
  CrashKind kind = CrashKind::process;
};

std::string_view crash_kind_name(CrashKind kind);

}  // namespace lockstep
