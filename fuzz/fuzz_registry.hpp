// The built-in experiments' registry for the fuzz targets: made once and kept for the process, as main()'s is
// (register_builtin on a host-only build).
#pragma once

#include "registry.hpp"

namespace labrun::fuzz {

/// The registry of every built-in experiment, built on first use and never destroyed.
inline const Registry& builtin_registry() {
  static const Registry* r = [] {
    auto* made = new Registry;  // lives for the process, as main()'s does
    register_builtin(*made);
    return made;
  }();
  return *r;
}

}  // namespace labrun::fuzz
