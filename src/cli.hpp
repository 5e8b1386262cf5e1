// The command line: labrun sweep | validate | list | env. One catch in run_cli maps every error to a
// distinct exit code (see ExitCode).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "backend.hpp"
#include "registry.hpp"

namespace labrun {

/// Exit codes of the labrun binary (README "Exit codes").
enum ExitCode : int {
  kExitOk = 0,            ///< everything ran; every point ok, skipped or not supported
  kExitPointsFailed = 1,  ///< the sweep finished but some point was incorrect or errored
  kExitUsage = 2,         ///< bad command line
  kExitConfig = 3,        ///< invalid config (file:line: key: message on stderr); nothing ran or was written
  kExitOutput = 4,        ///< output file exists (no --force) or cannot be written
  kExitDevice = 5,        ///< the requested device cannot be used (e.g. --device cuda without a GPU)
  kExitInternal = 70,     ///< a bug in labrun (EX_SOFTWARE)
};

/// What the binary's device layer adds to the host core. Empty functions: built without CUDA.
struct DeviceHooks {
  /// Opens CUDA device `index`; returns nullptr and sets `why` (with the CUDA error name) if it cannot.
  std::function<std::unique_ptr<Backend>(int index, std::string* why)> open_cuda;
  /// Adds the CUDA implementations of the built-in experiments to a registry.
  std::function<void(Registry&)> register_cuda;
};

/// Runs the labrun command line. Returns the process exit code; never throws.
int run_cli(int argc, char** argv, const DeviceHooks& hooks);

}  // namespace labrun
