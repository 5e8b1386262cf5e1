// What labrun was built from and how; written into every record header.
#pragma once

#include <string>

namespace labrun {

struct BuildInfo {
  std::string version;     ///< labrun's version (CMake project version)
  std::string git_sha;     ///< HEAD at build time, or "unknown"
  bool git_dirty;          ///< tracked files differed from HEAD, or untracked non-ignored files existed, at build time
  std::string build_type;  ///< CMAKE_BUILD_TYPE, e.g. "Release"
  std::string cxx_compiler;  ///< e.g. "GNU-12.2.0"
  std::string cxx_flags;
  std::string cuda_compiler;  ///< e.g. "NVIDIA-13.0.88", "-" if built without CUDA
  std::string cuda_flags;
  std::string cuda_architectures;  ///< e.g. "90"
};

/// Filled in by the generated build_info.cpp (scripts/build_info.cmake).
const BuildInfo& build_info();

}  // namespace labrun
