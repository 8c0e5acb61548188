#include "lockstep/model/systems/bench.h"

#include <map>

#include <fmt/format.h>

namespace lockstep::bench {
namespace {


enum class Program { lockinc, readers, lastzero, indexer, filesystem };

struct Config {
  Program program = Program::lockinc;
  int n = 2;
  bool use_lock = true;  // lockinc's variant no_lock drops it: the lost update
};

// indexer: table of 128 cells, 4 insertions per actor (GenMC's tests/correct/indexer).
constexpr int kIndexerSize = 128;
constexpr int kIndexerMax = 4;
// filesystem (Flanagan and Godefroid, POPL 2005): 32 inodes, 26 blocks.
constexpr int kInodes = 32;
constexpr int kBlocks = 26;

int total_actors(const Config& c) { return c.program == Program::readers || c.program == Program::lastzero ? c.n + 1 : c.n; }

// The names of one program's objects and actors, made once per system: each execution's
// instance only copies them (formatting 128 names per execution was a tenth of indexer's time).
struct Names {
  std::vector<std::string> a, b, locks, block_locks, actors;
};

std::vector<std::string> indexed(const char* name, int count) {
  std::vector<std::string> v;
  for (int i = 0; i < count; ++i) v.push_back(count == 1 ? name : fmt::format("{}[{}]", name, i));
  return v;
}

std::string actor_name_of(const Config& c, int i) {
  if (c.program == Program::readers) return i == 0 ? "writer" : fmt::format("r{}", i);
  if (c.program == Program::lastzero) return i == 0 ? "scan" : fmt::format("t{}", i);
  return fmt::format("t{}", i);
}

Names names_of(const Config& c) {
  Names n;
  switch (c.program) {
    case Program::lockinc:
      n.a = indexed("x", 1);
      n.locks = indexed("m", 1);
      break;
    case Program::readers: n.a = indexed("x", 1); break;
    case Program::lastzero: n.a = indexed("array", c.n + 1); break;
    case Program::indexer: n.a = indexed("table", kIndexerSize); break;
    case Program::filesystem:
      n.a = indexed("inode", kInodes);
      n.b = indexed("busy", kBlocks);
      n.locks = indexed("locki", kInodes);
      n.block_locks = indexed("lockb", kBlocks);
      break;
  }
  for (int i = 0; i < total_actors(c); ++i) n.actors.push_back(actor_name_of(c, i));
  return n;
}

class BenchInstance final : public Instance {
 public:
  BenchInstance(const Config& config, const Names& names, Env& env) : c_(config), names_(names) {
    for (const auto& name : names.a) a_.push_back(env.new_shared_var(name, 0));
    for (const auto& name : names.b) b_.push_back(env.new_shared_var(name, 0));
    for (const auto& name : names.locks) locks_.push_back(env.new_mutex(name));
    for (const auto& name : names.block_locks) block_locks_.push_back(env.new_mutex(name));
  }

  int actor_count() const override { return total_actors(c_); }
  std::string_view actor_name(ActorId actor) const override { return names_.actors[actor]; }

  void run_actor(ActorId t) override {
    switch (c_.program) {
      case Program::lockinc:
        if (c_.use_lock) locks_[0]->lock();
        a_[0]->store(a_[0]->load() + 1);
        if (c_.use_lock) locks_[0]->unlock();
        break;
      case Program::readers:
        if (t == 0) {
          a_[0]->store(42);
        } else {
          a_[0]->load();
        }
        break;
      case Program::lastzero:
        if (t == 0) {
          for (int i = c_.n; i >= 0 && a_[i]->load() != 0; --i) {
          }
        } else {
          a_[t]->store(a_[t - 1]->load() + 1);
        }
        break;
      case Program::indexer:
        for (int i = 0; i < kIndexerMax; ++i) {
          const int w = i * 11 + t;
          int h = (w * 7) % kIndexerSize;
          while (!a_[h]->compare_exchange(0, w)) h = (h + 1) % kIndexerSize;
        }
        break;
      case Program::filesystem: filesystem(t); break;
    }
  }

  std::optional<Violation> at_end() override {
    // Outside any actor: these loads are not steps.
    switch (c_.program) {
      case Program::lockinc:
        if (a_[0]->load() != c_.n) {
          return Violation{"final_count", fmt::format("x is {} after {} increments", a_[0]->load(), c_.n)};
        }
        break;
      case Program::indexer: {
        // Every nonzero value is in the table as many times as it was inserted (actors t
        // and t + 11 insert some values in common).
        std::map<std::int64_t, int> inserted, found;
        for (int t = 0; t < c_.n; ++t) {
          for (int i = 0; i < kIndexerMax; ++i) ++inserted[i * 11 + t];
        }
        inserted.erase(0);
        for (const auto& cell : a_) {
          if (const auto v = cell->load(); v != 0) ++found[v];
        }
        if (found != inserted) return Violation{"inserted_once", "the table does not hold exactly the values inserted"};
        break;
      }
      case Program::filesystem: {
        // Every inode got a block of its own, marked busy.
        std::vector<int> owner(kBlocks, -1);
        for (int i = 0; i < std::min(c_.n, kInodes); ++i) {
          const auto b = a_[i]->load() - 1;
          if (b < 0 || b >= kBlocks || b_[b]->load() != 1 || owner[b] >= 0) {
            return Violation{"blocks_distinct", fmt::format("inode {} has block {}", i, b)};
          }
          owner[b] = i;
        }
        break;
      }
      default: break;
    }
    return std::nullopt;
  }

 private:
  void filesystem(int tid) {
    const int i = tid % kInodes;
    locks_[i]->lock();
    if (a_[i]->load() == 0) {
      int b = (i * 2) % kBlocks;
      for (;;) {
        block_locks_[b]->lock();
        if (b_[b]->load() == 0) {
          b_[b]->store(1);
          a_[i]->store(b + 1);
          block_locks_[b]->unlock();
          break;
        }
        block_locks_[b]->unlock();
        b = (b + 1) % kBlocks;
      }
    }
    locks_[i]->unlock();
  }

  Config c_;
  std::vector<std::unique_ptr<SharedVar>> a_, b_;
  std::vector<std::unique_ptr<Mutex>> locks_, block_locks_;
  const Names& names_;
};

class BenchSystem final : public System {
 public:
  explicit BenchSystem(Config c) : c_(c), names_(names_of(c)) {}
  std::unique_ptr<Instance> instantiate(Env& env) const override { return std::make_unique<BenchInstance>(c_, names_, env); }

 private:
  Config c_;
  Names names_;
};

}  // namespace

SystemInfo system_info() {
  SystemInfo info;
  info.name = "bench";
  info.description = "classic model-checking benchmarks: config {\"program\": lockinc|readers|lastzero|indexer|filesystem, \"n\": N}";
  info.variants = {{"correct", "the program as the literature states it"},
                   {"no_lock", "lockinc without its mutex: increments can be lost"}};
  info.invariants = {{"final_count", "lockinc: x equals the number of actors at the end"},
                     {"inserted_once", "indexer: the table holds each nonzero value as often as it was inserted"},
                     {"blocks_distinct", "filesystem: every inode has a busy block of its own"}};
  info.configure = [](const SystemInput& input) -> std::unique_ptr<System> {
    enabled_faults(system_info(), input.faults);  // rejects any fault: benchmarks have none
    if (input.actors) input.actors->fail("bench programs build their own actors; remove \"actors\"");
    if (!input.config) input.fail("", "missing \"config\": {\"program\": \"lockinc\", \"n\": N}");
    const JsonCursor& config = *input.config;
    config.expect_keys({"program", "n"});
    const JsonCursor program = config.at("program");
    const std::string name = program.as_string();
    Config c;
    if (name == "lockinc") {
      c.program = Program::lockinc;
    } else if (name == "readers") {
      c.program = Program::readers;
    } else if (name == "lastzero") {
      c.program = Program::lastzero;
    } else if (name == "indexer") {
      c.program = Program::indexer;
    } else if (name == "filesystem") {
      c.program = Program::filesystem;
    } else {
      program.fail(fmt::format("unknown program \"{}\" (known: lockinc, readers, lastzero, indexer, filesystem)", name));
    }
    const bool extra_actor = c.program == Program::readers || c.program == Program::lastzero;
    c.n = static_cast<int>(config.at("n").as_int(1, extra_actor ? kMaxActors - 1 : kMaxActors));
    if (input.variant == "no_lock" && c.program != Program::lockinc) {
      input.fail("/variant", fmt::format("variant no_lock applies to lockinc only, not {}", name));
    }
    c.use_lock = input.variant != "no_lock";
    return std::make_unique<BenchSystem>(c);
  };
  return info;
}

}  // namespace lockstep::bench
