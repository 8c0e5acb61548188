#include "lockstep/real/posix_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "lockstep/model/env.h"

namespace lockstep::real {

namespace {

FsStatus from_errno(int e) {
  switch (e) {
    case 0: return FsStatus::ok;
    case ENOENT: return FsStatus::not_found;
    case EEXIST: return FsStatus::exists;
    case ENOTEMPTY: return FsStatus::not_empty;
    case ENOTDIR: return FsStatus::not_a_directory;
    case EISDIR: return FsStatus::is_a_directory;
    default: return FsStatus::io_error;
  }
}

FsStatus result(int rc) { return rc == 0 ? FsStatus::ok : from_errno(errno); }

// Closes a descriptor on every path.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

PosixFilesystem::PosixFilesystem(std::filesystem::path root, std::function<void()> before)
    : root_(std::move(root)), before_(std::move(before)) {}

std::string PosixFilesystem::at(std::string_view path) const {
  if (path.empty() || path.front() != '/') throw ModelError(fmt::format("filesystem path \"{}\" is not absolute", path));
  if (path.find("/..") != std::string_view::npos || path.find("/./") != std::string_view::npos) {
    throw ModelError(fmt::format("filesystem path \"{}\": \".\" or \"..\" names are not supported", path));
  }
  if (before_) before_();
  return root_.string() + std::string(path == "/" ? std::string_view() : path);
}

FsStatus PosixFilesystem::mkdir(std::string_view path) { return result(::mkdir(at(path).c_str(), 0755)); }

FsStatus PosixFilesystem::write_file(std::string_view path, std::string_view contents) {
  Fd f{::open(at(path).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  if (f.fd < 0) return from_errno(errno);
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(f.fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return from_errno(errno);
    }
    done += static_cast<std::size_t>(n);
  }
  return FsStatus::ok;
}

FsStatus PosixFilesystem::fsync(std::string_view path) {
  Fd f{::open(at(path).c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return from_errno(errno);
  return result(::fsync(f.fd));
}

FsStatus PosixFilesystem::rename(std::string_view from, std::string_view to) {
  const std::string a = at(from);
  return result(::rename(a.c_str(), at(to).c_str()));
}

FsStatus PosixFilesystem::unlink(std::string_view path) { return result(::unlink(at(path).c_str())); }
FsStatus PosixFilesystem::rmdir(std::string_view path) { return result(::rmdir(at(path).c_str())); }

std::optional<std::vector<std::string>> PosixFilesystem::list(std::string_view dir) {
  DIR* d = ::opendir(at(dir).c_str());
  if (d == nullptr) return std::nullopt;
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> PosixFilesystem::read_file(std::string_view path) {
  Fd f{::open(at(path).c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || S_ISDIR(st.st_mode)) return std::nullopt;
  std::string data;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(f.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    data.append(buffer, static_cast<std::size_t>(n));
  }
  return data;
}

std::optional<std::uint64_t> PosixFilesystem::device(std::string_view path) {
  struct stat st {};
  if (::stat(at(path).c_str(), &st) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(st.st_dev);
}

}  // namespace lockstep::real
