// sim/pg/executor/sql_plpgsql.cc: LANGUAGE plpgsql functions (and LANGUAGE sql bodies of statements:
// PlFunction::sql_body) on the simulated server, run as PL/pgSQL runs them: the variables
// (parameters, FOUND, DECLAREd ones with their defaults) in a frame the body's statements and
// expressions read by name (a name that is also a column of the statement's table is 42702,
// variable_conflict = error); each SQL statement a statement of its own inside the calling one
// (its own steps and, in READ COMMITTED, what is committed when it runs; the transaction's
// snapshot in REPEATABLE READ), with INTO [STRICT] (P0002, P0003), FOUND, IF, assignments, PERFORM, EXECUTE, RAISE (P0001),
// RETURN (2F005), loops (LOOP, WHILE, FOR over integers or a query's rows, FOREACH; EXIT, CONTINUE), GET DIAGNOSTICS, EXCEPTION blocks (a subtransaction), SET search_path. A call runs only from a
// statement reading no table (SELECT f(...), SELECT * FROM f(...)): one in a scan would step amid its steps (0A000).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>

#include "lockstep/model/sql/error_conditions.h"
#include "lockstep/model/sql/parse.h"
#include "lockstep/model/sql/records.h"
#include "lockstep/sim/pg/executor/sql_schemas.h"
#include "lockstep/sim/invariant.h"
#include "lockstep/sim/pg/executor/sql_names.h"
#include "lockstep/sim/pg/executor/sql_plpgsql.h"
#include "lockstep/sim/pg/heap/sql_rows.h"
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {

using sql::PlDatum, sql::PlStatement;

class PlRun final : public sql::EvalContext {
 public:
  PlRun(SqlRun& run, const sql::CreateFunction& f, const std::vector<Value>& args, const PlTrigger* trigger)
      : run_(run), f_(f), pl_(*f.pl), args_(args), trigger_(trigger), values_(pl_.datums.size()), types_(pl_.datums.size()),
        rows_(pl_.datums.size(), -1) {}

  // The function's value: RETURN's (NULL for a void, trigger's or set's: a set's rows go to set_rows).
  Value call_function() {
    if (f_.returns_set && set_rows == nullptr) {
      throw SqlError("0A000", fmt::format("a call of the set-returning function {}() outside FROM is not in lockstep's SQL subset (docs/sql.md)", f_.name));
    }
    const SearchPathOfCall path(run_.c_.style_, f_.search_path);  // SET search_path: the call's (and current_setting's)
    declare();
    if (pl_.sql_body) run_.start_sql_function(f_);  // its statements planned: their tables locked, then checked
    Value result = Value::null();
    if (body(pl_.body, result) != Flow::returned && returns_value()) throw SqlError("2F005", "control reached end of function without RETURN");
    if (f_.outs.empty() || f_.returns_set) return result;
    std::vector<Value> row = out_row();  // as the function ends (a row in FROM)
    if (set_rows != nullptr) set_rows->push_back(row);
    return row.size() == 1 ? row[0] : sql::make_record(out_row_type(f_, run_.server_), row);  // several: a record of them
  }

  std::vector<Value> out_row() {  // the OUT parameters' values
    std::vector<Value> row;
    for (std::size_t d = 0; d < f_.arg_order.size(); ++d) if (f_.arg_order[d] < 0) row.push_back(read(static_cast<int>(d)));
    return row;
  }

  bool returns_value() const {
    return !f_.returns_trigger && !f_.returns_set && f_.outs.empty() && !(f_.returns.type == Type::text && f_.returns.user_type == "void");
  }
  std::vector<std::vector<Value>>* set_rows = nullptr;  // RETURNS SETOF: the caller's rows

  // EvalContext: the variables by name; calls and queries are the calling statement's.
  Value column(const Expr& ref) override {
    if (ref.qualifier.empty()) {
      if (handling_.empty() && (ref.name == "sqlstate" || ref.name == "sqlerrm")) throw sql::missing_column_error(ref);  // a handler's only
      if (const int d = find(ref.name); d >= 0) return read(d);
      if (trigger_ != nullptr) {
        if (ref.name == "tg_op") return Value::text(trigger_->op);
        if (ref.name == "tg_name") return Value::text(trigger_->name);
        if (ref.name == "tg_table_name" || ref.name == "tg_relname") return Value::text(trigger_->table);
        if (ref.name == "tg_when") return Value::text(trigger_->before ? "BEFORE" : "AFTER");
        if (ref.name == "tg_level") return Value::text(trigger_->statement ? "STATEMENT" : "ROW");
        if (ref.name == "tg_table_schema") return Value::text(std::string(schema_of(run_.server_.sql_table(trigger_->table)->def)));
        if (ref.name == "tg_nargs") return Value::integer(0, Type::int4);  // (a trigger with arguments is refused)
      }
      throw sql::missing_column_error(ref);
    }
    if (ref.qualifier == sql::bare_function_name(f_.name)) {
      if (const int d = find(ref.name); d >= 0 && param_of(static_cast<std::size_t>(d)) >= 0) return values_[static_cast<std::size_t>(d)];
    }
    if (const int d = find(ref.qualifier); d >= 0) {
      if (const auto row = ad_hoc_.find(d); row != ad_hoc_.end()) {  // a query's row of its own columns
        const auto& [columns, values] = row->second;
        const auto at = std::find(columns.begin(), columns.end(), ref.name);
        if (at == columns.end()) throw SqlError("42703", fmt::format("record \"{}\" has no field \"{}\"", ref.qualifier, ref.name));
        return values[static_cast<std::size_t>(at - columns.begin())];
      }
      if (rows_[static_cast<std::size_t>(d)] != -1 || pl_.datums[static_cast<std::size_t>(d)].kind == PlDatum::Kind::record) {
        return sql::record_field(read(d), ref.name);  // (NEW of a DELETE: 55000)
      }
    }
    throw sql::missing_column_error(ref);
  }
  Value param(int number) override {
    if (number < 1 || static_cast<std::size_t>(number) > args_.size()) throw SqlError("42P02", fmt::format("there is no parameter ${}", number));
    for (std::size_t d = 0; d < pl_.datums.size(); ++d) {
      if (param_of(d) == number - 1) return values_[d];  // a named one: its variable, as assigned since
    }
    return args_[static_cast<std::size_t>(number) - 1];
  }
  Value call(const Expr& e, const std::vector<Value>& args) override { return run_.call(e, args); }
  Value subquery(const Expr&) override { throw std::logic_error("PlRun: an expression with a subquery runs as a statement (value)"); }
  Value function_body(const Expr& query, sql::EvalContext& params) override { return run_.function_body(query, params); }
  Value plpgsql_call(const sql::CreateFunction& f, const std::vector<Value>& args) override { return run_.plpgsql_call(f, args); }
  bool conflicts_with_columns() const override { return !pl_.sql_body; }  // a SQL function's: columns first
  bool names_variable(const Expr& ref) const override {
    if (ref.qualifier.empty() && trigger_ != nullptr && ref.name.starts_with("tg_")) return true;  // TG_OP, ... (column() names them)
    if (ref.qualifier.empty()) return find(ref.name) >= 0;
    if (ref.qualifier == sql::bare_function_name(f_.name)) return find(ref.name) >= 0;
    const int d = find(ref.qualifier);
    return d >= 0 && (rows_[static_cast<std::size_t>(d)] != -1 || pl_.datums[static_cast<std::size_t>(d)].kind == PlDatum::Kind::record);
  }

  // A trigger's NEW or OLD: the record of the row (a NULL record: not assigned).
  void set_record(std::string_view name, const Value& record) {
    if (record.type() != Type::record) return;  // not set: reading it is 55000
    for (std::size_t d = 0; d < pl_.datums.size(); ++d) {
      if (pl_.datums[d].kind == PlDatum::Kind::record && pl_.datums[d].name == name) {
        values_[d] = record;
        rows_[d] = record.record_type();
        assigned_.push_back(static_cast<int>(d));
      }
    }
  }

 private:
  // The parameter datum d is (-1: none). The plpgsql parser numbers the named parameters
  // first, in order (an unnamed one, read as $n, has no datum).
  // The argument datum d is (the parser's first datums are the named arguments, as declared): an
  // IN one's index in params, -1 - an OUT one's in outs, or kNotArgument.
  static constexpr int kNotArgument = std::numeric_limits<int>::min();
  int param_of(std::size_t d) const {
    if (d >= f_.arg_order.size()) return kNotArgument;
    const int a = f_.arg_order[d];
    const std::string& name = a >= 0 ? f_.params[static_cast<std::size_t>(a)].name : f_.outs[static_cast<std::size_t>(-1 - a)].name;
    return pl_.datums[d].name == name ? a : kNotArgument;
  }

  // Whether datum d is declared `record` (of whatever row is assigned to it).
  bool is_record_variable(int d) const {
    const PlDatum& p = pl_.datums[static_cast<std::size_t>(d)];
    return p.kind == PlDatum::Kind::var && p.type.size() == 6 &&
           std::equal(p.type.begin(), p.type.end(), "record", [](unsigned char a, char b) { return std::tolower(a) == b; });
  }

  // The datum a name reads: the innermost running FOR loop's variable of that name, else the
  // last declared of that name (a variable or a record) that is not a loop's.
  int find(std::string_view name) const {
    for (std::size_t i = scope_.size(); i-- > 0;) {
      if (pl_.datums[static_cast<std::size_t>(scope_[i])].name == name) return scope_[i];
    }
    for (std::size_t d = pl_.datums.size(); d-- > 0;) {
      const PlDatum& p = pl_.datums[d];
      if ((p.kind == PlDatum::Kind::var || p.kind == PlDatum::Kind::record) && p.name == name && !p.loop_variable) return static_cast<int>(d);
    }
    return -1;
  }

  Value read(int d) {
    const PlDatum& p = pl_.datums[static_cast<std::size_t>(d)];
    const bool unset = p.kind == PlDatum::Kind::record ? std::find(assigned_.begin(), assigned_.end(), d) == assigned_.end()
                                                       : std::find(unassigned_.begin(), unassigned_.end(), d) != unassigned_.end();
    if (unset) throw SqlError("55000", fmt::format("record \"{}\" is not assigned yet", p.name));
    if (ad_hoc_.count(d) != 0) {
      throw SqlError("0A000", fmt::format("the record variable \"{}\" holding a query's row of its own columns, as a whole value, is not in "
                                          "lockstep's SQL subset (docs/sql.md; its fields are)", p.name));
    }
    return values_[static_cast<std::size_t>(d)];
  }

  // The variables' types and first values, in the order the parser numbered them.
  void declare() {
    for (std::size_t d = 0; d < pl_.datums.size(); ++d) {
      const PlDatum& p = pl_.datums[d];
      if (p.kind != PlDatum::Kind::var) continue;
      if (const int i = param_of(d); i >= 0) {
        const auto at = static_cast<std::size_t>(i);
        types_[d] = f_.params[at].type;
        values_[d] = args_[at];
        if (args_[at].type() == Type::record) rows_[d] = args_[at].record_type();
        continue;
      } else if (i != kNotArgument) {  // an OUT parameter: NULL of its type
        types_[d] = f_.outs[static_cast<std::size_t>(-1 - i)].type;
        values_[d] = assigned(Value::null(), types_[d], f_.name);
        continue;
      }
      if (pl_.sql_body && p.name.empty()) {  // a SQL function's value
        values_[d] = Value::null((types_[d] = f_.returns).type);
        continue;
      }
      if (p.type.empty() && p.name == "found") {
        types_[d].type = Type::boolean;
        values_[d] = Value::boolean(false);
        continue;
      }
      if (p.type.empty() && (p.name == "sqlstate" || p.name == "sqlerrm")) {  // an EXCEPTION block's, set as a handler runs
        types_[d].type = Type::text;
        values_[d] = Value::null(Type::text);
        continue;
      }
      type_of(d, p.type);
      values_[d] = rows_[d] >= 0 ? Value::null_record(rows_[d]) : Value::null(types_[d].type);
      if (rows_[d] == kAnyRow) unassigned_.push_back(static_cast<int>(d));
      if (!p.default_value.empty()) assign(static_cast<int>(d), value(p.default_value));
    }
  }

  void type_of(std::size_t d, std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (text.ends_with("%rowtype")) text.resize(text.size() - 8);
    if (const std::string bare = text.substr(text.rfind('.') + 1); run_.server_.sql_table(bare) || run_.server_.composite_type(bare)) {  // [schema.]table or type
      rows_[d] = run_.server_.record_type_index(bare);
      return;
    }
    const auto refused = [&] {
      return SqlError("0A000", fmt::format("a variable of type {} in the plpgsql function {}() is not in lockstep's SQL subset (docs/sql.md)", text, f_.name));
    };
    if (text == "record") {  // of the row type of what is assigned to it (NEW, OLD, a table's row)
      rows_[d] = kAnyRow;
      return;
    }
    const std::optional<sql::ColumnDef> type = text.find('%') == std::string::npos ? variable_type(text) : std::nullopt;
    if (!type) throw refused();
    types_[d] = *type;
  }

  // Sets datum d (a variable, a record, a field of one) as an assignment casts to its type.
  void assign(int d, const Value& v) {
    const auto at = static_cast<std::size_t>(d);
    const PlDatum& p = pl_.datums[at];
    if (v.type() == Type::record) ad_hoc_.erase(d);  // a table's row replaces a query's
    if (p.kind == PlDatum::Kind::field) {
      values_[static_cast<std::size_t>(p.parent)] = with_field(read(p.parent), pl_.datums[static_cast<std::size_t>(p.parent)].name, p.name, v);
      return;
    }
    if (rows_[at] == kAnyRow || (rows_[at] >= 0 && std::find(unassigned_.begin(), unassigned_.end(), d) != unassigned_.end())) {
      if (v.type() != Type::record) {
        throw SqlError("0A000", fmt::format("assigning a value that is not a table's row to the record variable \"{}\" is not in lockstep's SQL subset", p.name));
      }
      std::erase(unassigned_, d);
      rows_[at] = v.record_type();
      values_[at] = v;
      return;
    }
    if (rows_[at] >= 0) {
      if (v.is_null()) {
        values_[at] = Value::null_record(rows_[at]);
      } else if (v.type() == Type::record && v.record_type() == rows_[at]) {
        values_[at] = v;
      } else {
        throw SqlError("0A000", fmt::format("assigning a value of another type to the row variable \"{}\" is not in lockstep's SQL subset (docs/sql.md)", p.name));
      }
      return;
    }
    try {
      values_[at] = assigned(v, types_[at], f_.name);
    } catch (const SqlError& e) {  // without an assignment cast plpgsql converts text by the type's input function
      if (e.sqlstate() != "42804" || v.type() != Type::text) throw;
      values_[at] = assigned(Value::unknown(v.as_text()), types_[at], f_.name);
    }
  }

  // INTO's target from a row of values (none: every variable NULL).
  void fill(int target, const std::vector<Value>* row, const std::vector<std::string>& columns) {
    const PlDatum& t = pl_.datums[static_cast<std::size_t>(target)];
    const std::vector<int> one{target};
    const std::vector<int>& fields = t.kind == PlDatum::Kind::row ? t.fields : one;
    if (fields.size() == 1 && is_record_variable(fields[0]) && row != nullptr && !(row->size() == 1 && (*row)[0].type() == Type::record)) {
      // A `record` given a row of the query's own columns: its fields by name (plpgsql's
      // expanded record); a NULL row leaves it unassigned-free with no fields.
      const int d = fields[0];
      ad_hoc_[d] = {columns, *row};
      std::erase(unassigned_, d);
      return;
    }
    if (fields.size() == 1) ad_hoc_.erase(fields[0]);
    if (fields.size() == 1 && rows_[static_cast<std::size_t>(fields[0])] >= 0) {  // a row variable: the columns in order
      const int d = fields[0];
      if (row == nullptr) {  // no row: each field NULL (a row of NULLs, not a NULL row)
        const int type = rows_[static_cast<std::size_t>(d)];
        values_[static_cast<std::size_t>(d)] = Value::record(type, sql::record_output(std::vector<std::optional<std::string>>(sql::record_definition(type).columns.size())));
        return;
      }
      if (row->size() == 1 && (*row)[0].type() == Type::record) return assign(d, (*row)[0]);
      const int type = rows_[static_cast<std::size_t>(d)];
      const sql::CreateTable& def = sql::record_definition(type);
      std::vector<std::optional<std::string>> texts;
      for (std::size_t i = 0; i < def.columns.size(); ++i) {
        sql::ColumnDef c = def.columns[i];
        c.not_null = false;
        const Value cast = i < row->size() ? assigned((*row)[i], c, def.table) : Value::null();
        texts.push_back(cast.is_null() ? std::nullopt : std::optional<std::string>(cast.text_output()));
      }
      values_[static_cast<std::size_t>(d)] = Value::record(type, sql::record_output(texts));
      return;
    }
    for (std::size_t i = 0; i < fields.size(); ++i) assign(fields[i], row != nullptr && i < row->size() ? (*row)[i] : Value::null());
  }

  void set_found(bool found) {
    if (const int d = find("found"); d >= 0) values_[static_cast<std::size_t>(d)] = Value::boolean(found);
  }

  // An expression's value, as plpgsql evaluates one: SELECT expr, one column of at most one row.
  Value value(const std::string& text) {
    const auto plans = cached_plans("SELECT " + text);
    if (plans->size() != 1) throw SqlError("42601", fmt::format("query \"SELECT {}\" is not one statement", text));
    const sql::Statement& st = plans->front();
    const auto* sel = plans->size() == 1 ? std::get_if<sql::Select>(&st.body) : nullptr;
    if (sel != nullptr && sel->table.empty() && sel->from.empty() && sel->with.empty() && !sel->set_op && !sel->where && !sel->aggregate &&
        !sel->limit && !sel->offset && sel->order_by.empty() && !sel->distinct && sel->targets.size() == 1 && !sel->targets[0].star &&
        !st.has_subquery) {
      if (st.plan_error) throw *st.plan_error;
      return sql::evaluate(sel->targets[0].expr, *this);
    }
    std::vector<std::vector<Value>> rows;
    statement(plans, &rows);
    row_count_ = static_cast<std::int64_t>(rows.size());  // not a simple expression: run by SPI, which counts its rows
    if (!rows.empty() && rows[0].size() != 1) throw SqlError("42601", fmt::format("query \"{}\" returned {} columns", text, rows[0].size()));
    if (rows.size() > 1) throw SqlError("21000", fmt::format("query \"{}\" returned more than one row", text));
    return rows.empty() ? Value::null() : rows[0][0];
  }

  // Runs one SQL statement of the body in the calling statement's transaction: its rows, as values
  // (`using_params`: EXECUTE's, else the function's variables and parameters).
  Rows statement(const std::shared_ptr<const std::vector<sql::Statement>>& plans, std::vector<std::vector<Value>>* rows,
                 sql::EvalContext* using_params = nullptr) {
    if (plans->size() != 1) throw SqlError("0A000", "several statements in one statement of a plpgsql function are not in lockstep's SQL subset");
    const sql::Statement& st = plans->front();
    const bool dml = std::holds_alternative<sql::Select>(st.body) || std::holds_alternative<sql::Insert>(st.body) ||
                     std::holds_alternative<sql::Update>(st.body) || std::holds_alternative<sql::Delete>(st.body);
    if (!dml) throw SqlError("0A000", fmt::format("a statement other than SELECT, INSERT, UPDATE or DELETE in a plpgsql function ({}) is not in "
                                                  "lockstep's SQL subset (docs/sql.md)", st.text));
    if (st.plan_error) throw *st.plan_error;
    if (!pl_.sql_body) check_function_volatility(f_, st);
    return run_.run_in_function(plans, st, using_params != nullptr ? *using_params : *this, rows);
  }

  static std::int64_t row_count(const Rows& r) {
    const auto space = r.tag.rfind(' ');
    return space == std::string::npos ? static_cast<std::int64_t>(r.rows.size()) : std::atoll(r.tag.c_str() + space + 1);
  }

  // A SQL statement, PERFORM or EXECUTE (`using_params`; it leaves FOUND as it was).
  void sql(const PlStatement& s, const std::shared_ptr<const std::vector<sql::Statement>>& plans, PlUsingParams* using_params = nullptr) {
    if (plans->size() != 1) throw SqlError("0A000", "several statements in one statement of a plpgsql function are not in lockstep's SQL subset");
    const sql::Statement& st = plans->front();
    const auto* sel = std::get_if<sql::Select>(&st.body);
    if (s.kind == PlStatement::Kind::sql && s.target < 0 && sel != nullptr && !sel->targets.empty()) {
      throw SqlError("42601", "query has no destination for result data");
    }
    const bool one_row = sel != nullptr && (at_most_one_row(*sel) || key_lookup(*sel, run_.server_, this));  // LIMIT 1, no FROM, a key
    if (s.target >= 0 && sel != nullptr && !one_row && (sel->lock != sql::RowLock::none || takes_steps(st, run_.server_) || st.locking_subquery)) {
      // plpgsql fetches one row (two with STRICT) and stops: a lock taken per row is taken for those only.
      throw SqlError("0A000", fmt::format("{} that locks rows or calls a lock function, without LIMIT 1 (it stops after its first rows) is not in "
                                          "lockstep's SQL subset (docs/sql.md)", pl_.sql_body ? "a LANGUAGE sql function's value from a SELECT" : "SELECT ... INTO in a plpgsql function"));
    }
    std::vector<std::vector<Value>> rows;
    const Rows out = statement(plans, &rows, using_params);
    row_count_ = row_count(out);
    const bool dynamic = s.kind == PlStatement::Kind::execute;
    if (s.target < 0) {
      if (!dynamic) set_found(row_count_ > 0);
      return;
    }
    // SELECT ... INTO fetches one row (two with STRICT): ROW_COUNT counts those.
    if (sel != nullptr) row_count_ = std::min<std::int64_t>(static_cast<std::int64_t>(rows.size()), s.strict ? 2 : 1);
    if (s.strict && rows.empty()) throw SqlError("P0002", "query returned no rows");
    if (rows.size() > 1 && (s.strict || (sel == nullptr && !pl_.sql_body))) throw SqlError("P0003", "query returned more than one row");
    fill(s.target, rows.empty() ? nullptr : &rows[0], out.columns);
    if (!dynamic) set_found(!rows.empty());
  }

  // EXECUTE's statement, its text evaluated first, then USING's values.
  std::shared_ptr<const std::vector<sql::Statement>> dynamic_plans(const PlStatement& s, std::optional<PlUsingParams>& using_params) {
    auto plans = execute_plans(value(s.text));
    std::vector<Value> values;
    for (const std::string& e : s.args) values.push_back(value(e));
    using_params.emplace(std::move(values));
    return plans;
  }

  // How control leaves a list of statements: at its end, by EXIT or CONTINUE (exit_label_
  // names the loop or block, "" the innermost loop), or by RETURN.
  enum class Flow : std::uint8_t { next, exit, next_iteration, returned };

  Flow body(const std::vector<PlStatement>& list, Value& result) {
    using K = PlStatement::Kind;
    for (const PlStatement& s : list) {
      Flow flow = Flow::next;
      switch (s.kind) {
        case K::sql:
        case K::perform:
          sql(s, cached_plans(s.text));
          break;
        case K::execute: {
          std::optional<PlUsingParams> using_params;
          const auto plans = dynamic_plans(s, using_params);
          sql(s, plans, &*using_params);
          break;
        }
        case K::assign:
          assign(s.target, value(s.text));
          break;
        case K::branch:
          for (const sql::PlBranch& b : s.branches) {
            if (!b.condition.empty() && !sql::is_true(value(b.condition), "IF")) continue;
            flow = body(b.body, result);
            break;
          }
          break;
        case K::raise: {
          RaisedError raised = raise_error(s, [&](const std::string& e) { return output(value(e)); });
          if (s.level >= 21) throw SqlError(raised.sqlstate, raised.message);
          if (s.level >= 17) run_.c_.warnings_.push_back({s.level == 19 ? "01000" : "00000", std::move(raised.message)});
          break;
        }
        case K::stop:
          if (s.target >= 0) return result = read(s.target), Flow::returned;  // a SQL function's value
          // A RETURN without a value where the function returns one is the parser's own at the
          // body's end (add_dummy_return: libpg_query does not know the return type).
          if (s.text.empty() && f_.returns_trigger) throw SqlError("2F005", "control reached end of trigger procedure without RETURN");
          if (s.text.empty() && returns_value()) throw SqlError("2F005", "control reached end of function without RETURN");
          if (!s.text.empty()) result = value(s.text);
          return Flow::returned;
        case K::loop:
          flow = loop(s, result);
          break;
        case K::exit:
          if (!s.text.empty() && !sql::is_true(value(s.text), s.is_exit ? "EXIT" : "CONTINUE")) break;
          exit_label_ = s.label;
          flow = s.is_exit ? Flow::exit : Flow::next_iteration;
          break;
        case K::block:
          flow = block(s, result);
          break;
        case K::diagnostics:
          diagnostics(s);
          break;
        case K::return_next:
          if (const int d = find(s.text); d >= 0 && ad_hoc_.count(d) != 0) {  // a record of a query's columns: its row, as RETURN QUERY's
            append_query_rows(f_, {ad_hoc_.at(d).second}, *set_rows, "wrong record type supplied in RETURN NEXT");
          } else if (s.target == PlStatement::kOutRow) set_rows->push_back(out_row());
          else set_rows->push_back(returned_set_row(f_, s.text.empty() ? read(s.target) : value(s.text)));
          break;
        case K::return_query: {  // all its rows, as the server's RETURN QUERY runs it to the end
          std::vector<std::vector<Value>> rows;
          std::optional<PlUsingParams> using_params;
          const auto plans = s.dynamic ? dynamic_plans(s, using_params) : cached_plans(s.text);
          row_count_ = row_count(statement(plans, &rows, using_params ? &*using_params : nullptr));
          append_query_rows(f_, std::move(rows), *set_rows);
          set_found(row_count_ > 0);
          break;
        }
      }
      if (flow != Flow::next) return flow;
    }
    return Flow::next;
  }

  // LOOP, WHILE, FOR i IN a..b, FOR target IN query: the body until the condition, the range
  // or the rows end, or EXIT, or RETURN. FOR sets FOUND as it ends (whether it iterated).
  Flow loop(const PlStatement& s, Value& result) {
    using L = PlStatement::Loop;
    std::int64_t iterations = 0;
    Flow out = Flow::next;
    // Runs the body once: whether the loop goes on (`out`: how control leaves it otherwise).
    const auto once = [&] {
      if (++iterations > kMaxIterations) {
        throw SqlError("0A000", fmt::format("a plpgsql loop running more than {} times (in {}()) is not in lockstep's SQL subset (docs/sql.md)",
                                            kMaxIterations, f_.name));
      }
      const Flow f = body(s.body, result);
      if (f == Flow::next) return true;
      if (f == Flow::returned || (!exit_label_.empty() && exit_label_ != s.label)) {  // RETURN, or an outer one's EXIT
        out = f;
        return false;
      }
      exit_label_.clear();
      return f == Flow::next_iteration;
    };
    switch (s.loop) {
      case L::plain:
        while (once()) {
        }
        break;
      case L::while_:
        while (sql::is_true(value(s.text), "WHILE") && once()) {
        }
        break;
      case L::integers: {
        const PlRange range = for_range(value(s.args[0]), value(s.args[1]), s.args[2].empty() ? Value::integer(1, Type::int4) : value(s.args[2]));
        std::int64_t i = range.lower;
        const std::int64_t end = range.upper, step = range.step;
        scope_.push_back(s.target);
        const struct Leave { std::vector<int>& scope; ~Leave() { scope.pop_back(); } } leave{scope_};  // NOLINT(readability-*)
        bool found = false;
        while (s.reverse ? i >= end : i <= end) {
          found = true;
          assign(s.target, Value::integer(i, Type::int4));
          if (!once()) break;
          // (the server stops where the next value would leave int4)
          if (s.reverse ? i < INT32_MIN + step : i > INT32_MAX - step) break;
          i += s.reverse ? -step : step;
        }
        set_found(found);
        break;
      }
      case L::array: {  // FOREACH target IN ARRAY expression: each element, NULLs too
        const std::vector<Value> elements = foreach_elements(value(s.text));
        for (const Value& e : elements) {
          assign(s.target, e);
          if (!once()) break;
        }
        set_found(!elements.empty());
        break;
      }
      case L::query: {
        std::vector<std::string> columns;
        std::vector<std::vector<Value>> rows = loop_rows(s, columns);  // (ROW_COUNT stays: the server's cursor does not set it)
        for (const std::vector<Value>& row : rows) {
          fill(s.target, &row, columns);
          if (!once()) break;
        }
        set_found(!rows.empty());
        break;
      }
    }
    return out;
  }

  // FOR target IN query's rows, all fetched before the body runs. The server fetches them ten
  // at a time as the body asks: the same rows, unless fetching one takes a step (a row lock, a
  // lock function), which would then come between the body's.
  std::vector<std::vector<Value>> loop_rows(const PlStatement& s, std::vector<std::string>& columns) {
    const auto plans = cached_plans(s.text);
    if (plans->size() != 1) throw SqlError("0A000", "several statements in a plpgsql FOR loop's query are not in lockstep's SQL subset");
    const sql::Statement& st = plans->front();
    const auto* sel = std::get_if<sql::Select>(&st.body);
    const bool ten_at_most = sel != nullptr && constant_limit(*sel).value_or(11) <= 10;
    if (sel != nullptr && !ten_at_most && (sel->lock != sql::RowLock::none || takes_steps(st, run_.server_) || st.locking_subquery)) {
      throw SqlError("0A000", "a plpgsql FOR loop over a query that locks rows or calls a lock function, without LIMIT 10 or less (the server "
                              "fetches its rows as the loop runs) is not in lockstep's SQL subset (docs/sql.md)");
    }
    std::vector<std::vector<Value>> rows;
    columns = statement(plans, &rows).columns;
    return rows;
  }

  // BEGIN ... EXCEPTION WHEN ... END: the body in a subtransaction; an error a handler's
  // condition catches rolls it back (rows and locks it took go, variables keep their values)
  // and runs that handler. A refusal, a FATAL error and one no condition names go on up.
  Flow block(const PlStatement& s, Value& result) {
    if (s.handlers.empty()) return leave_block(s, body(s.body, result));
    SimConnection& c = run_.c_;
    const bool was_aborted = c.session_.aborted;
    const std::size_t sub = c.begin_internal_subtransaction();
    Error error;
    const sql::PlHandler* handler = nullptr;
    try {
      const Flow f = body(s.body, result);
      c.release_internal_subtransaction(sub);
      return leave_block(s, f);
    } catch (const SqlRun::Raised& r) {
      error = r.error;
    } catch (const SqlError& e) {
      error = error_of(e);
    }
    handler = handler_for(s, error);
    const bool session_lost = c.dead_ || c.session_.terminated;
    if (!session_lost) c.rollback_internal_subtransaction(sub, was_aborted);
    if (handler == nullptr || session_lost) throw SqlRun::Raised{error};
    handling_.push_back(error);
    for (std::size_t d = 0; d < pl_.datums.size(); ++d) {
      const PlDatum& p = pl_.datums[d];
      if (p.kind != PlDatum::Kind::var) continue;
      if (p.name == "sqlstate") values_[d] = Value::text(error.sqlstate);
      if (p.name == "sqlerrm") values_[d] = Value::text(error.message);
    }
    struct Handled {
      std::vector<Error>& list;
      ~Handled() { list.pop_back(); }
    } handled{handling_};
    return leave_block(s, body(handler->body, result));
  }

  // The handler whose condition catches the error, or none. Never a refusal (the construct is
  // not run, so there is no error to catch) nor a FATAL one (the session ends).
  static const sql::PlHandler* handler_for(const PlStatement& s, const Error& e) {
    if (e.sqlstate == "0A000" && e.message.find("lockstep") != std::string::npos) return nullptr;
    if (e.sqlstate.starts_with("57P") || e.sqlstate.starts_with("08")) return nullptr;
    for (const sql::PlHandler& h : s.handlers) {
      for (const std::string& condition : h.sqlstates) {
        if (sql::condition_matches(condition, e.sqlstate)) return &h;
      }
    }
    return nullptr;
  }

  Flow leave_block(const PlStatement& s, Flow f) {
    if (f == Flow::exit && !s.label.empty() && exit_label_ == s.label) {  // EXIT label of this block
      exit_label_.clear();
      return Flow::next;
    }
    return f;
  }

  // GET DIAGNOSTICS v = ROW_COUNT (the last SQL statement's rows); GET STACKED DIAGNOSTICS
  // v = RETURNED_SQLSTATE | MESSAGE_TEXT (the error the handler runs for).
  void diagnostics(const PlStatement& s) {
    for (const auto& [target, item] : s.items) {
      if (item == "ROW_COUNT") {
        assign(target, Value::integer(row_count_, Type::int8));
        continue;
      }
      if (handling_.empty()) throw SqlError("0Z002", "GET STACKED DIAGNOSTICS cannot be used outside an exception handler");
      assign(target, Value::text(item == "RETURNED_SQLSTATE" ? handling_.back().sqlstate : handling_.back().message));
    }
  }

  static constexpr std::int64_t kMaxIterations = 10000;

  SqlRun& run_;
  const sql::CreateFunction& f_;
  const sql::PlFunction& pl_;
  const std::vector<Value>& args_;
  const PlTrigger* trigger_;
  std::vector<Value> values_;           // by datum
  std::vector<sql::ColumnDef> types_;   // a variable's
  std::vector<int> rows_;               // a row variable's record type (-1: none; kAnyRow: `record`, none assigned yet)
  static constexpr int kAnyRow = -2;
  std::vector<int> assigned_;           // NEW and OLD where set
  std::vector<int> unassigned_;         // `record` variables not yet assigned (reading one is 55000)
  std::string exit_label_;              // EXIT's or CONTINUE's label while control leaves for it
  std::vector<int> scope_;              // the running FOR loops' variables, innermost last
  // `record` variables holding a query's row of its own columns (not a table's): names, values
  std::map<int, std::pair<std::vector<std::string>, std::vector<Value>>> ad_hoc_;
  std::int64_t row_count_ = 0;          // GET DIAGNOSTICS ROW_COUNT: the last SQL statement's
  std::vector<Error> handling_;         // the errors the running handlers caught, innermost last
};

Value SqlRun::plpgsql_call(const sql::CreateFunction& f, const std::vector<Value>& args) {
  return call_plpgsql(f, args, nullptr);
}

Value SqlRun::call_plpgsql(const sql::CreateFunction& f, const std::vector<Value>& args, const PlTrigger* trigger) {
  if (trigger == nullptr) {
    bool reads = false;
    each_table_named(st_, [&](const std::string& name) { reads = reads || server_.sql_table(name) != nullptr; });
    if (reads && !reads_nothing_per_row(f, server_)) {
      throw SqlError("0A000", fmt::format("a call of the LANGUAGE {} function {}() in a statement that reads a table (lockstep runs "
                                          "one from SELECT f(...) or SELECT * FROM f(...)) is not in lockstep's SQL subset (docs/sql.md)",
                                          f.pl->sql_body ? "sql" : "plpgsql", f.name));
    }
  }
  PlRun frame(*this, f, args, trigger);
  frame.set_rows = std::exchange(set_rows_, nullptr);  // FROM's, for this call only
  if (trigger != nullptr) {
    frame.set_record("new", trigger->new_row);
    frame.set_record("old", trigger->old_row);
  }
  return frame.call_function();
}

Rows SqlRun::run_in_function(const std::shared_ptr<const std::vector<sql::Statement>>& plans, const sql::Statement& st, sql::EvalContext& frame,
                             std::vector<std::vector<Value>>* rows) {
  refuse_triggers(st);
  sql::check_stack_depth(0);  // a function's statements calling functions (the call counts those)
  static const std::vector<Param> kNoParams;
  SqlRun inner(c_, plans, st, kNoParams);
  inner.nested_ = true;
  inner.function_params_ = &frame;
  inner.statement_start_ = statement_start_;
  inner.returned_ = rows;
  // Its statement's bookkeeping (pg_stat_activity, the last statement's waits) is the calling
  // one's again when it ends, also by an error an EXCEPTION block catches.
  struct Restore {
    SimConnection& c;
    const bool in_statement, active;
    const SimConnection::LastStatement last;
    ~Restore() {
      const bool waited = c.last_.waited;
      c.in_statement_ = in_statement;
      c.session_.active = active;
      c.last_ = last;
      c.last_.waited = c.last_.waited || waited;
    }
  } restore{c_, c_.in_statement_, c_.session_.active, c_.last_};
  // Its tables' locks, taken in its first step as a statement's are (a pinned row's lock step
  // takes them too); what it did not take is not the calling statement's.
  LOCKSTEP_INVARIANT(c_.implicit_table_locks_.empty(), "a function's caller took its table locks before the call");
  if (auto unresolved = unresolved_relation(st, server_)) throw *unresolved;  // names through the function's search_path
  inner.request_table_lock();
  struct Forget { SimConnection& c; ~Forget() { c.forget_table_lock_request(); } } forget{c_};  // NOLINT
  Result<Rows> r = std::visit([&inner](const auto& body) { return inner.statement(body); }, st.body);
  if (!r.ok()) throw Raised{r.error()};
  return std::move(r).value();
}

}  // namespace lockstep::sim::pg
