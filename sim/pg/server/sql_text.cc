// sim/pg/server/sql_text.cc: SimConnection::exec and prepared statements on the simulated server: a
// text parsed once per thread and kept (PostgreSQL's parser, libpg_query), its statements run
// in turn as the server runs a query string (one implicit block outside a transaction), each
// in a SqlRun (sim/pg/executor/sql_run.h). A text the parser turns down answers the server's error, or
// lockstep's refusal with its position.
#include <unordered_map>
#include <utility>

#include "lockstep/model/sql/parse.h"
#include "lockstep/sim/pg/executor/sql_plpgsql.h"
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {

namespace {

// Plans by statement text: parsed once per thread (the simulation's threads each run whole
// executions), bounded.
struct TextHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

}  // namespace

std::shared_ptr<const std::vector<sql::Statement>> cached_plans(std::string_view text) {
  using Plans = std::shared_ptr<const std::vector<sql::Statement>>;
  // In front of the map, a few entries found by where the text is (a program's statements
  // are mostly literals and reused strings): a hit compares the text without hashing it.
  struct Recent {
    std::string text;
    Plans plans;
  };
  thread_local std::array<Recent, 64> recent;
  Recent& r = recent[(reinterpret_cast<std::uintptr_t>(text.data()) >> 4 ^ text.size()) % recent.size()];
  if (r.plans != nullptr && r.text == text) return r.plans;
  thread_local std::unordered_map<std::string, Plans, TextHash, std::equal_to<>> cache;
  if (auto it = cache.find(text); it != cache.end()) {  // no copy of the text
    r = Recent{std::string(text), it->second};
    return it->second;
  }
  auto plans = std::make_shared<const std::vector<sql::Statement>>(sql::parse_sql(text));
  if (cache.size() >= 4096) cache.clear();
  cache.emplace(std::string(text), plans);
  return plans;
}

namespace {

// A statement the parser turned down: a refusal keeps its position (where the construct is);
// the server's own error (a syntax error, FOR UPDATE with an aggregate) is its message alone,
// as the server's primary message is.
Error parse_error_of(const SqlError& e) {
  std::string message = e.what();
  if (message.find("lockstep's SQL subset") == std::string::npos) {
    for (const char* where : {", at position ", ", at line "}) {
      if (const auto at = message.rfind(where); at != std::string::npos) message.resize(at);
    }
  }
  return Error{e.sqlstate(), std::move(message)};
}

// Sets a connection's text being run for the scope (pg_stat_activity's query), then puts
// back what was there.
class RunningText {
 public:
  RunningText(std::string_view& slot, std::string_view text) : slot_(slot), outer_(std::exchange(slot, text)) {}
  ~RunningText() { slot_ = outer_; }
  RunningText(const RunningText&) = delete;
  RunningText& operator=(const RunningText&) = delete;

 private:
  std::string_view& slot_;
  std::string_view outer_;
};

}  // namespace

Result<Rows> SimConnection::exec(std::string_view text, const std::vector<Param>& params) {
  const RunningText running(query_text_, text);
  std::shared_ptr<const std::vector<sql::Statement>> plans;
  try {
    plans = server_.has_views() ? cached_plans(server_.with_views_read(text)) : cached_plans(text);  // (pg_stat_activity shows the text)
  } catch (const SqlError& e) {
    Error error = parse_error_of(e);
    if (session_.in_transaction && error.message.find("lockstep's SQL subset") == std::string::npos) {
      // The server's own error aborts the transaction block, in no step of the simulation's:
      // refused there (an aborted block answers 25P02 first, as the server does).
      if (session_.aborted) return in_failed_transaction();
      return Error{"0A000", fmt::format("a statement the server fails as it parses it (\"{}\") inside a transaction block is not in "
                                        "lockstep's SQL subset (docs/sql.md): it aborts the block",
                                        error.message)};
    }
    return error;
  }
  if (plans->size() > 1 && !params.empty()) return Error{"42601", "cannot insert multiple commands into a prepared statement"};
  return run_statements(plans, params);
}

Result<Rows> SimConnection::run_statements(const std::shared_ptr<const std::vector<sql::Statement>>& plans,
                                           const std::vector<Param>& params) {
  if (plans->empty()) return Rows{};
  if (std::optional<Error> refused = idle_timeout_refusal()) return *refused;
  struct Depth {  // the typed operations SQL runs through are its own: no idle moment after them
    int& d;
    explicit Depth(int& depth) : d(depth) { ++d; }
    ~Depth() { --d; }
  } depth(sql_depth_);
  Result<Rows> last = Rows{};
  // A statement of its own transaction that fails takes its SETs (set_config(..., false)) with it.
  const std::optional<Settings> autocommit = sql_depth_ == 1 && !session_.in_transaction ? std::optional(session_settings_) : std::nullopt;
  // Several statements outside a block are one transaction (the server's implicit block).
  const bool several = (plans->size() > 1 || in_query_string_) && s_.in_actor();
  const bool whole_string = plans->size() > 1 && !in_query_string_;
  if (whole_string) begin_query_string(query_text_);
  for (const sql::Statement& st : *plans) {
    if (dead_) break;
    if (several && !session_.in_transaction && !std::holds_alternative<sql::Transaction>(st.body)) begin_implicit_block();
    last = std::holds_alternative<sql::DoBlock>(st.body) ? run_do(std::get<sql::DoBlock>(st.body)) : SqlRun(*this, plans, st, params).run_checked();
    if (!last.ok()) break;
  }
  if (whole_string) end_query_string();
  if (autocommit && !last.ok() && !session_.in_transaction) session_settings_ = *autocommit;
  if (sql_depth_ == 1 && !session_.in_transaction) restore_session_settings();  // a set_config(..., true) of its own transaction
  if (dead_) return last.ok() ? Result<Rows>(lost()) : last;  // ended in it: its error says how
  if (!in_query_string_ && !whole_string) went_idle();  // (a string: end_query_string)
  return last;
}

void SimConnection::went_idle() {
  if (dead_) return;
  // Idle from here, in the transaction or out of one (one string of statements is one
  // message: never idle inside it, as on the server).
  idle_since_.reset();
  const Duration idle_limit = session_.in_transaction ? idle_timeout_ : idle_session_timeout_;
  if (idle_limit.count() > 0) {
    if (s_.time_mode() == TimeMode::timed && s_.in_actor()) {
      // The server ends it then (Server::end_idle_sessions). A step that writes the server:
      // the lock waiters count to that deadline from here (WaiterReady's idle epoch).
      step({session_.in_transaction ? "idle_in_transaction" : "idle", whole_server(Access::write), pid_, true});
      session_.idle_until = s_.now() + idle_limit;
      session_.idle_session = !session_.in_transaction;
      server_.went_idle();
    } else if (s_.in_actor()) {
      idle_since_ = s_.now();
    }
  }
}

Status SimConnection::prepare(std::string_view name, std::string_view text) {
  if (dead_) return lost();
  if (prepared_.find(name) != prepared_.end()) return Error{"42P05", fmt::format("prepared statement \"{}\" already exists", name)};
  std::shared_ptr<const std::vector<sql::Statement>> plans;
  try {
    plans = server_.has_views() ? cached_plans(server_.with_views_read(text)) : cached_plans(text);
  } catch (const SqlError& e) {
    return error_of(e);
  }
  if (plans->size() > 1) return Error{"42601", "cannot insert multiple commands into a prepared statement"};
  prepared_.emplace(std::string(name), std::move(plans));
  return {};
}

Result<Rows> SimConnection::exec_prepared(std::string_view name, const std::vector<Param>& params) {
  if (dead_) return lost();
  // The server refuses a Bind it cannot run before running anything (an aborted transaction's
  // too); in a transaction block that aborts it: in a step, as other sessions see its state.
  const auto refuse = [this](Error e) -> Result<Rows> {
    Statement st(*this);
    step({"sql", Footprint{}, 0, false});
    if (killed()) return terminated();
    if (session_.in_transaction) session_.aborted = true;
    return e;
  };
  const auto it = prepared_.find(name);
  if (it == prepared_.end()) return refuse(Error{"26000", fmt::format("prepared statement \"{}\" does not exist", name)});
  const int wanted = it->second->empty() ? 0 : it->second->front().max_param;
  if (static_cast<int>(params.size()) != wanted) {
    return refuse(Error{"08P01", fmt::format("bind message supplies {} parameters, but prepared statement \"{}\" requires {}",
                                             params.size(), name, wanted)});
  }
  const auto plans = it->second;  // (DISCARD ALL forgets the name while it runs)
  const RunningText running(query_text_, plans->empty() ? std::string_view() : std::string_view(plans->front().text));
  return run_statements(plans, params);
}

}  // namespace lockstep::sim::pg
