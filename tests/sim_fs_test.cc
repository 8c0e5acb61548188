// The simulated filesystem (sim/fs/sim_fs.h): its calls behave as the POSIX ones on this
// machine do, and a machine crash keeps exactly what the durability rules of
// model/filesystem.h allow: one test per rule, each citing its source.
#include "lockstep/sim/fs/sim_fs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <set>
#include <string>

#include "lockstep/real/posix_fs.h"
#include "lockstep/sim/explore/explorer.h"
#include "lockstep/sim/sched/sim_env.h"
#include "lockstep/sim/strategies/strategy.h"

namespace lockstep {
namespace {

// "/d/ /d/x=1 /f=": every name in the tree, directories with a trailing slash, files with
// their contents.
std::string describe(Filesystem& fs, const std::string& dir = "/") {
  std::string out;
  const auto names = fs.list(dir);
  for (const auto& name : names.value()) {
    const std::string path = (dir == "/" ? "/" : dir + "/") + name;
    if (auto data = fs.read_file(path)) {
      out += path + "=" + *data + " ";
    } else {
      out += path + "/ " + describe(fs, path);
    }
  }
  return out;
}

// One actor runs `before`, arms a crash of `kind`, then makes one more call (the crash point)
// and, once crashed, describes what is left. The outcomes of every crash the explorer tried.
std::set<std::string> after_crash(const std::function<void(Filesystem&)>& before, CrashKind kind = CrashKind::machine) {
  struct Config {
    std::function<void(Filesystem&)> before;
    CrashKind kind;
  };
  class CrashInstance final : public Instance {
   public:
    CrashInstance(Env& env, const Config& c) : env_(env), c_(c) {}
    int actor_count() const override { return 1; }
    std::string_view actor_name(ActorId) const override { return "writer"; }
    void run_actor(ActorId) override {
      Filesystem& fs = env_.filesystem();
      c_.before(fs);
      env_.crash_points(c_.kind);
      try {
        (void)fs.list("/");  // the crash point
        env_.no_crash_points();
        state_ = "no crash";
      } catch (const Crashed&) {
        state_ = describe(fs);
      }
    }
    std::string final_state() override { return state_; }

   private:
    Env& env_;
    const Config& c_;
    std::string state_;
  };
  const SystemOf<CrashInstance, Config> system(Config{before, kind});
  auto dfs = sim::make_strategy("dfs", 1);
  sim::ExploreOptions options;
  options.limits.record_final_state = true;
  std::set<std::string> outcomes;
  options.on_execution = [&](const sim::ExecutionResult& r) {
    EXPECT_EQ(r.verdict, Verdict::pass) << r.message;
    if (r.final_state != "no crash") outcomes.insert(r.final_state);
  };
  const auto result = sim::explore_system(system, *dfs, options);
  EXPECT_TRUE(result.exhaustive);
  return outcomes;
}

using Outcomes = std::set<std::string>;

// Rule 1. fsync(2): "fsync() transfers ("flushes") all modified in-core data of (i.e.,
// modified buffer cache pages for) the file referred to by the file descriptor fd to the disk
// device". Unsynced contents may be lost (rule 3): a name that is durable may then show an
// empty file, the zero-length files of delayed allocation.
TEST(SimFsDurability, Rule1FileContentsSurviveOnceTheFileIsFsynced) {
  EXPECT_EQ(after_crash([](Filesystem& fs) {
              fs.write_file("/f", "data");
              fs.fsync("/f");
              fs.fsync("/");
            }),
            (Outcomes{"/f=data "}));
  EXPECT_EQ(after_crash([](Filesystem& fs) {
              fs.write_file("/f", "data");
              fs.fsync("/");
            }),
            (Outcomes{"/f= ", "/f=data "}));
  // Rewriting a durable file: the old contents or the new, until the fsync.
  EXPECT_EQ(after_crash([](Filesystem& fs) {
              fs.write_file("/f", "old");
              fs.fsync("/f");
              fs.fsync("/");
              fs.write_file("/f", "new");
            }),
            (Outcomes{"/f=new ", "/f=old "}));
}

// Rule 2. fsync(2): "Calling fsync() does not necessarily ensure that the entry in the
// directory containing the file has also reached disk. For that an explicit fsync() on a
// file descriptor for the directory is also needed."
TEST(SimFsDurability, Rule2ANewNameSurvivesOnceItsDirectoryIsFsynced) {
  EXPECT_EQ(after_crash([](Filesystem& fs) {
              fs.write_file("/f", "data");
              fs.fsync("/f");  // the contents, not the name
            }),
            (Outcomes{"", "/f=data "}));
  EXPECT_EQ(after_crash([](Filesystem& fs) {
              fs.mkdir("/d");
              fs.fsync("/");
              fs.write_file("/d/x", "1");
              fs.fsync("/d/x");
              fs.fsync("/");  // the wrong directory: /d holds the name x
            }),
            (Outcomes{"/d/ ", "/d/ /d/x=1 "}));
  // An unlink likewise.
  EXPECT_EQ(after_crash([](Filesystem& fs) {
              fs.write_file("/f", "data");
              fs.fsync("/f");
              fs.fsync("/");
              fs.unlink("/f");
              fs.fsync("/");
            }),
            (Outcomes{""}));
}

// Rule 2 for renames. rename(2) promises an atomic replacement for running processes; its
// durability is the new name's directory entry, so (fsync(2), above) it needs an fsync of the
// directory that receives the new name. An fsync of the old name's directory does not do.
TEST(SimFsDurability, Rule2ARenameSurvivesOnceTheNewNamesDirectoryIsFsynced) {
  auto setup = [](Filesystem& fs) {
    fs.mkdir("/tmp");
    fs.mkdir("/tmp/w");
    fs.write_file("/tmp/w/x", "1");
    fs.fsync("/tmp/w/x");
    fs.fsync("/tmp/w");
    fs.fsync("/tmp");
    fs.fsync("/");
  };
  EXPECT_EQ(after_crash([&](Filesystem& fs) {
              setup(fs);
              fs.rename("/tmp/w", "/final");
              fs.fsync("/");
            }),
            (Outcomes{"/final/ /final/x=1 /tmp/ "}));
  EXPECT_EQ(after_crash([&](Filesystem& fs) {
              setup(fs);
              fs.rename("/tmp/w", "/final");
              fs.fsync("/tmp");  // the old name's directory
            }),
            (Outcomes{"/final/ /final/x=1 /tmp/ ", "/tmp/ /tmp/w/ /tmp/w/x=1 "}));
}

// Rule 3. ALICE (Pillai et al., "All File Systems Are Not Created Equal", OSDI 2014), its
// abstract persistence model: operations not yet forced by fsync may reach the disk in any
// order, each independently, so any subset of them survives. A rename is atomic: it survives
// whole (rename(2): "atomically"), never as both names or neither.
TEST(SimFsDurability, Rule3WhatWasNotFsyncedMayOrMayNotSurviveEachIndependently) {
  EXPECT_EQ(after_crash([](Filesystem& fs) {
              fs.write_file("/a", "1");
              fs.fsync("/a");
              fs.write_file("/b", "2");
              fs.fsync("/b");
            }),
            (Outcomes{"", "/a=1 ", "/b=2 ", "/a=1 /b=2 "}));
  // A rename that was not made durable: the old name or the new, never both, never neither.
  EXPECT_EQ(after_crash([](Filesystem& fs) {
              fs.write_file("/a", "1");
              fs.fsync("/a");
              fs.fsync("/");
              fs.rename("/a", "/b");
            }),
            (Outcomes{"/a=1 ", "/b=1 "}));
  // A later operation may survive without an earlier one (no prefix order is promised).
  const Outcomes two_dirs = after_crash([](Filesystem& fs) {
    fs.mkdir("/a");
    fs.mkdir("/b");
  });
  EXPECT_TRUE(two_dirs.count("/b/ ")) << "the second mkdir without the first";
}

// Rule 4. A process crash does not touch the page cache, which belongs to the kernel (fsync(2)
// is about the disk, not about other processes: they see every completed write at once,
// POSIX's read-after-write); only a machine crash loses what is not durable.
TEST(SimFsDurability, Rule4AProcessCrashLosesNothing) {
  EXPECT_EQ(after_crash(
                [](Filesystem& fs) {
                  fs.mkdir("/d");
                  fs.write_file("/d/x", "1");
                  fs.rename("/d/x", "/y");
                },
                CrashKind::process),
            (Outcomes{"/d/ /y=1 "}));
}

// The same calls give the same results here as on this machine's filesystem.
TEST(SimFs, CallsFailAsThePosixCallsDo) {
  const auto root = std::filesystem::temp_directory_path() / ("lockstep-fs-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root);
  real::PosixFilesystem posix(root, {});
  sim::Scheduler scheduler;  // outside any actor: every call takes effect at once
  sim::SimFilesystem simulated(scheduler);
  for (Filesystem* fs : {static_cast<Filesystem*>(&posix), static_cast<Filesystem*>(&simulated)}) {
    SCOPED_TRACE(fs == &posix ? "posix" : "simulated");
    EXPECT_EQ(fs->mkdir("/d"), FsStatus::ok);
    EXPECT_EQ(fs->mkdir("/d"), FsStatus::exists);
    EXPECT_EQ(fs->mkdir("/no/d"), FsStatus::not_found);
    EXPECT_EQ(fs->write_file("/d/x", "1"), FsStatus::ok);
    EXPECT_EQ(fs->write_file("/d", "1"), FsStatus::is_a_directory);
    EXPECT_EQ(fs->mkdir("/d/x/y"), FsStatus::not_a_directory);
    EXPECT_EQ(fs->rmdir("/d"), FsStatus::not_empty);
    EXPECT_EQ(fs->unlink("/d"), FsStatus::is_a_directory);
    EXPECT_EQ(fs->rmdir("/d/x"), FsStatus::not_a_directory);
    EXPECT_EQ(fs->mkdir("/e"), FsStatus::ok);
    EXPECT_EQ(fs->rename("/e", "/d"), FsStatus::not_empty);
    EXPECT_EQ(fs->rename("/d", "/e"), FsStatus::ok);  // onto an empty directory
    EXPECT_EQ(fs->list("/"), (std::vector<std::string>{"e"}));
    EXPECT_EQ(fs->read_file("/e/x"), "1");
    EXPECT_EQ(fs->read_file("/e"), std::nullopt);
    EXPECT_EQ(fs->list("/e/x"), std::nullopt);
    EXPECT_EQ(fs->write_file("/e/x", "22"), FsStatus::ok);  // truncates
    EXPECT_EQ(fs->read_file("/e/x"), "22");
    EXPECT_EQ(fs->rename("/e/x", "/e/z"), FsStatus::ok);
    EXPECT_EQ(fs->rename("/e/x", "/e/z"), FsStatus::not_found);
    EXPECT_EQ(fs->fsync("/e/z"), FsStatus::ok);
    EXPECT_EQ(fs->fsync("/e"), FsStatus::ok);
    EXPECT_EQ(fs->fsync("/nothing"), FsStatus::not_found);
    EXPECT_EQ(fs->device("/e"), fs->device("/e/z"));
    EXPECT_EQ(fs->device("/nothing"), std::nullopt);
    EXPECT_EQ(fs->unlink("/e/z"), FsStatus::ok);
    EXPECT_EQ(fs->rmdir("/e"), FsStatus::ok);
    EXPECT_EQ(fs->list("/"), (std::vector<std::string>{}));
    EXPECT_THROW(fs->mkdir("relative"), ModelError);
  }
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace lockstep
