#include "lockstep/cli/diff.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/cli/subcommands.h"
#include "lockstep/model/json_cursor.h"
#include "lockstep/model/verdict.h"
#include "lockstep/sim/check.h"
#include "lockstep/sim/explain/trace.h"

namespace lockstep::cli {
namespace {

using sim::LogEvent;
using sim::Trace;

std::string text(const LogEvent& e) { return e.result.empty() ? e.op : e.op + " -> " + e.result; }

// The object an operation names: its second word ("read x" -> "x"), or "" when it has one word.
std::string object_of(const std::string& op) {
  const auto space = op.find(' ');
  if (space == std::string::npos) return "";
  const auto end = op.find(' ', space + 1);
  return op.substr(space + 1, end == std::string::npos ? std::string::npos : end - space - 1);
}

// Two events are the same operation when their texts agree, or, for a statement on a
// simulated server (`on_server`), agree but for the trailing number: the connection's pid,
// which another execution may have drawn differently from the pool.
bool same_operation(const std::string& x, const std::string& y, bool on_server) {
  if (x == y) return true;
  if (!on_server) return false;
  auto stem = [](const std::string& s) {
    const auto space = s.rfind(' ');
    if (space == std::string::npos || space + 1 == s.size()) return s;
    for (std::size_t i = space + 1; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') return s;
    }
    return s.substr(0, space);
  };
  return stem(x) == stem(y);
}

std::string verdict_text(const Trace& t) {
  std::string v(verdict_name(t.verdict));
  if (!t.invariant.empty()) v += " " + t.invariant;
  if (!t.message.empty()) v += ": " + t.message;
  return v;
}

// Per actor: indices (into the trace's events) of that actor's events, in order.
std::vector<std::vector<std::size_t>> by_actor(const Trace& t) {
  std::vector<std::vector<std::size_t>> out(t.actors.size());
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    const auto a = t.events[i].actor;
    if (a >= 0 && static_cast<std::size_t>(a) < out.size()) out[a].push_back(i);
  }
  return out;
}

struct Matched {
  std::size_t a, b;  // positions in A's and B's events
};

// Two matched events of different actors: `earlier` comes first in A, `later` first in B.
struct Reversed {
  Matched earlier, later;
  bool same_object;
};


// The options of `diff`: A, and B or --cause K.
struct DiffArgs {
  std::string a, b;
  std::size_t cause = 0;
  std::string cause_out;
  bool json = false;
};

// A's steps with their footprints, when A replays here (not a model in C++, not diverging).
std::optional<sim::ExecutionFacts> facts_of(const Trace& t, const std::string& path) {
  if (!sim::replays_here(t)) return std::nullopt;
  try {
    return sim::trace_facts(t, path);
  } catch (const sim::Divergence&) {
    return std::nullopt;
  } catch (const InputError&) {
    return std::nullopt;
  }
}

constexpr std::size_t kShownPairs = 10, kShownRows = 24;

// Two traces compared: how far they agree from the start, where each actor's events part,
// and the pairs of events they order oppositely.
struct Comparison {
  const Trace& a;
  const std::string& a_path;
  const Trace& b;
  const std::string& b_path;
  bool same_scenario = false;
  std::size_t common = 0;  // events the same from the start
  bool identical = false;
  std::optional<sim::ExecutionFacts> facts{};  // A replayed, when it replays here
  std::vector<Matched> matched{};
  nlohmann::json actors = nlohmann::json::array();  // per actor: the same, or from where it differs
  std::vector<Reversed> reversed{};
};

// How many events the two traces share from the start.
std::size_t common_start(const Trace& a, const Trace& b) {
  std::size_t common = 0;
  while (common < a.events.size() && common < b.events.size() && a.events[common].actor == b.events[common].actor &&
         a.events[common].op == b.events[common].op && a.events[common].result == b.events[common].result) {
    ++common;
  }
  return common;
}

// Matches actor `act`'s events in A and B, in order, while their operations agree (into
// d.matched); gives where its events part, as JSON.
nlohmann::json match_actor(Comparison& d, std::size_t act, const std::vector<std::size_t>& pa,
                           const std::vector<std::size_t>& pb) {
  const Trace& a = d.a;
  const Trace& b = d.b;
  auto on_server = [&](const LogEvent& e) {
    return d.facts && e.step < d.facts->steps.size() && d.facts->steps[e.step].footprint.domain != sim::kNoObject;
  };
  constexpr std::size_t kSame = static_cast<std::size_t>(-1);
  std::size_t k = 0;
  std::size_t parts = kSame;  // the first of its events that differ: another result, or another operation
  while (k < pa.size() && k < pb.size() && same_operation(a.events[pa[k]].op, b.events[pb[k]].op, on_server(a.events[pa[k]]))) {
    if (parts == kSame && (a.events[pa[k]].result != b.events[pb[k]].result || a.events[pa[k]].op != b.events[pb[k]].op)) {
      parts = k;
    }
    d.matched.push_back({pa[k], pb[k]});
    ++k;
  }
  if (parts == kSame && (k < pa.size() || k < pb.size())) parts = k;
  nlohmann::json j = {{"actor", a.actors[act]}, {"events_a", pa.size()}, {"events_b", pb.size()}};
  j["same"] = parts == kSame;
  if (parts != kSame) {
    j["differs_from"] = parts;
    j["a"] = parts < pa.size() ? nlohmann::json(text(a.events[pa[parts]])) : nlohmann::json(nullptr);
    j["b"] = parts < pb.size() ? nlohmann::json(text(b.events[pb[parts]])) : nlohmann::json(nullptr);
  }
  return j;
}

// Pairs of matched events of two actors in opposite orders. For each event, only the
// nearest earlier (in A) event it is reversed with: the pair where the orders part.
// Related: the two steps are dependent in A (the explorer's relation, from A replayed),
// or, for a trace that does not replay here, their operations name the same object.
std::vector<Reversed> reversed_pairs(Comparison& d) {
  auto related = [&](const LogEvent& x, const LogEvent& y) {
    if (d.facts && x.step < d.facts->steps.size() && y.step < d.facts->steps.size()) {
      return sim::dependent(d.facts->steps[x.step].footprint, d.facts->steps[y.step].footprint);
    }
    return !object_of(x.op).empty() && object_of(x.op) == object_of(y.op);
  };
  std::vector<Matched>& matched = d.matched;
  std::sort(matched.begin(), matched.end(), [](const Matched& x, const Matched& y) { return x.a < y.a; });
  std::vector<Reversed> reversed{};
  for (std::size_t j = 0; j < matched.size(); ++j) {
    const LogEvent& ey = d.a.events[matched[j].a];
    std::optional<Reversed> best;
    for (std::size_t i = j; i-- > 0;) {
      const LogEvent& ex = d.a.events[matched[i].a];
      if (ex.actor == ey.actor || matched[i].b < matched[j].b) continue;
      const bool same_object = related(ex, ey);
      if (!best || (same_object && !best->same_object)) best = Reversed{matched[i], matched[j], same_object};
      if (same_object) break;
    }
    if (best) reversed.push_back(*best);
  }
  std::stable_sort(reversed.begin(), reversed.end(),
                   [](const Reversed& x, const Reversed& y) { return x.same_object && !y.same_object; });
  return reversed;
}

// Compares A and B; traces with different actors are no two executions of one scenario.
Comparison compare(const Trace& a, const std::string& a_path, const Trace& b, const std::string& b_path) {
  if (a.actors != b.actors) {
    throw InputError(fmt::format("{} and {}: the traces have different actors ({} and {}): not two executions of one scenario",
                                 a_path, b_path, nlohmann::json(a.actors).dump(), nlohmann::json(b.actors).dump()));
  }
  Comparison d{a, a_path, b, b_path};
  d.same_scenario = a.scenario == b.scenario;
  d.common = common_start(a, b);
  d.identical = d.common == a.events.size() && d.common == b.events.size();
  d.facts = facts_of(a, a_path);
  const auto pa = by_actor(a), pb = by_actor(b);
  for (std::size_t act = 0; act < a.actors.size(); ++act) d.actors.push_back(match_actor(d, act, pa[act], pb[act]));
  d.reversed = reversed_pairs(d);
  return d;
}

// The comparison as one JSON object (--json).
nlohmann::json diff_json(const Comparison& d) {
  const Trace& a = d.a;
  const Trace& b = d.b;
  nlohmann::json pairs = nlohmann::json::array();
  for (const auto& r : d.reversed) {
    const LogEvent& x = a.events[r.earlier.a];
    const LogEvent& y = a.events[r.later.a];
    pairs.push_back({{"first_in_a", {{"actor", a.actors[x.actor]}, {"event", text(x)}, {"step_a", x.step}, {"step_b", b.events[r.earlier.b].step}}},
                     {"first_in_b", {{"actor", a.actors[y.actor]}, {"event", text(y)}, {"step_a", y.step}, {"step_b", b.events[r.later.b].step}}},
                     {"same_object", r.same_object}});
  }
  return {{"a", {{"trace", d.a_path}, {"verdict", verdict_name(a.verdict)}, {"invariant", a.invariant}, {"events", a.events.size()}}},
          {"b", {{"trace", d.b_path}, {"verdict", verdict_name(b.verdict)}, {"invariant", b.invariant}, {"events", b.events.size()}}},
          {"same_scenario", d.same_scenario},
          {"identical", d.identical},
          {"common_events", d.common},
          {"reversed_pairs", pairs},
          {"actors", d.actors}};
}

// The actor of an event, by name.
std::string who(const Trace& t, const LogEvent& e) {
  return e.actor >= 0 ? t.actors[e.actor] : std::string("(outside any actor)");
}

// The first pairs of events in opposite orders, as A and B ran them.
void print_reversed(std::ostream& out, const Comparison& d) {
  const Trace& a = d.a;
  const Trace& b = d.b;
  out << fmt::format("in opposite orders (for each event the nearest one it swapped with, {} first):\n",
                     d.facts ? "dependent steps" : "same object");
  for (std::size_t i = 0; i < d.reversed.size() && i < kShownPairs; ++i) {
    const auto& r = d.reversed[i];
    const LogEvent &xa = a.events[r.earlier.a], &ya = a.events[r.later.a];
    const LogEvent &xb = b.events[r.earlier.b], &yb = b.events[r.later.b];
    out << fmt::format("  A: {} {} (step {}) before {} {} (step {}){}\n", who(a, xa), text(xa), xa.step, who(a, ya), text(ya),
                       ya.step, r.same_object ? "" : d.facts ? "  (independent)" : "  (no object in common)");
    out << fmt::format("  B: {} {} (step {}) before {} {} (step {})\n", who(b, yb), text(yb), yb.step, who(b, xb), text(xb), xb.step);
  }
  if (d.reversed.size() > kShownPairs) out << fmt::format("  ... {} more (--json lists them all)\n", d.reversed.size() - kShownPairs);
}

// Per actor: the same events, or from which one they differ.
void print_actors(std::ostream& out, const Comparison& d) {
  out << "per actor:\n";
  for (const auto& j : d.actors) {
    if (j["same"].get<bool>()) {
      out << fmt::format("  {}: the same {} events, in its own order\n", j["actor"].get<std::string>(), j["events_a"].get<std::size_t>());
    } else {
      auto show = [](const nlohmann::json& v) { return v.is_null() ? std::string("(no event)") : v.get<std::string>(); };
      out << fmt::format("  {}: from its event {}: A {}; B {}\n", j["actor"].get<std::string>(), j["differs_from"].get<std::size_t>(),
                         show(j["a"]), show(j["b"]));
    }
  }
}

// The events from where the traces part, A's and B's side by side (the first kShownRows).
void print_side_by_side(std::ostream& out, const Comparison& d) {
  const std::size_t common = d.common;
  out << fmt::format("from event {} on, side by side:\n", common);
  const std::size_t end = std::max(d.a.events.size(), d.b.events.size());
  const auto cell = [&](const Trace& t, std::size_t i) {
    return i < t.events.size() ? who(t, t.events[i]) + ": " + text(t.events[i]) : std::string();
  };
  std::size_t wa = 1;  // cells are never cut: the column is as wide as its widest
  for (std::size_t i = common; i < end && i < common + kShownRows; ++i) wa = std::max(wa, cell(d.a, i).size());
  out << fmt::format("  {:>5}  {:<{}}  {}\n", "event", "A", wa, "B");
  for (std::size_t i = common; i < end && i < common + kShownRows; ++i) {
    std::string line = fmt::format("  {:>5}  {:<{}}  {}", i, cell(d.a, i), wa, cell(d.b, i));
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }
  if (end > common + kShownRows) out << fmt::format("  ... {} more events (replay each trace for the whole log)\n", end - common - kShownRows);
}

// The comparison for a person: both verdicts, where the traces part, and how.
void print_diff(std::ostream& out, const Comparison& d) {
  const Trace& a = d.a;
  const Trace& b = d.b;
  out << fmt::format("A: {}: {} ({} events)\n", d.a_path, verdict_text(a), a.events.size());
  out << fmt::format("B: {}: {} ({} events)\n", d.b_path, verdict_text(b), b.events.size());
  if (!d.same_scenario) out << "note: the traces embed different scenario documents (same actors)\n";
  if (d.identical) {
    out << "the event logs are identical\n";
    return;
  }
  out << fmt::format("the first {} events are the same; they part at event {}:\n", d.common, d.common);
  const auto side = [&](const Trace& t) {
    return d.common < t.events.size()
               ? fmt::format("step {}  {}: {}", t.events[d.common].step, who(t, t.events[d.common]), text(t.events[d.common]))
               : std::string("(ended)");
  };
  out << fmt::format("  A  {}\n  B  {}\n", side(a), side(b));
  if (!d.reversed.empty()) print_reversed(out, d);
  print_actors(out, d);
  print_side_by_side(out, d);
}

// Compares A and B and prints the comparison; 0 when the event logs are identical, else 1.
int diff_traces(const Trace& a, const std::string& a_path, const Trace& b, const std::string& b_path, bool json,
                std::ostream& out) {
  const Comparison d = compare(a, a_path, b, b_path);
  if (json) {
    out << diff_json(d).dump() << '\n';
  } else {
    print_diff(out, d);
  }
  return d.identical ? 0 : 1;
}

}  // namespace

int cmd_diff(const std::string& a_path, const std::string& b_path, bool json, std::ostream& out) {
  return diff_traces(sim::load_trace(a_path), a_path, sim::load_trace(b_path), b_path, json, out);
}

int cmd_diff_cause(const std::string& a_path, std::size_t k, const std::string& cause_out, bool json, std::ostream& out) {
  const Trace a = sim::load_trace(a_path);
  if (!sim::replays_here(a)) {
    throw InputError(fmt::format("{}: a trace of a model in C++ replays only in its own test program: diff it against "
                                 "another trace", a_path));
  }
  try {
    (void)sim::replay_trace(a, a_path);  // it must still fit the code
  } catch (const sim::Divergence& d) {
    throw InputError(fmt::format("{}: trace diverges at step {}: {}", a_path, d.step(), d.what()));
  }
  const Trace b = sim::delayed_trace(a, a_path, k);
  std::string label = fmt::format("{} with cause {} reordered", a_path, k);
  if (!cause_out.empty()) {
    sim::save_trace(b, cause_out);
    label = fmt::format("{} ({})", cause_out, label);
  }
  return diff_traces(a, a_path, b, label, json, out);
}

void add_diff_command(CLI::App& app, CommandContext& context) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* dif =
      app.add_subcommand("diff", "two traces of one scenario side by side: where their orders part (exit 0 same, 1 differ)");
  dif->add_option("a", args->a, "trace file (lockstep-trace/1)")->required();
  dif->add_option("b", args->b, "trace file (lockstep-trace/1); or give --cause K");
  CLI::Option* cause =
      dif->add_option("--cause", args->cause,
                      "instead of B: A with its cause pair K reordered (the nearest execution that does not fail so)")
          ->check(CLI::PositiveNumber);
  dif->add_option("--cause-out", args->cause_out, "with --cause: write that execution as a trace to this file")->needs(cause);
  dif->add_flag("--json", args->json, "print one JSON object");
  dif->callback([&context, args] {
    context.command = [&context, args] {
      const DiffArgs& a = *args;
      if (a.b.empty() == (a.cause == 0)) throw InputError("diff: give a second trace B, or --cause K (not both)");
      return a.cause > 0 ? cmd_diff_cause(a.a, a.cause, a.cause_out, a.json, context.out)
                         : cmd_diff(a.a, a.b, a.json, context.out);
    };
  });
}

}  // namespace lockstep::cli
