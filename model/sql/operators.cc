#include "lockstep/model/sql/operators.h"

#include <string>

#include <fmt/format.h>

namespace lockstep::sql {

// The wider of two integer types.
Type wider(Type a, Type b) {
  if (a == Type::int8 || b == Type::int8) return Type::int8;
  if (a == Type::int4 || b == Type::int4) return Type::int4;
  return Type::int2;
}

[[noreturn]] void no_operator(std::string_view op, const Value& a, const Value& b) {
  throw SqlError("42883", fmt::format("operator does not exist: {} {} {}", type_name(a.type()), op, type_name(b.type())));
}

// `<<` and `>>`: a bit string shifted within its length (zeros come in; a negative count
// shifts the other way), an integer shifted by an int4 (the count taken modulo the width, as
// the server's C shift does on x86-64).
Value shifted(std::string_view op, const Value& a_in, const Value& b_in) {
  const Value a = a_in.type() == Type::unknown ? cast(a_in, Type::int4) : a_in;
  const Value b = b_in.type() == Type::unknown ? cast(b_in, Type::int4) : b_in;
  if (b.type() != Type::int4 && b.type() != Type::int2) no_operator(op, a, b);
  std::int64_t n = b.as_integer();
  if (a.type() == Type::bit) {
    const std::string& digits = a.payload();
    const auto size = static_cast<std::int64_t>(digits.size());
    if (op == ">>") n = -n;
    std::string out(digits.size(), '0');
    for (std::int64_t i = 0; i < size; ++i) {
      const std::int64_t from = i + n;  // left shift: bit i takes bit i + n
      if (from >= 0 && from < size) out[static_cast<std::size_t>(i)] = digits[static_cast<std::size_t>(from)];
    }
    return Value::bit(std::move(out));
  }
  if (!is_integer(a.type())) no_operator(op, a, b);
  const int width = a.type() == Type::int8 ? 64 : a.type() == Type::int4 ? 32 : 16;
  const int count = static_cast<int>(n & (a.type() == Type::int8 ? 63 : 31));
  if (a.type() == Type::int2) {  // int2shl computes in int, then narrows
    const std::int32_t v = op == "<<" ? static_cast<std::int32_t>(static_cast<std::uint32_t>(a.as_integer()) << count)
                                      : static_cast<std::int32_t>(a.as_integer()) >> count;
    return Value::integer(static_cast<std::int16_t>(v), Type::int2);
  }
  if (width == 32) {
    const auto v = static_cast<std::int32_t>(a.as_integer());
    return Value::integer(op == "<<" ? static_cast<std::int32_t>(static_cast<std::uint32_t>(v) << count) : v >> count, Type::int4);
  }
  const std::int64_t v = a.as_integer();
  return Value::integer(op == "<<" ? static_cast<std::int64_t>(static_cast<std::uint64_t>(v) << count) : v >> count, Type::int8);
}

// AND, OR and XOR of two bit strings of one length (bitand, bitor, bitxor) or of integers.
Value bitwise(std::string_view op, const Value& a, const Value& b) {
  if (a.type() == Type::bit && b.type() == Type::bit) {
    const std::string& x = a.payload();
    const std::string& y = b.payload();
    if (x.size() != y.size()) {
      throw SqlError("22026", fmt::format("cannot {} bit strings of different sizes", op == "&" ? "AND" : op == "|" ? "OR" : "XOR"));
    }
    std::string out(x.size(), '0');
    for (std::size_t i = 0; i < x.size(); ++i) {
      const bool p = x[i] == '1', q = y[i] == '1';
      if (op == "&" ? p && q : op == "|" ? p || q : p != q) out[i] = '1';
    }
    return Value::bit(std::move(out));
  }
  if (!is_integer(a.type()) || !is_integer(b.type())) no_operator(op, a, b);
  const std::int64_t x = a.as_integer(), y = b.as_integer();
  return Value::integer(op == "&" ? x & y : op == "|" ? x | y : x ^ y, wider(a.type(), b.type()));
}

Value bitwise_not(const Value& v) {
  if (v.is_null()) return v;
  if (v.type() == Type::bit) {
    std::string digits = v.payload();
    for (char& d : digits) d = d == '1' ? '0' : '1';
    return Value::bit(std::move(digits));
  }
  const Value n = v.type() == Type::unknown ? cast(v, Type::int4) : v;
  if (!is_integer(n.type())) throw SqlError("42883", fmt::format("operator does not exist: ~ {}", type_name(n.type())));
  return Value::integer(~n.as_integer(), n.type());
}

}  // namespace lockstep::sql
