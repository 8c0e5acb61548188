// model/pg_rows.cc: the typed getters of pg::Rows (model/pg.h).
#include <charconv>

#include <fmt/format.h>

#include "lockstep/model/pg.h"
#include "lockstep/model/sql/value.h"

namespace lockstep::pg {

std::int64_t Rows::affected() const {
  const auto space = tag.rfind(' ');
  if (space == std::string::npos) return 0;
  std::int64_t n = 0;
  const char* first = tag.data() + space + 1;
  const auto [end, ec] = std::from_chars(first, tag.data() + tag.size(), n);
  return ec == std::errc() && end == tag.data() + tag.size() ? n : 0;
}

const std::optional<std::string>& Rows::cell(std::size_t row, std::string_view column) const {
  if (row >= rows.size()) throw ModelError(fmt::format("row {} of a result with {} rows", row, rows.size()));
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (columns[c] == column) return rows[row].at(c);
  }
  throw ModelError(fmt::format("no column \"{}\" in the result (columns: {})", column, fmt::join(columns, ", ")));
}

bool Rows::is_null(std::size_t row, std::string_view column) const { return !cell(row, column).has_value(); }

const std::string& Rows::text(std::size_t row, std::string_view column) const {
  const auto& v = cell(row, column);
  if (!v) throw ModelError(fmt::format("column \"{}\" of row {} is NULL", column, row));
  return *v;
}

namespace {
template <typename F>
auto typed(const std::string& text, std::string_view column, F&& f) {
  try {
    return f(sql::Value::unknown(text));
  } catch (const sql::SqlError& e) {
    throw ModelError(fmt::format("column \"{}\": {}", column, e.what()));
  }
}
}  // namespace

std::int64_t Rows::int64(std::size_t row, std::string_view column) const {
  return typed(text(row, column), column, [](const sql::Value& v) { return sql::cast(v, sql::Type::int8).as_integer(); });
}

bool Rows::boolean(std::size_t row, std::string_view column) const {
  return typed(text(row, column), column, [](const sql::Value& v) { return sql::cast(v, sql::Type::boolean).as_bool(); });
}

Time Rows::timestamp(std::size_t row, std::string_view column) const {
  return typed(text(row, column), column, [](const sql::Value& v) {
    return Time(std::chrono::microseconds(sql::cast(v, sql::Type::timestamptz).micros() - kSimulatedClockOrigin));
  });
}

std::string timestamptz_text(Time t) {
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t).count();
  return sql::Value::timestamptz(kSimulatedClockOrigin + micros).text_output();
}

}  // namespace lockstep::pg
