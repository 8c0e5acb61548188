// model/sql/hash_functions.h: the hashes lock libraries turn a name into an advisory lock key
// with: md5(text) (RFC 1321, as 32 lower-case hex digits), sha224(bytea) and sha256(bytea)
// (FIPS 180-4, 28 or 32 bytes), hashtext(text) and hashtextextended(text, seed) (PostgreSQL's
// hash_bytes, Bob Jenkins' lookup3 mix as PostgreSQL uses it, little-endian byte order, as a
// signed int4). Both equal the server's values for the same bytes (checked in
// tests/sql-specs/hash-keys.spec).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lockstep::sql {

std::string md5_hex(std::string_view bytes);
// SHA-224 of the bytes: the 28-byte digest.
std::string sha224(std::string_view bytes);
std::string sha256(std::string_view bytes);  // FIPS 180-4, 32 bytes
std::int32_t hash_text(std::string_view bytes);
// hash_bytes_uint32: hashint4's hash of one 32-bit value (and hashint2's, hashchar's, hashint8's).
std::uint32_t hash_uint32(std::uint32_t k);
// hashtextextended(text, seed): hash_bytes_extended, 64 bits (a seed of 0 hashes as no seed).
std::int64_t hash_text_extended(std::string_view bytes, std::uint64_t seed);

}  // namespace lockstep::sql
