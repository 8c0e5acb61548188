#include "lockstep/sim/model_run.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include "lockstep/sim/check.h"
#include "lockstep/sim/explore/exploration.h"
#include "lockstep/sim/explore/explorer.h"
#include "lockstep/sim/explain/interleaving_table.h"
#include "lockstep/sim/explain/trace.h"

namespace lockstep {
namespace {

// A path as the replay command gives it: one under the directory the test runs in (the build
// directory, as ctest runs it) relative to it ("./" before a file there), so the command reads
// the same on every machine; one elsewhere as it is.
std::string command_path(const std::filesystem::path& p) {
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  if (ec || p.is_relative()) return p.string();
  const std::filesystem::path rel = std::filesystem::relative(p, cwd, ec);
  const std::string text = rel.string();
  if (ec || text.empty() || text.starts_with("..")) return p.string();
  return text.find('/') != std::string::npos ? text : "./" + text;
}

std::string self_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("./your-test") : command_path(p);
}

std::string safe_name(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '_';
  }
  return out;
}

nlohmann::json scenario_stub(const ModelSpec& spec, const std::string& replay_command) {
  return {{"format", "lockstep-scenario/1"},
          {"name", spec.name},
          {"system", "api"},
          {"description", "a model defined in C++ code: replay it by running its test with LOCKSTEP_REPLAY=TRACE"},
          {"model", model_identity(spec)},
          {"replay", replay_command}};
}

// The trace file of a model. With the caller's key (a test's name): NAME-KEY.json, one per
// test, the latest failure's. Without: NAME-HASH.json, a hash of its identity, so that
// models of one name with other actors or configurations keep their own.
std::string trace_file_name(const ModelSpec& spec, const std::string& key) {
  if (!key.empty()) return fmt::format("{}-{}.json", safe_name(spec.name), safe_name(key));
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a 64
  for (const unsigned char c : model_identity(spec).dump()) h = (h ^ c) * 1099511628211ull;
  return fmt::format("{}-{:08x}.json", safe_name(spec.name), static_cast<std::uint32_t>(h ^ (h >> 32)));
}

// Removes the traces a test's key wrote under the older naming, NAME-KEY-HASH.json (a hash
// per configuration), so that a test keeps one trace: the one at `kept`.
void remove_older_traces(const std::filesystem::path& kept) {
  const std::string stem = kept.stem().string() + "-";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(kept.parent_path(), ec)) {
    const std::string name = e.path().filename().string();
    const bool older = name.size() == stem.size() + 8 + 5 && name.starts_with(stem) && name.ends_with(".json") &&
                       name.find_first_not_of("0123456789abcdef", stem.size()) == stem.size() + 8;
    if (older) std::filesystem::remove(e.path(), ec);
  }
}

// Why a trace does not replay on `spec`: another model, or this one before it changed (which
// fields of its configuration, or which actors, differ).
std::string not_this_model(const ModelSpec& spec, const sim::Trace& trace) {
  const nlohmann::json recorded = trace.scenario.value("model", nlohmann::json());
  if (recorded.is_object() && recorded.value("name", "") == spec.name) {
    return fmt::format("this trace was recorded from model \"{}\", this model, with other settings: {} (a trace "
                       "recorded before the model changed does not replay: run the test without LOCKSTEP_REPLAY to "
                       "record a new one)",
                       spec.name, identity_difference(recorded, model_identity(spec)));
  }
  return fmt::format("this trace was recorded from another model or configuration than \"{}\" with {}", spec.name,
                     spec.configuration.is_null() ? "no configuration" : spec.configuration.dump());
}

// Whether `trace` was recorded from this model (LOCKSTEP_REPLAY, Model::replay).
bool recorded_from(const ModelSpec& spec, const sim::Trace& trace) {
  const nlohmann::json identity = trace.scenario.value("model", nlohmann::json());
  // Traces written before identities were recorded name the model only.
  return identity.is_null() ? trace.scenario.value("name", "") == spec.name : identity == model_identity(spec);
}

// The interleaving table of a report, its latest kMaxReportEvents events at most: a test
// failure message stays readable (the trace holds them all).
constexpr std::size_t kMaxReportEvents = 200;

std::string bounded_interleaving(const std::vector<sim::LogEvent>& events, const std::vector<std::string>& actors) {
  std::ostringstream table;
  if (events.size() <= kMaxReportEvents) {
    sim::print_interleaving(table, events, actors);
    return table.str();
  }
  table << fmt::format("  ({} earlier events not shown: replay the trace to see them all)\n", events.size() - kMaxReportEvents);
  const std::vector<sim::LogEvent> tail(events.end() - static_cast<std::ptrdiff_t>(kMaxReportEvents), events.end());
  sim::print_interleaving(table, tail, actors);
  return table.str();
}

}  // namespace

std::string ModelReport::describe() const {
  std::string out = fmt::format("lockstep: {}{}{}\n", verdict_name(verdict), invariant.empty() ? "" : " " + invariant,
                                message.empty() ? "" : ": " + message);
  if (!note.empty()) out += fmt::format("  note: {}\n", note);
  if (!replayed) {
    out += fmt::format("  {} executions ({} sleep-set blocked), {} steps; {}\n", executions, redundant, search_steps, stop_reason);
  }
  if (!marks.empty()) {
    std::string list;
    for (const auto& [mark, n] : marks) list += fmt::format("{}{}: {}", list.empty() ? "" : ", ", mark, n);
    out += fmt::format("  executions marked: {}\n", list);
  }
  if (!interleaving.empty()) out += interleaving;
  if (!cause.empty()) out += cause;
  if (trace_path) {
    out += fmt::format("  {}: {}{}\n", replayed ? "replayed from the trace" : "trace", *trace_path,
                       trace_per_test ? " (this test's one trace: its next failure replaces it)" : "");
  }
  if (!replay_command.empty()) out += fmt::format("  replay: {}\n", replay_command);
  return out;
}

std::function<std::string()>& replay_environment_hook() {
  static std::function<std::string()> hook;
  return hook;
}

bool ModelReport::is(Verdict kind, std::string_view name) const {
  if (verdict != kind) return false;
  if (name.empty()) return true;
  if (kind == Verdict::violation || kind == Verdict::liveness || kind == Verdict::step_bound) return invariant == name;
  if (kind == Verdict::livelock) return std::find(looping.begin(), looping.end(), name) != looping.end();
  return false;
}

std::string ModelReport::expectation(Verdict kind, std::string_view name) {
  const std::string_view v = verdict_name(kind);
  return name.empty() ? std::string(v) : fmt::format("{} of {}", v, name);
}

namespace {

// A livelock's looping actors, by name.
std::vector<std::string> looping_names(Verdict verdict, const std::optional<sim::Cycle>& cycle, const std::vector<std::string>& actors) {
  std::vector<std::string> names;
  if (verdict != Verdict::livelock || !cycle) return names;
  for (std::size_t a = 0; a < actors.size() && a < 64; ++a) {
    if (cycle->looping >> a & 1) names.push_back(actors[a]);
  }
  return names;
}

// What confirm needs of a failing trace: its order of actors, and whether it took a phantom grant.
void aim_of(const sim::Trace& trace, ModelReport& report) {
  for (const sim::Decision& d : trace.decisions) {
    if (d.kind == sim::Decision::Kind::run) report.order.push_back(static_cast<ActorId>(d.value));
  }
  report.phantom_grant = std::any_of(trace.events.begin(), trace.events.end(),
                                     [](const sim::LogEvent& e) { return e.op == "observe phantom_grant"; });
}

// The report of a trace replayed instead of a search (LOCKSTEP_REPLAY, Model::replay).
// `source` says where the path came from, for the error of a trace that does not replay.
ModelReport replayed(const System& system, const sim::Trace& trace, const char* path, const std::string& source) {
  sim::ReplayReport r;
  try {
    r = sim::replay_on_system(system, trace, path);
  } catch (const sim::Divergence& d) {
    throw InputError(fmt::format("{}: trace diverges at step {}: {}", source, d.step(), d.what()));
  }
  ModelReport report;
  report.replayed = true;
  report.trace_path = std::filesystem::absolute(path).string();
  report.verdict = r.result.verdict;
  report.invariant = r.result.invariant;
  report.message = r.result.message;
  report.steps = r.result.steps;
  report.interleaving = bounded_interleaving(r.events, r.actors);
  report.looping = looping_names(r.result.verdict, r.result.cycle, r.actors);
  if (report.verdict != Verdict::pass) aim_of(trace, report);
  return report;
}

// What the search did: its verdict, counts, bounds and notes.
void report_search(const sim::ExploreResult& result, ModelReport& report) {
  report.verdict = result.verdict;
  report.executions = result.stats.executions;
  report.redundant = result.stats.redundant;
  report.search_steps = result.stats.steps;
  report.exhaustive = result.exhaustive;
  report.symmetric_actors = result.symmetry.actors;
  report.symmetry_permutations = result.symmetry.permutations;
  report.jobs = result.speculation.jobs;
  report.executions_from_threads = result.speculation.taken_executions;
  report.stop_reason = result.stop_reason;
  for (const auto& n : result.notes) report.note += (report.note.empty() ? "" : "; ") + n;
  report.marks = result.stats.marks;
}

// Model::replay(path): the trace must be this model's and configuration's.
ModelReport replayed_by_name(const ModelSpec& spec, const System& system, const std::string& path) {
  const sim::Trace trace = sim::load_trace(path);
  if (!recorded_from(spec, trace)) throw InputError(fmt::format("{}: {}", path, not_this_model(spec, trace)));
  return replayed(system, trace, path.c_str(), path);
}

}  // namespace

ModelReport run_model(const ModelSpec& spec, const ModelOptions& options) {
  const std::unique_ptr<System> owned = system_of(spec);
  const System& system = *owned;
  const ExploreSettings& search = options.search;
  const sim::RunLimits limits = sim::run_limits_of(search);
  ModelReport report;

  if (!options.replay_trace.empty()) return replayed_by_name(spec, system, options.replay_trace);
  const char* replay_path = std::getenv("LOCKSTEP_REPLAY");
  const bool replaying = replay_path != nullptr && *replay_path != '\0';
  const std::optional<sim::Trace> to_replay = replaying ? std::optional(sim::load_trace(replay_path)) : std::nullopt;
  if (to_replay && recorded_from(spec, *to_replay)) {
    return replayed(system, *to_replay, replay_path, fmt::format("LOCKSTEP_REPLAY={}", replay_path));
  }

  const std::string path = std::filesystem::absolute(std::filesystem::path(options.trace_dir) / trace_file_name(spec, options.trace_key)).string();
  sim::ExplorationRequest request;
  request.system = &system;
  request.strategy = search.strategy;
  request.strategy_where = fmt::format("model {}", spec.name);
  request.source = request.strategy_where;
  request.strategy_options.seed = search.seed;
  request.strategy_options.max_preemptions = search.max_preemptions;
  request.explore.limits = limits;
  static_cast<SearchBounds&>(request.explore) = search;
  if (!options.elapsed_seconds) request.explore.time_limit_s = 0;  // no clock to bound it by
  request.explore.elapsed_seconds = options.elapsed_seconds;
  if (search.timing.any() && search.time != TimeMode::timed) {
    throw InputError(fmt::format("model {}: a timing model needs timed mode (Model::timed())", spec.name));
  }
  if (search.jobs < 1 || search.jobs > kMaxJobs) {
    throw InputError(fmt::format("model {}: jobs must be 1 to {}, not {}", spec.name, kMaxJobs, search.jobs));
  }
  if (search.jobs > 1 && !options.spawn) {
    throw InputError(fmt::format("model {}: jobs {} needs ModelOptions::spawn (Model::run() supplies it)", spec.name,
                                 search.jobs));
  }
  request.explore.jobs = search.jobs;
  request.explore.spawn = options.spawn;
  // The trace's replay command is only known once a failure is (it names the environment).
  std::string replay_command;
  request.document = [&] {
    std::string environment = options.replay_environment;
    if (environment.empty() && replay_environment_hook()) environment = replay_environment_hook()();
    replay_command = fmt::format("{}LOCKSTEP_REPLAY={} {}{}", environment.empty() ? "" : environment + " ", command_path(path),
                                 self_executable(), options.replay_hint.empty() ? "" : " " + options.replay_hint);
    return scenario_stub(spec, replay_command);
  }();
  sim::Exploration x = sim::explore_and_record(request);
  const sim::ExploreResult& result = x.result;
  report_search(result, report);
  if (replaying) {
    report.note = fmt::format("LOCKSTEP_REPLAY={}: {}: explored instead, no trace written", replay_path,
                              not_this_model(spec, *to_replay)) +
                  (report.note.empty() ? "" : "; " + report.note);
  }
  if (!result.first_failure) return report;
  report.invariant = result.first_failure->result.invariant;
  report.message = result.first_failure->result.message;
  std::vector<std::string> actor_names;
  for (const auto& a : spec.actors) actor_names.push_back(a.name);
  report.looping = looping_names(result.verdict, result.first_failure->result.cycle, actor_names);
  // A lock-order cycle across executions has no one execution to record: the message
  // names the executions of its edges.
  if (!x.trace) return report;
  const sim::Trace& trace = *x.trace;
  report.replay_command = replay_command;
  report.message = trace.message;  // the message of the trace written, not of the longer execution found
  report.steps = static_cast<std::uint64_t>(std::count_if(trace.decisions.begin(), trace.decisions.end(),
                                                          [](const sim::Decision& d) { return d.kind != sim::Decision::Kind::choice; }));
  report.interleaving = bounded_interleaving(trace.events, trace.actors);
  if (trace.cause) {
    std::ostringstream cause;
    sim::print_cause(cause, *trace.cause);
    report.cause = cause.str();
  }
  aim_of(trace, report);
  // While another trace is being replayed, a failure of a different model is reported
  // but not written: the file could be the very trace being replayed.
  if (!replaying) {
    sim::save_trace(trace, path);
    if (!options.trace_key.empty()) remove_older_traces(path);
    report.trace_path = path;
    report.trace_per_test = !options.trace_key.empty();
  } else {
    report.replay_command.clear();
  }
  return report;
}

}  // namespace lockstep
