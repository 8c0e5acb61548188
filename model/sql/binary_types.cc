#include "lockstep/model/sql/binary_types.h"

#include <algorithm>

#include <fmt/format.h>

namespace lockstep::sql {
namespace {

constexpr std::string_view bin_kHexDigits = "0123456789abcdef";

int bin_hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool bin_is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// bin_hex_decode: pairs of digits, whitespace between pairs.
std::string bin_hex_decode(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (bin_is_space(text[i])) {
      ++i;
      continue;
    }
    const int hi = bin_hex_value(text[i]);
    if (hi < 0) throw SqlError("22023", fmt::format("invalid hexadecimal digit: \"{}\"", text[i]));
    if (i + 1 >= text.size()) throw SqlError("22023", "invalid hexadecimal data: odd number of digits");
    const int lo = bin_hex_value(text[i + 1]);
    if (lo < 0) throw SqlError("22023", fmt::format("invalid hexadecimal digit: \"{}\"", text[i + 1]));
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::string bin_hex_encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += bin_kHexDigits[c >> 4];
    out += bin_kHexDigits[c & 15];
  }
  return out;
}

// byteain's escape format: \\ is a backslash, \ooo an octal byte, other bytes as they are.
std::string bin_escape_decode(std::string_view text, bool input) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out += text[i];
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '\\') {
      out += '\\';
      ++i;
    } else if (i + 3 < text.size() + 0 && text[i + 1] >= '0' && text[i + 1] <= '3' && text[i + 2] >= '0' && text[i + 2] <= '7' &&
               text[i + 3] >= '0' && text[i + 3] <= '7') {
      out += static_cast<char>((text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 + (text[i + 3] - '0'));
      i += 3;
    } else {
      throw SqlError("22P02", input ? "invalid input syntax for type bytea" : "invalid input syntax for type bytea");
    }
  }
  return out;
}

std::string bin_escape_encode(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == 0 || c >= 0x80) {
      out += fmt::format("\\{:03o}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

constexpr std::string_view bin_kBase64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string bin_base64_encode(std::string_view bytes) {
  std::string out;
  std::size_t line = 0;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::uint32_t b0 = static_cast<unsigned char>(bytes[i]);
    const std::uint32_t b1 = i + 1 < bytes.size() ? static_cast<unsigned char>(bytes[i + 1]) : 0;
    const std::uint32_t b2 = i + 2 < bytes.size() ? static_cast<unsigned char>(bytes[i + 2]) : 0;
    const std::uint32_t n = (b0 << 16) | (b1 << 8) | b2;
    if (line >= 76) {  // pg_base64_encode breaks lines at 76 characters
      out += '\n';
      line = 0;
    }
    out += bin_kBase64[(n >> 18) & 63];
    out += bin_kBase64[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? bin_kBase64[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? bin_kBase64[n & 63] : '=';
    line += 4;
  }
  return out;
}

std::string bin_base64_decode(std::string_view text) {
  std::string out;
  std::uint32_t buffer = 0;
  int bits = 0, padding = 0;
  for (char c : text) {
    if (bin_is_space(c)) continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    if (padding > 0) throw SqlError("22023", "unexpected \"=\" while decoding base64 sequence");
    const auto pos = bin_kBase64.find(c);
    if (pos == std::string_view::npos) throw SqlError("22023", fmt::format("invalid symbol \"{}\" found while decoding base64 sequence", c));
    buffer = (buffer << 6) | static_cast<std::uint32_t>(pos);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xff);
    }
  }
  const std::size_t symbols = std::count_if(text.begin(), text.end(), [](char c) { return !bin_is_space(c); });
  if (symbols % 4 != 0) throw SqlError("22023", "invalid base64 end sequence");
  return out;
}

std::string bin_text_arg(const Value& v) { return v.type() == Type::text || v.type() == Type::unknown ? v.as_text() : cast(v, Type::text).as_text(); }

std::string bin_bytes_arg(const Value& v, std::string_view function) {
  if (v.type() == Type::bytea) return v.payload();
  if (v.type() == Type::unknown) return bytea_input(v.as_text()).payload();
  throw SqlError("42883", fmt::format("function {}({}) does not exist", function, type_name(v.type())));
}

}  // namespace

Value uuid_input(std::string_view text) {
  std::string_view s = text;
  const bool braces = !s.empty() && s.front() == '{';
  if (braces) s.remove_prefix(1);
  std::string digits;
  std::size_t i = 0;
  for (; i < s.size() && digits.size() < 32; ++i) {
    const int v = bin_hex_value(s[i]);
    if (v < 0) throw SqlError("22P02", fmt::format("invalid input syntax for type uuid: \"{}\"", text));
    digits += bin_kHexDigits[static_cast<std::size_t>(v)];
    // A hyphen may follow any group of four digits.
    if (digits.size() % 4 == 0 && digits.size() < 32 && i + 1 < s.size() && s[i + 1] == '-') ++i;
  }
  if (digits.size() != 32) throw SqlError("22P02", fmt::format("invalid input syntax for type uuid: \"{}\"", text));
  if (braces) {
    if (i >= s.size() || s[i] != '}') throw SqlError("22P02", fmt::format("invalid input syntax for type uuid: \"{}\"", text));
    ++i;
  }
  if (i != s.size()) throw SqlError("22P02", fmt::format("invalid input syntax for type uuid: \"{}\"", text));
  return Value::uuid(fmt::format("{}-{}-{}-{}-{}", digits.substr(0, 8), digits.substr(8, 4), digits.substr(12, 4), digits.substr(16, 4),
                                 digits.substr(20)));
}

Value uuid_from_seed(std::uint64_t seed) {
  // splitmix64, twice: 128 bits, then the version and variant bits as gen_random_uuid sets them.
  auto next = [&seed] {
    std::uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  std::uint64_t hi = next(), lo = next();
  hi = (hi & ~0xf000ULL) | 0x4000ULL;
  lo = (lo & ~(3ULL << 62)) | (2ULL << 62);
  const std::string hex = fmt::format("{:016x}{:016x}", hi, lo);
  return uuid_input(hex);
}

Value bytea_input(std::string_view text) {
  if (text.size() >= 2 && text[0] == '\\' && text[1] == 'x') return Value::bytea(bin_hex_decode(text.substr(2)));
  return Value::bytea(bin_escape_decode(text, true));
}

std::string bytea_output(std::string_view bytes) { return "\\x" + bin_hex_encode(bytes); }

Value bit_input(std::string_view text) {
  std::string_view s = text;
  bool hex = false;
  if (!s.empty() && (s.front() == 'x' || s.front() == 'X')) {
    hex = true;
    s.remove_prefix(1);
  } else if (!s.empty() && (s.front() == 'b' || s.front() == 'B')) {
    s.remove_prefix(1);
  }
  std::string digits;
  for (char c : s) {
    if (hex) {
      const int v = bin_hex_value(c);
      if (v < 0) throw SqlError("22P02", fmt::format("\"{}\" is not a valid hexadecimal digit", c));
      for (int b = 3; b >= 0; --b) digits += ((v >> b) & 1) != 0 ? '1' : '0';
    } else {
      if (c != '0' && c != '1') throw SqlError("22P02", fmt::format("\"{}\" is not a valid binary digit", c));
      digits += c;
    }
  }
  return Value::bit(std::move(digits));
}

Value bit_resized(const Value& bits, int length) {
  if (bits.is_null()) return bits;
  std::string digits = bits.payload();
  digits.resize(static_cast<std::size_t>(length), '0');
  return Value::bit(std::move(digits));
}

void check_bit_length(const Value& bits, int length) {
  if (!bits.is_null() && bits.payload().size() != static_cast<std::size_t>(length)) {
    throw SqlError("22026", fmt::format("bit string length {} does not match type bit({})", bits.payload().size(), length));
  }
}

Value bit_to_integer(const Value& bits, Type to) {
  if (bits.is_null()) return Value::null(to);
  const std::string& digits = bits.payload();
  const std::size_t width = to == Type::int8 ? 64 : 32;
  if (digits.size() > width) throw SqlError("22003", to == Type::int8 ? "bigint out of range" : "integer out of range");
  std::uint64_t v = 0;
  for (char c : digits) v = (v << 1) | (c == '1' ? 1 : 0);
  if (to == Type::int8) return Value::integer(static_cast<std::int64_t>(v), Type::int8);
  return Value::integer(static_cast<std::int32_t>(static_cast<std::uint32_t>(v)), Type::int4);
}

Value integer_to_bit(const Value& integer, int length) {
  if (integer.is_null()) return Value::null(Type::bit);
  const std::int64_t v = integer.as_integer();
  std::string digits;
  for (int b = length - 1; b >= 0; --b) {
    const int shift = std::min(b, integer.type() == Type::int8 ? 63 : 31);  // sign-extended beyond the width
    digits += ((v >> shift) & 1) != 0 ? '1' : '0';
  }
  return Value::bit(std::move(digits));
}

bool is_binary_function(std::string_view name) {
  return name == "encode" || name == "decode" || name == "convert_to" || name == "gen_random_uuid";
}

Value binary_function(std::string_view name, const std::vector<Value>& args) {
  for (const Value& a : args) {
    if (a.is_null()) return Value::null(name == "encode" ? Type::text : Type::bytea);
  }
  if (name == "convert_to") {
    const std::string encoding = bin_text_arg(args.at(1));
    std::string upper = encoding;
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    if (upper != "UTF8" && upper != "UTF-8") {
      throw SqlError("0A000", fmt::format("convert_to(..., '{}') is not in lockstep's SQL subset (UTF8 is)", encoding));
    }
    return Value::bytea(bin_text_arg(args.at(0)));
  }
  const std::string format = bin_text_arg(args.at(1));
  if (name == "encode") {
    const std::string bytes = bin_bytes_arg(args.at(0), "encode");
    if (format == "hex") return Value::text(bin_hex_encode(bytes));
    if (format == "base64") return Value::text(bin_base64_encode(bytes));
    if (format == "escape") return Value::text(bin_escape_encode(bytes));
  } else {
    const std::string text = bin_text_arg(args.at(0));
    if (format == "hex") return Value::bytea(bin_hex_decode(text));
    if (format == "base64") return Value::bytea(bin_base64_decode(text));
    if (format == "escape") return Value::bytea(bin_escape_decode(text, false));
  }
  throw SqlError("22023", fmt::format("unrecognized encoding: \"{}\"", format));
}

Value bit_substring(const Value& bits, std::int64_t start, std::optional<std::int64_t> count) {
  const std::string& digits = bits.payload();
  const auto length = static_cast<std::int64_t>(digits.size());
  if (count && *count < 0) throw SqlError("22011", "negative substring length not allowed");
  const std::int64_t from = std::max<std::int64_t>(start, 1);
  const std::int64_t to = count ? std::min<std::int64_t>(start + *count, length + 1) : length + 1;  // exclusive, 1-based
  if (to <= from) return Value::bit("");
  return Value::bit(digits.substr(static_cast<std::size_t>(from - 1), static_cast<std::size_t>(to - from)));
}

Value get_bit(const Value& v, std::int64_t n) {
  if (v.type() == Type::bit) {
    const auto length = static_cast<std::int64_t>(v.payload().size());
    if (n < 0 || n >= length) throw SqlError("2202E", fmt::format("bit index {} out of valid range (0..{})", n, length - 1));
    return Value::integer(v.payload()[static_cast<std::size_t>(n)] == '1' ? 1 : 0, Type::int4);
  }
  const std::string& bytes = v.payload();
  const auto bits = static_cast<std::int64_t>(bytes.size()) * 8;
  if (n < 0 || n >= bits) throw SqlError("2202E", fmt::format("index {} out of valid range, 0..{}", n, bits - 1));
  const auto byte = static_cast<unsigned char>(bytes[static_cast<std::size_t>(n / 8)]);
  return Value::integer((byte >> (n % 8)) & 1, Type::int4);
}

std::optional<Value> binary_string_function(std::string_view name, const std::vector<Value>& args) {
  if (args.empty()) return std::nullopt;
  const Type first = args[0].type();
  const bool bits = first == Type::bit, bytes = first == Type::bytea;
  const auto integer = [](std::int64_t v) { return Value::integer(v, Type::int4); };
  if (name == "bit_length" && args.size() == 1 && (bits || bytes || first == Type::text || first == Type::unknown)) {
    if (args[0].is_null()) return Value::null(Type::int4);
    const std::size_t length = bits || bytes ? args[0].payload().size() : args[0].as_text().size();
    return integer(static_cast<std::int64_t>(length) * (bits ? 1 : 8));
  }
  if (!bits && !bytes) return std::nullopt;
  const bool returns_int = name == "length" || name == "octet_length" || name == "position" || name == "get_byte";
  const bool known = returns_int || name == "substring" || name == "substr" || name == "btrim" || name == "ltrim" || name == "rtrim";
  if (!known || (bits && name != "length" && name != "octet_length" && name != "position")) return std::nullopt;
  for (const Value& a : args) {
    if (a.is_null()) return Value::null(returns_int ? Type::int4 : first);
  }
  const std::string& s = args[0].payload();
  const auto size = static_cast<std::int64_t>(s.size());
  if (name == "length") return integer(size);
  if (name == "octet_length") return integer(bits ? (size + 7) / 8 : size);
  const auto same_type = [&](const Value& v) {
    if (v.type() == first) return v;
    if (v.type() == Type::unknown) return bits ? bit_input(v.as_text()) : bytea_input(v.as_text());
    throw SqlError("42883", fmt::format("function {}({}, {}) does not exist", name, type_name(first), type_name(v.type())));
  };
  if (name == "position") {  // position(needle IN s): s first
    const std::string needle = same_type(args.at(1)).payload();
    const std::size_t at = s.find(needle);
    return integer(at == std::string::npos ? 0 : static_cast<std::int64_t>(at) + 1);
  }
  if (name == "get_byte") {
    const std::int64_t n = cast(args.at(1), Type::int8).as_integer();
    if (n < 0 || n >= size) throw SqlError("2202E", fmt::format("index {} out of valid range, 0..{}", n, size - 1));
    return integer(static_cast<unsigned char>(s[static_cast<std::size_t>(n)]));
  }
  if (name == "substring" || name == "substr") {  // bytea_substr: 1-based, a start before 1 eats into the count
    const std::int64_t start = cast(args.at(1), Type::int8).as_integer();
    std::int64_t end = size + 1;
    if (args.size() == 3) {
      const std::int64_t count = cast(args[2], Type::int8).as_integer();
      if (count < 0) throw SqlError("22011", "negative substring length not allowed");
      end = std::min(end, start + count);
    }
    const std::int64_t from = std::max<std::int64_t>(start, 1);
    if (end <= from) return Value::bytea("");
    return Value::bytea(s.substr(static_cast<std::size_t>(from - 1), static_cast<std::size_t>(end - from)));
  }
  // btrim / ltrim / rtrim(bytea, bytea): the bytes of the second at either end.
  const std::string set = same_type(args.at(1)).payload();
  std::size_t begin = 0, stop = s.size();
  if (name != "rtrim") {
    while (begin < stop && set.find(s[begin]) != std::string::npos) ++begin;
  }
  if (name != "ltrim") {
    while (stop > begin && set.find(s[stop - 1]) != std::string::npos) --stop;
  }
  return Value::bytea(s.substr(begin, stop - begin));
}

}  // namespace lockstep::sql
