// The labrun binary's exit codes, shared by the commands (sweep, validate, report, diff) and the CLI.
#pragma once

namespace labrun {

/// Exit codes of the labrun binary (README "Exit codes").
enum ExitCode : int {
  kExitOk = 0,            ///< everything ran; every point ok, skipped or not supported
  kExitPointsFailed = 1,  ///< the sweep finished but some point was incorrect, error, device_fault, crashed or timeout
  kExitUsage = 2,         ///< bad command line
  kExitConfig = 3,        ///< invalid config (file:line: key: message on stderr); nothing ran or was written
  kExitOutput = 4,        ///< output file exists (no --force) or cannot be written
  kExitDevice = 5,        ///< the requested device cannot be used (e.g. --device cuda without a GPU)
  kExitTool = 6,          ///< a tool the command needs is not installed (compute-sanitizer for sweep --sanitize)
  kExitInternal = 70,     ///< a bug in labrun (EX_SOFTWARE)
  /// Internal, between a worker and its supervisor (never labrun's own status): the worker wrote a
  /// `device_fault` point and stopped, its device context lost; the supervisor starts a fresh worker.
  kExitWorkerFault = 75,
  // A sweep stopped by SIGINT or SIGTERM exits 128 + the signal: 130 or 143 (README "Exit codes").
};

}  // namespace labrun
