// real/backend_hook.h: how the model API reaches the real backend without linking it.
//
// lockstep::lockstep (simulation and model tests) links neither libpq nor threads. The real
// backend (lockstep::real) installs itself here when a file of the program includes
// <lockstep/real.h>; Model::confirm and LOCKSTEP_PG then run on it. Without it they throw
// std::logic_error saying what to link and include. Header-only: the types it names are
// declared in real/confirm.h, which needs no libpq.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include "lockstep/real/confirm.h"

namespace lockstep::real {

struct Backend {
  ConfirmReport (*confirm)(const System& system, const ConfirmOptions& options) = nullptr;
  std::string (*describe)(const ConfirmReport& report) = nullptr;
  // The conninfo LOCKSTEP_PG asks for ("auto": one throwaway server for the program), or
  // nothing when it is unset or empty.
  std::optional<std::string> (*server_from_environment)() = nullptr;
};

// The installed backend, or null. One per program (a function-local static of an inline
// function).
inline const Backend*& installed_backend() {
  static const Backend* backend = nullptr;
  return backend;
}

// The installed backend; std::logic_error naming `what` needs it when there is none.
inline const Backend& require_backend(const std::string& what) {
  if (const Backend* b = installed_backend()) return *b;
  throw std::logic_error(what + " needs lockstep's real backend: link lockstep::real and include <lockstep/real.h> in one file of the program");
}

}  // namespace lockstep::real
