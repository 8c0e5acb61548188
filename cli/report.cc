#include "lockstep/cli/report.h"

#include "lockstep/cli/markup.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "lockstep/sim/explain/interleaving_table.h"

namespace lockstep::cli {

std::string_view shard_mode_name(ShardMode mode) {
  switch (mode) {
    case ShardMode::none: return "";
    case ShardMode::inside: return "inside";
    case ShardMode::whole: return "whole";
    case ShardMode::coordinator: return "coordinator";
    case ShardMode::worker: return "worker";
  }
  return "";
}
namespace {

// What a timed search interleaves (issue 61): only events due at the same instant; a timing
// model (jitter, skew, stalls) adds the durations its choices reach.
constexpr std::string_view kTimedOrders = "orders explored: those of events due at one instant (actors apart in time keep their order)";

double per_second(std::uint64_t n, double seconds) { return seconds > 0 ? static_cast<double>(n) / seconds : 0.0; }

bool needs_quoting(const std::string& s) {
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '.' || c == '-' || c == '_')) return true;
  }
  return s.empty();
}

std::string shell_word(const std::string& word) {
  if (!needs_quoting(word)) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

std::vector<std::string> save_witnesses(const sim::CheckReport& report, const std::string& trace_path) {
  std::vector<std::string> paths;
  std::filesystem::path base(trace_path);
  const std::string stem = base.stem().string();
  for (std::size_t k = 0; k < report.witnesses.size(); ++k) {
    const std::string path = (base.parent_path() / fmt::format("{}.edge-{}.json", stem, k + 1)).string();
    sim::save_trace(report.witnesses[k].trace, path);
    paths.push_back(path);
  }
  return paths;
}

std::string replay_command(const std::string& program, const std::string& trace_path) {
  return shell_word(program) + " replay " + shell_word(trace_path);
}

nlohmann::json cause_json(const sim::Cause& cause) {
  nlohmann::json j;
  j["computed"] = cause.computed;
  if (!cause.computed) {
    j["reason"] = cause.reason;
    return j;
  }
  if (!cause.complete) {
    j["complete"] = false;
    j["reason"] = cause.reason;
  }
  j["tried"] = cause.tried;
  j["found"] = cause.found;
  j["pairs"] = nlohmann::json::array();
  for (const auto& p : cause.pairs) {
    j["pairs"].push_back({{"first", p.first}, {"second", p.second}, {"outcome", p.outcome}, {"sentence", p.sentence}});
  }
  if (!cause.timing.empty()) j["timing"] = cause.timing;
  return j;
}

namespace {

// The entry of a scenario file that could not be read: its file and why.
nlohmann::json bad_input_json(const CheckedScenario& c) {
  nlohmann::json j;
  j["file"] = c.file;
  j["scenario"] = nullptr;
  j["verdict"] = "bad_input";
  j["error"] = c.input_error;
  j["violation"] = nullptr;
  j["expected_verdict"] = nullptr;
  j["as_expected"] = false;
  j["executions"] = 0;
  j["steps"] = 0;
  j["elapsed_s"] = 0;
  j["trace"] = nullptr;
  return j;
}

// The verdict beside the expected one: the violation, the message and a lasso's shape.
void add_verdict(nlohmann::json& j, const CheckedScenario& c) {
  const sim::CheckReport& r = *c.report;
  const auto& failure = r.result.first_failure;
  j["scenario"] = c.scenario->name;
  j["system"] = c.scenario->system;
  j["variant"] = c.scenario->variant;
  j["verdict"] = verdict_name(r.result.verdict);
  j["violation"] = failure && !failure->result.invariant.empty() ? nlohmann::json(failure->result.invariant) : nlohmann::json(nullptr);
  // The message of the trace that is written, where there is one (a shrunk trace or a lasso
  // says it of itself), else the search's.
  j["message"] = r.trace ? nlohmann::json(r.trace->message) : failure ? nlohmann::json(failure->result.message) : nlohmann::json(nullptr);
  if (r.trace && r.trace->lasso) {
    const auto& l = *r.trace->lasso;
    j["lasso"] = {{"start", l.start}, {"period", l.period}, {"repeats", l.repeats}, {"observed", l.observed}};
  }
  j["time"] = std::string(time_mode_name(c.scenario->explore.time));  // the scenario's, or the model's (Model::timed())
  j["expected_verdict"] = verdict_name(c.scenario->expect.verdict);
  j["expected_violation"] = c.scenario->expect.violation ? nlohmann::json(*c.scenario->expect.violation) : nlohmann::json(nullptr);
  j["as_expected"] = r.as_expected;
}

// The strategy that ran to the end: source-dpor after optimal DPOR fell back.
std::string strategy_ran(const sim::CheckReport& r) { return r.result.fallback.empty() ? r.strategy : std::string("source-dpor"); }

// The search: strategy, seed, what it explored, how fast, and why it stopped.
void add_search(nlohmann::json& j, const sim::CheckReport& r) {
  const auto& stats = r.result.stats;
  j["strategy"] = r.strategy;
  // The strategy that ran to the end: dpor's optimal mode may fall back to source-DPOR, for a
  // named reason, beginning the search again at an execution.
  j["strategy_ran"] = strategy_ran(r);
  j["fallback"] = r.result.fallback.empty() ? nlohmann::json(nullptr)
                                            : nlohmann::json{{"reason", r.result.fallback}, {"at_execution", r.result.fallback_at}};
  j["seed"] = r.seed;
  j["executions"] = stats.executions;
  j["redundant"] = stats.redundant;  // sleep-set-blocked executions (dpor)
  j["unfair"] = stats.unfair;        // cut by fair mode (sim/progress/progress.h)
  j["redundant_ratio"] = stats.executions + stats.redundant > 0
                             ? static_cast<double>(stats.redundant) / static_cast<double>(stats.executions + stats.redundant)
                             : 0.0;
  j["steps"] = stats.steps;
  j["failures"] = stats.failures;
  // Executions per mark the model set on them (headspace: "phantom_grant", ...).
  j["marks"] = nlohmann::json::object();
  for (const auto& [mark, n] : stats.marks) j["marks"][mark] = n;
  j["exhaustive"] = r.result.exhaustive;
  j["interrupted"] = r.result.interrupted;
  j["resumed"] = r.result.resumed;  // from a checkpoint: the counts are the totals of every run
  const auto& spec = r.result.speculation;  // --jobs: subtrees other threads explored, taken or not
  j["jobs"] = spec.jobs;
  j["speculation"] = {{"taken", spec.taken}, {"taken_executions", spec.taken_executions}, {"dropped", spec.dropped},
                      {"dropped_executions", spec.dropped_executions}};
  // check --queue: subtrees published for the run's workers, and what became of them.
  j["queue"] = spec.exchange ? nlohmann::json{{"published", spec.published},
                                              {"remote_taken", spec.remote_taken},
                                              {"remote_taken_executions", spec.remote_taken_executions},
                                              {"taken_back", spec.taken_back},
                                              {"withdrawn", spec.withdrawn},
                                              {"held_back", spec.held_back}}
                             : nlohmann::json(nullptr);
  // Symmetry reduction (sim/explore/symmetry.h): the interchangeable actors and their permutations.
  j["symmetry"] = r.result.symmetry.actors > 0 ? nlohmann::json{{"actors", r.result.symmetry.actors},
                                                                 {"permutations", r.result.symmetry.permutations}}
                                               : nlohmann::json(nullptr);
  j["stop_reason"] = r.result.stop_reason;
  // Timed mode: the timings the verdict covers (model/timing.h); null when untimed.
  j["timing"] = r.run.time == TimeMode::timed
                    ? nlohmann::json{{"jitter", r.run.timing.jitter}, {"skew_ms", r.run.timing.skew_ms},
                                     {"covered", timing_coverage(r.run.timing)}, {"orders", kTimedOrders}}
                    : nlohmann::json(nullptr);
  j["notes"] = r.result.notes;
  j["elapsed_s"] = stats.elapsed_s;
  j["steps_per_s"] = per_second(stats.steps, stats.elapsed_s);
  j["executions_per_s"] = per_second(stats.executions, stats.elapsed_s);
  j["preemption_bound"] = r.preemption_bound >= 0 ? nlohmann::json(r.preemption_bound) : nlohmann::json(nullptr);
  j["skipped"] = stats.skipped;
}

// The trace written: its shrinking, path, cause, HTML view and replay command; the shard.
void add_trace(nlohmann::json& j, const CheckedScenario& c, const ReportContext& context) {
  const sim::CheckReport& r = *c.report;
  if (r.trace && r.trace->shrunk) {
    const auto& s = *r.trace->shrunk;
    j["trace_shrunk"] = {{"steps", s.steps}, {"preemptions", s.preemptions}, {"original_steps", s.original_steps},
                         {"original_preemptions", s.original_preemptions}, {"attempts", s.attempts},
                         {"out_of_budget", s.out_of_budget}};
  } else {
    j["trace_shrunk"] = nullptr;
  }
  j["trace"] = c.trace_path ? nlohmann::json(*c.trace_path) : nlohmann::json(nullptr);
  if (r.trace && r.trace->cause) j["cause"] = cause_json(*r.trace->cause);
  j["report"] = c.report_path ? nlohmann::json(*c.report_path) : nlohmann::json(nullptr);
  j["shard"] = c.shard.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.shard);
  j["shard_mode"] = c.shard.empty() ? nlohmann::json(nullptr) : nlohmann::json(shard_mode_name(c.shard_mode));
  j["replay"] = c.trace_path ? nlohmann::json(replay_command(context.program, *c.trace_path)) : nlohmann::json(nullptr);
}

// A lock-order cycle across executions: each edge with the execution that took it, its
// trace and replay command.
nlohmann::json witnesses_json(const CheckedScenario& c, const ReportContext& context) {
  const sim::CheckReport& r = *c.report;
  nlohmann::json witnesses = nlohmann::json::array();
  for (std::size_t k = 0; k < r.witnesses.size(); ++k) {
    const auto& w = r.witnesses[k];
    nlohmann::json e = {{"from", w.edge.from}, {"to", w.edge.to}, {"how", w.edge.how}, {"execution", w.trace.execution}};
    e["trace"] = k < c.witness_paths.size() ? nlohmann::json(c.witness_paths[k]) : nlohmann::json(nullptr);
    e["replay"] = k < c.witness_paths.size() ? nlohmann::json(replay_command(context.program, c.witness_paths[k]))
                                              : nlohmann::json(nullptr);
    witnesses.push_back(std::move(e));
  }
  return witnesses;
}

// The first lines: verdict and expected, the failure's message, a lasso's shape and what
// its cycle waits for.
void print_verdict(std::ostream& out, const CheckedScenario& c) {
  const sim::CheckReport& r = *c.report;
  const auto& failure = r.result.first_failure;
  std::string verdict(verdict_name(r.result.verdict));
  if (failure && !failure->result.invariant.empty()) verdict += " " + failure->result.invariant;
  std::string expected(verdict_name(c.scenario->expect.verdict));
  if (c.scenario->expect.violation) expected += " " + *c.scenario->expect.violation;
  out << fmt::format("{}: {} (expected {}){}\n", c.scenario->name, verdict, expected,
                     r.as_expected ? "" : "  <-- NOT AS EXPECTED");
  if (failure) out << fmt::format("  {}\n", r.trace ? r.trace->message : failure->result.message);
  if (r.trace && r.trace->lasso) {
    const auto& l = *r.trace->lasso;
    out << fmt::format("  lasso: {} steps, then a {}-step cycle from step {} on, shown {} times", l.start, l.period, l.start,
                       l.repeats);
    if (l.observed > 0) out << fmt::format(" (the search's execution repeated it {} times)", l.observed);
    out << '\n';
    if (const std::string held = sim::cycle_holders(*r.trace, c.file); !held.empty()) {
      out << fmt::format("  what the cycle waits for: {}\n", held);
    }
  }
}

// The search's line (strategy, seed, executions, steps, rates, why it stopped) and its marks.
void print_search(std::ostream& out, const CheckedScenario& c) {
  const sim::CheckReport& r = *c.report;
  const auto& stats = r.result.stats;
  std::string redundant =
      stats.redundant > 0 ? fmt::format(" (+{} sleep-set blocked)", stats.redundant) : std::string();
  if (stats.unfair > 0) redundant += fmt::format(" (+{} cut as unfair)", stats.unfair);
  const std::string ran = strategy_ran(r) == r.strategy ? r.strategy : fmt::format("{} (ran as {})", r.strategy, strategy_ran(r));
  out << fmt::format("  {} {} seed {}: {} executions{}, {} steps in {:.3f} s ({:.0f} steps/s, {:.0f} executions/s); {}\n",
                     c.file, ran, r.seed, stats.executions, redundant, stats.steps, stats.elapsed_s,
                     per_second(stats.steps, stats.elapsed_s), per_second(stats.executions, stats.elapsed_s),
                     r.result.stop_reason);
  // What a timed search covered (model/timing.h): its verdict holds for these timings only.
  if (r.run.time == TimeMode::timed) {
    out << fmt::format("  timing: {}; {}\n", timing_coverage(r.run.timing), kTimedOrders);
  }
  if (const auto& spec = r.result.speculation; spec.jobs > 1 && spec.portfolio) {
    out << fmt::format("  threads: {}; the executions ran on them, each judged in order\n", spec.jobs);
  } else if (spec.jobs > 1) {
    out << fmt::format("  threads: {}; {} subtrees explored on other threads taken ({} executions), {} dropped "
                       "(their start changed, or the search ended first)\n",
                       spec.jobs, spec.taken, spec.taken_executions, spec.dropped);
  }
  if (const auto& spec = r.result.speculation; spec.exchange) {
    out << fmt::format("  queue: {} subtrees published for the workers; {} taken from them ({} executions), {} taken "
                       "back and explored here, {} withdrawn{}\n",
                       spec.published, spec.remote_taken, spec.remote_taken_executions, spec.taken_back,
                       spec.withdrawn,
                       spec.held_back == 0 ? std::string()
                                           : fmt::format("; publishing held back {} times (the redundant work "
                                                         "at its bound)",
                                                         spec.held_back));
  }
  if (const auto& sym = r.result.symmetry; sym.actors > 0) {
    out << fmt::format("  symmetry: {} actors, {} permutations (executions equal up to them explored once)\n",
                       sym.actors, sym.permutations);
  }
  for (const auto& note : r.result.notes) out << fmt::format("  note: {}\n", note);
  if (!stats.marks.empty()) {
    std::string marks;
    for (const auto& [mark, n] : stats.marks) marks += fmt::format("{}{}: {}", marks.empty() ? "" : ", ", mark, n);
    out << fmt::format("  executions marked: {}\n", marks);
  }
}

// The failing execution: where the search found it, its shrinking, and its interleaving
// (or lasso) when it has at most `show_events` events.
void print_failing_execution(std::ostream& out, const sim::CheckReport& r, std::size_t show_events) {
  const auto& failure = r.result.first_failure;
  out << fmt::format("  failing execution: #{} of the search, {} steps", failure->execution, failure->result.steps);
  if (r.trace->shrunk) {
    const auto& sh = *r.trace->shrunk;
    // Preemptions first, as the shrinker orders them: a trace may grow to lose one.
    out << fmt::format("; trace shrunk to {} preemptions, {} steps (found with {} preemptions, {} steps){}{}",
                       sh.preemptions, sh.steps, sh.original_preemptions, sh.original_steps,
                       sh.steps > sh.original_steps ? "; fewer preemptions come before fewer steps" : "",
                       sh.out_of_budget ? "; shrinking stopped by its budget" : "");
  }
  out << '\n';
  const sim::Cause* cause = r.trace->cause ? &*r.trace->cause : nullptr;
  if (r.trace->lasso && r.trace->lasso->start + r.trace->lasso->period <= show_events) {
    sim::print_lasso(out, r.trace->events, r.trace->actors, *r.trace->lasso, sim::kDefaultColumnWidth, cause);
  } else if (r.trace->events.size() <= show_events) {
    sim::print_interleaving(out, r.trace->events, r.trace->actors, sim::kDefaultColumnWidth, cause);
  } else if (show_events > 0) {
    out << fmt::format("  ({} events: too many to print here; the replay command prints them all)\n",
                       r.trace->events.size());
    if (r.trace->cause) sim::print_cause(out, *r.trace->cause);
  }
}

// Each edge of a lock-order cycle across executions, with its trace and replay command.
void print_witnesses(std::ostream& out, const CheckedScenario& c, const ReportContext& context) {
  const sim::CheckReport& r = *c.report;
  out << "  each edge of the cycle, from an execution that took it (each replays, and passes, alone):\n";
  for (std::size_t k = 0; k < r.witnesses.size(); ++k) {
    const auto& w = r.witnesses[k];
    out << fmt::format("    {} -> {}: execution #{}, {}\n", w.edge.from, w.edge.to, w.trace.execution, w.edge.how);
    if (k < c.witness_paths.size()) {
      out << fmt::format("      trace: {}\n      replay: {}\n", c.witness_paths[k], replay_command(context.program, c.witness_paths[k]));
    }
  }
}

}  // namespace

nlohmann::json to_json(const CheckedScenario& c, const ReportContext& context) {
  if (c.scenario == nullptr) return bad_input_json(c);
  nlohmann::json j;
  j["file"] = c.file;
  add_verdict(j, c);
  add_search(j, *c.report);
  add_trace(j, c, context);
  if (!c.report->witnesses.empty()) j["witnesses"] = witnesses_json(c, context);
  return j;
}

void print_human(std::ostream& out, const CheckedScenario& c, const ReportContext& context,
                 std::size_t show_interleaving_events) {
  if (c.scenario == nullptr) {
    out << "error: " << c.input_error << '\n';
    return;
  }
  const sim::CheckReport& r = *c.report;
  print_verdict(out, c);
  print_search(out, c);
  if (r.result.first_failure && r.trace) print_failing_execution(out, r, show_interleaving_events);
  if (c.trace_path) {
    out << fmt::format("  trace: {}\n", *c.trace_path);
    out << fmt::format("  replay: {}\n", replay_command(context.program, *c.trace_path));
  }
  if (!r.witnesses.empty()) print_witnesses(out, c, context);
}

std::string summary_markdown(const std::vector<nlohmann::json>& results, double elapsed_s, const std::string& out_dir,
                             const std::string& note) {
  auto link = [&](const nlohmann::json& v, const char* label) -> std::string {
    if (!v.is_string()) return "";
    std::error_code ec;
    const auto rel = std::filesystem::relative(v.get<std::string>(), out_dir, ec);
    return fmt::format("[{}]({})", label, ec ? v.get<std::string>() : rel.string());
  };
  std::size_t ok = 0;
  for (const auto& r : results) ok += r["as_expected"].get<bool>() ? 1 : 0;
  std::string md = "# lockstep sweep\n\n";
  md += fmt::format("{} scenarios, {} as expected, {} not, in {:.2f} s.\n\n", results.size(), ok,
                    results.size() - ok, elapsed_s);
  if (!note.empty()) md += fmt::format("**{}**\n\n", note);
  md += "| scenario | file | verdict | expected | ok | search | executions | steps | seconds | failure |\n";
  md += "|---|---|---|---|---|---|---:|---:|---:|---|\n";
  for (const auto& r : results) {
    auto text = [](const nlohmann::json& v) { return v.is_null() ? std::string("-") : v.is_string() ? v.get<std::string>() : v.dump(); };
    std::string verdict = text(r["verdict"]);
    if (!r["violation"].is_null()) verdict += " " + text(r["violation"]);
    std::string expected = text(r["expected_verdict"]);
    if (r.contains("expected_violation") && !r["expected_violation"].is_null()) expected += " " + text(r["expected_violation"]);
    // The strategy that ran; a fallback from optimal DPOR with its reason.
    std::string search = text(r.value("strategy_ran", nlohmann::json()));
    if (const nlohmann::json f = r.value("fallback", nlohmann::json()); f.is_object()) {
      search += fmt::format(" (fell back at execution {}: {})", text(f["at_execution"]), text(f["reason"]));
    }
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {:.3f} | {} |\n", text(r["scenario"]), text(r["file"]),
                      verdict, expected, r["as_expected"].get<bool>() ? "yes" : "**no**", search, text(r["executions"]),
                      text(r["steps"]), r["elapsed_s"].get<double>(),
                      r["trace"].is_null() ? std::string("-")
                                           : link(r["trace"], "trace") + " " + link(r.value("report", nlohmann::json()), "report"));
  }
  return md;
}

}  // namespace lockstep::cli

namespace lockstep::cli {
namespace {

std::string str(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump(); }

}  // namespace

std::string junit_xml(const std::vector<nlohmann::json>& results, double elapsed_s) {
  std::size_t failures = 0, errors = 0;
  for (const auto& r : results) {
    if (r["verdict"] == "bad_input") {
      ++errors;
    } else if (!r["as_expected"].get<bool>()) {
      ++failures;
    }
  }
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += fmt::format("<testsuites name=\"lockstep\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\">\n",
                   results.size(), failures, errors, elapsed_s);
  x += fmt::format("  <testsuite name=\"lockstep sweep\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\">\n",
                   results.size(), failures, errors, elapsed_s);
  for (const auto& r : results) {
    const std::string file = str(r["file"]);
    const std::string name = r["scenario"].is_null() ? file : str(r["scenario"]);
    std::string classname = std::filesystem::path(file).parent_path().string();
    for (char& c : classname) c = c == '/' ? '.' : c;
    x += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\">\n", escape_markup(classname), escape_markup(name),
                     r["elapsed_s"].is_number() ? r["elapsed_s"].get<double>() : 0.0);
    std::string verdict = str(r["verdict"]);
    if (!r["violation"].is_null()) verdict += " " + str(r["violation"]);
    if (r["verdict"] == "bad_input") {
      x += fmt::format("      <error message=\"{}\" type=\"bad_input\"/>\n", escape_markup(str(r["error"])));
    } else if (!r["as_expected"].get<bool>()) {
      std::string expected = str(r["expected_verdict"]);
      if (r.contains("expected_violation") && !r["expected_violation"].is_null()) expected += " " + str(r["expected_violation"]);
      x += fmt::format("      <failure message=\"verdict {}, expected {}\" type=\"unexpected_verdict\">{}</failure>\n",
                       escape_markup(verdict), escape_markup(expected), escape_markup(str(r["message"])));
    }
    std::string out = fmt::format("verdict {}; {} executions, {} steps", verdict, str(r["executions"]), str(r["steps"]));
    if (!r["trace"].is_null()) out += fmt::format("\ntrace: {}\nreplay: {}", str(r["trace"]), str(r["replay"]));
    x += fmt::format("      <system-out>{}</system-out>\n    </testcase>\n", escape_markup(out));
  }
  x += "  </testsuite>\n</testsuites>\n";
  return x;
}

namespace {

// check --queue: what the workers explored, added to their coordinator's entry: the
// executions of their subtrees, and of those the redundant ones (explored but not taken:
// withdrawn, or cut short), which the one-process search would not have run.
void merge_workers(const std::vector<nlohmann::json>& workers, const std::map<std::string, std::size_t>& index,
                   std::vector<nlohmann::json>& merged) {
  for (const auto& w : workers) {
    const auto it = index.find(str(w["file"]));
    if (it == index.end()) continue;
    nlohmann::json& m = merged[it->second];
    if (m.value("shard_mode", nlohmann::json()) != shard_mode_name(ShardMode::coordinator) || !m["queue"].is_object()) continue;
    nlohmann::json& q = m["queue"];
    q["workers"] = q.value("workers", 0) + 1;
    q["worker_tasks"] = q.value("worker_tasks", std::uint64_t{0}) + w["worker"].value("tasks", std::uint64_t{0});
    q["worker_executions"] =
        q.value("worker_executions", std::uint64_t{0}) + w["worker"].value("explored", std::uint64_t{0});
    m["elapsed_s"] = std::max(m["elapsed_s"].get<double>(), w["elapsed_s"].get<double>());
  }
  for (auto& m : merged) {
    if (!m.contains("queue") || !m["queue"].is_object() || !m["queue"].contains("workers")) continue;
    nlohmann::json& q = m["queue"];
    const auto explored = q["worker_executions"].get<std::uint64_t>();
    const auto taken = q.value("remote_taken_executions", std::uint64_t{0});
    q["redundant_executions"] = explored > taken ? explored - taken : 0;
    const double total = static_cast<double>(m.value("executions", std::uint64_t{0}) + m.value("redundant", std::uint64_t{0}));
    q["redundant_fraction"] = total > 0 ? q["redundant_executions"].get<double>() / total : 0.0;
  }
}

}  // namespace

std::vector<nlohmann::json> merge_results(const std::vector<nlohmann::json>& all) {
  std::vector<nlohmann::json> merged;
  std::map<std::string, std::size_t> index;  // file -> position in merged
  std::vector<int> parts;                    // entries merged into each
  // check --queue: workers' entries add to their coordinator's, after every other entry.
  std::vector<nlohmann::json> entries, workers;
  for (const auto& e : all) (e.value("shard_mode", nlohmann::json()) == shard_mode_name(ShardMode::worker) ? workers : entries).push_back(e);
  for (const auto& w : workers) {
    if (!index.count(str(w["file"])) && std::none_of(entries.begin(), entries.end(), [&](const nlohmann::json& e) {
          return e["file"] == w["file"];
        })) {
      entries.push_back(w);  // no coordinator: the workers' entry stands, incomplete
    }
  }
  for (const auto& e : entries) {
    const std::string file = str(e["file"]);
    auto it = index.find(file);
    if (it == index.end()) {
      index.emplace(file, merged.size());
      nlohmann::json first = e;
      first["shard"] = nullptr;
      merged.push_back(std::move(first));
      parts.push_back(1);
      continue;
    }
    ++parts[it->second];
    nlohmann::json& m = merged[it->second];
    if (m["verdict"] == "bad_input" || e["verdict"] == "bad_input") {
      if (e["verdict"] == "bad_input") m = e;
      continue;
    }
    for (const char* key : {"executions", "redundant", "skipped", "steps", "failures"}) {
      m[key] = m.value(key, std::uint64_t{0}) + e.value(key, std::uint64_t{0});
    }
    if (e.contains("marks")) {
      for (const auto& [mark, n] : e["marks"].items()) m["marks"][mark] = m["marks"].value(mark, std::uint64_t{0}) + n.get<std::uint64_t>();
    }
    m["elapsed_s"] = std::max(m["elapsed_s"].get<double>(), e["elapsed_s"].get<double>());
    const bool m_failed = is_failure(*verdict_from_name(str(m["verdict"])));
    const bool e_failed = is_failure(*verdict_from_name(str(e["verdict"])));
    if (!m_failed && e_failed) {
      for (const char* key : {"verdict", "violation", "message", "trace", "report", "replay"}) m[key] = e[key];
    } else if (!m_failed && !e_failed && m["verdict"] != e["verdict"]) {
      m["verdict"] = "incomplete";  // one shard passed, another was cut short
    }
    m["exhaustive"] = m["exhaustive"].get<bool>() && e["exhaustive"].get<bool>();
  }
  for (std::size_t i = 0; i < merged.size(); ++i) {
    nlohmann::json& m = merged[i];
    if (m["verdict"] == "bad_input" || parts[i] == 1) continue;  // one entry: its own judgement stands
    const bool verdict_ok = m["verdict"] == m["expected_verdict"];
    const bool violation_ok = m["expected_violation"].is_null() || m["expected_violation"] == m["violation"];
    m["as_expected"] = verdict_ok && violation_ok;
    const double s = m["elapsed_s"].get<double>();
    m["steps_per_s"] = s > 0 ? m["steps"].get<double>() / s : 0.0;
    m["executions_per_s"] = s > 0 ? m["executions"].get<double>() / s : 0.0;
  }
  merge_workers(workers, index, merged);
  return merged;
}

}  // namespace lockstep::cli
