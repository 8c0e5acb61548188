// sim/pg/executor/sql_settings.cc: the statements that change a session's settings and its
// transaction's (BEGIN, COMMIT, SET [LOCAL], RESET, SET TRANSACTION, SET SESSION
// CHARACTERISTICS) and the settings' values as SET reads them and SHOW prints them.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "lockstep/sim/pg/executor/sql_run.h"
#include "lockstep/sim/pg/executor/sql_settings.h"

namespace lockstep::sim::pg {

// The session's default_transaction_isolation as SHOW prints it (SET SESSION CHARACTERISTICS too).
std::string default_isolation_name(const SimConnection& c) {
  const std::optional<std::string> set = c.custom_setting("default_transaction_isolation");
  return set && !set->empty() ? *set : std::string("read committed");
}

std::string isolation_level_value(const std::string& value) {
  std::string level = value;
  std::transform(level.begin(), level.end(), level.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (level == "read uncommitted") throw SqlError("0A000", "default_transaction_isolation 'read uncommitted' is not in lockstep's SQL subset (docs/sql.md)");
  if (!level.empty() && level != "serializable" && level != "repeatable read" && level != "read committed") {
    throw SqlError("22023", fmt::format("invalid value for parameter \"default_transaction_isolation\": \"{}\"", value));
  }
  return level;
}

// The timeout a setting names (model/sql/functions.h's kSettings); another is refused.
SimConnection::Timeout timeout_named(std::string_view name) {
  const std::optional<sql::Setting> setting = sql::setting_named(name);
  if (!setting) throw SqlError("0A000", fmt::format("the setting {} is not in lockstep's SQL subset (docs/sql.md)", name));
  using T = SimConnection::Timeout;
  constexpr auto same = [](sql::Setting s, T t) { return static_cast<int>(s) == static_cast<int>(t); };
  static_assert(same(sql::Setting::lock_timeout, T::lock) && same(sql::Setting::statement_timeout, T::statement) &&
                same(sql::Setting::deadlock_timeout, T::deadlock) && same(sql::Setting::idle_in_transaction_session_timeout, T::idle) &&
                same(sql::Setting::idle_session_timeout, T::idle_session));  // one order, so a setting is its timeout
  if (sql::is_planner_switch(*setting)) throw std::logic_error("timeout_named: a setting without its timeout");
  return static_cast<T>(*setting);
}

// The planner switch a setting names (its bit), or -1.
int planner_switch_named(std::string_view name) {
  const std::optional<sql::Setting> setting = sql::setting_named(name);
  if (!setting || !sql::is_planner_switch(*setting)) return -1;
  return static_cast<int>(*setting) - static_cast<int>(sql::Setting::enable_seqscan);
}

// A Boolean setting's value as the server's parse_bool reads it (any unique prefix of on,
// off, true, false, yes, no; 1 and 0).
bool setting_bool(const std::string& name, const std::string& text) {
  std::string v = text;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  const auto prefix = [&](std::string_view word, std::size_t least) { return v.size() >= least && std::string_view(word).starts_with(v); };
  if (prefix("true", 1) || prefix("yes", 1) || prefix("on", 2) || v == "1") return true;
  if (prefix("false", 1) || prefix("no", 1) || prefix("off", 2) || v == "0") return false;
  throw SqlError("22023", fmt::format("parameter \"{}\" requires a Boolean value", name));
}

// A time setting's value as the server's parse_int reads it: a number (a fraction allowed,
// rounded), optional spaces, then a unit (us, ms, s, min, h, d; case matters; none: ms).
Duration setting_duration(const std::string& name, const std::string& text) {
  const auto invalid = [&]() -> Duration {
    throw SqlError("22023", fmt::format("invalid value for parameter \"{}\": \"{}\"", name, text));
  };
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0) ++i;
  const std::size_t start = i;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) != 0 || text[i] == '.')) ++i;
  const std::string number = text.substr(start, i - start);
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size()) return invalid();
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0) ++i;
  std::size_t unit_end = i;
  while (unit_end < text.size() && std::isalpha(static_cast<unsigned char>(text[unit_end])) != 0) ++unit_end;
  const std::string unit = text.substr(i, unit_end - i);
  for (std::size_t k = unit_end; k < text.size(); ++k) {
    if (std::isspace(static_cast<unsigned char>(text[k])) == 0) return invalid();
  }
  constexpr std::pair<std::string_view, double> kUnits[] = {{"us", 0.001}, {"ms", 1}, {"s", 1e3}, {"min", 60e3}, {"h", 3600e3}, {"d", 86'400e3}};
  double ms = -1;
  for (const auto& [u, size] : kUnits) {
    if (unit == u) ms = std::nearbyint(v * size);
  }
  if (unit.empty()) ms = std::nearbyint(v);
  if (ms == -1 && !unit.empty()) return invalid();
  if (ms > std::numeric_limits<std::int32_t>::max() || ms < std::numeric_limits<std::int32_t>::min()) return invalid();
  if (ms < 0) {
    throw SqlError("22023", fmt::format("{} ms is outside the valid range for parameter \"{}\" (0 .. 2147483647)", static_cast<std::int64_t>(ms), name));
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(ms));
}

Result<Rows> SqlRun::statement(const sql::Transaction& t) {
  Rows out;
  Status st;
  switch (t.kind) {
    case sql::Transaction::Kind::begin: {
      if (c_.implicit_block_ && t.isolation && *t.isolation != sql::Isolation::read_committed) {
        // The server: "SET TRANSACTION ISOLATION LEVEL must be called before any query" once
        // a statement of the string took a snapshot; which statements do is not modelled.
        throw SqlError("0A000", "BEGIN ISOLATION LEVEL after another statement of the same string is not in lockstep's SQL subset (docs/sql.md)");
      }
      const bool was = c_.session_.in_transaction;
      st = c_.begin();
      if (st.ok() && !was) c_.transaction_start_ = c_.statement_time();
      if (st.ok() && !was && !t.isolation) {  // the session's default_transaction_isolation
        sql::Transaction level = t;
        const std::string name = default_isolation_name(c_);
        level.isolation = name == "serializable" ? sql::Isolation::serializable : name == "repeatable read" ? sql::Isolation::repeatable_read : sql::Isolation::read_committed;
        transaction_options(level);
      } else if (st.ok()) {
        transaction_options(t);  // inside a transaction too, after the server's WARNING
      }
      out.tag = t.start ? "START TRANSACTION" : "BEGIN";
      break;
    }
    case sql::Transaction::Kind::commit: {
      // A deferred foreign key's checks first (PreCommit's AfterTriggerFireDeferred): an error
      // fails the COMMIT, which then rolls the transaction back.
      if (!c_.deferred_checks_.empty() && !c_.session_.aborted && c_.session_.in_transaction && !nested_) {
        if (std::optional<Error> failed = run_deferred_checks()) {
          st = c_.commit();
          return *failed;
        }
      }
      const bool rolls_back = c_.session_.aborted;
      st = c_.commit();
      out.tag = rolls_back ? "ROLLBACK" : "COMMIT";
      break;
    }
    case sql::Transaction::Kind::rollback:
      st = c_.rollback();
      out.tag = "ROLLBACK";
      break;
    case sql::Transaction::Kind::savepoint:
      st = c_.savepoint(t.savepoint);
      out.tag = "SAVEPOINT";
      break;
    case sql::Transaction::Kind::release:
      st = c_.release_savepoint(t.savepoint);
      out.tag = "RELEASE";
      break;
    case sql::Transaction::Kind::rollback_to:
      st = c_.rollback_to_savepoint(t.savepoint);
      out.tag = "ROLLBACK";
      break;
    case sql::Transaction::Kind::set_transaction: return set_transaction(t);
    case sql::Transaction::Kind::set_constraints: return set_constraints(t);
  }
  if (!st.ok()) return st.error();
  return out;
}

Result<Rows> SqlRun::set_transaction(const sql::Transaction& t) {
  SimConnection::Statement guard(c_);
  if (auto refused = c_.begin_statement(OpDesc{"set_transaction", {}, 0, false}, false)) return *refused;
  if (!c_.session_.in_transaction) {  // the statement's own transaction has it, then ends
    c_.warnings_.push_back({"25P01", "SET TRANSACTION can only be used in transaction blocks"});
    return done(Rows{{}, {}, "SET"});
  }
  transaction_options(t);
  return done(Rows{{}, {}, "SET"});
}

void SqlRun::transaction_options(const sql::Transaction& t) {
  // The server's checks (check_transaction_isolation, check_transaction_read_only); a
  // snapshot open (a REPEATABLE READ one) is a query run.
  const bool queried = c_.queried_ || c_.snapshot_.has_value();
  const sql::Isolation now = c_.serializable_ ? sql::Isolation::serializable : c_.repeatable_read_ ? sql::Isolation::repeatable_read : sql::Isolation::read_committed;
  if (t.isolation && *t.isolation != now) {
    if (queried) throw SqlError("25001", "SET TRANSACTION ISOLATION LEVEL must be called before any query");
    if (!c_.savepoints_.empty()) throw SqlError("25001", "SET TRANSACTION ISOLATION LEVEL must not be called in a subtransaction");
    c_.repeatable_read_ = c_.serializable_ = false;
    if (*t.isolation != sql::Isolation::read_committed) c_.use_repeatable_read(*t.isolation == sql::Isolation::serializable);
  }
  if (t.read_only) {
    if (!*t.read_only && c_.read_only_ && !c_.savepoints_.empty()) throw SqlError("25001", "cannot set transaction read-write mode inside a read-only transaction");
    if (!*t.read_only && c_.read_only_ && queried) throw SqlError("25001", "transaction read-write mode must be set before any query");
    c_.read_only_ = *t.read_only;
  }
}

Result<Rows> SqlRun::statement(const sql::SetVariable& v) {
  if (v.name == "default_transaction_isolation") {  // kept as a placeholder is: SET LOCAL, rolled back with its transaction
    const Status st = c_.set_custom(v.name, isolation_level_value(v.value.value_or("")), v.local);
    if (!st.ok()) return st.error();
    return Rows{{}, {}, v.reset ? "RESET" : "SET"};
  }
  if (v.style) {  // TimeZone, DateStyle, IntervalStyle, search_path, application_name: the session's own, no other step sees them
    SimConnection::Statement guard(c_);
    if (auto refused = begin("sql_set", Footprint{})) return *refused;
    c_.set_style(v.local, [&](sql::SessionStyle& style, std::string& application_name) {
      if (v.name == "application_name") {  // RESET: the connection's (its pool's option)
        application_name = v.value ? *v.value : c_.config_.application_name;
      } else if (v.value->empty()) {  // RESET, SET ... TO DEFAULT
        sql::reset_style_setting(style, c_.start_style_, v.name);
      } else if (!sql::apply_style_setting(style, v.name, *v.value)) {
        throw std::logic_error("SET of a style the parser accepted and the server does not");
      }
    });
    return done(Rows{{}, {}, v.reset ? "RESET" : "SET"});
  }
  if (sql::is_custom_setting(v.name)) {  // a placeholder: any text, the session's own
    const Status st = c_.set_custom(v.name, v.value, v.local);
    if (!st.ok()) return st.error();
    return Rows{{}, {}, v.reset ? "RESET" : "SET"};
  }
  if (const int bit = planner_switch_named(v.name); bit >= 0) {
    const Status st = c_.set_planner_switch(bit, v.value ? setting_bool(v.name, *v.value) : true, v.local);
    if (!st.ok()) return st.error();
    return Rows{{}, {}, v.reset ? "RESET" : "SET"};
  }
  const SimConnection::Timeout which = timeout_named(v.name);
  // RESET and SET ... TO DEFAULT: the server's default (0, or the pool's deadlock_timeout).
  const Duration d = v.value                                    ? setting_duration(v.name, *v.value)
                     : which == SimConnection::Timeout::deadlock ? c_.config_.deadlock_timeout
                                                                 : Duration{0};
  const Status st = c_.set_timeout(which, d, v.local);
  if (!st.ok()) return st.error();
  return Rows{{}, {}, v.reset ? "RESET" : "SET"};
}

}  // namespace lockstep::sim::pg
