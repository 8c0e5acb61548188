#include "lockstep/sim/explain/trace.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "lockstep/model/json_cursor.h"

namespace lockstep::sim {

namespace {

std::string quote(std::string_view s) { return nlohmann::json(std::string(s)).dump(); }

}  // namespace

std::string trace_to_text(const Trace& t) {
  std::string out;
  out += "{\n";
  out += fmt::format("  \"format\": {},\n", quote(kTraceFormat));
  out += fmt::format("  \"strategy\": {},\n", quote(t.strategy));
  out += fmt::format("  \"seed\": {},\n", t.run.seed);
  out += fmt::format("  \"execution\": {},\n", t.execution);
  out += fmt::format("  \"time\": {},\n", quote(time_mode_name(t.run.time)));
  out += fmt::format("  \"max_steps\": {},\n", t.run.max_steps);
  if (t.run.livelock_steps != kDefaultLivelockSteps) out += fmt::format("  \"livelock_steps\": {},\n", t.run.livelock_steps);
  if (t.run.timing.any()) out += fmt::format("  \"timing\": {},\n", timing_json(t.run.timing).dump());
  nlohmann::json verdict = {{"kind", verdict_name(t.verdict)}, {"message", t.message}};
  verdict["invariant"] = t.invariant.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.invariant);
  out += fmt::format("  \"verdict\": {},\n", verdict.dump());
  if (t.shrunk) {
    out += fmt::format(
        "  \"shrunk\": {{\"original_steps\": {}, \"original_preemptions\": {}, \"steps\": {}, \"preemptions\": {}, "
        "\"attempts\": {}{}}},\n",
        t.shrunk->original_steps, t.shrunk->original_preemptions, t.shrunk->steps, t.shrunk->preemptions,
        t.shrunk->attempts, t.shrunk->out_of_budget ? ", \"out_of_budget\": true" : "");
  }
  if (t.lasso) {
    out += fmt::format("  \"lasso\": {{\"start\": {}, \"period\": {}, \"repeats\": {}, \"observed\": {}}},\n",
                       t.lasso->start, t.lasso->period, t.lasso->repeats, t.lasso->observed);
  }
  if (t.cause) {
    const Cause& c = *t.cause;
    if (!c.computed) {
      out += fmt::format("  \"cause\": {{\"computed\": false, \"reason\": {}}},\n", quote(c.reason));
    } else {
      out += fmt::format("  \"cause\": {{\"computed\": true, {}\"tried\": {}, \"found\": {}, \"pairs\": [",
                         c.complete ? "" : fmt::format("\"complete\": false, \"reason\": {}, ", quote(c.reason)), c.tried, c.found);
      for (std::size_t i = 0; i < c.pairs.size(); ++i) {
        const CausePair& p = c.pairs[i];
        out += fmt::format("{}\n    {{\"first\": {}, \"second\": {}, \"outcome\": {}, \"sentence\": {}}}", i == 0 ? "" : ",",
                           p.first, p.second, quote(p.outcome), quote(p.sentence));
      }
      out += c.pairs.empty() ? "]" : "\n  ]";
      if (!c.timing.empty()) out += fmt::format(", \"timing\": {}", nlohmann::json(c.timing).dump());
      out += "},\n";
    }
  }
  out += fmt::format("  \"actors\": {},\n", nlohmann::json(t.actors).dump());
  out += "  \"decisions\": [";
  for (std::size_t i = 0; i < t.decisions.size(); ++i) {
    out += fmt::format("{}\"{}\"", i == 0 ? "" : ",", decision_text(t.decisions[i]));
  }
  out += "],\n";
  out += "  \"events\": [";
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    const LogEvent& e = t.events[i];
    out += fmt::format("{}\n    {{\"step\": {}, \"time_ns\": {}, \"actor\": {}, \"op\": {}, \"result\": {}}}",
                       i == 0 ? "" : ",", e.step, e.time_ns, e.actor, quote(e.op), quote(e.result));
  }
  out += t.events.empty() ? "],\n" : "\n  ],\n";
  out += fmt::format("  \"scenario\": {}\n", t.scenario.dump());
  out += "}\n";
  return out;
}

namespace {

// The trace's lasso (a livelock's cycle), checked against its step bound.
void read_lasso(const JsonCursor& root, Trace& t) {
  if (auto lasso = root.find("lasso")) {
    lasso->expect_keys({"start", "period", "repeats", "observed"});
    LassoInfo l{lasso->at("start").as_uint(), lasso->at("period").as_uint(), lasso->at("repeats").as_uint(),
                lasso->at("observed").as_uint()};
    if (l.period == 0) lasso->at("period").fail("a cycle has at least one step");
    if (l.start + l.period * l.repeats > t.run.max_steps) lasso->at("repeats").fail("the cycle runs past the trace's step bound");
    t.lasso = l;
  }
}

void read_verdict(const JsonCursor& root, Trace& t) {
  const JsonCursor verdict = root.at("verdict");
  verdict.expect_keys({"kind", "invariant", "message"});
  const JsonCursor kind = verdict.at("kind");
  const auto v = verdict_from_name(kind.as_string());
  if (!v) kind.fail(fmt::format("unknown verdict \"{}\"", kind.as_string()));
  t.verdict = *v;
  if (auto inv = verdict.find("invariant"); inv && !inv->value().is_null()) t.invariant = inv->as_string();
  t.message = verdict.at("message").as_string();
}

void read_shrunk(const JsonCursor& root, Trace& t) {
  if (auto shrunk = root.find("shrunk")) {
    shrunk->expect_keys({"original_steps", "original_preemptions", "steps", "preemptions", "attempts", "out_of_budget"});
    ShrinkInfo info;
    info.original_steps = shrunk->at("original_steps").as_uint();
    info.original_preemptions = static_cast<int>(shrunk->at("original_preemptions").as_int(0, INT32_MAX));
    info.steps = shrunk->at("steps").as_uint();
    info.preemptions = static_cast<int>(shrunk->at("preemptions").as_int(0, INT32_MAX));
    info.attempts = shrunk->at("attempts").as_uint();
    if (auto o = shrunk->find("out_of_budget")) info.out_of_budget = o->as_bool();
    t.shrunk = info;
  }
}

// The cause analysis's result: its pairs of steps, in order.
void read_cause(const JsonCursor& root, Trace& t) {
  if (auto cause = root.find("cause")) {
    cause->expect_keys({"computed", "complete", "reason", "tried", "found", "pairs", "timing"});
    Cause c;
    c.computed = cause->at("computed").as_bool();
    if (!c.computed) {
      c.reason = cause->at("reason").as_string();
    } else {
      if (auto complete = cause->find("complete")) c.complete = complete->as_bool();
      if (!c.complete) c.reason = cause->at("reason").as_string();
      c.tried = cause->at("tried").as_uint();
      c.found = cause->at("found").as_uint();
      for (const auto& p : cause->at("pairs").items()) {
        p.expect_keys({"first", "second", "outcome", "sentence"});
        CausePair pair{p.at("first").as_uint(), p.at("second").as_uint(), p.at("outcome").as_string(),
                       p.at("sentence").as_string()};
        if (pair.first >= pair.second) p.at("second").fail("a cause pair's second step comes after its first");
        c.pairs.push_back(std::move(pair));
      }
      if (c.found < c.pairs.size()) cause->at("found").fail(fmt::format("fewer than the {} pairs listed", c.pairs.size()));
      if (auto timing = cause->find("timing")) {
        for (const auto& sentence : timing->items()) c.timing.push_back(sentence.as_string());
      }
    }
    t.cause = std::move(c);
  }
}

// The actors, the decisions that replay the trace and the event log they gave.
void read_steps(const JsonCursor& root, Trace& t) {
  for (const auto& a : root.at("actors").items()) t.actors.push_back(a.as_string());
  const auto decisions = root.at("decisions").items();
  t.decisions.reserve(decisions.size());
  for (const auto& d : decisions) {
    Decision parsed;
    if (!parse_decision(d.as_string(), parsed)) {
      d.fail(fmt::format("bad decision \"{}\": expected a<actor>, t<actor> or c<value>", d.as_string()));
    }
    t.decisions.push_back(parsed);
  }
  const auto events = root.at("events").items();
  t.events.reserve(events.size());
  for (const auto& e : events) {
    e.expect_keys({"step", "time_ns", "actor", "op", "result"});
    t.events.push_back(LogEvent{e.at("step").as_uint(), e.at("time_ns").as_int(), static_cast<ActorId>(e.at("actor").as_int(-1, 1 << 20)),
                                e.at("op").as_string(), e.at("result").as_string()});
  }
}

// A cause's pairs name steps of this trace.
void check_cause_steps(const JsonCursor& root, const Trace& t) {
  if (!t.cause) return;
  const std::uint64_t last = t.events.empty() ? 0 : t.events.back().step;
  for (std::size_t k = 0; k < t.cause->pairs.size(); ++k) {
    if (t.cause->pairs[k].second > last) {
      root.at("cause").at("pairs").items()[k].at("second").fail(fmt::format("step {} is past the trace's last step ({})",
                                                                            t.cause->pairs[k].second, last));
    }
  }
}

}  // namespace

Trace trace_from_json(const nlohmann::json& document, const std::string& file) {
  const JsonCursor root(document, file);
  root.expect_keys({"format", "strategy", "seed", "execution", "time", "max_steps", "livelock_steps", "timing", "verdict", "shrunk",
                    "lasso", "cause", "actors", "decisions", "events", "scenario"});
  const JsonCursor format = root.at("format");
  if (format.as_string() != kTraceFormat) {
    format.fail(fmt::format("unsupported trace format \"{}\" (this lockstep reads \"{}\")",
                            format.as_string(), kTraceFormat));
  }
  Trace t;
  t.strategy = root.at("strategy").as_string();
  t.run.seed = root.at("seed").as_uint();
  t.execution = root.at("execution").as_uint();
  const JsonCursor time = root.at("time");
  const std::string mode = time.as_string();
  if (mode != "timed" && mode != "untimed") time.fail("expected \"untimed\" or \"timed\"");
  t.run.time = mode == "timed" ? TimeMode::timed : TimeMode::untimed;
  t.run.max_steps = static_cast<std::uint64_t>(root.at("max_steps").as_int(1));
  if (auto l = root.find("livelock_steps")) t.run.livelock_steps = static_cast<std::uint64_t>(l->as_int(1));
  if (auto timing = root.find("timing")) t.run.timing = parse_timing(*timing);
  read_lasso(root, t);
  read_verdict(root, t);
  read_shrunk(root, t);
  read_cause(root, t);
  read_steps(root, t);
  check_cause_steps(root, t);
  // The embedded scenario is parsed in full only when the trace is replayed; what every
  // command reads from it (its system and name) is checked here.
  const JsonCursor scenario = root.at("scenario");
  scenario.at("system").as_string();
  scenario.at("name").as_string();
  if (auto d = scenario.find("description")) d->as_string();
  t.scenario = scenario.value();
  return t;
}

Trace load_trace(const std::string& path) { return trace_from_json(read_json_file(path), path); }

void save_trace(const Trace& trace, const std::string& path) {
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(fmt::format("{}: cannot write trace", path));
  out << trace_to_text(trace);
  if (!out) throw InputError(fmt::format("{}: writing the trace failed", path));
}

}  // namespace lockstep::sim
