// sim/pg/executor/sql_ddl.cc: the DDL of the simulated server (sim/pg/executor/sql_run.h): CREATE / DROP TABLE,
// CREATE / DROP TYPE (enums), CREATE / DROP SEQUENCE, CREATE / DROP SCHEMA and CREATE INDEX, each
// outside the sessions and outside a transaction block, in one step that writes the whole server;
// and a sequence's functions (nextval, currval, setval) and its relation (SELECT ... FROM seq).
#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/ranges.h>

#include "lockstep/model/sql/format_function.h"
#include "lockstep/model/sql/type_check.h"
#include "lockstep/sim/pg/executor/sql_run.h"
#include "lockstep/sim/pg/executor/sql_plpgsql.h"
#include "lockstep/sim/pg/executor/sql_schemas.h"

namespace lockstep::sim::pg {

std::optional<Error> SqlRun::ddl_step(bool own) {
  if (s_.in_actor() && !own) {
    return Error{"0A000",
                 "DDL while the sessions run is not in lockstep's SQL subset: create and drop tables in the setup (docs/sql.md)"};
  }
  if (c_.session_.in_transaction && !(own && c_.savepoints_.empty())) {  // (a rollback undoes an own one: Server::end_temp_changes)
    return Error{"0A000", "DDL inside a transaction block is not in lockstep's SQL subset (docs/sql.md)"};
  }
  if (own) return begin("sql_ddl", Footprint{});  // the session's own object: no other session sees it
  server_.catalog_changed();
  return begin("sql_ddl", SimConnection::whole_server(Access::write));
}

Result<Rows> SqlRun::statement(const sql::CreateTable& created) {
  SimConnection::Statement guard(c_);
  if (auto refused = ddl_step()) return *refused;
  sql::CreateTable ct = created;
  ct.schema = creation_schema(created.schema, server_);  // (3F000 before 42P07, as the server)
  const bool taken = server_.sql_table(ct.table) != nullptr || server_.sequence(ct.table) != nullptr;
  if (!ct.view_query.empty()) {  // CREATE VIEW: its relations checked now, as the server's parse analysis does
    if (taken || (server_.view(ct.table) != nullptr && !ct.view_replace)) return Error{"42P07", fmt::format("relation \"{}\" already exists", ct.table)};
    ct.view_query = server_.with_views_read(ct.view_query);  // views it reads, created before it (its text's too)
    const sql::Statement& query = cached_plans(ct.view_query)->front();
    if (auto missing = unresolved_relation(query, server_, true)) return error_of(*missing);
    server_.set_view(ct.table, Server::View{ct.schema, ct.view_query, ct.view_reads});
    return done(Rows{{}, {}, "CREATE VIEW"});
  }
  if (server_.view(ct.table) != nullptr) return Error{"42P07", fmt::format("relation \"{}\" already exists", ct.table)};
  if (server_.sql_table(ct.table) != nullptr) {
    if (ct.if_not_exists) return done(Rows{{}, {}, "CREATE TABLE"});
    return Error{"42P07", fmt::format("relation \"{}\" already exists", ct.table)};
  }
  for (const auto& col : ct.columns) {
    // A default is evaluated at each insert; here only checked to be one the subset reads.
    if (col.default_value && col.default_value->kind == Expr::Kind::column) {
      return Error{"0A000", "cannot use column reference in DEFAULT expression"};
    }
  }
  if (auto bad = check_foreign_keys(ct)) return *bad;
  for (const auto& col : ct.columns) {
    if (col.type == Type::enum_ && sql::enum_index(col.user_type) < 0) return Error{"42704", fmt::format("type \"{}\" does not exist", col.user_type)};
  }
  for (auto& col : ct.columns) {
    if (col.default_value) pin_sequence_names(*col.default_value, server_);
  }
  for (const auto& col : ct.columns) {  // a default is coerced to its column's type as the table is made (cookDefault)
    if (!col.default_value) continue;
    const std::optional<Value> v = sql::check_types(*col.default_value, [](const Expr&) { return std::optional<Value>(); });
    if (!v || v->is_null()) continue;
    try {
      (void)assigned(*v, col, ct.table, false);
    } catch (const SqlError& err) {
      if (err.sqlstate() == "42804") {
        std::string message = err.what();
        if (const auto at = message.find("but expression"); at != std::string::npos) message.insert(at + 4, "default ");
        throw SqlError("42804", message);
      }
      if (v->type() == Type::unknown && sql::is_parse_time_error(err, *col.default_value)) throw;
    }
  }
  server_.add_sql_table(ct);
  return done(Rows{{}, {}, "CREATE TABLE"});
}

Result<Rows> SqlRun::statement(const sql::CreateType& t) {
  SimConnection::Statement guard(c_);
  if (auto refused = ddl_step()) return *refused;
  if (t.alter) {  // ADD VALUE: stored values are labels, so a label in the middle renumbers nothing stored
    const int index = sql::enum_index(t.name);
    if (index < 0) return Error{"42704", fmt::format("type \"{}\" does not exist", t.name)};
    std::vector<std::string>& labels = server_.mutable_enum_types()[static_cast<std::size_t>(index)].labels;
    const std::string& label = t.labels.at(0);
    if (std::find(labels.begin(), labels.end(), label) != labels.end()) {
      if (!t.if_not_exists) return Error{"42710", fmt::format("enum label \"{}\" already exists", label)};
      c_.warnings_.push_back({"00000", fmt::format("enum label \"{}\" already exists, skipping", label)});
      return done(Rows{{}, {}, "ALTER TYPE"});
    }
    auto at = labels.end();
    if (!t.neighbor.empty()) {
      at = std::find(labels.begin(), labels.end(), t.neighbor);
      if (at == labels.end()) return Error{"22023", fmt::format("\"{}\" is not an existing enum label", t.neighbor)};
      if (t.after) ++at;
    }
    labels.insert(at, label);
    return done(Rows{{}, {}, "ALTER TYPE"});
  }
  if (sql::has_declared_type(t.name) || sql::type_of_name(t.name)) return Error{"42710", fmt::format("type \"{}\" already exists", t.name)};
  server_.mutable_enum_types().push_back(sql::EnumType{.name = t.name, .schema = creation_schema(t.schema, server_), .labels = t.labels, .composite = t.composite});
  if (t.composite) server_.set_composite_type(t.name, &t.fields);
  return done(Rows{{}, {}, "CREATE TYPE"});
}

Result<Rows> SqlRun::drop_types(const sql::DropTable& d) {
  SimConnection::Statement guard(c_);
  if (auto refused = ddl_step()) return *refused;
  for (const std::string& name : d.tables) {
    const auto& types = server_.mutable_enum_types();
    const auto found = std::find_if(types.begin(), types.end(), [&](const sql::EnumType& e) { return e.name == name; });
    const int index = found == types.end() ? -1 : static_cast<int>(found - types.begin());
    if (index < 0) {
      if (!d.if_exists) return Error{"42704", fmt::format("type \"{}\" does not exist", name)};
      c_.warnings_.push_back({"00000", fmt::format("type \"{}\" does not exist, skipping", name)});
      continue;
    }
    bool used = false;
    server_.each_sql_table([&](const SqlTable& t) {
      for (const auto& col : t.def.columns) used = used || (col.type == Type::enum_ && col.user_type == name);
    });
    if (used) return Error{"2BP01", fmt::format("cannot drop type {} because other objects depend on it", name)};
    server_.set_composite_type(name, nullptr);
    server_.mutable_enum_types()[static_cast<std::size_t>(index)].name.clear();  // its index stays taken
  }
  return done(Rows{{}, {}, "DROP TYPE"});
}

Result<Rows> SqlRun::statement(const sql::CreateSequence& q) {
  SimConnection::Statement guard(c_);
  if (auto refused = ddl_step()) return *refused;
  if (server_.sequence(q.name) != nullptr || server_.sql_table(q.name) != nullptr) {
    if (q.if_not_exists) {
      c_.warnings_.push_back({"00000", fmt::format("relation \"{}\" already exists, skipping", q.name)});
      return done(Rows{{}, {}, "CREATE SEQUENCE"});
    }
    return Error{"42P07", fmt::format("relation \"{}\" already exists", q.name)};
  }
  sql::CreateSequence def = q;
  def.schema = creation_schema(q.schema, server_);
  server_.add_sequence(def);
  return done(Rows{{}, {}, "CREATE SEQUENCE"});
}

Result<Rows> SqlRun::drop_sequences(const sql::DropTable& d) {
  SimConnection::Statement guard(c_);
  if (auto refused = ddl_step()) return *refused;
  for (const std::string& name : d.tables) {
    if (server_.sequence(name) == nullptr) {
      if (!d.if_exists) return Error{"42P01", fmt::format("sequence \"{}\" does not exist", name)};
      c_.warnings_.push_back({"00000", fmt::format("sequence \"{}\" does not exist, skipping", name)});
      continue;
    }
    server_.drop_sequence(name);
  }
  return done(Rows{{}, {}, "DROP SEQUENCE"});
}

std::pair<std::string, std::string> regclass_name(std::string_view text) {
  // stringToQualifiedNameList: identifiers (an unquoted one folded to lower case, a quoted one
  // as written, "" inside for a quote) joined by dots, with blanks around them only.
  std::vector<std::string> parts(1);
  bool quoted = false, ended = false;  // ended: after a name, before its dot
  const auto invalid = [] { return SqlError("42602", "invalid name syntax"); };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c != '"') {
        parts.back() += c;
      } else if (i + 1 < text.size() && text[i + 1] == '"') {
        parts.back() += '"';
        ++i;
      } else {
        quoted = false;
        ended = true;
      }
    } else if (c == ' ' || c == '\t' || c == '\n') {
      ended = ended || !parts.back().empty();
    } else if (c == '.') {
      if (parts.back().empty()) throw invalid();
      parts.emplace_back();
      ended = false;
    } else if (ended) {
      throw invalid();
    } else if (c == '"') {
      if (!parts.back().empty()) throw invalid();
      quoted = true;
    } else if (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$' || static_cast<unsigned char>(c) >= 0x80) {
      parts.back() += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      throw invalid();
    }
  }
  if (quoted || parts.back().empty() || parts.size() > 3) throw invalid();
  return {parts.size() >= 2 ? parts[parts.size() - 2] : std::string(), parts.back()};
}

std::optional<std::string> to_regclass(Server& server, std::string_view text) {
  const auto [schema, name] = regclass_name(text);
  // The system catalogs and views of pg_catalog, searched before search_path (printed bare).
  static constexpr std::string_view kCatalogs[] = {"pg_class", "pg_namespace", "pg_type", "pg_proc", "pg_attribute", "pg_index",
                                                   "pg_constraint", "pg_trigger", "pg_database", "pg_roles", "pg_settings", "pg_locks",
                                                   "pg_stat_activity", "pg_tables", "pg_indexes", "pg_sequences", "pg_views"};
  if ((schema.empty() || schema == "pg_catalog") && std::find(std::begin(kCatalogs), std::end(kCatalogs), name) != std::end(kCatalogs)) {
    return name;
  }
  if (!schema.empty() && !server.has_schema(schema)) return std::nullopt;
  // The schemas with a relation of this name: a table's, a sequence's, an index's table's
  // (index names are their schema's).
  std::set<std::string, std::less<>> owners;
  if (const Server::Sequence* q = server.sequence(name)) owners.insert(q->def.schema);
  if (const Server::View* v = server.view(name)) owners.insert(v->schema);
  if (const SqlTable* t = server.serial_column_of(name).first) owners.emplace(schema_of(t->def));
  server.each_sql_table([&](const SqlTable& t) {
    if (t.def.table == name || (!t.key.empty() && primary_key_name(&t, t.def.table) == name) || t.has_index(name) ||
        std::any_of(t.unique.begin(), t.unique.end(), [&](const SqlTable::UniqueKey& u) { return u.name == name; })) {
      owners.emplace(schema_of(t.def));
    }
  });
  if (!schema.empty()) {  // regclassout: qualified unless the search path finds it
    if (!owners.contains(schema)) return std::nullopt;
    return on_search_path(schema, server) ? sql::quote_ident(name) : sql::quote_ident(schema) + "." + sql::quote_ident(name);
  }
  const std::vector<std::string> path = sql::path_schemas(server.style().search_path, &server);
  const bool found = std::any_of(path.begin(), path.end(), [&](const std::string& s) { return owners.contains(s); });
  return found ? std::optional<std::string>(sql::quote_ident(name)) : std::nullopt;
}

Value table_privilege(Server& server, const std::vector<Value>& args) {
  if (std::any_of(args.begin(), args.end(), [](const Value& v) { return v.is_null(); })) return Value::null(Type::boolean);  // strict
  if (args.size() == 3 && sql::cast(args[0], Type::text).as_text() != "postgres") {
    throw SqlError("0A000", "has_table_privilege of another role than the session's is not in lockstep's SQL subset (docs/sql.md)");
  }
  const Value& table = args[args.size() - 2];
  if (table.type() != Type::text && table.type() != Type::unknown) {
    throw SqlError("0A000", "has_table_privilege of a relation by oid is not in lockstep's SQL subset (docs/sql.md)");
  }
  const std::string name = table.as_text();
  if (!to_regclass(server, name)) throw SqlError("42P01", fmt::format("relation \"{}\" does not exist", name));
  const std::string privileges = sql::cast(args.back(), Type::text).as_text();
  std::size_t from = 0;
  while (from <= privileges.size()) {  // convert_any_priv_string: each item trimmed, case ignored
    const std::size_t comma = std::min(privileges.find(',', from), privileges.size());
    std::string item = privileges.substr(from, comma - from);
    const std::size_t first = item.find_first_not_of(" \t\n\r\f\v"), last = item.find_last_not_of(" \t\n\r\f\v");
    item = first == std::string::npos ? std::string() : item.substr(first, last - first + 1);
    std::string lower = item;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower.ends_with(" with grant option")) lower.resize(lower.size() - std::string_view(" with grant option").size());
    static constexpr std::string_view kNames[] = {"select", "insert", "update", "delete", "truncate", "references", "trigger"};
    if (std::find(std::begin(kNames), std::end(kNames), lower) == std::end(kNames)) {
      throw SqlError("22023", fmt::format("unrecognized privilege type: \"{}\"", item));
    }
    from = comma + 1;
  }
  return Value::boolean(true);
}

Value serial_sequence_of(Server& server, const std::vector<Value>& args) {
  if (args.at(0).is_null() || args.at(1).is_null()) return Value::null(Type::text);
  const auto [schema, name] = regclass_name(sql::cast(args[0], Type::text).as_text());
  const SqlTable* t = server.sql_table(name);
  if (t == nullptr || (schema.empty() ? !on_search_path(schema_of(t->def), server) : schema_of(t->def) != schema)) {
    throw SqlError("42P01", fmt::format("relation \"{}\" does not exist", schema.empty() ? name : schema + "." + name));
  }
  const std::string column = sql::cast(args[1], Type::text).as_text();  // as written: no case folding
  const int c = t->column(column);
  if (c < 0) throw SqlError("42703", fmt::format("column \"{}\" of relation \"{}\" does not exist", column, name));
  const sql::ColumnDef& def = t->def.columns[static_cast<std::size_t>(c)];
  const std::string own(schema_of(t->def));
  if (def.serial) return Value::text(sql::quote_ident(own) + "." + sql::quote_ident(fmt::format("{}_{}_seq", name, column)));
  const Expr* d = def.default_value ? &*def.default_value : nullptr;
  if (d == nullptr || d->kind != Expr::Kind::func || d->name != "nextval" || d->args.empty() || d->args[0].kind != Expr::Kind::constant) {
    return Value::null(Type::text);
  }
  const auto [seq_schema, seq_name] = regclass_name(d->args[0].value.as_text());
  const Server::Sequence* seq = server.sequence(seq_name);
  if (seq == nullptr || seq->def.owned_by != name) return Value::null(Type::text);
  return Value::text(sql::quote_ident(seq->def.schema) + "." + sql::quote_ident(seq_name));
}

void pin_sequence_names(sql::Expr& e, Server& server) {
  for (sql::Expr& a : e.args) pin_sequence_names(a, server);
  if (e.kind != Expr::Kind::func || (e.name != "nextval" && e.name != "currval" && e.name != "setval") || e.args.empty()) return;
  Expr& arg = e.args[0];
  if (arg.kind != Expr::Kind::constant || arg.value.is_null() || (arg.value.type() != Type::text && arg.value.type() != Type::unknown)) return;
  std::pair<std::string, std::string> named;
  try {
    named = regclass_name(arg.value.as_text());
  } catch (const SqlError&) {
    return;  // the insert's error
  }
  const auto& [schema, name] = named;
  const Server::Sequence* seq = server.sequence(name);
  const SqlTable* owner = seq == nullptr ? server.serial_column_of(name).first : nullptr;
  if (!schema.empty() || (seq == nullptr && owner == nullptr)) return;
  const std::string own = seq != nullptr ? seq->def.schema : std::string(schema_of(owner->def));
  if (unresolved_sequence("", name, own, server)) return;
  std::string pinned = sql::quote_ident(own) + "." + sql::quote_ident(name);
  arg.value = arg.value.type() == Type::text ? Value::text(std::move(pinned)) : Value::unknown(std::move(pinned));
}

namespace {

// currval: the value the session's last nextval (or setval with is_called) of it gave.
Value ddl_currval(const std::map<std::string, std::int64_t, std::less<>>& currvals, const std::string& seq_name) {
  const auto it = currvals.find(seq_name);
  if (it == currvals.end()) throw SqlError("55000", fmt::format("currval of sequence \"{}\" is not yet defined in this session", seq_name));
  return Value::integer(it->second, Type::int8);
}

}  // namespace

void SqlRun::refuse_in_read_only(std::string_view function) const {  // nextval_internal's, do_setval's
  if (c_.read_only_ && c_.session_.in_transaction) throw SqlError("25006", fmt::format("cannot execute {}() in a read-only transaction", function));
}

Value SqlRun::serial_sequence_function(std::string_view name, const std::string& seq_name, const std::vector<Value>& args) {
  // A serial column's sequence, <table>_<column>_seq (River's nextval('river_job_id_seq'::regclass)):
  // the column's own counter, which its DEFAULT advances.
  const auto [owner, column] = server_.serial_column_of(seq_name);
  if (owner == nullptr) throw SqlError("42P01", fmt::format("relation \"{}\" does not exist", sql::cast(args.at(0), Type::text).as_text()));  // as written
  if (name == "currval") return ddl_currval(c_.currvals_, seq_name);
  refuse_in_read_only(name);
  if (s_.in_actor()) s_.also_touch(owner->object);  // as the column's DEFAULT does
  const sql::ColumnDef& c = owner->def.columns[column];
  SqlTable::SerialSequence& seq = owner->sequences[column];
  if (name == "setval") {
    if (args.at(1).is_null()) return Value::null(Type::int8);
    const std::int64_t v = sql::cast(args[1], Type::int8).as_integer();
    seq = {.last = v, .called = args.size() < 3 || args[2].is_null() || sql::cast(args[2], Type::boolean).as_bool()};
    if (seq.called) c_.currvals_[seq_name] = v;  // do_setval sets currval when is_called
    return Value::integer(v, Type::int8);
  }
  const std::int64_t next = seq.next(c.sequence_increment);
  c_.currvals_[seq_name] = next;
  return Value::integer(next, Type::int8);
}

Value SqlRun::sequence_function(std::string_view name, const std::vector<Value>& args) {
  if (args.at(0).is_null()) return Value::null(Type::int8);
  const auto [schema, seq_name] = regclass_name(sql::cast(args[0], Type::text).as_text());
  Server::Sequence* seq = server_.sequence(seq_name);
  const SqlTable* owner = seq == nullptr ? server_.serial_column_of(seq_name).first : nullptr;
  if (seq != nullptr || owner != nullptr) {
    if (auto missing = unresolved_sequence(schema, seq_name, seq != nullptr ? std::string_view(seq->def.schema) : schema_of(owner->def), server_)) throw *missing;
  }
  if (seq == nullptr) return serial_sequence_function(name, seq_name, args);
  if (name == "currval") return ddl_currval(c_.currvals_, seq_name);
  refuse_in_read_only(name);
  s_.also_touch(seq->object);  // nextval and setval change the sequence, in this step
  const sql::CreateSequence& def = seq->def;
  if (name == "setval") {
    if (args.at(1).is_null()) return Value::null(Type::int8);
    const std::int64_t v = sql::cast(args[1], Type::int8).as_integer();
    if (v < def.min || v > def.max) {
      throw SqlError("22003", fmt::format("setval: value {} is out of bounds for sequence \"{}\" ({}..{})", v, seq_name, def.min, def.max));
    }
    seq->last = v;
    seq->called = args.size() < 3 || args[2].is_null() || sql::cast(args[2], Type::boolean).as_bool();
    if (seq->called) c_.currvals_[seq_name] = v;  // do_setval sets currval when is_called
    return Value::integer(v, Type::int8);
  }
  std::int64_t next = seq->last;
  if (seq->called) {
    const bool beyond = def.increment > 0 ? seq->last > def.max - def.increment : seq->last < def.min - def.increment;
    if (beyond && !def.cycle) {
      throw SqlError("2200H", fmt::format("nextval: reached {} value of sequence \"{}\" ({})", def.increment > 0 ? "maximum" : "minimum",
                                          seq_name, def.increment > 0 ? def.max : def.min));
    }
    next = beyond ? (def.increment > 0 ? def.min : def.max) : seq->last + def.increment;
  }
  seq->last = next;
  seq->called = true;
  c_.currvals_[seq_name] = next;
  return Value::integer(next, Type::int8);
}

SqlRun::Derived& SqlRun::sequence_relation(const std::string& name) {
  // The sequence's one tuple, as read_seq_tuple gives it: not a version under MVCC, so its values
  // are the latest nextval's or setval's, whoever's and committed or not. log_cnt counts the
  // values WAL-logged ahead, reset by a checkpoint: not modelled, and refused where read.
  // Made when the statement names it (a row read then, in the step before the statement's:
  // a wider footprint, never read), read again by each scan (relation_rows), in its step.
  Derived* existing = derived(name);
  if (existing != nullptr && existing->sequence) {
    // The server's planner gives the sequence a row mark in an UPDATE, DELETE or locking SELECT
    // that reads it (42809 "cannot lock rows in sequence" where pulled up): refused, not guessed.
    const SqlRun* top = this;
    while (top->enclosing_ != nullptr) top = top->enclosing_;
    const auto* sel = std::get_if<sql::Select>(&top->st_.body);
    const bool locks = sel == nullptr || sel->lock != sql::RowLock::none || top->st_.locking_subquery ||
                       std::any_of(sel->with.begin(), sel->with.end(), [](const sql::CommonTable& c) { return c.modifying || (c.select && c.select->lock != sql::RowLock::none); });
    if (locks) throw SqlError("0A000", fmt::format("reading the sequence \"{}\" in a statement that writes or locks rows is not in lockstep's SQL subset (docs/sql.md)", name));
  }
  std::int64_t last = 0;
  bool called = false;
  if (const Server::Sequence* seq = server_.sequence(name)) {
    if (s_.in_actor()) s_.also_touch(seq->object);
    std::tie(last, called) = std::pair(seq->last, seq->called);
  } else {
    const auto [owner, column] = server_.serial_column_of(name);
    if (s_.in_actor()) s_.also_touch(owner->object);  // its sequence's state is the table's (column_default)
    std::tie(last, called) = std::pair(owner->sequences[column].last, owner->sequences[column].called);
  }
  if (existing == nullptr || !existing->sequence) {
    auto d = std::make_unique<Derived>();
    d->sequence = std::make_unique<sql::CommonTable>(sql::CommonTable{.name = name});
    d->def = d->sequence.get();
    d->table.def.table = name;
    d->table.def.columns = {{.name = "last_value", .type = Type::int8},
                            {.name = "log_cnt", .type = Type::int8, .refused = "a sequence's log_cnt (it depends on checkpoints)"},
                            {.name = "is_called", .type = Type::boolean}};
    d->computed = true;
    derived_.push_back(std::move(d));
    existing = derived_.back().get();
  }
  existing->rows = {Row{{"last_value", std::to_string(last)}, {"is_called", called ? "t" : "f"}}};
  return *existing;
}

Result<Rows> SqlRun::statement(const sql::DropTable& d) {
  if (d.types) return drop_types(d);
  if (d.sequences) return drop_sequences(d);
  if (d.functions) return drop_functions(d);
  SimConnection::Statement guard(c_);
  if (auto refused = ddl_step()) return *refused;
  // The views that read a relation (and those that read them): its dependents.
  const auto readers_of = [&](const std::string& relation) {
    std::vector<std::string> out{relation};
    for (std::size_t i = 0; i < out.size(); ++i) {
      server_.each_view([&](const std::string& v, const Server::View& view) {
        if (std::ranges::find(view.reads, out[i]) != view.reads.end() && std::ranges::find(out, v) == out.end()) out.push_back(v);
      });
    }
    out.erase(out.begin());
    return out;
  };
  if (d.views) {
    for (const std::string& name : d.tables) {
      if (server_.sql_table(name) != nullptr) return Error{"42809", fmt::format("\"{}\" is not a view", name)};
      if (server_.view(name) == nullptr) {
        if (d.if_exists) continue;
        return Error{"42P01", fmt::format("view \"{}\" does not exist", name)};
      }
      for (const std::string& reader : readers_of(name)) {
        if (std::ranges::find(d.tables, reader) == d.tables.end()) return Error{"2BP01", fmt::format("cannot drop view {} because other objects depend on it", name)};
      }
    }
    for (const std::string& name : d.tables) server_.set_view(name, std::nullopt);
    return done(Rows{{}, {}, "DROP VIEW"});
  }
  for (const std::string& name : d.tables) {
    const SqlTable* t = server_.sql_table(name);
    if (t == nullptr && server_.view(name) != nullptr) return Error{"42809", fmt::format("\"{}\" is not a table", name)};
    for (const std::string& reader : t == nullptr || d.cascade ? std::vector<std::string>{} : readers_of(name)) {
      if (std::ranges::find(d.tables, reader) == d.tables.end()) return Error{"2BP01", fmt::format("cannot drop table {} because other objects depend on it", name)};
    }
    if (t == nullptr) {
      if (d.if_exists) continue;  // (the server's NOTICE is not a warning: a pg::Connection reports warnings only)
      return Error{"42P01", fmt::format("table \"{}\" does not exist", name)};
    }
    // A table another table's foreign key references goes only with that table, or CASCADE
    // drops that key; so does a function with a parameter of its row type.
    if (!d.cascade && !server_.functions_of_row_type(name).empty()) {
      return Error{"2BP01", fmt::format("cannot drop table {} because other objects depend on it", name)};
    }
    for (const auto& [child, k] : t->referenced_by) {
      if (!d.cascade && std::find(d.tables.begin(), d.tables.end(), child) == d.tables.end()) {
        return Error{"2BP01", fmt::format("cannot drop table {} because other objects depend on it", name)};
      }
    }
  }
  for (const std::string& name : d.tables) {
    const SqlTable* t = server_.sql_table(name);
    if (t == nullptr) continue;
    std::vector<std::pair<std::string, std::size_t>> keys;  // other tables' keys to it, the last of each table first
    for (const auto& entry : t->referenced_by) {
      if (std::find(d.tables.begin(), d.tables.end(), entry.first) == d.tables.end()) keys.push_back(entry);
    }
    std::sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
    for (const auto& [child, index] : keys) server_.drop_foreign_key(child, index);
    for (const auto& [pid, f] : server_.functions_of_row_type(name)) server_.drop_function_of(pid, f);
    for (const std::string& reader : readers_of(name)) server_.set_view(reader, std::nullopt);  // CASCADE's
    server_.drop_sql_table(name);
  }
  return done(Rows{{}, {}, "DROP TABLE"});
}

Result<Rows> SqlRun::statement(const sql::Schema& s) {
  SimConnection::Statement guard(c_);
  if (auto refused = ddl_step()) return *refused;
  Rows out;
  if (s.extension) {
    out.tag = s.create ? "CREATE EXTENSION" : "DROP EXTENSION";
    if (s.create && !server_.add_extension(s.name)) {
      if (!s.if_clause) return Error{"42710", fmt::format("extension \"{}\" already exists", s.name)};
      c_.warnings_.push_back({"42710", fmt::format("extension \"{}\" already exists, skipping", s.name)});
    }
    if (!s.create && !server_.drop_extension(s.name)) {
      if (!s.if_clause) return Error{"42704", fmt::format("extension \"{}\" does not exist", s.name)};
      c_.warnings_.push_back({"00000", fmt::format("extension \"{}\" does not exist, skipping", s.name)});
    }
    return done(std::move(out));
  }
  out.tag = s.create ? "CREATE SCHEMA" : "DROP SCHEMA";
  if (s.create && !server_.add_schema(s.name)) {
    if (!s.if_clause) return Error{"42P06", fmt::format("schema \"{}\" already exists", s.name)};
    c_.warnings_.push_back({"42P06", fmt::format("schema \"{}\" already exists, skipping", s.name)});
  }
  if (!s.create && !server_.drop_schema(s.name)) {
    if (!s.if_clause) return Error{"3F000", fmt::format("schema \"{}\" does not exist", s.name)};
    c_.warnings_.push_back({"00000", fmt::format("schema \"{}\" does not exist, skipping", s.name)});
  }
  return done(std::move(out));
}

Result<Rows> SqlRun::statement(const sql::CreateIndex& ix) {
  SimConnection::Statement guard(c_);
  if (auto refused = ddl_step()) return *refused;
  if (ix.concurrently && (c_.session_.in_transaction || c_.in_query_string_ || plans_->size() > 1 || nested_)) throw SqlError("25001", "CREATE INDEX CONCURRENTLY cannot run inside a transaction block");
  SqlTable* t = table(ix.table);
  if (derived_of(t) != nullptr) throw SqlError("0A000", "CREATE INDEX on a sequence is not in lockstep's SQL subset (docs/sql.md)");
  const std::string name = !ix.name.empty() ? ix.name
                                            : fmt::format("{}_{}_idx", t->def.table, ix.columns.empty() ? std::string("expr") : fmt::format("{}", fmt::join(ix.columns, "_")));
  bool exists = false;
  server_.each_sql_table([&](const SqlTable& other) {  // (index names are their schema's)
    exists = exists || (schema_of(other.def) == schema_of(t->def) && (other.has_index(name) ||
             std::any_of(other.unique.begin(), other.unique.end(), [&](const SqlTable::UniqueKey& u) { return u.name == name; })));
  });
  if (exists && !ix.name.empty()) {
    if (!ix.if_not_exists) return Error{"42P07", fmt::format("relation \"{}\" already exists", name)};
    c_.warnings_.push_back({"42P07", fmt::format("relation \"{}\" already exists, skipping", name)});
    return done(Rows{{}, {}, "CREATE INDEX"});
  }
  server_.each_row(t->def.table, [&](std::int64_t, RowState& r) { t->planner_stats = t->planner_stats || r.committed; });
  if (ix.opaque) {
    t->indexes.push_back({name, {}, ix.reads, ix.where});
    return done(Rows{{}, {}, "CREATE INDEX"});
  }
  SqlTable::UniqueKey key;
  for (std::size_t part = 0; part < ix.columns.size(); ++part) {
    if (!ix.expressions.empty() && ix.expressions[part]) {
      check_columns(*ix.expressions[part], *t, "");
      key.columns.push_back(-1);
      continue;
    }
    const std::string& col = ix.columns[part];
    const int i = t->column(col);
    if (i < 0) return Error{"42703", fmt::format("column \"{}\" does not exist", col)};
    key.columns.push_back(i);
  }
  key.expressions = ix.expressions;
  if (ix.where) check_columns(*ix.where, *t, "");
  if (ix.unique && (ix.columns != t->def.primary_key || ix.where || !ix.expressions.empty())) {
    key.where = ix.where;
    key.constraint = false;
    key.name = name;
    // The rows there already must not repeat a key (the setup has no transactions running).
    std::set<std::string> seen;
    bool repeated = false;
    server_.each_row(t->def.table, [&](std::int64_t, RowState& r) {
      if (r.committed) {
        if (const auto text = unique_text(key, *t, *r.committed)) repeated = repeated || !seen.insert(*text).second;
      }
    });
    if (repeated) return Error{std::string(sqlstate::kUniqueViolation), fmt::format("could not create unique index \"{}\"", key.name)};
    t->unique.push_back(std::move(key));
  } else {
    for (const std::string& c : ix.reads) {
      if (t->column(c) < 0) return Error{"42703", fmt::format("column \"{}\" does not exist", c)};
    }
    t->indexes.push_back({name, ix.where || !ix.expressions.empty() ? std::vector<std::string>{} : ix.columns, ix.reads, ix.where});
  }
  return done(Rows{{}, {}, "CREATE INDEX"});
}

}  // namespace lockstep::sim::pg
