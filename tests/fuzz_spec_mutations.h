// tests/fuzz_spec_mutations.h: the mutations the fuzzer (tests/fuzz_inputs.cc) applies to
// `.spec` files, PostgreSQL's isolation format with lockstep's check / expect / fault lines.
// They aim where the reader, the SQL parser and the executor meet: the spec's structure
// (lines, blocks, sessions, permutations and blocker annotations), SQL tokens, values out of
// every range, nesting far past any bound, constructs outside the simulated subset, and raw
// bytes (invalid UTF-8 among them). Deterministic for a given generator state.
#pragma once

#include <random>
#include <span>
#include <string>
#include <vector>

namespace lockstep::fuzz {

using Rng = std::mt19937_64;

// A number in [0, n) (0 when n is 0).
std::uint64_t below(Rng& rng, std::uint64_t n);

// One byte-level mutation: a byte flipped, one of `tokens` inserted ("" inserts a NUL byte),
// a run deleted or repeated, or the text cut.
std::string mutate_bytes(std::string s, std::span<const char* const> tokens, Rng& rng);

// One mutation of `text`, a .spec file; `seeds` are the other specs, for lines taken across.
std::string mutate_spec(const std::string& text, const std::vector<std::string>& seeds, Rng& rng);

}  // namespace lockstep::fuzz
