#include "lockstep/model/env.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/model/pg.h"

namespace lockstep {

std::unique_ptr<pg::Pool> Env::new_pg_pool(const pg::PoolConfig& /*config*/) {
  throw ModelError("this Env has no PostgreSQL backend");
}

Filesystem& Env::filesystem() { throw ModelError("this Env has no filesystem"); }
void Env::crash_points(CrashKind /*kind*/) {}
void Env::no_crash_points() {}

std::string_view fs_status_name(FsStatus status) {
  switch (status) {
    case FsStatus::ok: return "ok";
    case FsStatus::not_found: return "ENOENT";
    case FsStatus::exists: return "EEXIST";
    case FsStatus::not_empty: return "ENOTEMPTY";
    case FsStatus::not_a_directory: return "ENOTDIR";
    case FsStatus::is_a_directory: return "EISDIR";
    case FsStatus::io_error: return "EIO";
  }
  return "?";
}

std::string_view crash_kind_name(CrashKind kind) { return kind == CrashKind::machine ? "machine" : "process"; }

namespace {

// The value of `event`'s field named `name` when it holds a T.
template <typename T>
std::optional<T> event_field_value(const Event& event, std::string_view name) {
  const auto f = std::find_if(event.fields.begin(), event.fields.end(), [&](const EventField& x) { return x.name == name; });
  if (f == event.fields.end()) return std::nullopt;
  if (const auto* v = std::get_if<T>(&f->value)) return *v;
  return std::nullopt;
}

}  // namespace

std::optional<std::int64_t> Event::number(std::string_view field) const { return event_field_value<std::int64_t>(*this, field); }
std::optional<std::string_view> Event::text(std::string_view field) const { return event_field_value<std::string_view>(*this, field); }

std::string event_values_text(const Event& event) {
  if (event.fields.empty()) return fmt::format("{} {}", event.subject, event.value);
  std::string out;
  for (const EventField& f : event.fields) {
    if (!out.empty()) out += ' ';
    out += f.name;
    out += '=';
    if (const auto* n = std::get_if<std::int64_t>(&f.value)) {
      out += std::to_string(*n);
      continue;
    }
    const std::string_view t = std::get<std::string_view>(f.value);
    const bool plain = !t.empty() && t.find_first_of(" =\"\t\n") == std::string_view::npos;
    out += plain ? std::string(t) : nlohmann::json(std::string(t)).dump();
  }
  return out;
}

void Env::hot(std::string_view, Duration) {}
void Env::cold(std::string_view) {}

}  // namespace lockstep
