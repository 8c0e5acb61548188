#include "lockstep/real/throwaway_server.h"

#include <fcntl.h>
#include <pwd.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include <fmt/format.h>

extern char** environ;

namespace lockstep::real {
namespace {

namespace fs = std::filesystem;

// "15" -> {15}, "9.6" -> {9, 6}: the numbers before the first part that is not one.
std::vector<int> version_of(const std::string& name) {
  std::vector<int> version;
  const char* p = name.c_str();
  while (true) {
    char* rest;
    long n = std::strtol(p, &rest, 10);
    if (rest == p) break;
    version.push_back(static_cast<int>(n));
    if (*rest != '.') break;
    p = rest + 1;
  }
  return version;
}

// $PGBIN, else the highest version under /usr/lib/postgresql/*/bin that has initdb; "" if none.
std::string server_bin() {
  if (const char* env = std::getenv("PGBIN"); env != nullptr && *env != '\0') return env;
  std::string best;
  std::vector<int> best_version;
  std::error_code ec;
  for (fs::directory_iterator it("/usr/lib/postgresql", ec), end; !ec && it != end; it.increment(ec)) {
    std::vector<int> version = version_of(it->path().filename().string());
    std::error_code missing;
    if (fs::exists(it->path() / "bin" / "initdb", missing) && version > best_version) {
      best_version = version;
      best = (it->path() / "bin").string();
    }
  }
  return best;
}

// Runs args in dir (via `runuser -u postgres --` as root), stdin from /dev/null, stdout and
// stderr appended to log; true when it exits 0. A failure to run it is written to the log.
bool run(std::vector<std::string> args, const std::string& dir, const std::string& log) {
  if (geteuid() == 0) args.insert(args.begin(), {"runuser", "-u", "postgres", "--"});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());  // postgres may not read the caller's dir
  // A process group of its own: a terminal's Ctrl-C reaches lockstep only, which then stops
  // the server in order and removes its directory (see cli/interrupt.h).
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid;
  int err = posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (err != 0) {
    std::ofstream(log, std::ios::app) << fmt::format("could not run {}: {}\n", argv[0], std::strerror(err));
    return false;
  }
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return false;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool stop_server(const std::string& bin, const std::string& dir) {
  return run({bin + "/pg_ctl", "-D", dir + "/data", "-m", "fast", "-w", "stop"}, dir, dir + "/pg_ctl.log");
}

}  // namespace

ThrowawayServer::ThrowawayServer(std::string bin, std::string dir, int port)
    : bin_(std::move(bin)),
      dir_(std::move(dir)),
      conninfo_(fmt::format("host={} port={} user=postgres dbname=postgres", dir_, port)) {}

std::unique_ptr<ThrowawayServer> ThrowawayServer::start() {
  std::string bin = server_bin();
  if (bin.empty() || access((bin + "/initdb").c_str(), X_OK) != 0) {
    throw ThrowawayError("no PostgreSQL server binaries (looked in /usr/lib/postgresql/*/bin)");
  }
  // Under $TMPDIR when its path is short enough for the socket (a Unix socket path has a
  // limit of about 100 bytes), else /tmp.
  // As root, the postgres user must also be able to pass through it.
  const char* tmpdir = std::getenv("TMPDIR");
  struct stat st {};
  const bool usable = tmpdir != nullptr && *tmpdir != '\0' && std::strlen(tmpdir) < 60 && stat(tmpdir, &st) == 0 &&
                      S_ISDIR(st.st_mode) && (geteuid() != 0 || (st.st_mode & S_IXOTH) != 0);
  std::string pattern = usable ? tmpdir : "/tmp";
  pattern += "/lockstep-pg.XXXXXX";
  std::vector<char> templ(pattern.begin(), pattern.end());
  templ.push_back('\0');
  if (mkdtemp(templ.data()) == nullptr) {
    throw ThrowawayError(fmt::format("cannot create a temp dir for PostgreSQL: {}", std::strerror(errno)));
  }
  std::string dir = templ.data();
  if (geteuid() == 0) {  // initdb refuses root: the cluster belongs to the postgres user
    const passwd* pw = getpwnam("postgres");
    if (pw == nullptr || chown(templ.data(), pw->pw_uid, pw->pw_gid) != 0) {
      std::error_code ec;
      fs::remove_all(dir, ec);
      throw ThrowawayError("running as root, but cannot hand a temp dir to the postgres user");
    }
  }
  // The socket lives in the private dir, so the port only names it; no TCP listener.
  int port = 54000 + static_cast<int>(getpid() % 900);
  if (!run({bin + "/initdb", "-D", dir + "/data", "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C",
            "-N"},
           dir, dir + "/initdb.log")) {
    throw ThrowawayError(fmt::format("initdb failed, see {}/initdb.log", dir));
  }
  std::string options = fmt::format(
      "-p {} -k {} -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off",
      port, dir);
  if (!run({bin + "/pg_ctl", "-D", dir + "/data", "-l", dir + "/server.log", "-w", "-t", "30", "-o", options,
            "start"},
           dir, dir + "/pg_ctl.log")) {
    stop_server(bin, dir);  // in case it came up late; the logs stay for reading
    std::error_code ec;     // no server.log: pg_ctl itself failed
    const char* log = fs::exists(dir + "/server.log", ec) ? "server.log" : "pg_ctl.log";
    throw ThrowawayError(fmt::format("the PostgreSQL server did not start, see {}/{}", dir, log));
  }
  return std::unique_ptr<ThrowawayServer>(new ThrowawayServer(std::move(bin), std::move(dir), port));
}

bool ThrowawayServer::restart() {
  return run({bin_ + "/pg_ctl", "-D", dir_ + "/data", "-l", dir_ + "/server.log", "-m", "fast", "-w", "-t", "30", "restart"}, dir_,
             dir_ + "/pg_ctl.log");
}

ThrowawayServer::~ThrowawayServer() {
  try {
    stop_server(bin_, dir_);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  } catch (...) {  // only bad_alloc could get here
  }
}

}  // namespace lockstep::real
