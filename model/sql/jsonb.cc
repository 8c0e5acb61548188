#include "lockstep/model/sql/jsonb.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/model/sql/datetime.h"
#include "lockstep/model/sql/jsonb_tree.h"
#include "lockstep/model/sql/records.h"
#include "lockstep/model/sql/session_style.h"

namespace lockstep::sql {
namespace {

using jsonb_tree::is_scalar;
using jsonb_tree::Jv;
using jsonb_tree::parse;

bool key_less(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return std::memcmp(a.data(), b.data(), a.size()) < 0;
}

// An object's members as jsonb keeps them: the last of duplicate keys wins, then shorter keys
// first, then by bytes.
void canonicalize(Jv& j) {
  std::vector<std::pair<std::string, Jv>> kept;
  for (auto it = j.members.rbegin(); it != j.members.rend(); ++it) {
    if (std::none_of(kept.begin(), kept.end(), [&](const auto& m) { return m.first == it->first; })) kept.push_back(std::move(*it));
  }
  std::stable_sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) { return key_less(a.first, b.first); });
  j.members = std::move(kept);
}

// A number's text as numeric_in and numeric_out print it: the input's scale kept.
std::string numeric_text(const std::string& raw) {
  std::size_t i = 0;
  const bool negative = i < raw.size() && raw[i] == '-';
  if (negative) ++i;
  std::string int_digits, frac_digits;
  while (i < raw.size() && std::isdigit(static_cast<unsigned char>(raw[i])) != 0) int_digits += raw[i++];
  if (i < raw.size() && raw[i] == '.') {
    ++i;
    while (i < raw.size() && std::isdigit(static_cast<unsigned char>(raw[i])) != 0) frac_digits += raw[i++];
  }
  long exponent = 0;
  if (i < raw.size() && (raw[i] == 'e' || raw[i] == 'E')) exponent = std::strtol(raw.c_str() + i + 1, nullptr, 10);
  const std::string digits = int_digits + frac_digits;
  const long point = static_cast<long>(int_digits.size()) + exponent;  // the decimal point's position in digits
  const long scale = std::max(0L, static_cast<long>(frac_digits.size()) - exponent);
  // numeric's bounds: 131072 digits before the point, 16383 after (checked before any is written).
  const std::size_t first = digits.find_first_not_of('0');
  if (scale > 16383 || (first != std::string::npos && point - static_cast<long>(first) > 131072)) {
    throw SqlError("22003", "value overflows numeric format");
  }
  std::string whole, fraction;
  for (long k = 0; k < point; ++k) whole += k < static_cast<long>(digits.size()) ? digits[static_cast<std::size_t>(k)] : '0';
  for (long k = point; static_cast<long>(fraction.size()) < scale; ++k) {
    fraction += k >= 0 && k < static_cast<long>(digits.size()) ? digits[static_cast<std::size_t>(k)] : '0';
  }
  const std::size_t nonzero = whole.find_first_not_of('0');
  whole = nonzero == std::string::npos ? "0" : whole.substr(nonzero);
  const bool zero = whole == "0" && fraction.find_first_not_of('0') == std::string::npos;
  return (negative && !zero ? "-" : "") + whole + (fraction.empty() ? "" : "." + fraction);
}

// A number's value for comparison: its text without trailing fractional zeros.
std::string number_key(const std::string& s) {
  if (s.find('.') == std::string::npos) return s;
  std::string out = s;
  while (out.back() == '0') out.pop_back();
  if (out.back() == '.') out.pop_back();
  return out == "-0" ? "0" : out;
}

class Builder : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit Builder(std::string_view text) : text_(text) {}
  Jv result;

  bool null() override { return put(Jv{}); }
  bool boolean(bool v) override {
    Jv j;
    j.k = Jv::K::boolean;
    j.b = v;
    return put(std::move(j));
  }
  bool number_integer(number_integer_t v) override { return number(std::to_string(v)); }
  bool number_unsigned(number_unsigned_t v) override { return number(std::to_string(v)); }
  bool number_float(number_float_t, const string_t& raw) override { return number(numeric_text(raw)); }
  bool string(string_t& v) override {
    if (v.find('\0') != std::string::npos) throw SqlError("22P05", "unsupported Unicode escape sequence");
    Jv j;
    j.k = Jv::K::string;
    j.s = v;
    return put(std::move(j));
  }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override {
    Jv j;
    j.k = Jv::K::object;
    stack_.push_back(std::move(j));
    keys_.emplace_back();
    return true;
  }
  bool key(string_t& k) override {
    if (k.find('\0') != std::string::npos) throw SqlError("22P05", "unsupported Unicode escape sequence");
    keys_.back() = k;
    return true;
  }
  bool end_object() override {
    Jv j = std::move(stack_.back());
    stack_.pop_back();
    keys_.pop_back();
    canonicalize(j);
    return put(std::move(j));
  }
  bool start_array(std::size_t) override {
    Jv j;
    j.k = Jv::K::array;
    stack_.push_back(std::move(j));
    keys_.emplace_back();
    return true;
  }
  bool end_array() override {
    Jv j = std::move(stack_.back());
    stack_.pop_back();
    keys_.pop_back();
    return put(std::move(j));
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    throw SqlError("22P02", "invalid input syntax for type json");
  }

 private:
  bool number(std::string text) {
    Jv j;
    j.k = Jv::K::number;
    j.s = std::move(text);
    return put(std::move(j));
  }
  bool put(Jv j) {
    if (stack_.empty()) {
      result = std::move(j);
    } else if (stack_.back().k == Jv::K::array) {
      stack_.back().items.push_back(std::move(j));
    } else {
      stack_.back().members.emplace_back(keys_.back(), std::move(j));
    }
    return true;
  }
  std::string_view text_;
  std::vector<Jv> stack_;
  std::vector<std::string> keys_;
};

}  // namespace

Jv jsonb_tree::parse(std::string_view text) {
  Builder b(text);
  if (!nlohmann::json::sax_parse(text.begin(), text.end(), &b)) throw SqlError("22P02", "invalid input syntax for type json");
  return std::move(b.result);
}

namespace {

void escape(const std::string& s, std::string& out) {
  out += '"';
  for (const char c : s) {
    switch (c) {
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default:
        if (static_cast<unsigned char>(c) < ' ') {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void write(const Jv& j, std::string& out) {
  switch (j.k) {
    case Jv::K::null: out += "null"; return;
    case Jv::K::boolean: out += j.b ? "true" : "false"; return;
    case Jv::K::number: out += j.s; return;
    case Jv::K::string: escape(j.s, out); return;
    case Jv::K::array:
      out += '[';
      for (std::size_t i = 0; i < j.items.size(); ++i) {
        if (i > 0) out += ", ";
        write(j.items[i], out);
      }
      out += ']';
      return;
    case Jv::K::object:
      out += '{';
      for (std::size_t i = 0; i < j.members.size(); ++i) {
        if (i > 0) out += ", ";
        escape(j.members[i].first, out);
        out += ": ";
        write(j.members[i].second, out);
      }
      out += '}';
      return;
  }
}

std::string text_of(const Jv& j) {
  std::string out;
  write(j, out);
  return out;
}

bool equal(const Jv& a, const Jv& b) {
  if (a.k != b.k) return false;
  switch (a.k) {
    case Jv::K::null: return true;
    case Jv::K::boolean: return a.b == b.b;
    case Jv::K::number: return number_key(a.s) == number_key(b.s);
    case Jv::K::string: return a.s == b.s;
    case Jv::K::array:
      return a.items.size() == b.items.size() && std::equal(a.items.begin(), a.items.end(), b.items.begin(), equal);
    case Jv::K::object:
      return a.members.size() == b.members.size() &&
             std::equal(a.members.begin(), a.members.end(), b.members.begin(),
                        [](const auto& x, const auto& y) { return x.first == y.first && equal(x.second, y.second); });
  }
  return false;
}

const Jv* member(const Jv& j, const std::string& key) {
  for (const auto& [k, v] : j.members) {
    if (k == key) return &v;
  }
  return nullptr;
}

// JsonbDeepContains; `top`: a scalar b is contained in an array a holding it (a raw scalar).
bool contains(const Jv& a, const Jv& b, bool top) {
  if (a.k == Jv::K::object && b.k == Jv::K::object) {
    for (const auto& [k, vb] : b.members) {
      const Jv* va = member(a, k);
      if (va == nullptr) return false;
      if (is_scalar(vb) ? !equal(*va, vb) : va->k != vb.k || !contains(*va, vb, false)) return false;
    }
    return true;
  }
  if (a.k == Jv::K::array && b.k == Jv::K::array) {
    for (const Jv& eb : b.items) {
      const bool found = std::any_of(a.items.begin(), a.items.end(), [&](const Jv& ea) {
        if (is_scalar(eb)) return equal(ea, eb);
        return ea.k == eb.k && contains(ea, eb, false);
      });
      if (!found) return false;
    }
    return true;
  }
  if (top && a.k == Jv::K::array && is_scalar(b)) {
    return std::any_of(a.items.begin(), a.items.end(), [&](const Jv& ea) { return equal(ea, b); });
  }
  if (is_scalar(a) && is_scalar(b)) return equal(a, b);
  return false;
}

Jv as_array(const Jv& j) {
  if (j.k == Jv::K::array) return j;
  Jv out;
  out.k = Jv::K::array;
  out.items.push_back(j);
  return out;
}

Jv concatenated(const Jv& a, const Jv& b) {
  if (a.k == Jv::K::object && b.k == Jv::K::object) {
    Jv out = a;
    for (const auto& [k, v] : b.members) {
      const auto it = std::find_if(out.members.begin(), out.members.end(), [&](const auto& m) { return m.first == k; });
      if (it != out.members.end()) {
        it->second = v;
      } else {
        out.members.emplace_back(k, v);
      }
    }
    std::stable_sort(out.members.begin(), out.members.end(), [](const auto& x, const auto& y) { return key_less(x.first, y.first); });
    return out;
  }
  Jv out = as_array(a);
  const Jv tail = as_array(b);
  out.items.insert(out.items.end(), tail.items.begin(), tail.items.end());
  return out;
}

Value jsonb_of(const Jv& j) { return Value::jsonb(text_of(j)); }

Jv jsonb_arg(const Value& v, std::string_view op, const Value& a, const Value& b) {
  if (v.type() == Type::jsonb || v.type() == Type::unknown) return parse(v.type() == Type::jsonb ? v.jsonb_text() : v.as_text());
  throw SqlError("42883", fmt::format("operator does not exist: {} {} {}", type_name(a.type()), op, type_name(b.type())));
}

std::string text_key(const Value& v) { return v.type() == Type::unknown || v.type() == Type::text ? v.as_text() : v.text_output(); }


// A timestamp as JSON writes it (JsonEncodeDateTime): ISO 8601 with a T, a timestamptz in the
// session's zone with its offset as +HH:MM.
std::string json_timestamp(const Value& v) {
  if (is_infinite_timestamp(v.micros())) return v.micros() > 0 ? "infinity" : "-infinity";
  const bool zoned = v.type() == Type::timestamptz;
  const std::int64_t local = zoned ? local_of_utc(v.micros()) : v.micros();
  std::string text = timestamp_text(local, false);
  if (const auto space = text.find(' '); space != std::string::npos) text[space] = 'T';
  if (zoned) {
    const std::int64_t minutes = (local - v.micros()) / 60'000'000;
    const std::int64_t a = minutes < 0 ? -minutes : minutes;
    text += fmt::format("{}{:02}:{:02}", minutes < 0 ? '-' : '+', a / 60, a % 60);
  }
  return text;
}

// to_jsonb's reading of a SQL value: numbers, booleans and NULL as JSON's, arrays as arrays,
// json and jsonb as themselves, timestamps in ISO 8601, anything else as its text.
Jv jv_of_value(const Value& v) {
  Jv j;
  if (v.is_null()) return j;
  switch (v.type()) {
    case Type::int2:
    case Type::int4:
    case Type::int8:
    case Type::numeric:
      j.k = Jv::K::number;
      j.s = v.text_output();
      return j;
    case Type::float8: {
      const std::string text = v.text_output();
      const bool finite = text != "NaN" && text != "Infinity" && text != "-Infinity";
      j.k = finite ? Jv::K::number : Jv::K::string;
      j.s = finite ? numeric_text(text) : text;
      return j;
    }
    case Type::boolean:
      j.k = Jv::K::boolean;
      j.b = v.as_bool();
      return j;
    case Type::jsonb: return parse(v.jsonb_text());
    case Type::json: return parse(v.payload());
    case Type::record: return parse(record_to_jsonb(v).jsonb_text());  // an object of its fields
    case Type::array:
      j.k = Jv::K::array;
      for (const Value& e : array_elements(v)) j.items.push_back(jv_of_value(e));
      return j;
    case Type::timestamptz:
    case Type::timestamp:
      j.k = Jv::K::string;
      j.s = json_timestamp(v);
      return j;
    case Type::time:
    case Type::bpchar:  // padded, as stored
    case Type::date:  // ISO whatever the DateStyle
      j.k = Jv::K::string;
      j.s = v.text_output();
      return j;
    case Type::text:
    case Type::unknown:
      j.k = Jv::K::string;
      j.s = v.as_text();
      return j;
    default:  // the type's output, in the session's styles (an interval's IntervalStyle)
      j.k = Jv::K::string;
      j.s = display_text(v);
      return j;
  }
}

// The text[] path of jsonb_set and #>, #>>.
std::vector<std::string> json_path(const Value& path) {
  const Value p = path.type() == Type::array ? path : cast_to_array(path, ElementType{Type::text, -1});
  std::vector<std::string> out;
  for (const Value& e : array_elements(p)) {
    if (e.is_null()) throw SqlError("22004", "path element at position " + std::to_string(out.size() + 1) + " is null");
    out.push_back(e.text_output());
  }
  return out;
}

// An array index as the server reads a path's element (an integer, maybe negative), or nullopt.
std::optional<std::int64_t> json_index(const std::string& key, std::size_t size) {
  std::int64_t i = 0;
  const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), i);
  if (ec != std::errc() || end != key.data() + key.size()) return std::nullopt;
  if (i < 0) i += static_cast<std::int64_t>(size);
  return i;
}

const Jv* json_at_path(const Jv& j, const std::vector<std::string>& path) {
  const Jv* at = &j;
  for (const std::string& key : path) {
    if (at->k == Jv::K::object) {
      at = member(*at, key);
    } else if (at->k == Jv::K::array) {
      const auto i = json_index(key, at->items.size());
      at = i && *i >= 0 && *i < static_cast<std::int64_t>(at->items.size()) ? &at->items[static_cast<std::size_t>(*i)] : nullptr;
    } else {
      at = nullptr;
    }
    if (at == nullptr) return nullptr;
  }
  return at;
}

// jsonb_set's walk (setPath): replace or, with create, add the path's last step.
void json_set(Jv& j, const std::vector<std::string>& path, std::size_t level, const Jv& value, bool create) {
  const std::string& key = path[level];
  const bool last = level + 1 == path.size();
  if (j.k == Jv::K::object) {
    for (auto& [k, v] : j.members) {
      if (k != key) continue;
      if (last) {
        v = value;
      } else {
        json_set(v, path, level + 1, value, create);
      }
      return;
    }
    if (last && create) {
      j.members.emplace_back(key, value);
      canonicalize(j);
    }
    return;
  }
  if (j.k == Jv::K::array) {
    const auto n = static_cast<std::int64_t>(j.items.size());
    std::int64_t i = 0;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), i);
    if (ec != std::errc() || end != key.data() + key.size()) {
      throw SqlError("22P02", fmt::format("path element at position {} is not an integer: \"{}\"", level + 1, key));
    }
    if (i < 0) i += n;
    if (i >= 0 && i < n) {
      if (last) {
        j.items[static_cast<std::size_t>(i)] = value;
      } else {
        json_set(j.items[static_cast<std::size_t>(i)], path, level + 1, value, create);
      }
    } else if (last && create) {
      if (i < 0) {
        j.items.insert(j.items.begin(), value);
      } else {
        j.items.push_back(value);
      }
    }
    return;
  }
  if (level == 0) throw SqlError("22023", "cannot set path in scalar");
}

}  // namespace

std::string jsonb_canonical(std::string_view text) { return text_of(parse(text)); }

std::string jsonb_string_value(std::string_view quoted) { return parse(quoted).s; }

bool jsonb_equal(const std::string& a, const std::string& b) { return a == b || equal(parse(a), parse(b)); }

bool is_jsonb_operator(std::string_view op) { return op == "->" || op == "->>" || op == "@>" || op == "<@" || op == "?"; }

Value jsonb_keys_operator(std::string_view op, const Value& a, const Value& b) {
  if (a.is_null() || b.is_null()) return Value::null(Type::boolean);
  const bool typed = b.type() == Type::array && element_type(b).type == Type::text;
  if ((a.type() != Type::jsonb && a.type() != Type::unknown) || (!typed && b.type() != Type::unknown)) {
    throw SqlError("42883", fmt::format("operator does not exist: {} {} {}", type_name(a.type() == Type::unknown ? Type::jsonb : a.type()), op,
                                        b.type() == Type::array ? array_type_name(b) : type_name(b.type())));
  }
  const Value keys = typed ? b : array_input(b.as_text(), ElementType{Type::text, -1});
  const bool all = op == "?&";
  for (const Value& key : array_elements(keys)) {
    if (key.is_null()) continue;
    if (jsonb_operator("?", a, key).as_bool() != all) return Value::boolean(!all);
  }
  return Value::boolean(all);
}

Value jsonb_operator(std::string_view op, const Value& a, const Value& b) {
  if (op == "||") return jsonb_of(concatenated(jsonb_arg(a, op, a, b), jsonb_arg(b, op, a, b)));
  if (op == "@>") return Value::boolean(contains(jsonb_arg(a, op, a, b), jsonb_arg(b, op, a, b), true));
  if (op == "<@") return Value::boolean(contains(jsonb_arg(b, op, a, b), jsonb_arg(a, op, a, b), true));
  if (!is_jsonb_operator(op) && op != "-") {  // jsonb + 1, jsonb * 2, ...: no such operator
    auto name = [](const Value& v) { return type_name(v.type() == Type::unknown ? Type::jsonb : v.type()); };
    throw SqlError("42883", fmt::format("operator does not exist: {} {} {}", name(a), op, name(b)));
  }
  const Jv j = jsonb_arg(a, op, a, b);
  const bool index = is_integer(b.type());
  if (!index && b.type() != Type::text && b.type() != Type::unknown) {
    throw SqlError("42883", fmt::format("operator does not exist: jsonb {} {}", op, type_name(b.type())));
  }
  if (op == "?") {
    if (index) throw SqlError("42883", fmt::format("operator does not exist: jsonb ? {}", type_name(b.type())));
    const std::string key = text_key(b);
    if (j.k == Jv::K::object) return Value::boolean(member(j, key) != nullptr);
    const Jv arr = as_array(j);
    return Value::boolean(std::any_of(arr.items.begin(), arr.items.end(), [&](const Jv& e) { return e.k == Jv::K::string && e.s == key; }));
  }
  if (op == "-") {
    if (is_scalar(j)) throw SqlError("22023", "cannot delete from scalar");
    Jv out = j;
    if (index) {
      if (j.k == Jv::K::object) throw SqlError("22023", "cannot delete from object using integer index");
      auto n = static_cast<std::int64_t>(out.items.size());
      std::int64_t i = b.as_integer();
      if (i < 0) i += n;
      if (i >= 0 && i < n) out.items.erase(out.items.begin() + i);
      return jsonb_of(out);
    }
    const std::string key = text_key(b);
    if (out.k == Jv::K::object) {
      std::erase_if(out.members, [&](const auto& m) { return m.first == key; });
    } else {
      std::erase_if(out.items, [&](const Jv& e) { return e.k == Jv::K::string && e.s == key; });
    }
    return jsonb_of(out);
  }
  // -> and ->>
  const Jv* found = nullptr;
  if (index && is_scalar(j) && (b.as_integer() == 0 || b.as_integer() == -1)) {  // a raw scalar is stored as a one-element array
    found = &j;
  } else if (index && j.k == Jv::K::array) {
    const auto n = static_cast<std::int64_t>(j.items.size());
    std::int64_t i = b.as_integer();
    if (i < 0) i += n;
    if (i >= 0 && i < n) found = &j.items[static_cast<std::size_t>(i)];
  } else if (!index && j.k == Jv::K::object) {
    found = member(j, text_key(b));
  }
  if (op == "->") return found == nullptr ? Value::null(Type::jsonb) : jsonb_of(*found);
  if (found == nullptr || found->k == Jv::K::null) return Value::null(Type::text);
  return Value::text(found->k == Jv::K::string ? found->s : text_of(*found));
}

Value jsonb_build_object(const std::vector<Value>& args) {
  if (args.size() % 2 != 0) throw SqlError("22023", "argument list must have even number of elements");
  Jv out;
  out.k = Jv::K::object;
  for (std::size_t i = 0; i < args.size(); i += 2) {
    const Value& k = args[i];
    if (k.is_null()) throw SqlError("22023", fmt::format("argument {}: key must not be null", i + 1));
    if (k.type() != Type::text && k.type() != Type::unknown && !is_integer(k.type())) {
      throw SqlError("0A000", fmt::format("a jsonb_build_object key of type {} is not in lockstep's SQL subset", type_name(k.type())));
    }
    out.members.emplace_back(text_key(k), jv_of_value(args[i + 1]));
  }
  canonicalize(out);
  return jsonb_of(out);
}

Value json_build_object(const std::vector<Value>& args) {
  if (args.size() % 2 != 0) throw SqlError("22023", "argument list must have even number of elements");
  std::string out = "{";
  for (std::size_t i = 0; i < args.size(); i += 2) {
    const Value& k = args[i];
    const Value& v = args[i + 1];
    if (k.is_null()) throw SqlError("22023", fmt::format("argument {}: key must not be null", i + 1));
    if (k.type() != Type::text && k.type() != Type::unknown && !is_integer(k.type())) {
      throw SqlError("0A000", fmt::format("a json_build_object key of type {} is not in lockstep's SQL subset", type_name(k.type())));
    }
    if (v.type() == Type::array || v.type() == Type::enum_ || v.type() == Type::bytea || v.type() == Type::bit || v.type() == Type::record) {
      throw SqlError("0A000", fmt::format("a json_build_object value of type {} is not in lockstep's SQL subset (jsonb_build_object's are)",
                                          type_name(v.type())));
    }
    Jv key;
    key.k = Jv::K::string;
    key.s = text_key(k);
    // json keeps its values' text as the json type prints them: " : " between key and value.
    const std::string value = v.is_null() ? "null" : v.type() == Type::json ? v.payload() : text_of(jv_of_value(v));
    out += fmt::format("{}{} : {}", i == 0 ? "" : ", ", text_of(key), value);
  }
  return Value::json(out + "}");
}

Value to_jsonb(const Value& v) { return v.is_null() ? Value::null(Type::jsonb) : jsonb_of(jv_of_value(v)); }

Value jsonb_build_array(const std::vector<Value>& args) {
  Jv out;
  out.k = Jv::K::array;
  for (const Value& v : args) out.items.push_back(jv_of_value(v));
  return jsonb_of(out);
}

Value jsonb_set(const std::vector<Value>& args) {
  for (const Value& a : args) {
    if (a.is_null()) return Value::null(Type::jsonb);
  }
  Jv target = parse(cast(args.at(0), Type::jsonb).jsonb_text());
  const std::vector<std::string> path = json_path(args.at(1));
  const Jv value = parse(cast(args.at(2), Type::jsonb).jsonb_text());
  const bool create = args.size() < 4 || cast(args[3], Type::boolean).as_bool();
  if (is_scalar(target)) throw SqlError("22023", "cannot set path in scalar");
  // An empty container without create_missing comes back as it is, its path unread (jsonb_set).
  if (!create && target.members.empty() && target.items.empty()) return jsonb_of(target);
  if (!path.empty()) json_set(target, path, 0, value, create);
  return jsonb_of(target);
}

Value jsonb_path_operator(std::string_view op, const Value& a, const Value& b) {
  const Type result = op == "#>" ? Type::jsonb : Type::text;
  if (a.is_null() || b.is_null()) return Value::null(result);
  const Jv j = parse(cast(a, Type::jsonb).jsonb_text());
  const Jv* found = json_at_path(j, json_path(b));
  if (found == nullptr) return Value::null(result);
  if (op == "#>") return jsonb_of(*found);
  if (found->k == Jv::K::null) return Value::null(Type::text);
  return Value::text(found->k == Jv::K::string ? found->s : text_of(*found));
}

std::vector<std::vector<Value>> jsonb_rows(std::string_view function, const Value& v) {
  std::vector<std::vector<Value>> out;
  if (v.is_null()) return out;
  const Jv j = parse(cast(v, Type::jsonb).jsonb_text());
  const bool text = function.ends_with("_text");
  auto value = [&](const Jv& e) {
    if (!text) return jsonb_of(e);
    if (e.k == Jv::K::null) return Value::null(Type::text);
    return Value::text(e.k == Jv::K::string ? e.s : text_of(e));
  };
  if (function.starts_with("jsonb_array_elements")) {
    if (j.k == Jv::K::object) throw SqlError("22023", "cannot extract elements from an object");
    if (j.k != Jv::K::array) throw SqlError("22023", "cannot extract elements from a scalar");
    for (const Jv& e : j.items) out.push_back({value(e)});
    return out;
  }
  if (j.k != Jv::K::object) {
    throw SqlError("22023", fmt::format("cannot call {} on {}", function, j.k == Jv::K::array ? "an array" : "a scalar"));
  }
  for (const auto& [k, e] : j.members) {
    if (function == "jsonb_object_keys") {
      out.push_back({Value::text(k)});
    } else {
      out.push_back({Value::text(k), value(e)});
    }
  }
  return out;
}

Value jsonb_array_length(const Value& v) {
  if (v.is_null()) return Value::null(Type::int4);
  const Jv j = parse(cast(v, Type::jsonb).jsonb_text());
  if (j.k == Jv::K::object) throw SqlError("22023", "cannot get array length of a non-array");
  if (j.k != Jv::K::array) throw SqlError("22023", "cannot get array length of a scalar");
  return Value::integer(static_cast<std::int64_t>(j.items.size()), Type::int4);
}

Value json_aggregate(const std::vector<Value>& values, bool binary) {
  if (values.empty()) return Value::null(binary ? Type::jsonb : Type::json);
  Jv out;
  out.k = Jv::K::array;
  if (!binary) {  // json_agg_transfn: ", " between elements, and "\n " before a row or an array after the first
    std::string text = "[";
    for (std::size_t i = 0; i < values.size(); ++i) {
      const Value& v = values[i];
      if (i > 0) text += ", ";
      if (v.is_null()) {
        text += "null";
        continue;
      }
      if (v.type() == Type::array) throw SqlError("0A000", "json_agg of arrays is not in lockstep's SQL subset (jsonb_agg's is)");
      if (i > 0 && v.type() == Type::record) text += "\n ";
      text += v.type() == Type::json ? v.payload() : v.type() == Type::record ? row_to_json(v).payload() : to_jsonb(v).jsonb_text();
    }
    return Value::json(text + "]");
  }
  for (const Value& v : values) out.items.push_back(jv_of_value(v));
  return jsonb_of(out);
}

Value jsonb_typeof(const Value& v) {
  if (v.is_null()) return Value::null(Type::text);
  const Jv j = parse(v.type() == Type::jsonb ? v.jsonb_text() : cast(v, Type::jsonb).jsonb_text());
  static constexpr const char* kNames[] = {"null", "boolean", "number", "string", "array", "object"};
  return Value::text(kNames[static_cast<int>(j.k)]);
}

}  // namespace lockstep::sql
