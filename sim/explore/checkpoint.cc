// sim/explore/checkpoint.cc: checkpoint files and the explorer's state in them (sim/explore/checkpoint.h).
#include "lockstep/sim/explore/checkpoint.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "lockstep/model/json_cursor.h"

namespace lockstep::sim {

std::string_view lockstep_version() { return LOCKSTEP_VERSION; }

namespace {

nlohmann::json decisions_json(const std::vector<Decision>& decisions) {
  nlohmann::json out = nlohmann::json::array();
  for (const Decision& d : decisions) out.push_back(decision_text(d));
  return out;
}

std::vector<Decision> decisions_of(const nlohmann::json& j) {
  std::vector<Decision> out;
  for (const auto& d : j) {
    Decision decision;
    if (!d.is_string() || !parse_decision(d.get<std::string>(), decision)) {
      throw std::invalid_argument("a malformed decision");
    }
    out.push_back(decision);
  }
  return out;
}

}  // namespace

nlohmann::json stats_json(const ExploreStats& s) {
  nlohmann::json by_verdict = nlohmann::json::object();
  for (std::size_t v = 0; v < s.by_verdict.size(); ++v) {
    if (s.by_verdict[v] != 0) by_verdict[std::string(verdict_name(kAllVerdicts[v]))] = s.by_verdict[v];
  }
  return {{"executions", s.executions}, {"redundant", s.redundant}, {"skipped", s.skipped},
          {"unfair", s.unfair},         {"steps", s.steps},         {"timer_steps", s.timer_steps},
          {"unjudged_deadlines", s.unjudged_deadlines},
          {"failures", s.failures},     {"by_verdict", by_verdict}, {"marks", s.marks},
          {"elapsed_s", s.elapsed_s}};
}

ExploreStats stats_of(const nlohmann::json& j) {
  ExploreStats s;
  s.executions = j.at("executions").get<std::uint64_t>();
  s.redundant = j.at("redundant").get<std::uint64_t>();
  s.skipped = j.at("skipped").get<std::uint64_t>();
  s.unfair = j.at("unfair").get<std::uint64_t>();
  s.steps = j.at("steps").get<std::uint64_t>();
  s.timer_steps = j.at("timer_steps").get<std::uint64_t>();
  s.unjudged_deadlines = j.value("unjudged_deadlines", std::uint64_t{0});  // absent from older checkpoints
  s.failures = j.at("failures").get<std::uint64_t>();
  for (const auto& [name, count] : j.at("by_verdict").items()) {
    const auto v = verdict_from_name(name);
    if (!v) throw std::invalid_argument("an unknown verdict " + name);
    s.by_verdict[static_cast<std::size_t>(*v)] = count.get<std::uint64_t>();
  }
  s.marks = j.at("marks").get<std::map<std::string, std::uint64_t>>();
  s.elapsed_s = j.at("elapsed_s").get<double>();
  return s;
}

nlohmann::json witness_json(const LockOrderWitness& w) {
  return {w.edge.from, w.edge.to, w.edge.how, decisions_json(w.decisions), w.execution};
}

LockOrderWitness witness_of(const nlohmann::json& j) {
  if (!j.is_array() || j.size() != 5) throw std::invalid_argument("a malformed lock-order edge");
  return {{j[0].get<std::string>(), j[1].get<std::string>(), j[2].get<std::string>()}, decisions_of(j[3]),
          j[4].get<std::uint64_t>()};
}

nlohmann::json failure_json(const FoundFailure& f) {
  nlohmann::json witnesses = nlohmann::json::array();
  for (const auto& w : f.witnesses) witnesses.push_back(witness_json(w));
  return {{"verdict", verdict_name(f.result.verdict)}, {"invariant", f.result.invariant},
          {"message", f.result.message},               {"steps", f.result.steps},
          {"decisions", decisions_json(f.decisions)},  {"execution", f.execution},
          {"witnesses", witnesses}};
}

FoundFailure failure_of_json(const nlohmann::json& j) {
  FoundFailure f;
  const auto v = verdict_from_name(j.at("verdict").get<std::string>());
  if (!v) throw std::invalid_argument("an unknown verdict");
  f.result.verdict = *v;
  f.result.invariant = j.at("invariant").get<std::string>();
  f.result.message = j.at("message").get<std::string>();
  f.result.steps = j.at("steps").get<std::uint64_t>();
  f.decisions = decisions_of(j.at("decisions"));
  f.execution = j.at("execution").get<std::uint64_t>();
  for (const auto& w : j.at("witnesses")) f.witnesses.push_back(witness_of(w));
  return f;
}

std::string document_digest(const nlohmann::json& document) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over the canonical dump (keys sorted)
  for (const unsigned char c : document.dump()) h = (h ^ c) * 1099511628211ULL;
  return fmt::format("{:016x}", h);
}

void write_checkpoint(const std::string& path, const CheckpointHeader& header, const nlohmann::json& search) {
  const nlohmann::json doc = {{"format", "lockstep-checkpoint"},
                              {"format_version", kCheckpointFormat},
                              {"lockstep", lockstep_version()},
                              {"scenario", {{"file", header.scenario_file}, {"name", header.scenario_name},
                                            {"digest", header.digest}}},
                              {"settings", header.settings},
                              {"search", search}};
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << doc.dump() << '\n';
    out.flush();
    if (!out) throw std::runtime_error(fmt::format("{}: cannot write the checkpoint", tmp));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw std::runtime_error(fmt::format("{}: cannot write the checkpoint: {}", path, ec.message()));
}

nlohmann::json read_checkpoint(const std::string& path, const CheckpointHeader& expected) {
  const nlohmann::json doc = read_json_file(path);
  auto refuse = [&](const std::string& where, const std::string& why) {
    return InputError(fmt::format("{}: {}: {}", path, where, why));
  };
  if (!doc.is_object() || doc.value("format", "") != "lockstep-checkpoint") {
    throw refuse("/format", "not a lockstep checkpoint");
  }
  if (doc.value("format_version", 0) != kCheckpointFormat) {
    throw refuse("/format_version", fmt::format("format {} is not this lockstep's ({})", doc.value("format_version", 0),
                                                kCheckpointFormat));
  }
  const std::string version = doc.value("lockstep", "");
  if (version != lockstep_version()) {
    throw refuse("/lockstep", fmt::format("written by lockstep {}, this is lockstep {}: a search resumes only on "
                                          "the version that began it",
                                          version, lockstep_version()));
  }
  const nlohmann::json scenario = doc.value("scenario", nlohmann::json::object());
  if (scenario.value("name", "") != expected.scenario_name) {
    throw refuse("/scenario/name", fmt::format("a checkpoint of scenario \"{}\", not of \"{}\"",
                                               scenario.value("name", ""), expected.scenario_name));
  }
  if (scenario.value("digest", "") != expected.digest) {
    throw refuse("/scenario/digest", fmt::format("scenario \"{}\" ({}) changed since the checkpoint was written",
                                                 expected.scenario_name, expected.scenario_file));
  }
  const nlohmann::json settings = doc.value("settings", nlohmann::json::object());
  for (const auto& [key, value] : expected.settings.items()) {
    const nlohmann::json had = settings.value(key, nlohmann::json());
    if (had != value) {
      throw refuse("/settings/" + key, fmt::format("the checkpoint's search ran with {}, this one with {}",
                                                   had.dump(), value.dump()));
    }
  }
  if (!doc.contains("search") || !doc["search"].is_object()) throw refuse("/search", "missing");
  return doc["search"];
}

}  // namespace lockstep::sim
