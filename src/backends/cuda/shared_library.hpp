// A shared library loaded at run time (dlopen, dlsym), as labrun loads the libraries a runner must start without
// (cuBLAS, CUPTI, NVML): the first of its candidate paths that opens, and its entry points by name.
#pragma once

#include <dlfcn.h>

#include <string>
#include <vector>

namespace labrun {

/// What open_first_library() found.
struct OpenedLibrary {
  void* handle = nullptr;  ///< dlopen's handle; null when no path opened
  std::string path;        ///< the path that opened; empty when none did
  std::string tried;       ///< the paths that did not open, in the order tried, ", "-separated
};

/// Opens the first of `paths` that dlopen opens (RTLD_NOW | RTLD_LOCAL; a bare name is searched where the dynamic
/// loader searches), trying them in order. The handle is the caller's (to dlclose, or keep for the process). Never
/// throws but std::bad_alloc; no path opening is no error (handle null, `tried` names them all).
OpenedLibrary open_first_library(const std::vector<std::string>& paths);

/// The entry point `name` of the library `lib` as a function pointer of type F (dlsym); null where `lib` is null or
/// has no such symbol.
template <class F>
F symbol(void* lib, const char* name) {
  return lib ? reinterpret_cast<F>(dlsym(lib, name)) : nullptr;
}

}  // namespace labrun
