#include "lockstep/model/systems/sql_spec.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace lockstep::sql_spec {
namespace {

using sql::Spec;

// What a failed statement says, on one line.
std::string error_text(const pg::Error& e) { return fmt::format("ERROR {}: {}", e.sqlstate, e.message); }

class SpecInstance final : public Instance {
 public:
  SpecInstance(const Spec& spec, Env& env)
      : spec_(spec),
        pool_(env.new_pg_pool(pg::PoolConfig{.application_name = "isolation",
                                              .pool_size = static_cast<int>(spec.sessions.size()) + 1,
                                              .max_overflow = 0})) {
    auto c = pool_->checkout().value();
    for (const sql::SqlBlock& block : spec_.setup) {
      const auto r = c->exec(block.text);
      if (!r.ok()) throw ModelError(fmt::format("{}:{}: the spec's setup failed: {}", spec_.file, block.line, error_text(r.error())));
    }
  }

  int actor_count() const override { return static_cast<int>(spec_.sessions.size()); }
  std::string_view actor_name(ActorId actor) const override { return spec_.sessions[static_cast<std::size_t>(actor)].name; }

  void run_actor(ActorId actor) override {
    const sql::SpecSession& session = spec_.sessions[static_cast<std::size_t>(actor)];
    auto c = pool_->checkout().value();
    for (const sql::SqlBlock& block : session.setup) (void)c->exec(block.text);
    for (const sql::SpecStep& step : session.steps) (void)c->exec(step.sql.text);  // an error is the step's outcome
    for (const sql::SqlBlock& block : session.teardown) (void)c->exec(block.text);
  }

  std::optional<Violation> at_end() override {
    auto c = pool_->checkout().value();
    for (const sql::SpecCheck& check : spec_.checks) {
      const auto r = c->exec(check.sql.text);
      if (!r.ok()) return Violation{check.name, fmt::format("check \"{}\" failed: {}", check.name, error_text(r.error()))};
      const pg::Rows& rows = r.value();
      const bool holds = rows.size() == 1 && rows.columns.size() == 1 && rows.rows[0][0] == std::optional<std::string>("t");
      if (!holds) {
        const std::string got = rows.empty() ? "no row" : rows.rows[0][0].value_or("NULL");
        return Violation{check.name, fmt::format("check \"{}\" is not true (it returned {}): {}", check.name, got, check.sql.text)};
      }
    }
    return std::nullopt;
  }

 private:
  const Spec& spec_;
  std::unique_ptr<pg::Pool> pool_;
};

class SpecSystem final : public System {
 public:
  explicit SpecSystem(Spec spec) : spec_(std::move(spec)) {}
  std::unique_ptr<Instance> instantiate(Env& env) const override { return std::make_unique<SpecInstance>(spec_, env); }

 private:
  Spec spec_;
};

}  // namespace

SystemInfo system_info() {
  SystemInfo info;
  info.name = "sql";
  info.description = "a PostgreSQL isolation spec (.spec): SQL sessions on the simulated server, with lockstep's checks";
  info.variants = {{"default", "the spec exactly as written"}};
  info.configure = [](const SystemInput& input) -> std::unique_ptr<System> {
    enabled_faults(system_info(), input.faults);
    if (!input.config) input.fail("", "a sql scenario needs config.spec, the spec's text");
    input.config->expect_keys({"spec", "file"});
    const std::string file = input.config->find("file") ? input.config->at("file").as_string() : input.config->file();
    return std::make_unique<SpecSystem>(sql::parse_spec(input.config->at("spec").as_string(), file));
  };
  return info;
}

nlohmann::json scenario_document(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path)) throw InputError(fmt::format("{}: cannot read the file", path));
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > kMaxInputBytes) throw InputError(fmt::format("{}: larger than {} bytes", path, kMaxInputBytes));
  const Spec spec = sql::parse_spec(text.str(), path);  // errors name the file's line and column
  nlohmann::json doc = {{"format", "lockstep-scenario/1"},
                        {"name", std::filesystem::path(path).stem().string()},
                        {"description", fmt::format("PostgreSQL isolation spec {}", std::filesystem::path(path).filename().string())},
                        {"system", "sql"},
                        {"config", {{"spec", text.str()}, {"file", path}}}};
  if (spec.expect) {
    doc["expect"] = {{"verdict", std::string(verdict_name(spec.expect->verdict))}};
    if (spec.expect->violation) doc["expect"]["violation"] = *spec.expect->violation;
  }
  return doc;
}

}  // namespace lockstep::sql_spec
