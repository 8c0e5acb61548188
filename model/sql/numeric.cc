#include "lockstep/model/sql/numeric.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "lockstep/model/sql/civil_days.h"
#include "lockstep/model/sql/datetime.h"
#include "lockstep/model/sql/session_style.h"

namespace lockstep::sql {
namespace {

using i128 = __int128;

// |unscaled| below 10^38: the numbers of these libraries (keys, counts, seconds, backoffs).
constexpr int kMaxDigits = 38;

[[noreturn]] void num_too_wide();

i128 num_pow10(int n) {
  if (n > kMaxDigits) num_too_wide();
  i128 p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

const i128 kNumLimit = num_pow10(kMaxDigits);

[[noreturn]] void num_too_wide() {
  throw SqlError("0A000", fmt::format("numeric values of more than {} digits are not in lockstep's SQL subset", kMaxDigits));
}

i128 num_checked(i128 v) {
  if (v >= kNumLimit || v <= -kNumLimit) num_too_wide();
  return v;
}

i128 num_times(i128 v, i128 by) {
  if (v != 0 && (by >= kNumLimit / (v < 0 ? -v : v))) num_too_wide();
  return v * by;
}

// v * 10^n, exactly.
i128 num_scaled_up(i128 v, int n) {
  for (int i = 0; i < n; ++i) v = num_times(v, 10);
  return v;
}

// n / d rounded half away from zero. REQUIRES: d != 0.
i128 num_divided_rounded(i128 n, i128 d) {
  i128 q = n / d;
  const i128 r = n % d;
  const i128 ar = r < 0 ? -r : r, ad = d < 0 ? -d : d;
  if (2 * ar >= ad) q += ((n < 0) != (d < 0)) ? -1 : 1;
  return q;
}

struct Decimal {
  i128 unscaled = 0;
  int scale = 0;
};

std::string num_digits(i128 v) {
  if (v == 0) return "0";
  std::string s;
  const bool negative = v < 0;
  if (negative) v = -v;
  while (v > 0) {
    s.push_back(static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  if (negative) s.push_back('-');
  std::reverse(s.begin(), s.end());
  return s;
}

std::string num_text(const Decimal& d) {
  const bool negative = d.unscaled < 0;
  std::string digits = num_digits(negative ? -d.unscaled : d.unscaled);
  if (d.scale > 0) {
    if (static_cast<int>(digits.size()) <= d.scale) digits.insert(0, static_cast<std::size_t>(d.scale) + 1 - digits.size(), '0');
    digits.insert(digits.size() - static_cast<std::size_t>(d.scale), 1, '.');
  }
  return negative ? "-" + digits : digits;
}

Decimal num_parse(std::string_view in) {
  auto bad = [&] { throw SqlError("22P02", fmt::format("invalid input syntax for type numeric: \"{}\"", in)); };
  std::string_view s = in;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  std::string lower;
  for (char c : s) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (lower == "nan" || lower == "infinity" || lower == "+infinity" || lower == "-infinity" || lower == "inf" || lower == "-inf") {
    throw SqlError("0A000", fmt::format("the numeric value {} is not in lockstep's SQL subset", s));
  }
  bool negative = false;
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  i128 unscaled = 0;
  int scale = 0, digits = 0;
  bool point = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.' && !point) {
      point = true;
    } else if (c >= '0' && c <= '9') {
      unscaled = num_checked(unscaled * 10 + (c - '0'));
      ++digits;
      if (point) ++scale;
    } else if (c == '_' && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '9' && digits > 0) {
      continue;
    } else {
      break;
    }
  }
  if (digits == 0) bad();
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) exp_negative = s[i++] == '-';
    int exponent = 0;
    const auto [end, ec] = std::from_chars(s.data() + i, s.data() + s.size(), exponent);
    if (ec != std::errc() || end == s.data() + i) bad();
    i = static_cast<std::size_t>(end - s.data());
    if (exponent > 1000) throw SqlError("22003", "value overflows numeric format");
    scale -= exp_negative ? -exponent : exponent;
    if (scale < 0) {
      unscaled = num_scaled_up(unscaled, -scale);
      scale = 0;
    }
  }
  if (i != s.size()) bad();
  return {negative ? -unscaled : unscaled, scale};
}

Decimal num_of(const Value& v) {
  if (is_integer(v.type())) return {v.as_integer(), 0};
  return num_parse(v.payload());
}

// `d` at `scale` digits after the point (rounded half away from zero when fewer).
Decimal num_rescaled(const Decimal& d, int scale) {
  if (scale >= d.scale) return {num_scaled_up(d.unscaled, scale - d.scale), scale};
  if (d.scale - scale > kMaxDigits) return {0, scale};  // |value| < 10^-(scale+1): rounds to zero
  return {num_divided_rounded(d.unscaled, num_pow10(d.scale - scale)), scale};
}

Value num_value(const Decimal& d) { return Value::numeric(num_text(d)); }

// PostgreSQL's base-10000 weight and first digit of a non-zero value (select_div_scale).
std::pair<int, int> num_weight(const Decimal& d) {
  const i128 a = d.unscaled < 0 ? -d.unscaled : d.unscaled;
  if (a == 0) return {0, 0};
  const std::string digits = num_digits(a);
  const int integer_digits = static_cast<int>(digits.size()) - d.scale;
  if (integer_digits > 0) {
    const int weight = (integer_digits - 1) / 4;
    const int lead = integer_digits - weight * 4;
    return {weight, std::stoi(digits.substr(0, static_cast<std::size_t>(lead)))};
  }
  // Only a fraction: its groups of four digits after the point.
  std::string fraction = std::string(static_cast<std::size_t>(-integer_digits), '0') + digits;
  while (fraction.size() % 4 != 0) fraction.push_back('0');
  for (std::size_t g = 0; g < fraction.size(); g += 4) {
    const int group = std::stoi(fraction.substr(g, 4));
    if (group != 0) return {-static_cast<int>(g / 4) - 1, group};
  }
  return {0, 0};
}

int num_div_scale(const Decimal& a, const Decimal& b) {
  const auto [w1, f1] = num_weight(a);
  const auto [w2, f2] = num_weight(b);
  int qweight = w1 - w2;
  if (f1 <= f2) --qweight;
  int rscale = 16 - qweight * 4;  // NUMERIC_MIN_SIG_DIGITS, DEC_DIGITS
  rscale = std::max({rscale, a.scale, b.scale, 0});
  return std::min(rscale, 1000);
}

Decimal num_divide(const Decimal& a, const Decimal& b, int rscale) {
  if (b.unscaled == 0) throw SqlError("22012", "division by zero");
  // a/b = (ua / 10^sa) / (ub / 10^sb) = ua * 10^(sb - sa + rscale) / ub, at rscale.
  const int shift = b.scale - a.scale + rscale;
  if (shift >= 0) return {num_divided_rounded(num_scaled_up(a.unscaled, shift), b.unscaled), rscale};
  return {num_divided_rounded(a.unscaled, num_times(b.unscaled, num_pow10(-shift))), rscale};
}

double float_checked(double r, double x, double y, bool zero_ok) {
  if (std::isinf(r) && !std::isinf(x) && !std::isinf(y)) throw SqlError("22003", "value out of range: overflow");
  if (r == 0.0 && !zero_ok) throw SqlError("22003", "value out of range: underflow");
  return r;
}

Value float_arithmetic(std::string_view op, double x, double y) {
  if (op == "+") return Value::float8(float_checked(x + y, x, y, true));
  if (op == "-") return Value::float8(float_checked(x - y, x, y, true));
  if (op == "*") return Value::float8(float_checked(x * y, x, y, x == 0.0 || y == 0.0));
  if (op == "/") {
    if (y == 0.0) throw SqlError("22012", "division by zero");
    return Value::float8(float_checked(x / y, x, y, x == 0.0 || std::isinf(y)));
  }
  if (op == "^") {
    if (x == 0.0 && y < 0) throw SqlError("2201F", "zero raised to a negative power is undefined");
    if (x < 0 && std::floor(y) != y) throw SqlError("2201F", "a negative number raised to a non-integer power yields a complex result");
    const double r = std::pow(x, y);
    if (std::isinf(r) && !std::isinf(x) && !std::isinf(y)) throw SqlError("22003", "value out of range: overflow");
    return Value::float8(r);
  }
  throw SqlError("42883", fmt::format("operator does not exist: double precision {} double precision", op));
}

std::int64_t float_to_integer(double d, Type to) {
  const double r = std::nearbyint(d);  // rint: half to even
  const double lo = to == Type::int2 ? -32768.0 : to == Type::int4 ? -2147483648.0 : -9223372036854775808.0;
  const double hi = -lo;
  if (std::isnan(r) || r < lo || r >= hi) throw SqlError("22003", fmt::format("{} out of range", type_name(to)));
  return static_cast<std::int64_t>(r);
}

std::int64_t num_to_integer(const Decimal& d, Type to) {
  const i128 r = num_rescaled(d, 0).unscaled;
  const i128 lo = to == Type::int2 ? std::numeric_limits<std::int16_t>::min()
                  : to == Type::int4 ? std::numeric_limits<std::int32_t>::min()
                                     : std::numeric_limits<std::int64_t>::min();
  const i128 hi = to == Type::int2 ? std::numeric_limits<std::int16_t>::max()
                  : to == Type::int4 ? std::numeric_limits<std::int32_t>::max()
                                     : std::numeric_limits<std::int64_t>::max();
  if (r < lo || r > hi) throw SqlError("22003", fmt::format("{} out of range", type_name(to)));
  return static_cast<std::int64_t>(r);
}

Decimal num_of_double(double d) {
  if (std::isnan(d) || std::isinf(d)) throw SqlError("0A000", "a NaN or infinite numeric value is not in lockstep's SQL subset");
  return num_parse(fmt::format("{:.15g}", d));  // float8_numeric: DBL_DIG significant digits
}

// numeric ^ numeric (power_var): an integral exponent gives 16 digits after the point (or the
// base's scale), exactly rounded; another exponent 16 significant digits, from long double.
Value num_power(const Decimal& base, const Decimal& exponent) {
  const i128 unit = num_pow10(exponent.scale);
  if (base.unscaled == 0 && exponent.unscaled < 0) throw SqlError("2201F", "zero raised to a negative power is undefined");
  if (exponent.unscaled % unit == 0) {
    const i128 n = exponent.unscaled / unit;
    const int rscale = std::max(16, base.scale);
    const i128 magnitude = n < 0 ? -n : n;
    if (magnitude > 1000) num_too_wide();
    Decimal product{1, 0};
    for (i128 i = 0; i < magnitude; ++i) product = {num_times(product.unscaled, base.unscaled), product.scale + base.scale};
    if (n >= 0) return num_value(num_rescaled(product, rscale));
    return num_value(num_divide({1, 0}, product, rscale));
  }
  if (base.unscaled < 0) throw SqlError("2201F", "a negative number raised to a non-integer power yields a complex result");
  if (base.unscaled == 0) return num_value({0, 16});
  const long double r = std::pow(std::strtold(num_text(base).c_str(), nullptr), std::strtold(num_text(exponent).c_str(), nullptr));
  int rscale = 16 - static_cast<int>(std::log10(static_cast<double>(r)));
  rscale = std::clamp(std::max({rscale, base.scale, exponent.scale}), 0, 1000);
  const long double scaled = std::round(r * std::pow(10.0L, rscale));
  if (!(scaled < 1e37L)) num_too_wide();
  return num_value({static_cast<i128>(scaled), rscale});
}

}  // namespace

Value numeric_input(std::string_view text) { return num_value(num_parse(text)); }

Value numeric_of(__int128 unscaled, int scale) { return num_value({num_checked(unscaled), scale}); }

Value float8_input(std::string_view in) {
  std::string_view s = in;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  std::string lower;
  for (char c : s) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (lower == "nan") return Value::float8(std::numeric_limits<double>::quiet_NaN());
  if (lower == "infinity" || lower == "+infinity" || lower == "inf" || lower == "+inf") return Value::float8(HUGE_VAL);
  if (lower == "-infinity" || lower == "-inf") return Value::float8(-HUGE_VAL);
  std::string_view digits = s;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  double d = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), d);
  if (digits.empty() || end != digits.data() + digits.size() || (ec != std::errc() && ec != std::errc::result_out_of_range)) {
    throw SqlError("22P02", fmt::format("invalid input syntax for type double precision: \"{}\"", in));
  }
  if (ec == std::errc::result_out_of_range || std::isinf(d)) {
    throw SqlError("22003", fmt::format("\"{}\" is out of range for type double precision", s));
  }
  return Value::float8(d);
}

std::string float8_output(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  if (v == 0.0) return std::signbit(v) ? "-0" : "0";
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(end - buf));  // [-]d[.ddd]e[+-]XX: the shortest digits
  const std::size_t e = sci.find('e');
  const bool negative = sci.front() == '-';
  std::string digits;
  for (char c : sci.substr(negative ? 1 : 0, e - (negative ? 1 : 0))) {
    if (c != '.') digits.push_back(c);
  }
  int exponent = 0;
  std::from_chars(sci.data() + e + 1 + (sci[e + 1] == '+' ? 1 : 0), sci.data() + sci.size(), exponent);
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 15) {  // float8out: exponent form as %g with DBL_DIG
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    return out + fmt::format("e{}{:02}", exponent < 0 ? '-' : '+', exponent < 0 ? -exponent : exponent);
  }
  if (exponent < 0) return out + "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
  const auto integer_digits = static_cast<std::size_t>(exponent) + 1;
  if (digits.size() <= integer_digits) return out + digits + std::string(integer_digits - digits.size(), '0');
  return out + digits.substr(0, integer_digits) + "." + digits.substr(integer_digits);
}

double as_double(const Value& v) {
  if (v.type() == Type::float8) return v.as_float8();
  if (is_integer(v.type())) return static_cast<double>(v.as_integer());
  if (v.type() == Type::numeric) return std::strtod(v.payload().c_str(), nullptr);
  throw SqlError("XX000", "internal: not a number");
}

Value numeric_cast(const Value& v, Type to) {
  const Type from = v.type();
  if (from == to) return v;
  if (to == Type::float8) return Value::float8(as_double(v));
  if (to == Type::numeric) return from == Type::float8 ? num_value(num_of_double(v.as_float8())) : num_value(num_of(v));
  if (is_integer(to)) {
    if (from == Type::float8) return Value::integer(float_to_integer(v.as_float8(), to), to);
    return Value::integer(num_to_integer(num_of(v), to), to);
  }
  throw SqlError("42846", fmt::format("cannot cast type {} to {}", type_name(from), type_name(to)));
}

Value numeric_with_typmod(const Value& v, int precision, int scale) {
  if (v.is_null() || precision <= 0) return v;
  // A negative scale rounds to tens, hundreds, ... (PostgreSQL 15): the value in units of
  // 10^-scale has at most `precision` digits, and shows no fraction.
  const Decimal d = num_rescaled(num_of(numeric_cast(v, Type::numeric)), scale);
  const i128 a = d.unscaled < 0 ? -d.unscaled : d.unscaled;
  if (a >= num_pow10(precision)) {
    throw SqlError("22003", "numeric field overflow");
  }
  if (scale < 0) return num_value({num_checked(d.unscaled * num_pow10(-scale)), 0});
  return num_value(d);
}

bool is_numeric_operand(const Value& a, const Value& b) {
  const bool wide = a.type() == Type::numeric || a.type() == Type::float8 || b.type() == Type::numeric || b.type() == Type::float8;
  return wide && is_numeric_category(a.type()) && is_numeric_category(b.type());
}

Value numeric_arithmetic(std::string_view op, const Value& a, const Value& b) {
  if (a.type() == Type::float8 || b.type() == Type::float8) return float_arithmetic(op, as_double(a), as_double(b));
  const Decimal x = num_of(a), y = num_of(b);
  if (op == "+" || op == "-") {
    const int scale = std::max(x.scale, y.scale);
    const i128 l = num_rescaled(x, scale).unscaled, r = num_rescaled(y, scale).unscaled;
    return num_value({num_checked(op == "+" ? l + r : l - r), scale});
  }
  if (op == "*") return num_value({num_times(x.unscaled, y.unscaled), x.scale + y.scale});
  if (op == "/") return num_value(num_divide(x, y, num_div_scale(x, y)));
  if (op == "%") {
    if (y.unscaled == 0) throw SqlError("22012", "division by zero");
    const int scale = std::max(x.scale, y.scale);
    return num_value({num_rescaled(x, scale).unscaled % num_rescaled(y, scale).unscaled, scale});
  }
  if (op == "^") return num_power(x, y);
  throw SqlError("42883", fmt::format("operator does not exist: numeric {} numeric", op));
}

Value numeric_negated(const Value& v) {
  if (v.type() == Type::float8) return Value::float8(-v.as_float8());
  const Decimal d = num_of(v);
  return num_value({-d.unscaled, d.scale});
}

std::strong_ordering numeric_compare(const Value& a, const Value& b) {
  if (a.type() == Type::float8 || b.type() == Type::float8) {
    const double x = as_double(a), y = as_double(b);
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) == std::isnan(y) ? std::strong_ordering::equal
                                               : std::isnan(x) ? std::strong_ordering::greater : std::strong_ordering::less;
    return x < y ? std::strong_ordering::less : x > y ? std::strong_ordering::greater : std::strong_ordering::equal;
  }
  const Decimal x = num_of(a), y = num_of(b);
  const int scale = std::max(x.scale, y.scale);
  return num_rescaled(x, scale).unscaled <=> num_rescaled(y, scale).unscaled;
}

namespace {

bool num_function_of_numeric(std::span<const Value> args) { return args[0].type() == Type::numeric; }

Value num_rounded(std::string_view name, const Value& v, int places) {
  places = std::clamp(places, -2000, 2000);  // numeric_round's NUMERIC_MAX_RESULT_SCALE (a far bound: no overflow below)
  const Decimal d = num_of(v);
  const int scale = std::max(places, 0);
  if (places >= d.scale) return num_value(num_rescaled(d, scale));
  if (d.scale - places > kMaxDigits) {  // |value| far below a unit of `places`: 0, or -1 / +1 unit for floor / ceil
    const i128 q = name == "floor" && d.unscaled < 0 ? -1 : (name == "ceil" || name == "ceiling") && d.unscaled > 0 ? 1 : 0;
    return places < 0 ? num_value({num_scaled_up(q, -places), 0}) : num_value({q, scale});
  }
  const i128 unit = num_pow10(d.scale - places);
  i128 q = d.unscaled / unit;
  const i128 r = d.unscaled % unit;
  if (name == "round") {
    q = num_divided_rounded(d.unscaled, unit);
  } else if (name == "floor" && r < 0) {
    --q;
  } else if ((name == "ceil" || name == "ceiling") && r > 0) {
    ++q;
  }
  // q has `places` digits after the point (places may be negative: tens, hundreds, ...).
  if (places < 0) return num_value({num_scaled_up(q, -places), 0});
  return num_value({q, scale});
}

double float_arg(std::string_view name, const Value& v) {
  if (!is_numeric_category(v.type())) throw SqlError("42883", fmt::format("function {}({}) does not exist", name, type_name(v.type())));
  return as_double(v);
}

Value num_exp(const Value& v) {
  const Decimal d = num_of(v);
  const long double x = std::strtold(num_text(d).c_str(), nullptr);
  double weight = static_cast<double>(x) * 0.434294481903252;  // numeric_exp's estimate of the result's decimal weight
  weight = std::clamp(weight, -2000.0, 2000.0);
  int rscale = 16 - static_cast<int>(weight);
  rscale = std::clamp(std::max(rscale, d.scale), 0, 1000);
  const long double r = std::exp(x);
  if (std::isinf(r) || r >= 1e37L) throw SqlError("22003", "value overflows numeric format");
  const long double scaled = std::round(r * std::pow(10.0L, rscale));
  if (scaled >= 1e37L) num_too_wide();
  return num_value({static_cast<i128>(scaled), rscale});
}

}  // namespace

bool is_math_function(std::string_view name) {
  static constexpr std::string_view kNames[] = {"exp",   "ln",    "sqrt", "power", "pow", "floor",        "ceil",
                                                "ceiling", "round", "trunc", "sign", "mod", "to_timestamp"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

Value math_function(std::string_view name, std::span<const Value> in) {
  std::vector<Value> args(in.begin(), in.end());
  if (name == "mod") {  // of integers (the wider type); 22012 for a zero divisor
    const auto integral = [](const Value& v) { return is_integer(v.type()) || (v.type() == Type::unknown && !v.is_null()); };
    if (!integral(args.at(0)) || !integral(args.at(1))) {
      if (args[0].type() == Type::numeric || args[1].type() == Type::numeric) {
        throw SqlError("0A000", "mod() of numeric is not in lockstep's SQL subset: cast to an integer type");
      }
      if (!args[0].is_null() && !args[1].is_null()) {
        throw SqlError("42883", fmt::format("function mod({}, {}) does not exist", type_name(args[0].type()), type_name(args[1].type())));
      }
    }
    const Type wider = args[0].type() == Type::int8 || args[1].type() == Type::int8 ? Type::int8
                       : args[0].type() == Type::int2 && args[1].type() == Type::int2 ? Type::int2 : Type::int4;
    if (args[0].is_null() || args[1].is_null()) return Value::null(wider);
    const std::int64_t a = cast(args[0], wider).as_integer(), b = cast(args[1], wider).as_integer();
    if (b == 0) throw SqlError("22012", "division by zero");
    return Value::integer(b == -1 ? 0 : a % b, wider);
  }
  for (const Value& a : args) {
    if (a.is_null()) return Value::null(name == "to_timestamp" ? Type::timestamptz : a.type() == Type::numeric ? Type::numeric : Type::float8);
  }
  // An untyped literal reads as double precision, the numeric category's preferred type.
  for (Value& a : args) {
    if (a.type() == Type::unknown) a = float8_input(a.as_text());
  }
  if (name == "to_timestamp") {
    const double seconds = float_arg(name, args[0]);
    if (std::isinf(seconds)) return Value::timestamptz(seconds > 0 ? kTimestampInfinity : kTimestampMinusInfinity);
    if (std::isnan(seconds)) throw SqlError("22008", "timestamp cannot be NaN");
    const double micros = std::nearbyint((seconds - 946'684'800.0) * 1e6);
    if (micros < -211'813'488'000'000'000.0 || micros >= 9'223'371'331'200'000'000.0) {
      throw SqlError("22008", fmt::format("timestamp out of range: \"{}\"", float8_output(seconds)));
    }
    return Value::timestamptz(static_cast<std::int64_t>(micros));
  }
  const bool numeric = num_function_of_numeric(args);
  if (name == "floor" || name == "ceil" || name == "ceiling" || name == "round" || name == "trunc") {
    if (args.size() == 2 || numeric) {
      if (!numeric && !is_integer(args[0].type())) {
        throw SqlError("42883", fmt::format("function {}({}, integer) does not exist", name, type_name(args[0].type())));
      }
      const int places = args.size() == 2 ? static_cast<int>(numeric_cast(args[1], Type::int4).as_integer()) : 0;
      return num_rounded(name, numeric_cast(args[0], Type::numeric), places);
    }
    const double x = float_arg(name, args[0]);
    if (name == "floor") return Value::float8(std::floor(x));
    if (name == "round") return Value::float8(std::nearbyint(x));
    if (name == "trunc") return Value::float8(std::trunc(x));
    return Value::float8(std::ceil(x));
  }
  if (name == "sign") {
    if (numeric) {
      const Decimal d = num_of(args[0]);
      return num_value({d.unscaled > 0 ? 1 : d.unscaled < 0 ? -1 : 0, 0});
    }
    const double x = float_arg(name, args[0]);
    return Value::float8(x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0);
  }
  if (name == "exp" && numeric) return num_exp(args[0]);
  if (numeric || (args.size() == 2 && args[1].type() == Type::numeric)) {
    throw SqlError("0A000", fmt::format("{}() of numeric is not in lockstep's SQL subset: cast to double precision", name));
  }
  const double x = float_arg(name, args[0]);
  if (name == "exp") {
    const double r = std::exp(x);
    if (std::isinf(r) && !std::isinf(x)) throw SqlError("22003", "value out of range: overflow");
    if (r == 0.0 && !std::isinf(x)) throw SqlError("22003", "value out of range: underflow");
    return Value::float8(r);
  }
  if (name == "ln") {
    if (x == 0.0) throw SqlError("2201E", "cannot take logarithm of zero");
    if (x < 0) throw SqlError("2201E", "cannot take logarithm of a negative number");
    return Value::float8(std::log(x));
  }
  if (name == "sqrt") {
    if (x < 0) throw SqlError("2201F", "cannot take square root of a negative number");
    return Value::float8(std::sqrt(x));
  }
  return float_arithmetic("^", x, float_arg(name, args.at(1)));  // power, pow
}

Value extract_field(const Value& field_value, const Value& source_in, bool as_float) {
  const Type result = as_float ? Type::float8 : Type::numeric;
  if (field_value.is_null() || source_in.is_null()) return Value::null(result);
  std::string field;
  const Value field_text = cast(field_value, Type::text);  // kept: the loop reads its string
  for (char c : field_text.as_text()) field.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  const std::string written = field;  // the server's messages name the unit as written (lower case)
  const std::string_view unit = date_unit(field);
  if (!unit.empty()) field = unit;  // "secs", "min", "hrs", ...
  const Value source = source_in.type() == Type::unknown ? cast(source_in, Type::timestamptz) : source_in;
  const std::string fn = as_float ? "date_part" : "extract";
  // The value as micros and a scale: epoch and seconds keep 6 digits, milliseconds 3.
  auto out = [&](i128 unscaled, int scale) {
    if (as_float) return Value::float8(static_cast<double>(unscaled) / static_cast<double>(num_pow10(scale)));
    return num_value({unscaled, scale});
  };
  // A time's seconds field (micros within the minute): date_part's float8 as the server sums
  // it (tm_sec + fsec / 1e6, tm_sec * 1000.0 + fsec / 1000.0, tm_sec * 1e6 + fsec).
  auto seconds_out = [&](i128 within_minute, int scale) {
    if (!as_float) return num_value({within_minute, scale});
    const double sec = static_cast<double>(within_minute / 1'000'000), frac = static_cast<double>(within_minute % 1'000'000);
    return Value::float8(scale == 6 ? sec + frac / 1000000.0 : scale == 3 ? sec * 1000.0 + frac / 1000.0 : sec * 1000000.0 + frac);
  };
  const bool special = field == "epoch" || field == "dow" || field == "doy" || field == "isodow" || field == "isoyear" || field == "julian";
  if (unit.empty() && !special && (source.type() == Type::time || source.type() == Type::date || source.type() == Type::interval || is_timestamp(source.type()))) {
    throw SqlError("22023", fmt::format("unit \"{}\" not recognized for type {}", written, type_name(source.type())));
  }
  if (source.type() == Type::interval) {
    const Interval iv = source.as_interval();
    const i128 time = iv.micros;
    if (field == "epoch") {
      // months as 30 days plus a quarter (DAYS_PER_YEAR 365.25 / 12), days as 24 hours.
      const i128 months_micros = static_cast<i128>(iv.months / 12) * 31'557'600'000'000 + static_cast<i128>(iv.months % 12) * 2'592'000'000'000;
      return out(months_micros + static_cast<i128>(iv.days) * 86'400'000'000 + time, 6);
    }
    if (field == "second") return seconds_out(time % 60'000'000, 6);
    if (field == "milliseconds") return seconds_out(time % 60'000'000, 3);
    if (field == "microseconds") return seconds_out(time % 60'000'000, 0);
    if (field == "minute" || field == "minutes") return out(time / 60'000'000 % 60, 0);
    if (field == "hour" || field == "hours") return out(time / 3'600'000'000, 0);
    if (field == "day" || field == "days") return out(iv.days, 0);
    if (field == "month" || field == "months") return out(iv.months % 12, 0);
    if (field == "year" || field == "years") return out(iv.months / 12, 0);
    throw SqlError("0A000", fmt::format("{}({} from an interval) is not in lockstep's SQL subset", fn, field));
  }
  if (source.type() == Type::time) {  // a time of day's fields; epoch: seconds from midnight
    if (field == "epoch") return out(source.micros(), 6);
    static constexpr std::string_view kTimeFields[] = {"hour", "hours", "minute", "minutes", "second", "seconds", "milliseconds", "microseconds"};
    if (std::find(std::begin(kTimeFields), std::end(kTimeFields), field) == std::end(kTimeFields)) {
      throw SqlError("0A000", fmt::format("unit \"{}\" not supported for type time without time zone", written));
    }
    return extract_field(field_value, Value::timestamp(source.micros()), as_float);
  }
  if (source.type() == Type::date) {  // its midnight's fields, whole numbers; none of the time of day
    if (field == "epoch" && !is_infinite_timestamp(source.micros())) return out((static_cast<i128>(source.micros()) + 946'684'800'000'000) / 1'000'000, 0);
    // EXTRACT of a date has no time of day (0A000); date_part casts it to a timestamp (0).
    if (!as_float && (field == "hour" || field == "minute" || field == "second" || field == "milliseconds" || field == "microseconds")) {
      throw SqlError("0A000", fmt::format("unit \"{}\" not supported for type date", written));
    }
    return extract_field(field_value, cast(source, Type::timestamp), as_float);
  }
  if (!is_timestamp(source.type())) {
    throw SqlError("42883", fmt::format("function {}(unknown, {}) does not exist", fn, type_name(source.type())));
  }
  if (is_infinite_timestamp(source.micros())) {
    if (field == "epoch" || field == "year") {
      if (as_float) return Value::float8(source.micros() > 0 ? HUGE_VAL : -HUGE_VAL);
      throw SqlError("0A000", "extract() of an infinite timestamp (numeric Infinity) is not in lockstep's SQL subset");
    }
    return Value::null(result);
  }
  constexpr i128 kEpochShift = 946'684'800'000'000;  // 1970-01-01 to 2000-01-01 in micros
  if (field == "epoch") {
    // timestamptz: seconds since 1970 UTC; timestamp: its wall clock read as UTC.
    return out(static_cast<i128>(source.micros()) + kEpochShift, 6);
  }
  const std::int64_t local = source.type() == Type::timestamptz ? local_of_utc(source.micros()) : source.micros();
  std::int64_t days = local / 86'400'000'000;
  std::int64_t time = local % 86'400'000'000;
  if (time < 0) {
    time += 86'400'000'000;
    --days;
  }
  const CivilDate date = civil_from_days(days);
  if (field == "second") return seconds_out(time % 60'000'000, 6);
  if (field == "milliseconds") return seconds_out(time % 60'000'000, 3);
  if (field == "microseconds") return seconds_out(time % 60'000'000, 0);
  if (field == "minute" || field == "minutes") return out(time / 60'000'000 % 60, 0);
  if (field == "hour" || field == "hours") return out(time / 3'600'000'000, 0);
  if (field == "day" || field == "days") return out(date.day, 0);
  if (field == "month" || field == "months") return out(date.month, 0);
  if (field == "year" || field == "years") return out(date.year, 0);
  if (field == "dow") return out(weekday_of_days(days), 0);
  if (field == "isodow") return out((weekday_of_days(days) + 6) % 7 + 1, 0);
  if (field == "doy") return out(days - days_from_civil(date.year, 1, 1) + 1, 0);
  throw SqlError("0A000", fmt::format("{}({} from a timestamp) is not in lockstep's SQL subset", fn, field));
}

Value random_from_seed(std::uint64_t seed) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL;  // splitmix64
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return Value::float8(static_cast<double>(z >> 11) * 0x1.0p-53);
}

Value numeric_sum(std::span<const Value> values) {
  bool floating = false, numeric = false, wide_integer = false;
  for (const Value& v : values) {
    if (!is_numeric_category(v.type())) throw SqlError("42883", fmt::format("function sum({}) does not exist", type_name(v.type())));
    floating = floating || v.type() == Type::float8;
    numeric = numeric || v.type() == Type::numeric;
    wide_integer = wide_integer || v.type() == Type::int8;
  }
  if (values.empty()) return Value::null();
  if (floating) {
    double s = 0;
    for (const Value& v : values) s += as_double(v);
    return Value::float8(s);
  }
  if (!numeric && !wide_integer) {  // sum(smallint | integer) is bigint
    i128 s = 0;
    for (const Value& v : values) s += v.as_integer();
    return Value::integer(static_cast<std::int64_t>(s), Type::int8);
  }
  Value acc = numeric_cast(values[0], Type::numeric);
  for (std::size_t i = 1; i < values.size(); ++i) acc = numeric_arithmetic("+", acc, numeric_cast(values[i], Type::numeric));
  return acc;
}

Value numeric_avg(std::span<const Value> values) {
  if (values.empty()) return Value::null(Type::numeric);
  for (const Value& v : values) {
    if (!is_numeric_category(v.type())) throw SqlError("42883", fmt::format("function avg({}) does not exist", type_name(v.type())));
  }
  if (values[0].type() == Type::float8) {
    double s = 0;
    for (const Value& v : values) s += as_double(v);
    return Value::float8(s / static_cast<double>(values.size()));
  }
  Value sum = numeric_cast(values[0], Type::numeric);
  for (std::size_t i = 1; i < values.size(); ++i) sum = numeric_arithmetic("+", sum, numeric_cast(values[i], Type::numeric));
  return numeric_arithmetic("/", sum, num_value({static_cast<i128>(values.size()), 0}));
}

}  // namespace lockstep::sql
