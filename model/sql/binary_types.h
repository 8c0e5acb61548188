// model/sql/binary_types.h: uuid, bytea and bit(n) as PostgreSQL 15 reads, prints, compares
// and casts them, and the functions on them lock and queue libraries call.
//
// uuid keeps its canonical text (lower case, 8-4-4-4-12: uuid_out), so text order is the
// server's byte order; input takes upper case, braces and a hyphen after any four digits.
// bytea keeps its bytes and prints as hex (bytea_output = hex); input is hex (`\x...`) or
// the escape format. bit(n) keeps its digits; input is binary (`101`, `b101`) or hex
// (`x1f`); a cast to bit(n) pads or truncates on the right, an assignment to a bit(n)
// column of another length is 22026; bit to integer and bigint as bittoint4 / bittoint8.
// gen_random_uuid() is deterministic here: a version-4 uuid drawn from a seed the caller
// gives (the session and its count of calls), so a schedule replays to the same values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/model/sql/value.h"

namespace lockstep::sql {

Value uuid_input(std::string_view text);
// A version-4, variant-1 uuid whose random bits come from `seed`.
Value uuid_from_seed(std::uint64_t seed);

Value bytea_input(std::string_view text);
std::string bytea_output(std::string_view bytes);  // \x and lower-case hex

// bit input (no length: the digits given).
Value bit_input(std::string_view text);
// A bit string padded with zeros or truncated on the right to `length` (an explicit cast).
Value bit_resized(const Value& bits, int length);
// 22026 unless the string has exactly `length` bits (an assignment to a bit(length) column).
void check_bit_length(const Value& bits, int length);
// bit to integer / bigint (22003 beyond its width), and an integer to bit(length).
Value bit_to_integer(const Value& bits, Type to);
Value integer_to_bit(const Value& integer, int length);

// substring(bit FROM start [FOR count]) (bitsubstr, 1-based as text's) and get_bit of a bit
// string (bit 0 the leftmost) or a bytea (bit 0 the first byte's lowest), as the server.
Value bit_substring(const Value& bits, std::int64_t start, std::optional<std::int64_t> count);
Value get_bit(const Value& bits_or_bytes, std::int64_t n);

// The string functions of a bit string or a bytea first argument, as the server's bit and
// bytea overloads: length, octet_length, bit_length (also of text), position (1-based; of a
// bytea or bit string in one of its type), substring / substr (bytea), btrim / ltrim / rtrim
// (bytea, bytea), get_byte. nullopt: not one of these (the text functions' then).
std::optional<Value> binary_string_function(std::string_view name, const std::vector<Value>& args);

// encode, decode, convert_to, sha-less byte functions: the names here, with their values.
bool is_binary_function(std::string_view name);
Value binary_function(std::string_view name, const std::vector<Value>& args);

}  // namespace lockstep::sql
