// Starting other processes: the one place labrun does it (the processes of a pooled sweep, the plotting script).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace labrun {

/// How run_process() starts a program.
struct SpawnOptions {
  /// The program to execute; empty: argv[0], looked up on PATH (execvp).
  std::string program;
  /// The signal the child gets when this process dies first (prctl PR_SET_PDEATHSIG; 0: none): a killed sweep
  /// never leaves its workers running on the device (they get SIGKILL: a worker hung in a kernel cannot wait).
  int parent_death_signal = 0;
  /// A descriptor the child keeps open across exec (a worker's status pipe); -1: none. Every other descriptor
  /// labrun opens is close-on-exec.
  int keep_fd = -1;
  /// Variables set in the child's environment, "KEY=VALUE" each, over the inherited ones (e.g. a worker's
  /// CUDA_VISIBLE_DEVICES).
  std::vector<std::string> env;
  /// Where the child's stdout and stderr go: empty keeps ours; "/dev/null" discards; else this file (truncated).
  std::string output;
};

/// Runs `argv` (argv[0] is the name the child sees) and waits for it. Returns its exit status, 128 + the signal
/// number if it was killed, or 127 if it could not be executed. No shell is involved: arguments are passed as
/// they are. @throws std::runtime_error if the process cannot be created (fork) or waited for.
int run_process(const std::vector<std::string>& argv, const SpawnOptions& options = {});

/// Starts `argv` as run_process() does, without waiting. Returns the child's pid.
/// @throws std::runtime_error if the process cannot be created (fork).
int start_process(const std::vector<std::string>& argv, const SpawnOptions& options = {});

/// The exit status of child `pid` as run_process() returns it, once it has ended; nullopt while it runs
/// (`block` = false) . With `block` it waits. @throws std::runtime_error if waitpid fails (not for EINTR, which
/// returns nullopt so the caller can look at interrupt_signal()).
std::optional<int> wait_process(int pid, bool block);

/// Where labrun's helper script `name` (e.g. "plot_report.py") is: `given` when it is not empty (and exists), else
/// the first that exists of ./scripts/NAME, scripts/NAME in any folder above the running binary (a build tree), and
/// <prefix>/share/labrun/NAME beside an installed <prefix>/bin/EXE (cmake --install). "" when none exists.
std::string find_script(const std::string& given, const std::string& name);

/// The first python3 that imports matplotlib, for the plot scripts: "python3" (the one on PATH), else
/// "/usr/bin/python3" (Debian's python3-matplotlib installs for it, which a pyenv or venv python3 on PATH does not
/// see); "" when neither does. Runs each candidate once, its output discarded.
std::string python_with_matplotlib();

}  // namespace labrun
