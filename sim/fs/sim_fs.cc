#include "lockstep/sim/fs/sim_fs.h"

#include <algorithm>

#include <fmt/format.h>

namespace lockstep::sim {

namespace {

// The names of an absolute path; throws ModelError for anything else.
std::vector<std::string_view> components(std::string_view path) {
  if (path.empty() || path.front() != '/') {
    throw ModelError(fmt::format("filesystem path \"{}\" is not absolute", path));
  }
  std::vector<std::string_view> names;
  std::size_t at = 1;
  while (at < path.size()) {
    const std::size_t end = std::min(path.find('/', at), path.size());
    const std::string_view name = path.substr(at, end - at);
    if (name.empty() || name == "." || name == "..") {
      throw ModelError(fmt::format("filesystem path \"{}\": empty, \".\" or \"..\" names are not supported", path));
    }
    names.push_back(name);
    at = end + 1;
  }
  return names;
}

}  // namespace

SimFilesystem::Resolved SimFilesystem::failed(FsStatus status) {
  Resolved r;
  r.status = status;
  return r;
}

SimFilesystem::DirOp SimFilesystem::dir_op(DirOp::Kind kind, int dir, std::string name, int node, int to_dir, std::string to_name) {
  DirOp op;
  op.kind = kind;
  op.dir = dir;
  op.name = std::move(name);
  op.node = node;
  op.to_dir = to_dir;
  op.to_name = std::move(to_name);
  return op;
}

SimFilesystem::SimFilesystem(Scheduler& s) : s_(s), object_(s.new_object("fs")) {
  new_node(true);
  base_.resize(1);
}

int SimFilesystem::new_node(bool dir) {
  Node n;
  n.dir = dir;
  nodes_.push_back(std::move(n));
  return static_cast<int>(nodes_.size() - 1);
}

SimFilesystem::Resolved SimFilesystem::resolve(std::string_view path) const {
  const auto names = components(path);
  Resolved r;
  if (names.empty()) {
    r.node = 0;
    return r;
  }
  int dir = 0;
  for (std::size_t i = 0; i + 1 < names.size(); ++i) {
    const auto& entries = nodes_[static_cast<std::size_t>(dir)].entries;
    const auto it = entries.find(names[i]);
    if (it == entries.end()) return failed(FsStatus::not_found);
    if (!nodes_[static_cast<std::size_t>(it->second)].dir) return failed(FsStatus::not_a_directory);
    dir = it->second;
  }
  r.parent = dir;
  r.name = std::string(names.back());
  const auto& entries = nodes_[static_cast<std::size_t>(dir)].entries;
  const auto it = entries.find(r.name);
  r.node = it == entries.end() ? -1 : it->second;
  return r;
}

bool SimFilesystem::is_inside(int node, int dir) const {
  if (node == dir) return true;
  const Node& d = nodes_[static_cast<std::size_t>(dir)];
  return std::any_of(d.entries.begin(), d.entries.end(), [&](const auto& e) {
    return nodes_[static_cast<std::size_t>(e.second)].dir && is_inside(node, e.second);
  });
}

void SimFilesystem::step(std::string_view verb, Access access, std::string_view path) {
  s_.yield(narrowing({verb, {object_, access}}));  // a failing operation only looked (done)
  if (s_.logging()) s_.note_detail(std::string(path));
}

FsStatus SimFilesystem::done(FsStatus status) {
  if (status != FsStatus::ok) {
    if (s_.in_actor() && s_.current_access() != Access::read) s_.refine_access(Access::read);  // it only looked
    s_.note_result({StepResult::Kind::failed});
    if (s_.logging()) s_.add_detail(std::string(fs_status_name(status)));
  } else {
    s_.note_result({StepResult::Kind::ok});
  }
  return status;
}

FsStatus SimFilesystem::mkdir(std::string_view path) {
  step("fs_mkdir", Access::write, path);
  const Resolved r = resolve(path);
  if (r.status != FsStatus::ok) return done(r.status);
  if (r.node >= 0) return done(FsStatus::exists);
  const int node = new_node(true);
  nodes_[static_cast<std::size_t>(r.parent)].entries[r.name] = node;
  log_.push_back(dir_op(DirOp::Kind::link, r.parent, r.name, node));
  return done(FsStatus::ok);
}

FsStatus SimFilesystem::write_file(std::string_view path, std::string_view contents) {
  step("fs_write", Access::write, path);
  const Resolved r = resolve(path);
  if (r.status != FsStatus::ok) return done(r.status);
  if (r.parent < 0 || (r.node >= 0 && nodes_[static_cast<std::size_t>(r.node)].dir)) return done(FsStatus::is_a_directory);
  int node = r.node;
  if (node < 0) {
    node = new_node(false);
    nodes_[static_cast<std::size_t>(r.parent)].entries[r.name] = node;
    log_.push_back(dir_op(DirOp::Kind::link, r.parent, r.name, node));
  }
  nodes_[static_cast<std::size_t>(node)].data = std::string(contents);
  return done(FsStatus::ok);
}

FsStatus SimFilesystem::fsync(std::string_view path) {
  step("fs_fsync", Access::write, path);
  const Resolved r = resolve(path);
  if (r.status != FsStatus::ok) return done(r.status);
  if (r.node < 0) return done(FsStatus::not_found);
  Node& n = nodes_[static_cast<std::size_t>(r.node)];
  if (!n.dir) {
    n.durable_data = n.data;  // rule 1
  } else {
    for (DirOp& op : log_) {  // rule 2: the names this directory holds, and renames into it
      const int holder = op.kind == DirOp::Kind::rename ? op.to_dir : op.dir;
      if (holder == r.node) op.durable = true;
    }
  }
  return done(FsStatus::ok);
}

FsStatus SimFilesystem::rename(std::string_view from, std::string_view to) {
  step("fs_rename", Access::write, from);
  if (s_.logging()) s_.add_detail(fmt::format("-> {}", to));
  const Resolved a = resolve(from);
  if (a.status != FsStatus::ok) return done(a.status);
  if (a.node < 0) return done(FsStatus::not_found);
  if (a.parent < 0) return done(FsStatus::io_error);  // the root
  const Resolved b = resolve(to);
  if (b.status != FsStatus::ok) return done(b.status);
  if (b.parent < 0) return done(FsStatus::is_a_directory);
  if (a.node == b.node) return done(FsStatus::ok);
  const Node& moving = nodes_[static_cast<std::size_t>(a.node)];
  if (b.node >= 0) {
    const Node& target = nodes_[static_cast<std::size_t>(b.node)];
    if (moving.dir && !target.dir) return done(FsStatus::not_a_directory);
    if (!moving.dir && target.dir) return done(FsStatus::is_a_directory);
    if (target.dir && !target.entries.empty()) return done(FsStatus::not_empty);
  }
  if (moving.dir && is_inside(b.parent, a.node)) return done(FsStatus::io_error);  // EINVAL: into itself
  nodes_[static_cast<std::size_t>(a.parent)].entries.erase(a.name);
  nodes_[static_cast<std::size_t>(b.parent)].entries[b.name] = a.node;
  log_.push_back(dir_op(DirOp::Kind::rename, a.parent, a.name, a.node, b.parent, b.name));
  return done(FsStatus::ok);
}

FsStatus SimFilesystem::unlink(std::string_view path) {
  step("fs_unlink", Access::write, path);
  const Resolved r = resolve(path);
  if (r.status != FsStatus::ok) return done(r.status);
  if (r.node < 0) return done(FsStatus::not_found);
  if (nodes_[static_cast<std::size_t>(r.node)].dir) return done(FsStatus::is_a_directory);
  nodes_[static_cast<std::size_t>(r.parent)].entries.erase(r.name);
  log_.push_back(dir_op(DirOp::Kind::unlink, r.parent, r.name, r.node));
  return done(FsStatus::ok);
}

FsStatus SimFilesystem::rmdir(std::string_view path) {
  step("fs_rmdir", Access::write, path);
  const Resolved r = resolve(path);
  if (r.status != FsStatus::ok) return done(r.status);
  if (r.node < 0) return done(FsStatus::not_found);
  if (r.parent < 0) return done(FsStatus::io_error);  // the root
  const Node& n = nodes_[static_cast<std::size_t>(r.node)];
  if (!n.dir) return done(FsStatus::not_a_directory);
  if (!n.entries.empty()) return done(FsStatus::not_empty);
  nodes_[static_cast<std::size_t>(r.parent)].entries.erase(r.name);
  log_.push_back(dir_op(DirOp::Kind::unlink, r.parent, r.name, r.node));
  return done(FsStatus::ok);
}

std::optional<std::vector<std::string>> SimFilesystem::list(std::string_view dir) {
  step("fs_list", Access::read, dir);
  const Resolved r = resolve(dir);
  if (r.status != FsStatus::ok || r.node < 0 || !nodes_[static_cast<std::size_t>(r.node)].dir) {
    done(r.status != FsStatus::ok ? r.status : r.node < 0 ? FsStatus::not_found : FsStatus::not_a_directory);
    return std::nullopt;
  }
  std::vector<std::string> names;
  for (const auto& [name, node] : nodes_[static_cast<std::size_t>(r.node)].entries) names.push_back(name);
  done(FsStatus::ok);
  if (s_.logging()) s_.add_detail(fmt::format("[{}]", fmt::join(names, ", ")));
  return names;
}

std::optional<std::string> SimFilesystem::read_file(std::string_view path) {
  step("fs_read", Access::read, path);
  const Resolved r = resolve(path);
  if (r.status != FsStatus::ok || r.node < 0 || nodes_[static_cast<std::size_t>(r.node)].dir) {
    done(r.status != FsStatus::ok ? r.status : r.node < 0 ? FsStatus::not_found : FsStatus::is_a_directory);
    return std::nullopt;
  }
  done(FsStatus::ok);
  const std::string& data = nodes_[static_cast<std::size_t>(r.node)].data;
  if (s_.logging()) s_.add_detail(fmt::format("\"{}\"", data));
  return data;
}

std::optional<std::uint64_t> SimFilesystem::device(std::string_view path) {
  step("fs_stat", Access::read, path);
  const Resolved r = resolve(path);
  if (r.status != FsStatus::ok || r.node < 0) {
    done(r.status != FsStatus::ok ? r.status : FsStatus::not_found);
    return std::nullopt;
  }
  done(FsStatus::ok);
  return 1;  // one simulated disk: every path is on device 1
}

void SimFilesystem::apply(std::vector<std::map<std::string, int, std::less<>>>& tree, const DirOp& op) const {
  auto drop = [&](int dir, const std::string& name) {
    auto& entries = tree[static_cast<std::size_t>(dir)];
    const auto it = entries.find(name);
    if (it != entries.end() && it->second == op.node) entries.erase(it);
  };
  switch (op.kind) {
    case DirOp::Kind::link: tree[static_cast<std::size_t>(op.dir)][op.name] = op.node; break;
    case DirOp::Kind::unlink: drop(op.dir, op.name); break;
    case DirOp::Kind::rename:
      drop(op.dir, op.name);
      tree[static_cast<std::size_t>(op.to_dir)][op.to_name] = op.node;
      break;
  }
}

void SimFilesystem::crash() {
  s_.also_touch(object_);
  std::vector<std::map<std::string, int, std::less<>>> tree = base_;
  tree.resize(nodes_.size());
  for (const DirOp& op : log_) {  // rules 2 and 3: durable operations stay, the others may
    const bool kept = op.durable || s_.choose(2, "crash keeps a directory operation") == 1;
    if (kept) apply(tree, op);
    if (s_.logging() && !op.durable) {
      const char* what = op.kind == DirOp::Kind::link ? "create" : op.kind == DirOp::Kind::unlink ? "unlink" : "rename";
      s_.add_detail(fmt::format("{} {} {}{}", kept ? "kept" : "lost", what, op.name,
                                op.kind == DirOp::Kind::rename ? " -> " + op.to_name : std::string()));
    }
  }
  std::vector<bool> reachable(nodes_.size(), false);
  std::vector<int> todo{0};
  reachable[0] = true;
  while (!todo.empty()) {
    const int dir = todo.back();
    todo.pop_back();
    for (const auto& [name, node] : tree[static_cast<std::size_t>(dir)]) {
      if (!reachable[static_cast<std::size_t>(node)] && nodes_[static_cast<std::size_t>(node)].dir) todo.push_back(node);
      reachable[static_cast<std::size_t>(node)] = true;
    }
  }
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    Node& n = nodes_[i];
    if (!n.dir && reachable[i] && n.data != n.durable_data) {  // rules 1 and 3
      const bool kept = s_.choose(2, "crash keeps unsynced file contents") == 1;
      if (!kept) n.data = n.durable_data;
      if (s_.logging()) s_.add_detail(fmt::format("{} unsynced contents of node {}", kept ? "kept" : "lost", i));
    }
    n.durable_data = n.data;
    n.entries = reachable[i] ? tree[i] : decltype(n.entries){};
  }
  base_.assign(nodes_.size(), {});
  for (std::size_t i = 0; i < nodes_.size(); ++i) base_[i] = nodes_[i].entries;
  log_.clear();
}

std::size_t SimFilesystem::pending_directory_operations() const {
  return static_cast<std::size_t>(std::count_if(log_.begin(), log_.end(), [](const DirOp& op) { return !op.durable; }));
}

std::size_t SimFilesystem::unsynced_files() const {
  return static_cast<std::size_t>(
      std::count_if(nodes_.begin(), nodes_.end(), [](const Node& n) { return !n.dir && n.data != n.durable_data; }));
}

}  // namespace lockstep::sim
