#include "lockstep/model/sql/enums.h"

#include <algorithm>

#include <fmt/format.h>

#include "lockstep/model/sql/session_style.h"

namespace lockstep::sql {
namespace {

const EnumType* enum_at(int index) {
  const std::vector<EnumType>* current_enums = current_enum_types();
  if (current_enums == nullptr || index < 0 || static_cast<std::size_t>(index) >= current_enums->size()) return nullptr;
  return &(*current_enums)[static_cast<std::size_t>(index)];
}

}  // namespace

int enum_index(std::string_view name) {
  const std::vector<EnumType>* current_enums = current_enum_types();
  if (current_enums == nullptr) return -1;
  for (std::size_t i = 0; i < current_enums->size(); ++i) {
    const EnumType& t = (*current_enums)[i];
    if (t.name != name) continue;
    if (t.composite) {
      throw SqlError("0A000", fmt::format("a column or value of the composite type {} is not in lockstep's SQL subset (docs/sql.md)", name));
    }
    return static_cast<int>(i);
  }
  return -1;
}

bool has_declared_type(std::string_view name) {
  const std::vector<EnumType>* current_enums = current_enum_types();
  if (current_enums == nullptr) return false;
  return std::any_of(current_enums->begin(), current_enums->end(), [&](const EnumType& t) { return t.name == name; });
}

Value enum_input(int index, std::string_view label) {
  const EnumType* t = enum_at(index);
  if (t == nullptr) throw SqlError("XX000", "internal: an enum value of a type the server does not have");
  const auto it = std::find(t->labels.begin(), t->labels.end(), label);
  if (it == t->labels.end()) throw SqlError("22P02", fmt::format("invalid input value for enum {}: \"{}\"", t->name, label));
  return Value::enumeration(index, static_cast<int>(it - t->labels.begin()), std::string(label));
}

Value enum_input(std::string_view type, std::string_view label) {
  const int index = enum_index(type);
  if (index < 0) throw SqlError("42704", fmt::format("type \"{}\" does not exist", type));
  return enum_input(index, label);
}

std::string enum_type_name(const Value& v) {
  const EnumType* t = enum_at(v.enum_type());
  return t == nullptr ? std::string("enum") : t->name;
}

Value cast_to_column(const Value& v, Type t, std::string_view user_type) {
  if (t != Type::enum_) return cast(v, t);
  if (v.is_null()) return Value::null(Type::enum_);
  const int index = enum_index(user_type);
  if (index < 0) throw SqlError("42704", fmt::format("type \"{}\" does not exist", user_type));
  if (v.type() == Type::enum_ && v.enum_type() == index) return v;
  if (v.type() == Type::unknown) return enum_input(index, v.as_text());
  throw SqlError("42846", fmt::format("cannot cast type {} to {}", v.type() == Type::enum_ ? enum_type_name(v) : std::string(type_name(v.type())),
                                      user_type));
}

}  // namespace lockstep::sql
