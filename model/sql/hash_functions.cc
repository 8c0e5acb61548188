#include "lockstep/model/sql/hash_functions.h"


#include <array>
#include <bit>
#include <cmath>
#include <optional>
#include <utility>

#include <fmt/format.h>

namespace lockstep::sql {
namespace {

// RFC 1321's per-round shifts and sines.
constexpr std::array<std::uint32_t, 64> kShift = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                                                  5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
                                                  4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                                                  6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};

std::array<std::uint32_t, 64> sine_table() {
  std::array<std::uint32_t, 64> k{};
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint32_t>(std::floor(std::fabs(std::sin(static_cast<double>(i + 1))) * 4294967296.0));
  return k;
}

std::uint32_t word_at(const unsigned char* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 | static_cast<std::uint32_t>(p[2]) << 16 |
         static_cast<std::uint32_t>(p[3]) << 24;
}

void jenkins_mix(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c) {
  a -= c; a ^= std::rotl(c, 4);  c += b;
  b -= a; b ^= std::rotl(a, 6);  a += c;
  c -= b; c ^= std::rotl(b, 8);  b += a;
  a -= c; a ^= std::rotl(c, 16); c += b;
  b -= a; b ^= std::rotl(a, 19); a += c;
  c -= b; c ^= std::rotl(b, 4);  b += a;
}

void jenkins_final(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c) {
  c ^= b; c -= std::rotl(b, 14);
  a ^= c; a -= std::rotl(c, 11);
  b ^= a; b -= std::rotl(a, 25);
  c ^= b; c -= std::rotl(b, 16);
  a ^= c; a -= std::rotl(c, 4);
  b ^= a; b -= std::rotl(a, 14);
  c ^= b; c -= std::rotl(b, 24);
}

}  // namespace

namespace {

// FIPS 180-4's SHA-256 compression from the initial values `h`, its first `words` words out
// (SHA-256: 8; SHA-224: its own initial values, 7).
std::string sha2_256(std::string_view bytes, std::array<std::uint32_t, 8> h, std::size_t words) {
  static constexpr std::array<std::uint32_t, 64> k = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
      0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
      0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
      0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
      0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
      0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
      0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
  std::string m(bytes);
  const std::uint64_t bits = static_cast<std::uint64_t>(bytes.size()) * 8;
  m += static_cast<char>(0x80);
  while (m.size() % 64 != 56) m += '\0';
  for (int i = 7; i >= 0; --i) m += static_cast<char>((bits >> (8 * i)) & 0xff);
  auto rotr = [](std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
  for (std::size_t block = 0; block < m.size(); block += 64) {
    std::array<std::uint32_t, 64> w{};
    for (std::size_t t = 0; t < 16; ++t) {
      for (std::size_t b = 0; b < 4; ++b) w[t] = (w[t] << 8) | static_cast<unsigned char>(m[block + 4 * t + b]);
    }
    for (std::size_t t = 16; t < 64; ++t) {
      const std::uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      const std::uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    std::array<std::uint32_t, 8> v = h;
    for (std::size_t t = 0; t < 64; ++t) {
      const std::uint32_t s1 = rotr(v[4], 6) ^ rotr(v[4], 11) ^ rotr(v[4], 25);
      const std::uint32_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
      const std::uint32_t t1 = v[7] + s1 + ch + k[t] + w[t];
      const std::uint32_t s0 = rotr(v[0], 2) ^ rotr(v[0], 13) ^ rotr(v[0], 22);
      const std::uint32_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
      const std::uint32_t t2 = s0 + maj;
      v = {t1 + t2, v[0], v[1], v[2], v[3] + t1, v[4], v[5], v[6]};
    }
    for (std::size_t i = 0; i < 8; ++i) h[i] += v[i];
  }
  std::string out;
  for (std::size_t i = 0; i < words; ++i) {
    for (int b = 3; b >= 0; --b) out += static_cast<char>((h[i] >> (8 * b)) & 0xff);
  }
  return out;
}

}  // namespace

std::string sha224(std::string_view bytes) {
  return sha2_256(bytes, {0xc1059ed8, 0x367cd507, 0x3070dd17, 0xf70e5939, 0xffc00b31, 0x68581511, 0x64f98fa7, 0xbefa4fa4}, 7);
}

std::string sha256(std::string_view bytes) {
  return sha2_256(bytes, {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}, 8);
}

std::string md5_hex(std::string_view bytes) {
  static const std::array<std::uint32_t, 64> kSine = sine_table();
  std::string message(bytes);
  const std::uint64_t bit_length = static_cast<std::uint64_t>(bytes.size()) * 8;
  message += static_cast<char>(0x80);
  while (message.size() % 64 != 56) message += '\0';
  for (int i = 0; i < 8; ++i) message += static_cast<char>((bit_length >> (8 * i)) & 0xFF);
  std::uint32_t h[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
  for (std::size_t chunk = 0; chunk < message.size(); chunk += 64) {
    const auto* p = reinterpret_cast<const unsigned char*>(message.data() + chunk);
    std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
    for (std::uint32_t i = 0; i < 64; ++i) {
      std::uint32_t f = 0, g = 0;
      if (i < 16) {
        f = (b & c) | (~b & d);
        g = i;
      } else if (i < 32) {
        f = (d & b) | (~d & c);
        g = (5 * i + 1) % 16;
      } else if (i < 48) {
        f = b ^ c ^ d;
        g = (3 * i + 5) % 16;
      } else {
        f = c ^ (b | ~d);
        g = (7 * i) % 16;
      }
      const std::uint32_t rotated = std::rotl(a + f + kSine[i] + word_at(p + 4 * g), static_cast<int>(kShift[i]));
      a = d;
      d = c;
      c = b;
      b += rotated;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
  }
  std::string out;
  for (const std::uint32_t v : h) {
    for (int i = 0; i < 4; ++i) out += fmt::format("{:02x}", (v >> (8 * i)) & 0xFF);
  }
  return out;
}

namespace {

// hash_bytes (seeded: hash_bytes_extended, whose seed is mixed in first): b and c at the end.
std::pair<std::uint32_t, std::uint32_t> jenkins_hash(std::string_view bytes, std::optional<std::uint64_t> seed) {
  const auto* k = reinterpret_cast<const unsigned char*>(bytes.data());
  auto len = static_cast<std::uint32_t>(bytes.size());
  std::uint32_t a = 0x9e3779b9 + len + 3923095, b = a, c = a;
  if (seed && *seed != 0) {
    a += static_cast<std::uint32_t>(*seed >> 32);
    b += static_cast<std::uint32_t>(*seed);
    jenkins_mix(a, b, c);
  }
  while (len >= 12) {
    a += word_at(k);
    b += word_at(k + 4);
    c += word_at(k + 8);
    jenkins_mix(a, b, c);
    k += 12;
    len -= 12;
  }
  // The last 11 bytes; c's lowest byte is left for the length, as hash_bytes leaves it.
  switch (len) {
    case 11: c += static_cast<std::uint32_t>(k[10]) << 24; [[fallthrough]];
    case 10: c += static_cast<std::uint32_t>(k[9]) << 16; [[fallthrough]];
    case 9: c += static_cast<std::uint32_t>(k[8]) << 8; [[fallthrough]];
    case 8: b += static_cast<std::uint32_t>(k[7]) << 24; [[fallthrough]];
    case 7: b += static_cast<std::uint32_t>(k[6]) << 16; [[fallthrough]];
    case 6: b += static_cast<std::uint32_t>(k[5]) << 8; [[fallthrough]];
    case 5: b += k[4]; [[fallthrough]];
    case 4: a += static_cast<std::uint32_t>(k[3]) << 24; [[fallthrough]];
    case 3: a += static_cast<std::uint32_t>(k[2]) << 16; [[fallthrough]];
    case 2: a += static_cast<std::uint32_t>(k[1]) << 8; [[fallthrough]];
    case 1: a += k[0]; break;
    default: break;
  }
  jenkins_final(a, b, c);
  return {b, c};
}

}  // namespace

std::uint32_t hash_uint32(std::uint32_t k) {
  std::uint32_t a = 0x9e3779b9u + 4u + 3923095u, b = a, c = a;
  a += k;
  jenkins_final(a, b, c);
  return c;
}

std::int32_t hash_text(std::string_view bytes) { return static_cast<std::int32_t>(jenkins_hash(bytes, std::nullopt).second); }

std::int64_t hash_text_extended(std::string_view bytes, std::uint64_t seed) {
  const auto [b, c] = jenkins_hash(bytes, seed);
  return static_cast<std::int64_t>((static_cast<std::uint64_t>(b) << 32) | c);
}

}  // namespace lockstep::sql
