// sim/sched/object_registry.h: the ids of shared objects, stable across the executions of
// one scheduler (footprints name objects by id: sim/sched/op.h).
//
// Guarantees: the object named `name` has the same id in every execution, however late it is
// made (a row first touched by one actor or another), so footprints recorded in one execution
// (sleep sets, wakeup trees) name the same objects in the next; the k-th object of one name
// in an execution is the k-th of that name in every execution. Id 0 names nothing shared.
// Keys (object_keys) carry the occurrence after the first, so a checkpoint or another
// process can make the same ids again (restore).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "lockstep/sim/sched/op.h"

namespace lockstep::sim {

class ObjectRegistry {
 public:
  // A new execution: every object may be made again (with the id it had).
  void begin_execution() {
    ++execution_;
    made_count_ = 0;
  }
  // The id of this execution's next object named `name`.
  ObjectId make(const std::string& name);
  // The id of the object with this key (object_keys), made now if there is none yet.
  ObjectId of_key(const std::string& key);
  // The objects made so far, by id from 1, and making them again in a new registry before
  // any execution: ids are then those of the registry they came from. Throws
  // std::invalid_argument for a key given twice.
  std::vector<std::string> keys() const;
  void restore(const std::vector<std::string>& keys);

  std::size_t size() const { return names_.size(); }  // ids below it are made
  const std::string& name(ObjectId id) const { return names_[id]; }
  const std::vector<std::string>& names() const { return names_; }

 private:
  ObjectId add(const std::string& key);

  std::vector<std::string> names_ = std::vector<std::string>(1);  // by id; 0 names nothing shared
  std::unordered_map<std::string, ObjectId> ids_;  // by key: the name, and the occurrence after the first
  std::vector<std::uint64_t> made_in_ = std::vector<std::uint64_t>(1);  // by id: the execution that last made it
  std::vector<bool> first_of_name_ = std::vector<bool>(1);  // by id: the first object of its name
  std::vector<ObjectId> made_order_;  // the ids made, in order, by the latest executions
  std::size_t made_count_ = 0;        // objects made in this execution
  std::uint64_t execution_ = 1;  // counts begin_execution(); ids made outside any run (tests) are of run 1
};

}  // namespace lockstep::sim
