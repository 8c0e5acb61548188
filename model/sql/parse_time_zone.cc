// model/sql/parse_time_zone.cc: SET TIME ZONE's value as a number of hours or an interval
// (east, as check_timezone reads them), named as the server names such an offset; a text is
// a zone's name (read elsewhere). Part of model/sql/parse.h's parser (Reader: parse_reader.h).
#include <cstdlib>

#include "lockstep/model/sql/interval.h"
#include "lockstep/model/sql/parse_reader.h"
#include "lockstep/model/sql/session_style.h"

namespace lockstep::sql {
namespace detail {

std::optional<std::string> Reader::zone_offset_value(const json& args, int loc) const {
  if (args.size() != 1) return std::nullopt;
  const auto [kind, c] = node(args.at(0));
  if (kind == "TypeCast") {  // SET TIME ZONE INTERVAL '+05:00' HOUR TO MINUTE
    const auto [arg_kind, arg] = node(c->at("arg"));
    const std::vector<std::string> type = names(c->at("typeName").at("names"));
    if (arg_kind != "A_Const" || !arg->contains("sval") || type.empty() || type.back() != "interval") refuse("this value for TimeZone", loc);
    const std::string text = arg->at("sval").value("sval", "");
    if (c->at("typeName").contains("typmods") && text.find(':') == std::string::npos) refuse("an interval with fields for TimeZone", loc);
    try {
      const Interval iv = from_text(text, Type::interval).as_interval();
      if (iv.months != 0 || iv.days != 0) fail("22023", fmt::format("invalid value for parameter \"TimeZone\": \"INTERVAL '{}'\"", text), loc);
      return zone_name_of_offset(static_cast<double>(iv.micros) / 1e6, text);
    } catch (const SqlInputError&) {
      throw;
    } catch (const SqlError& e) {
      fail(e.sqlstate(), e.what(), loc);
    }
  }
  if (kind != "A_Const") return std::nullopt;
  std::string text;
  if (c->contains("ival")) {
    const json& ival = c->at("ival");  // 0 or a negative one is left out of the JSON: read from the text
    text = std::to_string(ival.contains("ival") ? ival.value("ival", std::int64_t{0}) : integer_at(location_of(*c, loc)));
  } else if (c->contains("fval")) {
    text = c->at("fval").value("fval", "");
  } else if (c->contains("sval")) {
    text = c->at("sval").value("sval", "");
  } else {
    return std::nullopt;
  }
  // A number of hours (east, ISO's sign) as check_timezone takes it: all of the text read by
  // strtod; any other text is a zone's name.
  char* end = nullptr;
  const double hours = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0') return std::nullopt;
  try {
    return zone_name_of_offset(hours * 3600, text);
  } catch (const SqlError& e) {
    fail(e.sqlstate(), e.what(), loc);
  }
}

}  // namespace detail
}  // namespace lockstep::sql
