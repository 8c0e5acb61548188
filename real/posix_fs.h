// real/posix_fs.h: model/filesystem.h over POSIX system calls, rooted in a directory.
//
// A model's path "/a/b" is <root>/a/b. Each call is the system call it names (mkdir(2),
// open + write(2), open + fsync(2), rename(2), unlink(2), rmdir(2), readdir(3), stat(2)),
// with errno mapped to FsStatus. Thread-safe as the kernel is; before each call the Env's
// jitter runs, so that repeated runs try different interleavings.
#pragma once

#include <filesystem>
#include <functional>

#include "lockstep/model/filesystem.h"

namespace lockstep::real {

class PosixFilesystem final : public Filesystem {
 public:
  // `before` runs before every call (ThreadEnv's jitter); may be empty.
  PosixFilesystem(std::filesystem::path root, std::function<void()> before);

  FsStatus mkdir(std::string_view path) override;
  FsStatus write_file(std::string_view path, std::string_view contents) override;
  FsStatus fsync(std::string_view path) override;
  FsStatus rename(std::string_view from, std::string_view to) override;
  FsStatus unlink(std::string_view path) override;
  FsStatus rmdir(std::string_view path) override;
  std::optional<std::vector<std::string>> list(std::string_view dir) override;
  std::optional<std::string> read_file(std::string_view path) override;
  std::optional<std::uint64_t> device(std::string_view path) override;

  const std::filesystem::path& root() const { return root_; }

 private:
  std::string at(std::string_view path) const;  // <root><path>, after checking the path

  std::filesystem::path root_;
  std::function<void()> before_;
};

}  // namespace lockstep::real
