// The command line: labrun sweep | validate | list | merge | slurm | diff | history | report | env (each
// command's options and help in run_cli; the commands themselves in sweep_command, merge_cli, slurm, diff_cli,
// history_cli, report and cli.cpp for validate, list and env). One catch in run_cli maps every error to a
// distinct exit code (see ExitCode).
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
