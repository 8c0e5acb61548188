// sim/pg/sql_aggregates.cc: aggregate functions over a group's rows on the simulated server
// (sim/pg/sql_run.h): count, sum, avg, min, max, bool_and / bool_or, array_agg, string_agg,
// json_agg, jsonb_agg, jsonb_object_agg, json_object_agg; DISTINCT, FILTER and ORDER BY inside them.
#include <algorithm>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/model/sql/jsonb.h"
#include "lockstep/model/sql/numeric.h"
#include "lockstep/sim/pg/sql_run.h"

namespace lockstep::sim::pg {

Value SqlRun::aggregate(const Expr& e) {
  if (group_ == nullptr) throw SqlError("42803", fmt::format("aggregate function calls cannot be nested or used here: {}()", e.name));
  const Saved saved = save();
  std::optional<Value> acc;
  std::int64_t count = 0;
  std::vector<Value> values;  // array_agg's and string_agg's inputs; DISTINCT's seen values
  std::optional<Value> delimiter;
  std::vector<Value> pairs;  // jsonb_object_agg's keys and values
  std::vector<const Row*> ordered;  // ORDER BY inside the aggregate: its input in that order
  if (e.select != nullptr && !e.select->order_by.empty()) {
    std::vector<std::pair<std::vector<Value>, const Row*>> keys;
    for (const Row* r : *group_) {
      row_ = r;
      std::vector<Value>& key = keys.emplace_back(std::vector<Value>{}, r).first;
      for (const sql::OrderItem& o : e.select->order_by) key.push_back(sql::evaluate(o.expr, *this));
    }
    std::stable_sort(keys.begin(), keys.end(), [&](const auto& a, const auto& b) { return order_less(a.first, b.first, *e.select); });
    for (const auto& [key, r] : keys) ordered.push_back(r);
  }
  for (const Row* r : e.select != nullptr && !e.select->order_by.empty() ? ordered : *group_) {
    row_ = r;
    if (e.filtered && !sql::is_true(sql::evaluate(e.args.back(), *this), "FILTER")) continue;
    if (e.star) {
      ++count;
      continue;
    }
    const Value v = sql::evaluate(e.args.at(0), *this);
    if (e.name == "string_agg" && !delimiter) delimiter = sql::evaluate(e.args.at(1), *this);
    if (e.name == "jsonb_object_agg" || e.name == "json_object_agg") {  // each row's key and value, in the order read
      if (e.distinct) throw SqlError("0A000", fmt::format("{}(DISTINCT ...) is not in lockstep's SQL subset", e.name));
      if (v.is_null()) throw SqlError("22004", "field name must not be null");
      pairs.push_back(v);
      pairs.push_back(sql::evaluate(e.args.at(1), *this));
      continue;
    }
    const bool keeps_nulls = e.name == "array_agg" || e.name == "json_agg" || e.name == "jsonb_agg";
    if (v.is_null() && !keeps_nulls) continue;
    if (e.distinct) {
      const bool seen = std::any_of(values.begin(), values.end(), [&](const Value& s) {
        return s.is_null() ? v.is_null() : !v.is_null() && sql::compare(s, v, "=") == 0;
      });
      if (seen) continue;
      if (!keeps_nulls && e.name != "string_agg") values.push_back(v);
    }
    ++count;
    if (e.name == "count") continue;
    if (keeps_nulls || e.name == "string_agg" || e.name == "sum" || e.name == "avg") {
      if (!e.distinct || keeps_nulls || e.name == "string_agg") values.push_back(v);
      continue;
    }
    if (e.name == "bool_and" || e.name == "bool_or" || e.name == "every") {
      const Value b = v.type() == Type::unknown ? sql::cast(v, Type::boolean) : v;
      if (b.type() != Type::boolean) throw SqlError("42883", fmt::format("function {}({}) does not exist", e.name, sql::type_name(v.type())));
      const bool any = e.name == "bool_or";
      acc = Value::boolean(acc ? (any ? acc->as_bool() || b.as_bool() : acc->as_bool() && b.as_bool()) : b.as_bool());
      continue;
    }
    if (v.type() == Type::jsonb) throw SqlError("42883", fmt::format("function {}(jsonb) does not exist", e.name));  // jsonb has no min or max
    if (!acc) {
      acc = v;
    } else {
      const auto c = sql::compare(v, *acc, "<");
      if ((e.name == "min" && c < 0) || (e.name == "max" && c > 0)) acc = v;
    }
  }
  restore(saved);
  if (e.distinct && (e.name == "array_agg" || e.name == "json_agg" || e.name == "jsonb_agg" || e.name == "string_agg")) {
    // A DISTINCT aggregate sorts its input first (NULLs last), as the server does.
    std::stable_sort(values.begin(), values.end(), [](const Value& x, const Value& y) {
      if (x.is_null() || y.is_null()) return !x.is_null() && y.is_null();
      return sql::compare(x, y, "<") < 0;
    });
    values.erase(std::unique(values.begin(), values.end(), [](const Value& x, const Value& y) {
      return x.is_null() ? y.is_null() : !y.is_null() && sql::compare(x, y, "=") == 0;
    }), values.end());
  }
  if (e.name == "count") return Value::integer(count, Type::int8);
  if (e.name == "sum") return sql::numeric_sum(values);  // model/sql/numeric.h
  if (e.name == "avg") return sql::numeric_avg(values);
  if (e.name == "json_agg" || e.name == "jsonb_agg") return sql::json_aggregate(values, e.name == "jsonb_agg");
  if (e.name == "jsonb_object_agg") return pairs.empty() ? Value::null(Type::jsonb) : sql::jsonb_build_object(pairs);  // the last of a repeated key
  if (e.name == "json_object_agg") {  // json_object_agg_transfn's text: { "k" : v, ... }, every key kept
    if (pairs.empty()) return Value::null(Type::json);
    std::string out = "{ ";
    for (std::size_t i = 0; i < pairs.size(); i += 2) {
      const Value value = pairs[i + 1].is_null() ? Value::null(Type::json) : sql::to_json(pairs[i + 1]);
      out += fmt::format("{}{} : {}", i == 0 ? "" : ", ", sql::to_json(Value::text(pairs[i].text_output())).text_output(),
                         value.is_null() ? std::string("null") : value.text_output());
    }
    return Value::json(out + " }");
  }
  if (e.name == "array_agg") {
    if (values.empty()) return Value::null(Type::array);
    sql::ElementType element;
    for (const Value& v : values) {
      if (!v.is_null()) element = {v.type() == Type::unknown ? Type::text : v.type(), v.type() == Type::enum_ ? v.enum_type() : -1};
    }
    if (element.type == Type::array) throw SqlError("0A000", "array_agg of arrays (a multidimensional array) is not in lockstep's SQL subset");
    std::vector<Value> typed;
    for (const Value& v : values) typed.push_back(v.type() == Type::unknown && !v.is_null() ? sql::cast(v, Type::text) : v);
    return sql::make_array(element.type == Type::unknown ? sql::ElementType{Type::text, -1} : element, typed);
  }
  if (e.name == "string_agg") {
    if (values.empty()) return Value::null(Type::text);
    std::string out;
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i].type() != Type::text && values[i].type() != Type::unknown) {
        throw SqlError("42883", fmt::format("function string_agg({}, unknown) does not exist", sql::type_name(values[i].type())));
      }
      if (i > 0 && delimiter && !delimiter->is_null()) out += sql::cast(*delimiter, Type::text).as_text();
      out += values[i].as_text();
    }
    return Value::text(out);
  }
  return acc ? *acc : Value::null();
}

}  // namespace lockstep::sim::pg
