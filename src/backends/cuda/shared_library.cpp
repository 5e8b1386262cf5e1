// Loading a shared library at run time (shared_library.hpp).
#include "shared_library.hpp"

namespace labrun {

OpenedLibrary open_first_library(const std::vector<std::string>& paths) {
  OpenedLibrary lib;
  for (const auto& p : paths) {
    if ((lib.handle = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL))) {
      lib.path = p;
      return lib;
    }
    lib.tried += (lib.tried.empty() ? "" : ", ") + p;
  }
  return lib;
}

}  // namespace labrun
