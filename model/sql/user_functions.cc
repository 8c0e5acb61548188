// model/sql/user_functions.cc: calls of LANGUAGE sql functions (model/sql/user_functions.h).
#include "lockstep/model/sql/user_functions.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/model/sql/enums.h"
#include "lockstep/model/sql/functions.h"
#include "lockstep/model/sql/numeric.h"
#include "lockstep/model/sql/records.h"
#include "lockstep/model/sql/session_style.h"
#include "lockstep/model/stack_room.h"

namespace lockstep::sql {
namespace {

// The body's evaluation: its parameters by name or $n; other calls (now(), advisory locks)
// are the statement's.
class ufn_Body final : public EvalContext {
 public:
  ufn_Body(const CreateFunction& f, const std::vector<Value>& args, EvalContext& outer) : f_(f), args_(args), outer_(outer) {}
  Value column(const Expr& ref) override {
    if (ref.qualifier.empty() || ref.qualifier == bare_function_name(f_.name)) {
      for (std::size_t i = 0; i < f_.params.size(); ++i) {
        if (!f_.params[i].name.empty() && f_.params[i].name == ref.name) return args_[i];
      }
    }
    for (std::size_t i = 0; i < f_.params.size(); ++i) {  // param.field of a table's row type
      if (!ref.qualifier.empty() && f_.params[i].name == ref.qualifier && args_[i].type() == Type::record) {
        return record_field(args_[i], ref.name);
      }
    }
    throw missing_column_error(ref);
  }
  Value param(int number) override {
    if (number < 1 || static_cast<std::size_t>(number) > args_.size()) throw SqlError("42P02", fmt::format("there is no parameter ${}", number));
    return args_[static_cast<std::size_t>(number) - 1];
  }
  Value call(const Expr& e, const std::vector<Value>& args) override { return outer_.call(e, args); }
  Value subquery(const Expr&) override {
    throw SqlError("0A000", fmt::format("a subquery in the body of function {} is not in lockstep's SQL subset", f_.name));
  }
  bool names_variable(const Expr& ref) const override {
    for (std::size_t i = 0; i < f_.params.size(); ++i) {
      if (f_.params[i].name.empty()) continue;
      if ((ref.qualifier.empty() || ref.qualifier == bare_function_name(f_.name)) && f_.params[i].name == ref.name) return true;
      if (f_.params[i].name == ref.qualifier && args_[i].type() == Type::record) return true;
    }
    return false;
  }

 private:
  const CreateFunction& f_;
  const std::vector<Value>& args_;
  EvalContext& outer_;
};

// Whether the server casts a value of type `from` to `to` implicitly (a function argument).
// A parameter of a table's row type (que_determine_job_state(job que_jobs)): its record
// type's index, else -1.
int ufn_row_type(const ColumnDef& p) {
  return p.type == Type::enum_ ? row_type_index(p.user_type) : -1;
}

bool ufn_implicit_type(Type from, Type to) {
  if (from == to) return true;
  auto rank = [](Type t) { return t == Type::int2 ? 0 : t == Type::int4 ? 1 : t == Type::int8 ? 2 : t == Type::numeric ? 3 : t == Type::float8 ? 4 : -1; };
  if (rank(from) >= 0 && rank(to) >= 0) return rank(from) <= rank(to);
  return from == Type::timestamp && to == Type::timestamptz;
}

bool ufn_implicit(const Value& v, const ColumnDef& to) {
  const Type from = v.type();
  if (const int row_type = ufn_row_type(to); row_type >= 0) return from == Type::record ? v.record_type() == row_type : v.is_null();
  if (v.is_null() || from == Type::unknown) return true;
  if (to.type == Type::enum_) return from == Type::enum_ && v.enum_type() == enum_index(to.user_type);
  return ufn_implicit_type(from, to.type);
}

// The arguments' types as the server's 42883 lists them (a named one as `name => type`).
std::string ufn_argument_types(const std::vector<Value>& args, const std::vector<std::string>& names = {}) {
  std::vector<std::string> types;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Value& a = args[i];
    const std::size_t named_from = args.size() - names.size();
    types.push_back((i >= named_from ? names[i - named_from] + " => " : std::string()) +
                    (a.type() == Type::enum_    ? enum_type_name(a)
                     : a.type() == Type::array  ? array_type_name(a)
                     : a.type() == Type::record ? record_definition(a.record_type()).table
                                                : std::string(type_name(a.type()))));
  }
  return fmt::format("{}", fmt::join(types, ", "));
}

// Whether an argument's type is its parameter's own (an array's with its element, an enum's).
bool ufn_exact(const Value& v, const ColumnDef& to) {
  if (v.type() != to.type || to.type == Type::unknown) return false;
  if (to.type == Type::enum_) return ufn_row_type(to) < 0 && !v.is_null() && v.enum_type() == enum_index(to.user_type);
  if (to.type != Type::array || v.is_null()) return to.type != Type::array;
  const ElementType mine = element_type(v), declared = declared_element(to.element, to.user_type);
  return mine.type == declared.type && mine.enum_index == declared.enum_index;
}

// A type's category and whether it is its category's preferred type (pg_type's typcategory,
// typispreferred), or 0 for one not told here.
std::pair<char, bool> ufn_category(Type t, bool row_type) {
  switch (t) {
    case Type::text: return {'S', true};
    case Type::bpchar: return {'S', false};
    case Type::int2: case Type::int4: case Type::int8: case Type::numeric: return {'N', false};
    case Type::float8: case Type::oid: return {'N', true};
    case Type::timestamptz: return {'D', true};
    case Type::timestamp: case Type::date: case Type::time: return {'D', false};
    case Type::interval: return {'T', true};
    case Type::boolean: return {'B', true};
    case Type::jsonb: case Type::json: case Type::uuid: case Type::bytea: return {'U', false};
    case Type::bit: return {'V', false};
    case Type::array: return {'A', false};
    case Type::enum_: return {row_type ? 'C' : 'E', false};
    default: return {0, false};
  }
}

// func_select_candidate's later steps over the candidates left (each with its count of exact
// arguments): those taking the preferred type of a typed argument's category at the most
// places; then at each unknown argument the category its candidates take (the string one if
// any does; else one they all take, or nothing is decided) and, where one takes that
// category's preferred type, those that do.
void ufn_by_preference(std::vector<std::pair<int, const CreateFunction*>>& fits, const std::vector<Value>& args) {
  const auto category = [](const ColumnDef& p) { return ufn_category(p.type, ufn_row_type(p) >= 0); };
  for (auto& [count, f] : fits) {
    count = 0;
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (args[i].type() == Type::unknown) continue;
      const auto [input, _] = ufn_category(args[i].type(), args[i].type() == Type::record);
      const auto [mine, preferred] = category(f->params[i].type);
      count += ufn_exact(args[i], f->params[i].type) || (input != 0 && mine == input && preferred) ? 1 : 0;
    }
  }
  const int most = std::ranges::max_element(fits)->first;
  std::erase_if(fits, [&](const auto& f) { return f.first < most; });
  std::vector<std::pair<char, bool>> slots(args.size());  // per unknown argument: its category, and whether one takes its preferred type
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].type() != Type::unknown) continue;
    auto& [slot, has_preferred] = slots[i];
    for (const auto& [count, f] : fits) {
      const auto [mine, preferred] = category(f->params[i].type);
      if (mine == 0) return;  // a type whose category is not told here: undecided
      if (slot == 0 || (mine == 'S' && slot != 'S')) {
        slot = mine;
        has_preferred = preferred;
      } else if (mine == slot) {
        has_preferred = has_preferred || preferred;
      } else if (slot != 'S') {
        return;  // two categories, neither a string: undecided (the server's 42725)
      }
    }
  }
  std::vector<std::pair<int, const CreateFunction*>> kept;
  for (const auto& fit : fits) {
    bool keep = true;
    for (std::size_t i = 0; keep && i < args.size(); ++i) {
      if (args[i].type() != Type::unknown) continue;
      const auto [mine, preferred] = category(fit.second->params[i].type);
      keep = mine == slots[i].first && (!slots[i].second || preferred);
    }
    if (keep) kept.push_back(fit);
  }
  if (!kept.empty()) fits = std::move(kept);
}

// A name with overloads: the one PostgreSQL's func_select_candidate picks where the arguments'
// types settle it (parse_func.c): of those taking this many arguments (DEFAULTs filling the
// rest), each argument of its parameter's type or cast to it implicitly (one of unknown type,
// a literal or NULL: any), those with the most arguments of exactly their parameter's type.
// One left is the call's; none, 42883; more (the server's preferred types decide, or
// 42725 "is not unique"), refused; named arguments refused.
const CreateFunction* ufn_pick(const std::vector<const CreateFunction*>& found, const Expr& e, const std::vector<Value>& args) {
  if (!e.arg_names.empty()) {
    throw SqlError("0A000", fmt::format("named arguments in a call of {}(), which has overloads, are not in lockstep's SQL subset (docs/sql.md)", e.name));
  }
  std::vector<std::pair<int, const CreateFunction*>> fits;
  for (const CreateFunction* f : found) {
    std::size_t required = f->params.size();
    while (required > 0 && f->params[required - 1].default_value != nullptr) --required;
    if (args.size() > f->params.size() || args.size() < required) continue;
    int exact = 0;
    bool fit = true;
    for (std::size_t i = 0; fit && i < args.size(); ++i) {
      const Value& a = args[i];
      const ColumnDef& p = f->params[i].type;
      if (a.type() == Type::unknown) continue;
      const bool typed_null = a.is_null() && ufn_row_type(p) < 0;  // a NULL of a column's type, say: that type's casts
      fit = !typed_null ? ufn_implicit(a, p) : p.type == Type::enum_ ? a.type() == Type::enum_ : ufn_implicit_type(a.type(), p.type);
      if (fit && !a.is_null() && a.type() == Type::array && p.type == Type::array) {  // an array's elements cast implicitly
        const ElementType mine = element_type(a), declared = declared_element(p.element, p.user_type);
        fit = mine.type == Type::unknown || (mine.type == declared.type && mine.enum_index == declared.enum_index) ||
              (mine.type != Type::enum_ && mine.type != Type::record && ufn_implicit_type(mine.type, declared.type));
      }
      exact += fit && ufn_exact(a, p) ? 1 : 0;
    }
    if (fit) fits.emplace_back(exact, f);
  }
  if (fits.empty()) throw SqlError("42883", fmt::format("function {}({}) does not exist", e.name, ufn_argument_types(args)));
  const int most = std::ranges::max_element(fits)->first;
  std::erase_if(fits, [&](const auto& f) { return f.first < most; });
  if (fits.size() > 1) ufn_by_preference(fits, args);
  const auto scalar = [](Type t) {
    const char c = ufn_category(t, false).first;
    return c != 0 && c != 'A' && c != 'E' && c != 'C';
  };
  const bool told = std::ranges::all_of(args, [&](const Value& a) { return scalar(a.type()); }) &&
                    std::ranges::all_of(fits, [&](const auto& f) { return std::ranges::all_of(f.second->params, [&](const FunctionParam& p) { return scalar(p.type.type); }); });
  if (fits.size() > 1 && told) {  // scalars of known categories, none unknown: nothing left to decide it
    throw SqlError("42725", fmt::format("function {}({}) is not unique", e.name, ufn_argument_types(args)));
  }
  if (fits.size() > 1) {
    throw SqlError("0A000", fmt::format("a call of {}({}), which {} of its overloads take (the server picks by its preferred types, or finds it not "
                                        "unique), is not in lockstep's SQL subset (docs/sql.md)",
                                        e.name, ufn_argument_types(args), fits.size()));
  }
  return fits.front().second;
}

// Calls nesting now on a stack of unknown room (not a fiber's: a setup's, a DO block's).
thread_local int ufn_depth = 0;

}  // namespace

void check_stack_depth(int depth) {
  constexpr int kMaxDepthWhereRoomUnknown = 64;
  const std::size_t room = stack_room();
  const bool known = room != std::numeric_limits<std::size_t>::max();
  if (known ? room < kStackRoomNeeded : depth >= kMaxDepthWhereRoomUnknown) throw SqlError("54001", "stack depth limit exceeded");
}

Value EvalContext::plpgsql_call(const CreateFunction& f, const std::vector<Value>&) {
  throw SqlError("0A000", fmt::format("a call of the LANGUAGE plpgsql function {}() here (lockstep runs those in a statement on the "
                                      "simulated server) is not in lockstep's SQL subset (docs/sql.md)",
                                      f.name));
}

Value EvalContext::function_body(const Expr&, EvalContext&) {
  throw SqlError("0A000", "a LANGUAGE sql function whose body has FROM, called here, is not in lockstep's SQL subset (docs/sql.md)");
}

Value call_user_function(const Expr& e, std::vector<Value> args, EvalContext& outer) {
  const std::vector<const CreateFunction*> found = current_sql_functions(e.name);
  const CreateFunction* f = found.size() > 1 ? ufn_pick(found, e, args) : found.empty() ? nullptr : found.front();
  if (f == nullptr && e.name.starts_with(kTempSchemaPrefix)) {  // the session's own schema has none of its name
    if (!current_has_temp_schema()) throw SqlError("3F000", "schema \"pg_temp\" does not exist");
    throw SqlError("42883", fmt::format("function {}({}) does not exist", e.name, ufn_argument_types(args, e.arg_names)));
  }
  if (const std::size_t dot = e.name.find('.'); f == nullptr && dot != std::string::npos && !current_has_schema(e.name.substr(0, dot))) {
    throw SqlError("3F000", fmt::format("schema \"{}\" does not exist", e.name.substr(0, dot)));
  }
  if (f == nullptr && (e.name.find('.') != std::string::npos || function_named_anywhere(e.name))) {  // another schema's: not on search_path
    throw SqlError("42883", fmt::format("function {}({}) does not exist", e.name, ufn_argument_types(args, e.arg_names)));
  }
  if (f == nullptr) {
    throw SqlError("0A000", fmt::format("the function {}() is not in lockstep's SQL subset (docs/sql.md), nor a LANGUAGE sql "
                                        "function created on the server",
                                        e.name));
  }
  if (f->returns_trigger) throw SqlError("0A000", "trigger functions can only be called as triggers");
  if (f->plpgsql && (f->pl == nullptr || !f->pl->refused.empty())) {
    throw SqlError("0A000", fmt::format("a call of the LANGUAGE plpgsql function {}() ({} in its body) is not in lockstep's SQL subset "
                                        "(docs/sql.md)",
                                        e.name, f->pl == nullptr ? "a construct" : f->pl->refused));
  }
  // Parameters left out take their DEFAULT (evaluated here, as the server's planner inserts it);
  // a named argument its parameter's place.
  const std::vector<Value> given = args;
  const std::size_t positional = args.size() - e.arg_names.size();
  bool fits = true;
  if (!e.arg_names.empty()) {
    std::vector<std::optional<Value>> slots(std::max(f->params.size(), positional));
    for (std::size_t i = 0; i < positional; ++i) slots[i] = args[i];
    for (std::size_t k = 0; k < e.arg_names.size(); ++k) {
      const auto p = std::find_if(f->params.begin(), f->params.end(), [&](const FunctionParam& q) { return q.name == e.arg_names[k]; });
      const auto at = static_cast<std::size_t>(p - f->params.begin());
      if (p == f->params.end() || slots[at]) {
        fits = false;
        break;
      }
      slots[at] = args[positional + k];
    }
    args.clear();
    for (std::size_t i = 0; fits && i < slots.size(); ++i) {
      if (!slots[i] && f->params[i].default_value == nullptr) fits = false;
      if (fits) args.push_back(slots[i] ? *slots[i] : evaluate(*f->params[i].default_value, outer));
    }
  }
  while (fits && args.size() < f->params.size() && f->params[args.size()].default_value != nullptr) {
    args.push_back(evaluate(*f->params[args.size()].default_value, outer));
  }
  fits = fits && args.size() == f->params.size();
  for (std::size_t i = 0; fits && i < args.size(); ++i) fits = ufn_implicit(args[i], f->params[i].type);
  if (!fits) throw SqlError("42883", fmt::format("function {}({}) does not exist", e.name, ufn_argument_types(given, e.arg_names)));
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ColumnDef& p = f->params[i].type;
    if (args[i].type() == p.type && p.type != Type::unknown) continue;
    if (const int row_type = ufn_row_type(p); row_type >= 0) {
      if (args[i].is_null()) args[i] = Value::null_record(row_type);
      continue;
    }
    if (p.type == Type::enum_ || args[i].is_null()) {
      args[i] = args[i].is_null() ? Value::null(p.type) : cast_to_column(args[i], p.type, p.user_type);
    } else if (p.type == Type::array) {
      args[i] = cast_to_array(args[i], declared_element(p.element, p.user_type));
    } else {
      args[i] = cast(args[i], p.type);
    }
  }
  if (f->strict && std::any_of(args.begin(), args.end(), [](const Value& v) { return v.is_null(); })) return Value::null(f->returns.type);
  check_stack_depth(ufn_depth);
  // Counted only where the stack's room is unknown: a fiber's count would be its neighbours' too.
  const bool counted = stack_room() == std::numeric_limits<std::size_t>::max();
  ufn_depth += counted ? 1 : 0;
  struct Leave {
    bool counted;
    ~Leave() { ufn_depth -= counted ? 1 : 0; }
  } leave{counted};
  ufn_Body body(*f, args, outer);
  const Value v = f->plpgsql ? outer.plpgsql_call(*f, args) : f->query_body ? outer.function_body(*f->body, body) : evaluate(*f->body, body);
  const ColumnDef& r = f->returns;
  if (r.type == Type::text && r.user_type == "void") return Value::text("");
  if (ufn_row_type(r) >= 0) return v;  // a record (plpgsql_call's: of the type it returns)
  if (v.is_null()) return Value::null(r.type);
  if (r.type == Type::enum_) return cast_to_column(v, r.type, r.user_type);
  if (r.type == Type::array) return cast_to_array(v, declared_element(r.element, r.user_type));
  if (r.type == Type::bit) return cast(v, Type::bit);
  return v.type() == r.type ? v : cast(v, r.type);
}

const CreateFunction* user_function_of_call(const Expr& call, EvalContext& ctx) {
  const std::vector<const CreateFunction*> found = current_sql_functions(call.name);
  if (found.size() <= 1) return found.empty() ? nullptr : found.front();
  if (std::ranges::all_of(found, [&](const CreateFunction* f) { return same_result_shape(*f, *found.front()); })) return found.front();
  // Its arguments evaluated here as well as by the call: only those whose value no second
  // evaluation changes (constants, parameters, columns, and operators, casts and arrays of them).
  const std::function<bool(const Expr&)> plain = [&](const Expr& a) {
    using K = Expr::Kind;
    const bool kind = a.kind == K::constant || a.kind == K::param || a.kind == K::column || a.kind == K::op || a.kind == K::cast || a.kind == K::array;
    return kind && std::ranges::all_of(a.args, plain);
  };
  if (!std::ranges::all_of(call.args, plain)) {
    throw SqlError("0A000", fmt::format("a call of {}(), which has overloads, with an argument other than a constant, parameter or column here is not "
                                        "in lockstep's SQL subset (docs/sql.md)", call.name));
  }
  std::vector<Value> args;
  for (const Expr& a : call.args) args.push_back(evaluate(a, ctx));
  return ufn_pick(found, call, args);
}

bool same_result_shape(const CreateFunction& a, const CreateFunction& b) {
  const auto same_type = [](const ColumnDef& x, const ColumnDef& y) { return x.type == y.type && x.user_type == y.user_type && x.element == y.element; };
  return same_type(a.returns, b.returns) && a.returns_set == b.returns_set &&
         std::ranges::equal(a.outs, b.outs, [&](const FunctionParam& x, const FunctionParam& y) { return x.name == y.name && same_type(x.type, y.type); });
}

bool same_parameter_types(const CreateFunction& a, const CreateFunction& b) {
  return std::equal(a.params.begin(), a.params.end(), b.params.begin(), b.params.end(), [](const FunctionParam& x, const FunctionParam& y) {
    return x.type.type == y.type.type && x.type.user_type == y.type.user_type && x.type.element == y.type.element;
  });
}

}  // namespace lockstep::sql
