// Seed 002 section 5.1's write protocol, its recovery and its readers.
#include "lockstep/model/dal/write_protocol.h"

#include <fmt/format.h>

namespace lockstep::dal {

namespace {

const std::string kCommitted = "committed";

std::string contents(std::int64_t version, int index, int files) {
  return fmt::format("version {} file {} of {}", version, index, files);
}

std::string file_name(int index) { return fmt::format("f{}", index); }

}  // namespace

std::string WriteProtocol::target(const std::string& resource) {
  std::string name = resource;
  for (char& c : name) {
    if (c == ':' || c == '/') c = '-';
  }
  return "/" + name;
}

void WriteProtocol::prepare(pg::Connection& conn, int lock, const std::string& resource) const {
  Filesystem& fs = env.filesystem();
  const std::string t = target(resource);
  (void)fs.mkdir(t);
  (void)fs.mkdir(t + "/tmp");
  (void)fs.fsync(t + "/tmp");
  (void)fs.fsync(t);
  (void)fs.fsync("/");
  (void)conn.insert_row(kManifest, lock, {{"version", "0"}, {"state", ""}});
}

bool WriteProtocol::ok(FsStatus status, int lock, int step) const {
  if (status == FsStatus::ok) return true;
  env.observe(events::kWriteAborted.fact(lock, step));
  return false;
}

void WriteProtocol::commit_manifest(pg::Connection& conn, int lock, std::int64_t version) const {
  (void)conn.begin();  // step 8
  const pg::Row row = *conn.select_for_update(kManifest, lock, false).value();
  const std::int64_t before = std::stoll(row.at("version"));
  if (row.at("state") == kCommitted && before > version) env.observe(events::kManifestBack.fact(lock, version));
  (void)conn.update_row(kManifest, lock, {{"version", std::to_string(version)}, {"state", kCommitted}});
  (void)conn.commit();  // step 9
}

void WriteProtocol::write(pg::Connection& conn, DalLockManager& dal, int lock, const std::string& resource, int owner,
                          const std::string& id) const {
  const std::int64_t version = dal.acquire(lock, Mode::write, owner);  // step 1
  if (version == 0) return;
  Filesystem& fs = env.filesystem();
  const std::string t = target(resource), tmp = t + "/tmp/" + id, final_dir = fmt::format("{}/v{}", t, version);
  auto fsync_files = [&](const std::string& dir) {
    for (int i = 0; i < files; ++i) {
      if (!ok(fs.fsync(dir + "/" + file_name(i)), lock, 3)) return false;
    }
    return true;
  };
  const bool written = [&] {
    if (!ok(fs.mkdir(tmp), lock, 2)) return false;
    for (int i = 0; i < files; ++i) {
      if (!ok(fs.write_file(tmp + "/" + file_name(i), contents(version, i, files)), lock, 2)) return false;
    }
    if (order != WriteOrder::rename_before_file_fsync && !fsync_files(tmp)) return false;
    if (order != WriteOrder::no_tmp_dir_fsync && !ok(fs.fsync(tmp), lock, 4)) return false;
    if (fs.device(tmp) != fs.device(t)) {  // step 5: a rename across filesystems is a copy
      env.observe(events::kWriteAborted.fact(lock, 5));
      return false;
    }
    if (order == WriteOrder::manifest_before_rename) commit_manifest(conn, lock, version);
    if (!ok(fs.rename(tmp, final_dir), lock, 6)) return false;
    if (order == WriteOrder::rename_before_file_fsync && !fsync_files(final_dir)) return false;
    if (order != WriteOrder::no_parent_fsync && !ok(fs.fsync(t), lock, 7)) return false;
    return true;
  }();
  if (!written) {
    dal.release(lock, owner);
    return;
  }
  if (order == WriteOrder::release_before_manifest) {
    dal.release(lock, owner);  // step 10, too early
    commit_manifest(conn, lock, version);
    return;
  }
  if (order != WriteOrder::manifest_before_rename) commit_manifest(conn, lock, version);
  dal.release(lock, owner);  // step 10
}

void WriteProtocol::recover(pg::Connection& conn, DalLockManager& dal, int lock, const std::string& resource,
                            int owner) const {
  // A lease the dead process held can be force-released once it and the grace period passed.
  env.sleep_for(options.lease + options.grace + std::chrono::milliseconds(1));
  (void)dal.recover(lock, /*claimed=*/false);
  if (dal.acquire(lock, Mode::write, owner) == 0) {
    env.observe(events::kWriteAborted.fact(lock, 1));
    return;
  }
  Filesystem& fs = env.filesystem();
  const std::string tmp = target(resource) + "/tmp";
  for (const auto& name : fs.list(tmp).value_or(std::vector<std::string>{})) {
    const std::string dir = tmp + "/" + name;
    for (const auto& file : fs.list(dir).value_or(std::vector<std::string>{})) (void)fs.unlink(dir + "/" + file);
    (void)fs.rmdir(dir);
  }
  (void)fs.fsync(tmp);
  check_target(conn, lock, resource);
  dal.release(lock, owner);
}

void WriteProtocol::read(pg::Connection& conn, int lock, const std::string& resource) const {
  const std::string t = target(resource);
  const auto row = conn.read_row(kManifest, lock).value();
  if (row && row->at("state") == kCommitted) {
    const std::int64_t version = std::stoll(row->at("version"));
    if (!complete(fmt::format("{}/v{}", t, version), version)) env.observe(events::kPartialFinal.fact(lock, version));
  }
  for (const auto& name : env.filesystem().list(t).value_or(std::vector<std::string>{})) {
    if (name.empty() || name[0] != 'v') continue;
    const std::int64_t version = std::stoll(name.substr(1));
    if (!complete(t + "/" + name, version)) env.observe(events::kPartialFinal.fact(lock, version));
  }
}

bool WriteProtocol::complete(const std::string& dir, std::int64_t version) const {
  Filesystem& fs = env.filesystem();
  const auto names = fs.list(dir);
  if (!names || static_cast<int>(names->size()) != files) return false;
  for (int i = 0; i < files; ++i) {
    if (fs.read_file(dir + "/" + file_name(i)) != contents(version, i, files)) return false;
  }
  return true;
}

void WriteProtocol::check_target(pg::Connection& conn, int lock, const std::string& resource) const {
  const std::string t = target(resource);
  for (const auto& name : env.filesystem().list(t).value_or(std::vector<std::string>{})) {
    if (name.empty() || name[0] != 'v') continue;
    const std::int64_t version = std::stoll(name.substr(1));
    if (!complete(t + "/" + name, version)) env.observe(events::kPartialFinal.fact(lock, version));
  }
  const auto row = conn.read_row(kManifest, lock).value();
  if (row && row->at("state") == kCommitted) {
    const std::int64_t version = std::stoll(row->at("version"));
    if (!complete(fmt::format("{}/v{}", t, version), version)) env.observe(events::kCommittedMissing.fact(lock, version));
  }
}

}  // namespace lockstep::dal
