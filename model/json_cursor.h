// model/json_cursor.h: strict, pointer-tracking reading of JSON input files.
//
// Scenario and trace files are read through a JsonCursor: a value plus its JSON pointer and
// the file it came from. Every accessor checks the type and range it expects and otherwise
// throws InputError naming the file, the JSON pointer of the bad value and what was
// expected. Objects are read with `expect_keys`, so an unknown key is an error, never
// silently ignored.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace lockstep {

// Bad input: a malformed scenario or trace, an unknown name. The CLI exits 2 on it.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bounds on every input file, so that no input can exhaust the stack or the memory: the
// parser's own stack grows with nesting, and so does every recursive walk over a value
// (dump, comparison, destruction).
inline constexpr std::uint64_t kMaxInputBytes = 256ull << 20;  // 256 MiB: a trace of ~10^6 steps
inline constexpr int kMaxInputDepth = 128;                      // arrays and objects inside each other

// Reads and parses a JSON file. Throws InputError naming the file and what is wrong: not a
// regular file (a directory, FIFO or device is refused by name), larger than
// kMaxInputBytes, nested deeper than kMaxInputDepth (with the line and column), a syntax
// error (line and column), a number out of range.
nlohmann::json read_json_file(const std::string& path);

// The same checks on text already in memory; `name` names it in messages.
nlohmann::json parse_json_text(std::string_view text, const std::string& name);

// Escapes a key for use in a JSON pointer (RFC 6901: ~ -> ~0, / -> ~1).
std::string json_pointer_escape(std::string_view key);

class JsonCursor {
 public:
  // `file` names the source in messages. The cursor refers to `value`, which must outlive it.
  JsonCursor(const nlohmann::json& value, std::string file, std::string pointer = "");

  const nlohmann::json& value() const { return *value_; }
  const std::string& pointer() const { return pointer_; }
  const std::string& file() const { return file_; }

  // Throws InputError: "<file>: <pointer>: <message>".
  [[noreturn]] void fail(std::string_view message) const;

  bool is_object() const { return value_->is_object(); }
  bool is_array() const { return value_->is_array(); }
  bool is_string() const { return value_->is_string(); }

  // Object access. REQUIRES (checked): this is an object.
  void expect_keys(std::initializer_list<std::string_view> allowed) const;
  void expect_keys(const std::vector<std::string_view>& allowed) const;
  JsonCursor at(std::string_view key) const;  // required key
  std::optional<JsonCursor> find(std::string_view key) const;
  std::vector<std::string> keys() const;

  // Array access. REQUIRES (checked): this is an array.
  std::vector<JsonCursor> items() const;

  std::string as_string() const;
  bool as_bool() const;
  std::int64_t as_int(std::int64_t min = INT64_MIN, std::int64_t max = INT64_MAX) const;
  std::uint64_t as_uint() const;
  double as_number(double min, double max) const;

 private:
  JsonCursor child(const nlohmann::json& value, std::string_view key) const;
  void require_object() const;
  std::string describe_value() const;

  const nlohmann::json* value_;
  std::string file_;
  std::string pointer_;
};

}  // namespace lockstep
