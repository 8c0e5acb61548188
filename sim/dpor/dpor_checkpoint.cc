// sim/dpor/dpor_checkpoint.cc: the DPOR search's state as JSON and back (Checkpointing::checkpoint):
// the path of nodes where the next execution begins, each with its wakeup tree (or source
// set), sleep set and what was explored there, and the wakeup tree that execution inherits.
// Everything the search decides from is in it; the race analysis's scratch is not (it is
// rebuilt from each execution). Compact arrays, not objects: a path has thousands of nodes.
#include <charconv>
#include <iterator>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/sim/dpor/dpor_strategy.h"

namespace lockstep::sim {
namespace {

void expect(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("malformed dpor state: ") + what);
}

nlohmann::json footprint_json(const Footprint& f) {
  nlohmann::json extra = nlohmann::json::array();
  for (std::size_t i = 0; i < f.extra_count; ++i) extra.push_back(f.extra[i]);
  nlohmann::json out = {f.object, static_cast<int>(f.access), f.effects, f.domain, f.domain_write, f.scope, std::move(extra)};
  if (f.symmetry_extra || f.reads_every_object) out.push_back(f.symmetry_extra);
  if (f.reads_every_object) out.push_back(true);
  return out;
}

Footprint footprint_of(const nlohmann::json& j) {
  expect(j.is_array() && j.size() >= 7 && j.size() <= 9 && j[6].is_array() && j[6].size() <= kMaxExtraObjects,
         "footprint");
  Footprint f;
  f.object = j[0].get<ObjectId>();
  const int access = j[1].get<int>();
  expect(access >= 0 && access <= static_cast<int>(Access::release), "footprint access");
  f.access = static_cast<Access>(access);
  f.effects = j[2].get<std::uint8_t>();
  f.domain = j[3].get<ObjectId>();
  f.domain_write = j[4].get<bool>();
  f.scope = j[5].get<ScopeId>();
  for (const auto& o : j[6]) f.extra[f.extra_count++] = o.get<ObjectId>();
  f.symmetry_extra = j.size() >= 8 && j[7].get<bool>();
  f.reads_every_object = j.size() == 9 && j[8].get<bool>();
  expect(!f.symmetry_extra || f.extra_count > 0, "footprint symmetry object");
  return f;
}

}  // namespace

// The distinct footprints of a checkpoint, each written once; trees name them by index.
class FootprintTable {
 public:
  std::uint32_t index(const Footprint& f) {
    std::string key;  // the fields' bytes: cheaper than any text, and equal exactly when f is
    auto put = [&key](const auto& field) { key.append(reinterpret_cast<const char*>(&field), sizeof field); };
    put(f.object);
    put(f.access);
    put(f.effects);
    put(f.domain);
    put(f.domain_write);
    put(f.reads_every_object);
    put(f.scope);
    for (std::size_t i = 0; i < f.extra_count; ++i) put(f.extra[i]);
    put(f.symmetry_extra);
    const auto [it, added] = ids_.try_emplace(key, static_cast<std::uint32_t>(list_.size()));
    if (added) list_.push_back(f);
    return it->second;
  }
  const Footprint& at(std::uint32_t i) const {
    expect(i < list_.size(), "a footprint index past the table");
    return list_[i];
  }
  nlohmann::json to_json() const {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& f : list_) out.push_back(footprint_json(f));
    return out;
  }
  static FootprintTable from_json(const nlohmann::json& j) {
    expect(j.is_array(), "footprint table");
    FootprintTable t;
    for (const auto& f : j) t.list_.push_back(footprint_of(f));
    return t;
  }

 private:
  std::vector<Footprint> list_;
  std::unordered_map<std::string, std::uint32_t> ids_;
};

std::string WakeupTree::to_text(FootprintTable& table) const {
  std::string out = std::to_string(roots_.size());
  auto walk = [&](auto& self, const std::vector<Node>& nodes) -> void {
    for (const Node& n : nodes) {
      fmt::format_to(std::back_inserter(out), " {} {} {} {} {}", n.step.actor, (n.step.timer ? 1 : 0) + 2 * n.step.path.size(),
                     n.step.known ? 1 : 0, table.index(n.step.fp), n.children.size());
      for (const std::uint32_t v : n.step.path) fmt::format_to(std::back_inserter(out), " {}", v);
      self(self, n.children);
    }
  };
  walk(walk, roots_);
  return out;
}

WakeupTree WakeupTree::from_text(std::string_view text, const FootprintTable& table) {
  const char* p = text.data();
  const char* const end = text.data() + text.size();
  auto number = [&]() {
    while (p < end && *p == ' ') ++p;
    std::uint64_t v = 0;
    const auto [next, ec] = std::from_chars(p, end, v);
    expect(ec == std::errc(), "wakeup tree: a number");
    p = next;
    return v;
  };
  WakeupTree t;
  // Iterative: (level, children still to read there), as deep as the tree.
  std::vector<std::pair<std::vector<Node>*, std::uint64_t>> open{{&t.roots_, number()}};
  while (!open.empty()) {
    if (open.back().second == 0) {
      open.pop_back();
      continue;
    }
    --open.back().second;
    const auto actor = static_cast<ActorId>(number());
    const std::uint64_t mode = number();
    const bool timer = (mode & 1) != 0;
    const bool known = number() != 0;
    const Footprint& fp = table.at(static_cast<std::uint32_t>(number()));
    const std::uint64_t children = number();
    expect(actor < 64, "wakeup tree: an actor");
    expect(mode / 2 <= static_cast<std::uint64_t>(end - p), "wakeup tree: a choice path");
    ChoicePath path;
    for (std::uint64_t k = 0; k < mode / 2; ++k) path.push_back(static_cast<std::uint32_t>(number()));
    expect(path.empty() || path.back() != 0, "wakeup tree: a choice path ends with a value other than the first");
    std::vector<Node>& level = *open.back().first;
    level.push_back(Node{WakeStep{actor, timer, fp, known, std::move(path)}, {}});
    if (children > 0) open.emplace_back(&level.back().children, children);
  }
  while (p < end && *p == ' ') ++p;
  expect(p == end, "wakeup tree: more nodes than counted");
  return t;
}

namespace dpor {

nlohmann::json Effect::to_json() const {
  nlohmann::json fps = nlohmann::json::array();
  if (count_ > 0) fps.push_back(footprint_json(first_));
  for (const auto& m : more_) fps.push_back(footprint_json(m));
  return {overflow_, std::move(fps)};
}

Effect Effect::from_json(const nlohmann::json& j) {
  expect(j.is_array() && j.size() == 2 && j[1].is_array() && j[1].size() <= kMaxFootprints, "effect");
  Effect e;
  for (const auto& f : j[1]) e.add(footprint_of(f));
  e.overflow_ = j[0].get<bool>();
  return e;
}

namespace {

nlohmann::json sleep_json(const std::vector<SleepEntry>& list) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : list) {
    nlohmann::json entry = {s.actor, s.timer, s.effect.to_json()};
    if (!s.path.empty()) entry.push_back(s.path);
    out.push_back(std::move(entry));
  }
  return out;
}

std::vector<SleepEntry> sleep_of(const nlohmann::json& j) {
  expect(j.is_array(), "sleep set");
  std::vector<SleepEntry> out;
  for (const auto& s : j) {
    expect(s.is_array() && (s.size() == 3 || s.size() == 4), "sleep entry");
    out.push_back({s[0].get<ActorId>(), s[1].get<bool>(), Effect::from_json(s[2]),
                   s.size() == 4 ? s[3].get<ChoicePath>() : ChoicePath{}});
  }
  return out;
}

nlohmann::json node_json(const Node& n, FootprintTable& table) {
  if (n.is_choice) return {true, n.options, n.chosen};
  return {false,
          n.enabled,
          n.run_modes,
          n.timer_modes,
          n.backtrack,
          n.wakeup.to_text(table),
          n.done,
          n.done_timer,
          sleep_json(n.sleep),
          sleep_json(n.explored),
          n.current,
          {n.modes[0], n.modes[1]},
          n.mode_count,
          n.mode,
          n.current_effect.to_json(),
          n.expects ? footprint_json(n.expected) : nlohmann::json(),
          n.starts,
          n.current_path};
}

void node_of(const nlohmann::json& j, Node& n, const FootprintTable& table) {
  expect(j.is_array() && !j.empty(), "node");
  if (j[0].get<bool>()) {
    expect(j.size() == 3, "choice node");
    n.is_choice = true;
    n.options = j[1].get<std::uint32_t>();
    n.chosen = j[2].get<std::uint32_t>();
    expect(n.chosen < n.options, "choice node's value");
    return;
  }
  expect(j.size() >= 16 && j.size() <= 18, "scheduling node");  // 16: before Node::starts, 17: before current_path
  n.enabled = j[1].get<Mask>();
  n.run_modes = j[2].get<Mask>();
  n.timer_modes = j[3].get<Mask>();
  n.backtrack = j[4].get<Mask>();
  n.wakeup = WakeupTree::from_text(j[5].get<std::string>(), table);
  n.done = j[6].get<Mask>();
  n.done_timer = j[7].get<Mask>();
  n.sleep = sleep_of(j[8]);
  n.explored = sleep_of(j[9]);
  n.current = j[10].get<ActorId>();
  n.modes = {j[11].at(0).get<bool>(), j[11].at(1).get<bool>()};
  n.mode_count = j[12].get<int>();
  n.mode = j[13].get<int>();
  expect(n.mode >= 0 && n.mode < n.mode_count && n.mode_count <= 2, "node's modes");
  n.current_effect = Effect::from_json(j[14]);
  n.expects = !j[15].is_null();
  if (n.expects) n.expected = footprint_of(j[15]);
  n.starts = j.size() >= 17 && j[16].get<bool>();
  if (j.size() == 18) n.current_path = j[17].get<ChoicePath>();
  expect(n.current >= 0 && n.current < 64 && n.mode_enabled(n.current, n.current_is_timer()),
         "node's current transition is not enabled there");
}

}  // namespace

void DporStrategy::keep_resume_point() {
  resume_.kept = true;
  note_resume_point();
}

nlohmann::json DporStrategy::state_json(std::size_t size, const WakeupTree& inherited, std::size_t diverge, bool optimal,
                                       bool fallback) const {
  FootprintTable table;
  nlohmann::json path = nlohmann::json::array();
  for (std::size_t i = 0; i < size; ++i) path.push_back(node_json(stack_[i], table));
  std::string inherited_text = inherited.to_text(table);
  return {{"strategy", name_},
          {"optimal", optimal},
          {"fallback", fallback},
          {"diverge", diverge},
          {"inherited", std::move(inherited_text)},
          {"path", std::move(path)},
          {"footprints", table.to_json()}};
}

nlohmann::json DporStrategy::checkpoint() const {
  LOCKSTEP_INVARIANT(resume_.kept, "dpor: a checkpoint is asked for after keep_resume_point");
  return state_json(resume_.size, resume_.inherited, resume_.diverge, resume_.optimal, resume_.fallback);
}

// A subtree explorer fresh from offer(): its path down to the branch's node, the branch
// chosen there, and the floor it never backtracks above.
nlohmann::json DporStrategy::subtree_start() const {
  LOCKSTEP_INVARIANT(sub_.floor != kNoFloor && !started_ && sub_.floor + 1 == stack_.size(),
                     "speculation: a subtree's start is written before it runs");
  nlohmann::json out = state_json(stack_.size(), inherited_, diverge_, optimal_, fallback_);
  out["floor"] = sub_.floor;
  return out;
}

void DporStrategy::begin_subtree(const nlohmann::json& start) {
  resume(start);
  try {
    sub_.floor = start.at("floor").get<std::size_t>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("malformed subtree start: ") + e.what());
  }
  expect(optimal_ && sub_.floor == diverge_ && sub_.floor + 1 == stack_.size(), "subtree start: floor, diverge and path disagree");
}

// What skip_branch reads of a finished subtree explorer: whether it reached its subtree's
// end, the footprint its branch's step ran with, and the insertions it recorded above it.
nlohmann::json DporStrategy::subtree_outcome() const {
  LOCKSTEP_INVARIANT(sub_.floor != kNoFloor, "speculation: an outcome is a subtree explorer's");
  const Footprint* ran = sub_.floor < stack_.size() ? stack_[sub_.floor].current_effect.single() : nullptr;
  nlohmann::json log = nlohmann::json::array();
  for (const LoggedInsert& e : sub_.log) {
    nlohmann::json steps = nlohmann::json::array();
    for (const WakeStep& s : e.steps) steps.push_back({s.actor, s.timer, s.known, footprint_json(s.fp), s.path});
    log.push_back({e.node, std::move(steps)});
  }
  return {{"done", subtree_done()},
          {"ran", ran != nullptr ? footprint_json(*ran) : nlohmann::json()},
          {"log", std::move(log)}};
}

void DporStrategy::take_subtree_outcome(const nlohmann::json& outcome) {
  LOCKSTEP_INVARIANT(sub_.floor != kNoFloor && sub_.floor < stack_.size() && !started_,
                     "speculation: an outcome is taken by the explorer offered");
  try {
    const bool done = outcome.at("done").get<bool>();
    exhausted_ = true;
    sub_.aborted = !done;
    sub_.log.clear();
    sub_.logged.clear();
    if (!done) return;
    expect(!outcome.at("ran").is_null(), "subtree outcome: the branch's step");
    stack_[sub_.floor].current_effect = Effect();
    stack_[sub_.floor].current_effect.add(footprint_of(outcome.at("ran")));
    for (const auto& e : outcome.at("log")) {
      expect(e.is_array() && e.size() == 2 && e[1].is_array(), "subtree outcome: logged insertion");
      LoggedInsert entry{e[0].get<std::uint32_t>(), {}};
      expect(entry.node <= sub_.floor, "subtree outcome: an insertion below the floor");
      for (const auto& s : e[1]) {
        expect(s.is_array() && s.size() == 5, "subtree outcome: step");
        const int actor = s[0].get<int>();
        expect(actor >= 0 && actor < static_cast<int>(kMaxActors), "subtree outcome: actor");
        entry.steps.push_back(
            WakeStep{static_cast<ActorId>(actor), s[1].get<bool>(), footprint_of(s[3]), s[2].get<bool>(), s[4].get<ChoicePath>()});
      }
      sub_.log.push_back(std::move(entry));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("malformed subtree outcome: ") + e.what());
  }
}

void DporStrategy::resume(const nlohmann::json& state) {
  try {
    expect(state.is_object() && state.value("strategy", "") == name_, "a state of another strategy");
    expect(!started_, "resume before the first execution");
    optimal_ = state.at("optimal").get<bool>() && !bounded_;
    fallback_ = state.at("fallback").get<bool>();
    diverge_ = state.at("diverge").get<std::size_t>();
    const FootprintTable table = FootprintTable::from_json(state.at("footprints"));
    inherited_ = WakeupTree::from_text(state.at("inherited").get<std::string>(), table);
    stack_.clear();
    for (const auto& n : state.at("path")) {
      Node& node = stack_.push();
      node_of(n, node, table);
      node.uid = ++sub_.next_uid;
    }
    expect(diverge_ <= stack_.size(), "diverge past the path");
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("malformed dpor state: ") + e.what());
  }
}

}  // namespace dpor
}  // namespace lockstep::sim
