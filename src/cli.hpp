// The command line: labrun sweep | validate | list | merge | slurm | diff | history | report | env (each
// command's options and help in run_cli; the commands themselves in sweep_command, merge_cli, slurm, diff_cli,
// history_cli, report and cli.cpp for validate, list and env). One catch in run_cli maps every error to a
// distinct exit code (see ExitCode).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "backend.hpp"
#include "exit_codes.hpp"
#include "registry.hpp"

namespace labrun {

/// What the binary's device layer adds to the host core. Empty functions: built without CUDA.
struct DeviceHooks {
  /// Opens CUDA device `index`; returns nullptr and sets `why` (with the CUDA error name) if it cannot.
  std::function<std::unique_ptr<Backend>(int index, std::string* why)> open_cuda;
  /// The number of CUDA devices visible (cudaGetDeviceCount), for --devices all.
  std::function<int()> device_count;
  /// Adds the CUDA implementations of the built-in experiments to a registry.
  std::function<void(Registry&)> register_cuda;
  /// Adds experiments beyond the linked ones (LABRUN_EXPERIMENT): the test aids of the labrun_testaid binary
  /// (tests/aids/), never labrun's own.
  std::function<void(Registry&)> register_extra;
};

/// Runs the labrun command line. Returns the process exit code; never throws.
int run_cli(int argc, char** argv, const DeviceHooks& hooks);

}  // namespace labrun
