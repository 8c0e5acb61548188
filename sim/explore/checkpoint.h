// sim/explore/checkpoint.h: checkpoints of a search (lockstep check --checkpoint / --resume).
//
// A checkpoint file holds what a search needs to go on exactly where it was: the strategy's
// state where its current execution began (Checkpointing::checkpoint), the explorer's counts,
// notes, lock-order graph and failure so far, and a header naming the scenario (its file,
// name and a digest of its document), the settings that shape the search (strategy, seed,
// bounds per execution, time mode, fairness, shard) and lockstep's version. A resumed
// search explores exactly what an uninterrupted one does and reports the totals of every
// run so far; one whose header does not match is refused as bad input, naming the field.
//
// Files are written whole or not at all (a temporary file renamed over the old one), so a
// second Ctrl-C or a killed job never leaves half a checkpoint.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "lockstep/sim/explore/explorer.h"

namespace lockstep::sim {

inline constexpr int kCheckpointFormat = 1;

// lockstep's version, as the project declares it (CMakeLists.txt): one place for all.
std::string_view lockstep_version();

// The explorer's part of a checkpoint: counts, notes, lock-order edges, the failure so far.
nlohmann::json stats_json(const ExploreStats& stats);
ExploreStats stats_of(const nlohmann::json& j);
nlohmann::json failure_json(const FoundFailure& failure);
FoundFailure failure_of_json(const nlohmann::json& j);
nlohmann::json witness_json(const LockOrderWitness& w);
LockOrderWitness witness_of(const nlohmann::json& j);

// What a checkpoint must match to be resumed: the header check_scenario builds.
struct CheckpointHeader {
  std::string scenario_file;
  std::string scenario_name;
  std::string digest;      // of the scenario's document (16 hex digits)
  nlohmann::json settings;  // strategy, seed, bounds per execution, time, fair, shard
};

std::string document_digest(const nlohmann::json& document);

// Writes header + search to `path` (a temporary file, then renamed). Throws
// std::runtime_error when it cannot.
void write_checkpoint(const std::string& path, const CheckpointHeader& header, const nlohmann::json& search);

// Reads `path` and returns its search state. Throws InputError (naming the file and the
// field) for a file that is not a checkpoint, another lockstep version, another scenario or
// other settings.
nlohmann::json read_checkpoint(const std::string& path, const CheckpointHeader& expected);

}  // namespace lockstep::sim
