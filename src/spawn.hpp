// Starting other processes: the one place labrun does it (the processes of a pooled sweep, the plotting script).
#pragma once

#include <string>
#include <vector>

namespace labrun {

/// How run_process() starts a program.
struct SpawnOptions {
  /// The program to execute; empty: argv[0], looked up on PATH (execvp).
  std::string program;
  /// Send the child SIGTERM when this process dies first (prctl PR_SET_PDEATHSIG): a killed sweep never leaves
  /// its processes running on the device.
  bool die_with_parent = false;
  /// Where the child's stdout and stderr go: empty keeps ours; "/dev/null" discards; else this file (truncated).
  std::string output;
};

/// Runs `argv` (argv[0] is the name the child sees) and waits for it. Returns its exit status, 128 + the signal
/// number if it was killed, or 127 if it could not be executed. No shell is involved: arguments are passed as
/// they are. @throws std::runtime_error if the process cannot be created (fork) or waited for.
int run_process(const std::vector<std::string>& argv, const SpawnOptions& options = {});

}  // namespace labrun
