// sim/pg/sql_plpgsql.cc: LANGUAGE plpgsql functions on the simulated server (model/sql/plan.h's
// PlFunction), run as PL/pgSQL runs them: the variables (parameters, FOUND, DECLAREd ones with
// their defaults) in a frame the body's statements and expressions read by name (a name that
// is also a column of the statement's table is 42702, variable_conflict = error); each SQL
// statement a statement of its own inside the calling one (its own steps and, in READ
// COMMITTED, what is committed when it runs; the transaction's snapshot in REPEATABLE READ),
// with INTO [STRICT] (P0002, P0003), FOUND, IF, assignments, PERFORM, EXECUTE, RAISE (P0001)
// and RETURN (2F005 when control reaches the end of a function that returns a value).
// A call is run only from a statement that reads no table itself (SELECT f(...), SELECT * FROM
// f(...)): a call inside a scan would take steps in the middle of the scan's, which the
// simulation does not model (refused, 0A000).
#include <algorithm>

#include "lockstep/model/sql/parse.h"
#include "lockstep/model/sql/records.h"
#include "lockstep/model/sql/session_style.h"
#include "lockstep/sim/invariant.h"
#include "lockstep/sim/pg/sql_names.h"
#include "lockstep/sim/pg/sql_plpgsql.h"
#include "lockstep/sim/pg/sql_rows.h"
#include "lockstep/sim/pg/sql_run.h"

namespace lockstep::sim::pg {

using sql::PlDatum;
using sql::PlStatement;

class PlRun final : public sql::EvalContext {
 public:
  PlRun(SqlRun& run, const sql::CreateFunction& f, const std::vector<Value>& args, const PlTrigger* trigger)
      : run_(run), f_(f), pl_(*f.pl), args_(args), trigger_(trigger), values_(pl_.datums.size()), types_(pl_.datums.size()),
        rows_(pl_.datums.size(), -1) {}

  // The function's value: RETURN's (NULL for a function that returns void or a trigger's).
  Value call_function() {
    declare();
    bool returned = false;
    Value result = Value::null();
    body(pl_.body, returned, result);
    if (!returned && returns_value()) throw SqlError("2F005", "control reached end of function without RETURN");
    return result;
  }

  bool returns_value() const { return !f_.returns_trigger && !(f_.returns.type == Type::text && f_.returns.user_type == "void"); }

  // EvalContext: the variables by name; calls and queries are the calling statement's.
  Value column(const Expr& ref) override {
    if (ref.qualifier.empty()) {
      if (const int d = find(ref.name); d >= 0) return read(d);
      if (trigger_ != nullptr) {
        if (ref.name == "tg_op") return Value::text(trigger_->op);
        if (ref.name == "tg_name") return Value::text(trigger_->name);
        if (ref.name == "tg_table_name" || ref.name == "tg_relname") return Value::text(trigger_->table);
        if (ref.name == "tg_when") return Value::text(trigger_->before ? "BEFORE" : "AFTER");
        if (ref.name == "tg_level") return Value::text("ROW");
      }
      throw sql::missing_column_error(ref);
    }
    if (ref.qualifier == f_.name) {
      if (const int d = find(ref.name); d >= 0 && param_of(static_cast<std::size_t>(d)) >= 0) return values_[static_cast<std::size_t>(d)];
    }
    if (const int d = find(ref.qualifier); d >= 0 && (rows_[static_cast<std::size_t>(d)] != -1 || pl_.datums[static_cast<std::size_t>(d)].kind == PlDatum::Kind::record)) {
      return sql::record_field(read(d), ref.name);  // (NEW of a DELETE: 55000)
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
  bool conflicts_with_columns() const override { return true; }
  bool names_variable(const Expr& ref) const override {
    if (ref.qualifier.empty() && trigger_ != nullptr && ref.name.starts_with("tg_")) return true;  // TG_OP, ... (column() names them)
    if (ref.qualifier.empty()) return find(ref.name) >= 0;
    if (ref.qualifier == f_.name) return find(ref.name) >= 0;
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
  int param_of(std::size_t d) const {
    std::size_t named = 0;
    for (std::size_t i = 0; i < f_.params.size(); ++i) {
      if (f_.params[i].name.empty()) continue;
      if (named++ == d) return pl_.datums[d].name == f_.params[i].name ? static_cast<int>(i) : -1;
    }
    return -1;
  }

  // The datum a name reads: the last declared of that name (a variable or a record).
  int find(std::string_view name) const {
    for (std::size_t d = pl_.datums.size(); d-- > 0;) {
      const PlDatum& p = pl_.datums[d];
      if ((p.kind == PlDatum::Kind::var || p.kind == PlDatum::Kind::record) && p.name == name) return static_cast<int>(d);
    }
    return -1;
  }

  Value read(int d) {
    const PlDatum& p = pl_.datums[static_cast<std::size_t>(d)];
    const bool unset = p.kind == PlDatum::Kind::record ? std::find(assigned_.begin(), assigned_.end(), d) == assigned_.end()
                                                       : std::find(unassigned_.begin(), unassigned_.end(), d) != unassigned_.end();
    if (unset) {
      throw SqlError("55000", fmt::format("record \"{}\" is not assigned yet", p.name));
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
      }
      if (p.type.empty() && p.name == "found") {
        types_[d].type = Type::boolean;
        values_[d] = Value::boolean(false);
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
    if (run_.server_.sql_table(text) != nullptr) {
      rows_[d] = run_.server_.record_type_index(text);
      return;
    }
    const auto refused = [&] {
      return SqlError("0A000", fmt::format("a variable of type {} in the plpgsql function {}() is not in lockstep's SQL subset (docs/sql.md)", text, f_.name));
    };
    if (text == "record") {  // of the row type of what is assigned to it (NEW, OLD, a table's row)
      rows_[d] = kAnyRow;
      return;
    }
    if (text.find('%') != std::string::npos) throw refused();
    try {
      const auto plans = cached_plans(fmt::format("CREATE TABLE lockstep_plpgsql_variable (v {})", text));
      const auto* t = plans->size() == 1 ? std::get_if<sql::CreateTable>(&plans->front().body) : nullptr;
      if (t == nullptr || t->columns.size() != 1) throw refused();
      types_[d] = t->columns[0];
      types_[d].not_null = false;
    } catch (const SqlError&) {
      throw refused();
    }
  }

  // Sets datum d (a variable, a record, a field of one) as an assignment casts to its type.
  void assign(int d, const Value& v) {
    const auto at = static_cast<std::size_t>(d);
    const PlDatum& p = pl_.datums[at];
    if (p.kind == PlDatum::Kind::field) {
      const int parent = p.parent;
      const Value record = read(parent);
      const sql::CreateTable& def = sql::record_definition(record.record_type());
      std::vector<std::optional<std::string>> texts = record.is_null() ? std::vector<std::optional<std::string>>(def.columns.size())
                                                                       : sql::record_field_texts(record.text_output());
      const auto column = std::find_if(def.columns.begin(), def.columns.end(), [&](const sql::ColumnDef& c) { return c.name == p.name; });
      if (column == def.columns.end() || texts.size() != def.columns.size()) {
        throw SqlError("42703", fmt::format("record \"{}\" has no field \"{}\"", pl_.datums[static_cast<std::size_t>(parent)].name, p.name));
      }
      sql::ColumnDef c = *column;
      c.not_null = false;
      const Value cast = assigned(v, c, def.table);
      texts[static_cast<std::size_t>(column - def.columns.begin())] = cast.is_null() ? std::nullopt : std::optional<std::string>(cast.text_output());
      values_[static_cast<std::size_t>(parent)] = Value::record(record.record_type(), sql::record_output(texts));
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
    values_[at] = assigned(v, types_[at], f_.name);
  }

  // INTO's target from a row of values (none: every variable NULL).
  void fill(int target, const std::vector<Value>* row) {
    const PlDatum& t = pl_.datums[static_cast<std::size_t>(target)];
    const std::vector<int> one{target};
    const std::vector<int>& fields = t.kind == PlDatum::Kind::row ? t.fields : one;
    if (fields.size() == 1 && rows_[static_cast<std::size_t>(fields[0])] >= 0) {  // a row variable: the columns in order
      const int d = fields[0];
      if (row == nullptr) {  // no row: each field NULL (a row of NULLs, not a NULL row)
        const int type = rows_[static_cast<std::size_t>(d)];
        values_[static_cast<std::size_t>(d)] = Value::record(type, sql::record_output(std::vector<std::optional<std::string>>(sql::record_definition(type).columns.size())));
        return;
      }
      if (row->size() == 1 && (*row)[0].type() == Type::record) {
        assign(d, (*row)[0]);
        return;
      }
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
    const int d = find("found");
    if (d >= 0) values_[static_cast<std::size_t>(d)] = Value::boolean(found);
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
    if (!rows.empty() && rows[0].size() != 1) throw SqlError("42601", fmt::format("query \"{}\" returned {} columns", text, rows[0].size()));
    if (rows.size() > 1) throw SqlError("21000", fmt::format("query \"{}\" returned more than one row", text));
    return rows.empty() ? Value::null() : rows[0][0];
  }

  // Runs one SQL statement of the body in the calling statement's transaction: its rows, as values.
  Rows statement(const std::shared_ptr<const std::vector<sql::Statement>>& plans, std::vector<std::vector<Value>>* rows) {
    if (plans->size() != 1) throw SqlError("0A000", "several statements in one statement of a plpgsql function are not in lockstep's SQL subset");
    const sql::Statement& st = plans->front();
    const bool dml = std::holds_alternative<sql::Select>(st.body) || std::holds_alternative<sql::Insert>(st.body) ||
                     std::holds_alternative<sql::Update>(st.body) || std::holds_alternative<sql::Delete>(st.body);
    if (!dml) {
      throw SqlError("0A000", fmt::format("a statement other than SELECT, INSERT, UPDATE or DELETE in a plpgsql function ({}) is not in "
                                          "lockstep's SQL subset (docs/sql.md)", st.text));
    }
    if (st.plan_error) throw *st.plan_error;
    return run_.run_in_function(plans, st, *this, rows);
  }

  static std::int64_t row_count(const Rows& r) {
    const auto space = r.tag.rfind(' ');
    return space == std::string::npos ? static_cast<std::int64_t>(r.rows.size()) : std::atoll(r.tag.c_str() + space + 1);
  }

  void sql(const PlStatement& s) {
    const auto plans = cached_plans(s.text);
    if (plans->size() != 1) throw SqlError("0A000", "several statements in one statement of a plpgsql function are not in lockstep's SQL subset");
    const sql::Statement& st = plans->front();
    const auto* sel = std::get_if<sql::Select>(&st.body);
    if (s.kind == PlStatement::Kind::sql && s.target < 0 && sel != nullptr && !sel->targets.empty()) {
      throw SqlError("42601", "query has no destination for result data");
    }
    const bool one_row = sel != nullptr && sel->limit && sel->limit->kind == Expr::Kind::constant && sql::is_integer(sel->limit->value.type()) &&
                         !sel->limit->value.is_null() && sel->limit->value.as_integer() == 1 && !sel->offset;  // LIMIT 1: the same rows
    if (s.target >= 0 && sel != nullptr && !one_row && (sel->lock != sql::RowLock::none || st.calls_stepping_function || st.locking_subquery)) {
      // plpgsql fetches one row (two with STRICT) and stops: a lock taken per row is taken for those only.
      throw SqlError("0A000", "SELECT ... INTO that locks rows or calls a lock function, without LIMIT 1, in a plpgsql function (it stops "
                              "after its first rows) is not in lockstep's SQL subset (docs/sql.md)");
    }
    std::vector<std::vector<Value>> rows;
    const Rows out = statement(plans, &rows);
    if (s.target < 0) {
      set_found(row_count(out) > 0);
      return;
    }
    if (s.strict && rows.empty()) throw SqlError("P0002", "query returned no rows");
    if (rows.size() > 1 && (s.strict || sel == nullptr)) throw SqlError("P0003", "query returned more than one row");
    fill(s.target, rows.empty() ? nullptr : &rows[0]);
    set_found(!rows.empty());
  }

  void body(const std::vector<PlStatement>& list, bool& returned, Value& result) {
    using K = PlStatement::Kind;
    for (const PlStatement& s : list) {
      switch (s.kind) {
        case K::sql:
        case K::perform:
          sql(s);
          break;
        case K::execute: {
          const Value text = value(s.text);
          if (text.is_null()) throw SqlError("22004", "query string argument of EXECUTE is null");
          const std::string sql_text = sql::cast(text, Type::text).as_text();
          // Parsed here, on the session's fiber stack, where a text nesting thousands of levels
          // deep would overflow PostgreSQL's parser's recursion: a long one is refused.
          if (sql_text.size() > 2048) {
            throw SqlError("0A000", "EXECUTE of a text longer than 2048 bytes in a plpgsql function is not in lockstep's SQL subset (docs/sql.md)");
          }
          statement(cached_plans(sql_text), nullptr);
          break;
        }
        case K::assign:
          assign(s.target, value(s.text));
          break;
        case K::branch:
          for (const sql::PlBranch& b : s.branches) {
            if (!b.condition.empty() && !sql::is_true(value(b.condition), "IF")) continue;
            body(b.body, returned, result);
            break;
          }
          break;
        case K::raise: {
          std::string text = raise_message(s, [&](const std::string& e) { return output(value(e)); });
          if (s.level >= 21) throw SqlError("P0001", text);
          if (s.level >= 17) run_.c_.warnings_.push_back({s.level == 19 ? "01000" : "00000", std::move(text)});
          break;
        }
        case K::stop:
          // A RETURN without a value where the function returns one is the parser's own at the
          // body's end (add_dummy_return: libpg_query does not know the return type).
          if (s.text.empty() && f_.returns_trigger) throw SqlError("2F005", "control reached end of trigger procedure without RETURN");
          if (s.text.empty() && returns_value()) throw SqlError("2F005", "control reached end of function without RETURN");
          returned = true;
          if (!s.text.empty()) result = value(s.text);
          return;
      }
      if (returned) return;
    }
  }

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
};

std::string raise_message(const sql::PlStatement& s, const std::function<std::optional<std::string>(const std::string&)>& argument) {
  std::string out;
  std::size_t next = 0;
  for (std::size_t i = 0; i < s.text.size(); ++i) {
    if (s.text[i] != '%') {
      out += s.text[i];
    } else if (i + 1 < s.text.size() && s.text[i + 1] == '%') {
      out += '%';
      ++i;
    } else if (next < s.args.size()) {
      const std::optional<std::string> v = argument(s.args[next++]);
      out += v ? *v : "<NULL>";
    }
  }
  return out;
}

Value SqlRun::plpgsql_call(const sql::CreateFunction& f, const std::vector<Value>& args) {
  return call_plpgsql(f, args, nullptr);
}

Value SqlRun::call_plpgsql(const sql::CreateFunction& f, const std::vector<Value>& args, const PlTrigger* trigger) {
  if (trigger == nullptr) {
    bool reads = false;
    each_table_named(st_, [&](const std::string& name) { reads = reads || server_.sql_table(name) != nullptr; });
    if (reads) {
      throw SqlError("0A000", fmt::format("a call of the LANGUAGE plpgsql function {}() in a statement that reads a table (lockstep runs "
                                          "one from SELECT f(...) or SELECT * FROM f(...)) is not in lockstep's SQL subset (docs/sql.md)",
                                          f.name));
    }
  }
  PlRun frame(*this, f, args, trigger);
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
  // Its statement's bookkeeping (pg_stat_activity, the last statement's waits) is the calling one's.
  const bool in_statement = c_.in_statement_;
  const bool active = c_.session_.active;
  const SimConnection::LastStatement last = c_.last_;
  Result<Rows> r = std::visit([&inner](const auto& body) { return inner.statement(body); }, st.body);
  const bool waited = c_.last_.waited;
  c_.in_statement_ = in_statement;
  c_.session_.active = active;
  c_.last_ = last;
  c_.last_.waited = c_.last_.waited || waited;
  if (!r.ok()) throw Raised{r.error()};
  return std::move(r).value();
}

}  // namespace lockstep::sim::pg

namespace lockstep::sim::pg {

namespace {

// A trigger's WHEN, read with NEW and OLD (new.x, old.x) and the statement's functions.
class TriggerWhen final : public sql::EvalContext {
 public:
  TriggerWhen(SqlRun& run, const Value& new_row, const Value& old_row) : run_(run), new_(new_row), old_(old_row) {}
  Value column(const Expr& ref) override {
    const Value* r = ref.qualifier == "new" ? &new_ : ref.qualifier == "old" ? &old_ : nullptr;
    if (r == nullptr) throw sql::missing_column_error(ref);
    if (r->type() != Type::record) throw SqlError("0A000", "a trigger's WHEN reading a row its event does not have is not in lockstep's SQL subset");
    return sql::record_field(*r, ref.name);
  }
  Value param(int number) override { throw SqlError("42P02", fmt::format("there is no parameter ${}", number)); }
  Value call(const Expr& e, const std::vector<Value>& args) override { return run_.call(e, args); }
  Value subquery(const Expr&) override { throw SqlError("0A000", "a subquery in a trigger's WHEN is not in lockstep's SQL subset"); }

 private:
  SqlRun& run_;
  const Value& new_;
  const Value& old_;
};

}  // namespace

// Whether the trigger is one lockstep fires: AFTER, FOR EACH ROW, no arguments, its function's
// body one it runs.
bool fires_after_row(const SqlTable::Trigger& tr) {
  if (tr.before || !tr.row || tr.args) return false;
  const sql::CreateFunction* f = sql::current_sql_function(tr.function);
  return f != nullptr && f->pl != nullptr && f->pl->refused.empty();
}

void SqlRun::queue_after_row(const SqlTable& t, const char* op, const Row* old_row, const Row* new_row, const std::vector<sql::Assignment>* set) {
  if (t.triggers.empty()) return;
  std::vector<const SqlTable::Trigger*> firing;
  for (const SqlTable::Trigger& tr : t.triggers) {
    if (std::ranges::find(tr.events, op) == tr.events.end() || !fires_after_row(tr)) continue;
    if (!tr.of_columns.empty() && set != nullptr) {  // UPDATE OF: a column of the list is SET
      const bool named = std::ranges::any_of(*set, [&](const sql::Assignment& a) { return std::ranges::find(tr.of_columns, a.column) != tr.of_columns.end(); });
      if (!named) continue;
    }
    firing.push_back(&tr);
  }
  if (firing.empty()) return;
  std::ranges::sort(firing, [](const auto* a, const auto* b) { return a->name < b->name; });  // the server's order: by name
  const Value new_rec = new_row != nullptr ? whole_row(t, *new_row) : Value::null();
  const Value old_rec = old_row != nullptr ? whole_row(t, *old_row) : Value::null();
  SqlRun* top = this;  // a data-modifying WITH query's events are its statement's
  while (top->nested_ && top->enclosing_ != nullptr) top = top->enclosing_;
  for (const SqlTable::Trigger* tr : firing) {
    if (tr->when) {  // evaluated as the event is queued
      TriggerWhen when(*this, new_rec, old_rec);
      if (!sql::is_true(sql::evaluate(*tr->when, when), "WHEN")) continue;
    }
    top->after_rows_.push_back({t.def.table, tr->name, tr->function, op, old_row != nullptr ? std::optional<Row>(*old_row) : std::nullopt,
                                new_row != nullptr ? std::optional<Row>(*new_row) : std::nullopt});
  }
}

void SqlRun::fire_after_rows() {
  std::vector<AfterRow> events = std::exchange(after_rows_, {});
  for (const AfterRow& e : events) {
    const SqlTable* t = server_.sql_table(e.table);
    const sql::CreateFunction* f = sql::current_sql_function(e.function);
    LOCKSTEP_INVARIANT(t != nullptr && f != nullptr && f->pl != nullptr, "a queued trigger's table and function exist");
    // NEW of a DELETE, OLD of an INSERT: a NULL row of the table's type (PostgreSQL 11 on).
    const int type = server_.record_type_index(e.table);
    PlTrigger trigger{e.op, e.trigger, e.table, false, e.new_row ? whole_row(*t, *e.new_row) : Value::null_record(type),
                      e.old_row ? whole_row(*t, *e.old_row) : Value::null_record(type)};
    static const std::vector<Value> kNoArgs;
    call_plpgsql(*f, kNoArgs, &trigger);
  }
}

}  // namespace lockstep::sim::pg
