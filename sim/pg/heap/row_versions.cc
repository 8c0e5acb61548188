// sim/pg/heap/row_versions.cc: a row's versions (sim/pg/heap/row_versions.h): which one a
// snapshot sees, how it ended, and a session's write of a new one.
#include "lockstep/sim/pg/heap/row_versions.h"

namespace lockstep::sim::pg {

const std::optional<lockstep::pg::Row>& RowState::version_at(std::uint64_t seq) const {
  static const std::optional<lockstep::pg::Row> kNone;
  if (committed_seq <= seq) return committed;
  for (auto it = older.rbegin(); it != older.rend(); ++it) {
    if (it->seq <= seq) return it->version;
  }
  return kNone;  // committed after the snapshot, with nothing before it: not there yet
}

HeapPlace RowState::place_at(std::uint64_t seq) const {
  if (committed_seq <= seq) return committed_place;
  for (auto it = older.rbegin(); it != older.rend(); ++it) {
    if (it->seq <= seq) return it->place;
  }
  return {};
}

bool RowState::updated_since(std::uint64_t seq) const {
  for (auto it = older.rbegin(); it != older.rend(); ++it) {
    if (it->seq <= seq) return it->updated;
  }
  return committed.has_value();  // nothing was there for the snapshot: as the newest version says
}

bool RowState::changed_keeping_keys_only_since(std::uint64_t seq) const {
  if (committed_seq <= seq || !committed) return false;
  auto first = older.end();  // the version `seq` sees, then each that replaced it
  for (auto it = older.begin(); it != older.end(); ++it) {
    if (it->seq <= seq) first = it;
  }
  if (first == older.end()) return false;
  return std::all_of(first, older.end(), [](const Older& o) { return o.version.has_value() && o.updated && !o.keys_updated; });
}

void RowState::write(int pid, std::optional<lockstep::pg::Row> version, bool for_update, std::uint64_t position, bool hot) {
  auto mine = pending.find(pid);
  if (mine != pending.end()) {
    if (version) {
      // An update of its own version: another new tuple.
      mine->second.place = {position, hot ? mine->second.place.root : position};
      // One that holds the row FOR UPDATE marks its keys updated (compute_new_xmax_infomask
      // keeps the stronger lock): a FOR KEY SHARE that follows the chain from the first
      // version meets it.
      if (for_update && updated_by == pid) updated_keys = true;
    }
    if (mine->second.version) mine->second.earlier.push_back({std::move(*mine->second.version), mine->second.made_in});
    mine->second.version = std::move(version);
    return;
  }
  if (committed && version) {
    updated_by = pid;
    updated_keys = for_update;
  }
  // A deletion marks the committed tuple in place: it keeps its position.
  const HeapPlace at = !version ? committed_place : HeapPlace{position, hot ? committed_place.root : position};
  pending.emplace(pid, Written{std::move(version), at});
}

}  // namespace lockstep::sim::pg
