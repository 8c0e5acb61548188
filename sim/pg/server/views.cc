// sim/pg/server/views.cc: the simulated server's views (CREATE VIEW, sim_pg.h's Server::View):
// kept by name, and read in place of their names in a statement's text before it is parsed
// (model/sql/views.h), as PostgreSQL's rewriter reads them. A view's name resolves as a
// table's: its schema as written, else search_path.
#include <unordered_map>

#include <fmt/format.h>

#include "lockstep/model/sql/views.h"
#include "lockstep/sim/pg/executor/sql_schemas.h"
#include "lockstep/sim/pg/server/sim_pg.h"

namespace lockstep::sim::pg {

void Server::set_view(const std::string& name, std::optional<View> v) {
  if (v) {
    views_.insert_or_assign(name, std::move(*v));
  } else if (const auto it = views_.find(name); it != views_.end()) {
    views_.erase(it);
  }
  views_signature_.clear();
  for (const auto& [n, view] : views_) views_signature_ += fmt::format("{}\x1f{}\x1f{}\x1e", n, view.schema, view.query);
}

std::string Server::with_views_read(std::string_view text) const {
  if (views_.empty()) return std::string(text);
  // Parsed once per text, views and search_path (a thread's executions each build the server
  // again: the same views, mostly).
  thread_local std::unordered_map<std::string, std::string> cache;
  std::string key = fmt::format("{}\x1d{}\x1d{}", text, views_signature_, style().search_path);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  Server& self = const_cast<Server&>(*this);  // (on_search_path reads the schemas only)
  std::string out = sql::expand_views(text, [&](std::string_view schema, std::string_view name) -> const std::string* {
    const View* v = view(name);
    if (v == nullptr) return nullptr;
    if (!schema.empty() ? schema != v->schema : !on_search_path(v->schema, self)) return nullptr;
    return &v->query;
  });
  if (cache.size() >= 1024) cache.clear();
  cache.emplace(std::move(key), out);
  return out;
}

}  // namespace lockstep::sim::pg
