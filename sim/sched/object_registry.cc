#include "lockstep/sim/sched/object_registry.h"

#include <stdexcept>

#include <fmt/format.h>

#include "lockstep/sim/invariant.h"

namespace lockstep::sim {

ObjectId ObjectRegistry::add(const std::string& key) {
  const auto [it, added] = ids_.try_emplace(key, static_cast<ObjectId>(names_.size()));
  if (added) {
    const auto separator = key.find('\x1f');
    names_.push_back(key.substr(0, separator));
    made_in_.push_back(0);
    first_of_name_.push_back(separator == std::string::npos);
  }
  return it->second;
}

ObjectId ObjectRegistry::make(const std::string& name) {
  // Most executions make the same objects in the same order: the id made at this position
  // last time, when it is the first object of this name and not made yet, is the one.
  const std::size_t position = made_count_++;
  if (position < made_order_.size()) {
    const ObjectId id = made_order_[position];
    if (first_of_name_[id] && made_in_[id] != execution_ && names_[id] == name) {
      made_in_[id] = execution_;
      return id;
    }
  } else {
    made_order_.push_back(kNoObject);
  }
  std::string key = name;
  for (int occurrence = 2;; ++occurrence) {
    const ObjectId id = add(key);
    LOCKSTEP_INVARIANT(names_[id] == name, "an object's key names it");
    if (made_in_[id] != execution_) {
      made_in_[id] = execution_;
      made_order_[position] = id;
      return id;
    }
    key = fmt::format("{}\x1f{}", name, occurrence);  // another object of the same name
  }
}

ObjectId ObjectRegistry::of_key(const std::string& key) { return add(key); }

std::vector<std::string> ObjectRegistry::keys() const {
  std::vector<std::string> keys(names_.size() - 1);
  for (const auto& [key, id] : ids_) keys[id - 1] = key;
  return keys;
}

void ObjectRegistry::restore(const std::vector<std::string>& keys) {
  LOCKSTEP_INVARIANT(names_.size() == 1, "scheduler: objects are restored before any is made");
  for (const std::string& key : keys) {
    if (ids_.contains(key)) throw std::invalid_argument("an object named twice: " + key);
    add(key);
  }
}

}  // namespace lockstep::sim
