#include "lockstep/model/sql/records.h"

#include <algorithm>

#include <fmt/format.h>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/model/sql/enums.h"
#include "lockstep/model/sql/jsonb.h"
#include "lockstep/model/sql/session_style.h"

namespace lockstep::sql {
namespace {

// record_out quotes a field that is empty or holds a quote, a backslash, a parenthesis, a
// comma or white space, doubling quotes and backslashes inside.
bool record_text_needs_quotes(std::string_view s) {
  if (s.empty()) return true;
  return std::any_of(s.begin(), s.end(), [](char ch) {
    return ch == '"' || ch == '\\' || ch == '(' || ch == ')' || ch == ',' || ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' ||
           ch == '\v' || ch == '\f';
  });
}

}  // namespace

std::string_view row_type_name(const CreateTable& def) {
  const std::string_view name = def.table;
  return name.substr(0, name.find(kAnonymousRowType));
}

Value column_input(const ColumnDef& c, std::string_view text) {
  if (c.type == Type::enum_) return enum_input(c.user_type, text);
  if (c.type == Type::array) return array_input(text, declared_element(c.element, c.user_type));
  return from_text(text, c.type);
}

int row_type_index(std::string_view name) {
  const int index = current_record_type_index(name);
  return current_record_type(index) == nullptr ? -1 : index;
}

Value make_record(int type, const std::vector<Value>& fields) {
  std::vector<std::optional<std::string>> texts;
  for (const Value& f : fields) {
    if (f.is_null()) {
      texts.emplace_back(std::nullopt);
    } else {
      texts.emplace_back(f.text_output());
    }
  }
  return Value::record(type, record_output(texts));
}

std::vector<Value> record_fields(const Value& record) {
  std::vector<Value> out;
  for (const ColumnDef& c : record_definition(record.record_type()).columns) out.push_back(record_field(record, c.name));
  return out;
}

Value cast_to_row_type(const Value& v, int type) {
  const CreateTable& def = record_definition(type);
  if (v.is_null()) return Value::null_record(type);
  if (v.type() == Type::record && v.record_type() == type) return v;
  if (v.type() != Type::unknown && v.type() != Type::text) {
    throw SqlError("42846", fmt::format("cannot cast type {} to {}",
                                        v.type() == Type::record ? row_type_name(record_definition(v.record_type())) : type_name(v.type()), row_type_name(def)));
  }
  const std::string text = v.as_text();
  const std::vector<std::optional<std::string>> texts = record_field_texts(text);
  if (texts.size() != def.columns.size()) throw SqlError("22P02", fmt::format("malformed record literal: \"{}\"", text));
  std::vector<Value> fields;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    fields.push_back(texts[i] ? column_input(def.columns[i], *texts[i]) : Value::null(def.columns[i].type));
  }
  return make_record(type, fields);
}

std::string record_output(const std::vector<std::optional<std::string>>& fields) {
  std::string out = "(";
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    if (!fields[i]) continue;
    const std::string& f = *fields[i];
    if (!record_text_needs_quotes(f)) {
      out += f;
      continue;
    }
    out += '"';
    for (const char ch : f) {
      if (ch == '"' || ch == '\\') out += ch;
      out += ch;
    }
    out += '"';
  }
  return out + ")";
}

std::vector<std::optional<std::string>> record_field_texts(std::string_view text) {
  const auto malformed = [&]() -> SqlError { return SqlError("22P02", fmt::format("malformed record literal: \"{}\"", text)); };
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') throw malformed();
  std::vector<std::optional<std::string>> out;
  std::size_t i = 1;
  const std::size_t end = text.size() - 1;
  while (true) {
    if (i == end || text[i] == ',') {  // nothing before the comma or the end: NULL
      out.emplace_back(std::nullopt);
    } else {
      std::string f;
      while (i < end && text[i] != ',') {
        if (text[i] == '"') {
          ++i;
          while (true) {
            if (i >= end) throw malformed();
            if (text[i] == '"' && i + 1 < end && text[i + 1] == '"') {
              f += '"';
              i += 2;
            } else if (text[i] == '"') {
              ++i;
              break;
            } else if (text[i] == '\\' && i + 1 < end) {
              f += text[i + 1];
              i += 2;
            } else {
              f += text[i++];
            }
          }
        } else {
          f += text[i++];
        }
      }
      out.emplace_back(std::move(f));
    }
    if (i == end) break;
    ++i;  // the comma
  }
  return out;
}

std::string record_display(const Value& record) {
  const CreateTable* def = current_record_type(record.record_type());
  if (def == nullptr) return record.payload();
  std::vector<std::optional<std::string>> fields = record_field_texts(record.payload());
  for (std::size_t i = 0; i < fields.size() && i < def->columns.size(); ++i) {
    if (fields[i]) fields[i] = display_text(column_input(def->columns[i], *fields[i]));
  }
  return record_output(fields);
}

const CreateTable& record_definition(int type) {
  const CreateTable* def = current_record_type(type);
  if (def == nullptr) throw SqlError("0A000", "a row value of a type the server does not have is not in lockstep's SQL subset");
  return *def;
}

Value record_field(const Value& record, std::string_view name) {
  if (record.type() != Type::record) {
    throw SqlError("42809", fmt::format("column notation .{} applied to type {}, which is not a composite type", name, type_name(record.type())));
  }
  const CreateTable& def = record_definition(record.record_type());
  const auto it = std::find_if(def.columns.begin(), def.columns.end(), [&](const ColumnDef& c) { return c.name == name; });
  if (it == def.columns.end()) throw SqlError("42703", fmt::format("column \"{}\" not found in data type {}", name, row_type_name(def)));
  if (record.is_null()) return Value::null(it->type);
  const std::vector<std::optional<std::string>> texts = record_field_texts(record.payload());
  const auto i = static_cast<std::size_t>(it - def.columns.begin());
  if (i >= texts.size()) throw SqlError("22P02", fmt::format("malformed record literal: \"{}\"", record.payload()));
  return texts[i] ? column_input(*it, *texts[i]) : Value::null(it->type);
}

Value record_to_jsonb(const Value& record) {
  if (record.is_null()) return Value::null(Type::jsonb);
  const CreateTable& def = record_definition(record.record_type());
  std::vector<Value> pairs;
  for (const ColumnDef& c : def.columns) {
    pairs.push_back(Value::text(c.name));
    pairs.push_back(record_field(record, c.name));
  }
  return jsonb_build_object(pairs);
}

Value row_to_json(const Value& record) {
  if (record.type() != Type::record) throw SqlError("42883", fmt::format("function row_to_json({}) does not exist", type_name(record.type())));
  if (record.is_null()) return Value::null(Type::json);
  const CreateTable& def = record_definition(record.record_type());
  std::string out = "{";
  for (const ColumnDef& c : def.columns) {
    const Value v = record_field(record, c.name);
    if (v.type() == Type::array || v.type() == Type::record) {
      throw SqlError("0A000", fmt::format("row_to_json of a row with a column of type {} is not in lockstep's SQL subset (to_jsonb's is)", type_name(v.type())));
    }
    const std::string value = v.is_null() ? "null" : v.type() == Type::json ? v.payload() : to_jsonb(v).jsonb_text();
    out += fmt::format("{}{}:{}", out.size() > 1 ? "," : "", to_jsonb(Value::text(c.name)).jsonb_text(), value);
  }
  return Value::json(out + "}");
}

}  // namespace lockstep::sql
