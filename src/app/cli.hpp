// The command line: labrun sweep | validate | list | merge | slurm | diff | history | report | env, each command
// in its own file of src/commands/ (cmd_sweep.cpp, cmd_validate.cpp, cmd_list.cpp, cmd_merge.cpp, cmd_slurm.cpp,
// cmd_diff.cpp, cmd_history.cpp, cmd_report.cpp, cmd_env.cpp) with its options and help. One catch in run_cli
// maps every error to a distinct exit code (see ExitCode).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "device_hooks.hpp"
#include "exit_codes.hpp"

namespace labrun {

/// Runs the labrun command line. Returns the process exit code; never throws.
int run_cli(int argc, char** argv, const DeviceHooks& hooks);

}  // namespace labrun
