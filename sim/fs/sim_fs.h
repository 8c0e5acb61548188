// sim/fs/sim_fs.h: the simulated filesystem (model/filesystem.h), one per execution, with the
// durability rules stated there.
//
// It keeps the tree every process sees and, beside it, what a machine crash could leave: the
// tree as of the last crash (or the empty root) plus the log of directory operations since,
// each marked durable once the directory holding its name was fsynced, and for each file its
// contents as of its last fsync. crash() replays the durable operations and, for each one
// that is not, an explored choice whether it survives, in the order they were made; then, for
// each reachable file whose contents were not fsynced, a choice whether they survive. The
// result becomes the tree, all of it durable (what a remounted disk holds).
//
// Footprints: the whole tree is one object ("fs"). Listing, reading and stat read it; every
// other call writes it (fsync too: it changes what a crash keeps); a call that fails only
// read it. The crash writes it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/model/filesystem.h"
#include "lockstep/sim/sched/scheduler.h"

namespace lockstep::sim {

class SimFilesystem final : public Filesystem {
 public:
  explicit SimFilesystem(Scheduler& s);

  FsStatus mkdir(std::string_view path) override;
  FsStatus write_file(std::string_view path, std::string_view contents) override;
  FsStatus fsync(std::string_view path) override;
  FsStatus rename(std::string_view from, std::string_view to) override;
  FsStatus unlink(std::string_view path) override;
  FsStatus rmdir(std::string_view path) override;
  std::optional<std::vector<std::string>> list(std::string_view dir) override;
  std::optional<std::string> read_file(std::string_view path) override;
  std::optional<std::uint64_t> device(std::string_view path) override;

  // A machine crash, inside the crashing step: explores what survives (rule 3) and makes the
  // result the tree. Touches the filesystem's object.
  void crash();
  // Directory operations and file contents a crash could still lose (for tests).
  std::size_t pending_directory_operations() const;
  std::size_t unsynced_files() const;

 private:
  struct Node {
    bool dir = false;
    std::string data;          // the contents every process reads
    std::string durable_data;  // as of the last fsync (or the last crash)
    std::map<std::string, int, std::less<>> entries;  // a directory's names -> nodes
  };
  // One directory operation since the last crash: a name linked (create, mkdir), unlinked
  // (unlink, rmdir) or moved (rename). Replayed by node number, so it means the same in any
  // subset that a crash keeps.
  struct DirOp {
    enum class Kind : std::uint8_t { link, unlink, rename } kind = Kind::link;
    int dir = 0;
    std::string name;
    int node = 0;
    int to_dir = 0;  // rename: where the name goes
    std::string to_name;
    bool durable = false;
  };
  struct Resolved {
    FsStatus status = FsStatus::ok;
    int parent = -1;   // the directory that holds the last name
    std::string name;  // the last name
    int node = -1;     // what it names, or -1
  };

  static Resolved failed(FsStatus status);
  static DirOp dir_op(DirOp::Kind kind, int dir, std::string name, int node, int to_dir = 0, std::string to_name = {});
  Resolved resolve(std::string_view path) const;
  int new_node(bool dir);
  void step(std::string_view verb, Access access, std::string_view path);
  FsStatus done(FsStatus status);
  void apply(std::vector<std::map<std::string, int, std::less<>>>& tree, const DirOp& op) const;
  bool is_inside(int node, int dir) const;  // node is dir or below it

  Scheduler& s_;
  ObjectId object_;
  std::vector<Node> nodes_;  // 0: the root
  std::vector<std::map<std::string, int, std::less<>>> base_;  // each node's entries as of the last crash
  std::vector<DirOp> log_;
};

}  // namespace lockstep::sim
