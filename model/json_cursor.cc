#include "lockstep/model/json_cursor.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

namespace lockstep {

namespace {

// Where the text first nests deeper than kMaxInputDepth, as "line L, column C", or "".
// A single pass that knows strings: brackets inside them do not count.
std::string first_too_deep(std::string_view text) {
  int depth = 0;
  bool in_string = false, escaped = false;
  std::size_t line = 1, column = 0;
  for (char c : text) {
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
    }
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxInputDepth) return fmt::format("line {}, column {}", line, column);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return "";
}

}  // namespace

nlohmann::json parse_json_text(std::string_view text, const std::string& name) {
  if (text.size() > kMaxInputBytes) {
    throw InputError(fmt::format("{}: {} bytes: larger than the {} MiB an input may have", name, text.size(),
                                 kMaxInputBytes >> 20));
  }
  if (const std::string at = first_too_deep(text); !at.empty()) {
    throw InputError(fmt::format("{}: invalid JSON: at {}: nested more than {} levels deep", name, at, kMaxInputDepth));
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line L, column C: ...",
    // or for a number out of range "[json.exception.out_of_range.406] number overflow ...".
    std::string what = e.what();
    if (const auto end = what.find("] "); what.starts_with("[json.exception.") && end != std::string::npos) {
      what = what.substr(end + 2);
    }
    throw InputError(fmt::format("{}: invalid JSON: {}", name, what));
  }
}

nlohmann::json read_json_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw InputError(fmt::format("{}: no such file", path));
  if (std::filesystem::is_directory(status)) throw InputError(fmt::format("{}: is a directory, not a file", path));
  if (!std::filesystem::is_regular_file(status)) {
    throw InputError(fmt::format("{}: not a regular file (a FIFO, socket or device is not read)", path));
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxInputBytes) {
    throw InputError(fmt::format("{}: {} bytes: larger than the {} MiB an input may have", path, size, kMaxInputBytes >> 20));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open file", path));
  std::string text;
  text.resize(static_cast<std::size_t>(ec ? 0 : size));
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  // The file may have grown since: read on, within the bound.
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxInputBytes) break;
  }
  return parse_json_text(text, path);
}

std::string json_pointer_escape(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

JsonCursor::JsonCursor(const nlohmann::json& value, std::string file, std::string pointer)
    : value_(&value), file_(std::move(file)), pointer_(std::move(pointer)) {}

void JsonCursor::fail(std::string_view message) const {
  throw InputError(
      fmt::format("{}: {}: {}", file_, pointer_.empty() ? "/" : pointer_, message));
}

std::string JsonCursor::describe_value() const {
  // Never the whole of a large value: its size for a container, a prefix for a string.
  if (value_->is_array()) return fmt::format("an array of {} items", value_->size());
  if (value_->is_object()) return fmt::format("an object with {} keys", value_->size());
  if (value_->is_string()) {
    const auto& text = value_->get_ref<const std::string&>();
    if (text.size() > 57) return fmt::format("string {}...", nlohmann::json(text.substr(0, 57)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  return fmt::format("{} {}", value_->type_name(), value_->dump());
}

void JsonCursor::require_object() const {
  if (!value_->is_object()) fail(fmt::format("expected an object, got {}", describe_value()));
}

JsonCursor JsonCursor::child(const nlohmann::json& value, std::string_view key) const {
  return JsonCursor(value, file_, pointer_ + "/" + json_pointer_escape(key));
}

void JsonCursor::expect_keys(std::initializer_list<std::string_view> allowed) const {
  expect_keys(std::vector<std::string_view>(allowed));
}

void JsonCursor::expect_keys(const std::vector<std::string_view>& allowed) const {
  require_object();
  for (const auto& [key, value] : value_->items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || a == key;
    if (!known) {
      std::string list;
      for (std::string_view a : allowed) list += fmt::format("{}{}", list.empty() ? "" : ", ", a);
      child(value, key).fail(fmt::format("unknown key \"{}\" (expected one of: {})", key, list));
    }
  }
}

JsonCursor JsonCursor::at(std::string_view key) const {
  auto found = find(key);
  if (!found) fail(fmt::format("missing required key \"{}\"", key));
  return *found;
}

std::optional<JsonCursor> JsonCursor::find(std::string_view key) const {
  require_object();
  auto it = value_->find(std::string(key));
  if (it == value_->end()) return std::nullopt;
  return child(*it, key);
}

std::vector<std::string> JsonCursor::keys() const {
  require_object();
  std::vector<std::string> out;
  for (const auto& [key, value] : value_->items()) out.push_back(key);
  return out;
}

std::vector<JsonCursor> JsonCursor::items() const {
  if (!value_->is_array()) fail(fmt::format("expected an array, got {}", describe_value()));
  std::vector<JsonCursor> out;
  out.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i) {
    out.push_back(child((*value_)[i], std::to_string(i)));
  }
  return out;
}

std::string JsonCursor::as_string() const {
  if (!value_->is_string()) fail(fmt::format("expected a string, got {}", describe_value()));
  return value_->get<std::string>();
}

bool JsonCursor::as_bool() const {
  if (!value_->is_boolean()) fail(fmt::format("expected true or false, got {}", describe_value()));
  return value_->get<bool>();
}

std::int64_t JsonCursor::as_int(std::int64_t min, std::int64_t max) const {
  if (!value_->is_number_integer()) {
    fail(fmt::format("expected an integer, got {}", describe_value()));
  }
  if (value_->is_number_unsigned() && value_->get<std::uint64_t>() > INT64_MAX) {
    fail(fmt::format("expected an integer in [{}, {}], got {}", min, max, value_->dump()));
  }
  const auto v = value_->get<std::int64_t>();
  if (v < min || v > max) {
    fail(fmt::format("expected an integer in [{}, {}], got {}", min, max, v));
  }
  return v;
}

std::uint64_t JsonCursor::as_uint() const {
  // Parsed JSON gives non-negative integers the unsigned type, built JSON may not.
  const bool non_negative = value_->is_number_unsigned() ||
                            (value_->is_number_integer() && value_->get<std::int64_t>() >= 0);
  if (!non_negative) fail(fmt::format("expected a non-negative integer, got {}", describe_value()));
  return value_->get<std::uint64_t>();
}

double JsonCursor::as_number(double min, double max) const {
  if (!value_->is_number()) fail(fmt::format("expected a number, got {}", describe_value()));
  const double v = value_->get<double>();
  if (!(v >= min && v <= max)) fail(fmt::format("expected a number in [{}, {}], got {}", min, max, v));
  return v;
}

}  // namespace lockstep
