#include "lockstep/real/startup_settings.h"

#include <cctype>
#include <cstdlib>
#include <memory>

namespace lockstep::real {
namespace {

// One -c name=value of libpq's options: whitespace and backslashes in it escaped by a
// backslash (the server splits the options at unescaped whitespace: pg_split_opts).
std::string option_of(const std::string& name, const std::string& value) {
  std::string out = "-c ";
  for (const char ch : name + "=" + value) {
    if (std::isspace(static_cast<unsigned char>(ch)) != 0 || ch == '\\') out += '\\';
    out += ch;
  }
  return out;
}

}  // namespace

PGconn* connect_with_settings(const std::string& conninfo, const std::vector<std::pair<std::string, std::string>>& settings) {
  if (settings.empty()) return PQconnectdb(conninfo.c_str());
  char* error = nullptr;
  const std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> parsed(PQconninfoParse(conninfo.c_str(), &error), PQconninfoFree);
  if (parsed == nullptr) {
    PQfreemem(error);
    return PQconnectdb(conninfo.c_str());
  }
  std::string options;
  std::vector<const char*> keys, values;
  for (const PQconninfoOption* o = parsed.get(); o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    if (std::string(o->keyword) == "options") {
      options = o->val;
      continue;
    }
    keys.push_back(o->keyword);
    values.push_back(o->val);
  }
  // The conninfo's own options, else PGOPTIONS' (which an explicit options would hide).
  if (const char* env = std::getenv("PGOPTIONS"); options.empty() && env != nullptr) options = env;
  for (const auto& [name, value] : settings) options += (options.empty() ? "" : " ") + option_of(name, value);
  keys.push_back("options");
  values.push_back(options.c_str());
  keys.push_back(nullptr);
  values.push_back(nullptr);
  return PQconnectdbParams(keys.data(), values.data(), 0);
}

}  // namespace lockstep::real
