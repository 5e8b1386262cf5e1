// `labrun sweep`: the supervisor that owns the result file (lock, resume, pooling, interrupts) and the worker
// that runs points (src/run/supervisor.hpp explains the model). cmd_sweep.cpp parses its options
// (add_sweep_command, commands.hpp) and runs it.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend.hpp"
#include "device_hooks.hpp"
#include "config.hpp"
#include <labrun/point.hpp>
#include "registry.hpp"

namespace labrun {

/// The requested device cannot be used (kExitDevice).
struct DeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A tool the command needs is not installed (kExitTool): compute-sanitizer for --sanitize.
struct ToolMissing : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// --device auto|cpu|cuda[:N]. auto: the first CUDA device if one can be opened, else the host with a notice
/// on stderr. @throws std::invalid_argument for a malformed value, DeviceError when the device cannot be opened.
std::unique_ptr<Backend> open_backend(const std::string& device, const DeviceHooks& hooks);

/// The sweep command's options as parsed.
struct SweepArgs {
  std::string config_path;
  std::string device = "auto";
  std::string output;  ///< -o; empty: results/<experiment>-<UTC time>.jsonl
  std::string only;    ///< --only filter as given
  std::vector<std::string> lab_overrides;
  bool force = false;   ///< replace an existing output; with --resume: continue despite a mismatch
  bool resume = false;  ///< continue the output file (docs/records.md "Workers and resume")
  bool quiet = false;
  std::string shard;     ///< --shard I/N: the points were filtered to shard I (the header records it)
  std::string devices;   ///< --devices 0,1,...|all: one worker supervisor per device, fixed shards, merged
  std::string code_rev;  ///< --code-rev SHA[+dirty]: the code under test, passed on to every worker and child
  std::string sanitize;  ///< --sanitize TOOL (= --lab sanitize=TOOL): a sanitizer sweep (src/run/sanitize.hpp)
  // Set by labrun on the workers it starts (hidden options):
  std::string worker;             ///< "" (this is the supervisor), "fresh" or "continue"
  std::string process;            ///< "I/K": the worker runs process I of a lab.processes sweep
  int status_fd = -1;             ///< where the worker reports each point's phases
  std::string point_id;           ///< --point ID: the worker runs this point alone (a sanitizer sweep's worker)
  std::vector<std::string> argv;  ///< the whole command line, as recorded in the header
};

/// Runs the sweep of `points` (expanded, filtered, and cut to args.shard) as supervisor or, with args.worker set,
/// as a worker; with args.devices, as one supervisor per device (each a child process on its own fixed shard,
/// CUDA_VISIBLE_DEVICES pinning it) whose shard files are merged into the output at the end.
/// Returns the exit status (README "Exit codes"); 128 + the signal after SIGINT/SIGTERM.
/// @throws OutputError, DeviceError, ConfigError, std::invalid_argument as run_cli maps them.
int cmd_sweep(const SweepArgs& args, const SweepConfig& config, const RegisteredExperiment& experiment,
              const std::vector<Point>& points, const DeviceHooks& hooks);

/// The devices of --devices: "all" (every CUDA device of DeviceHooks::device_count) or a comma-separated list
/// of distinct indices. @throws std::invalid_argument for a malformed list, DeviceError for "all" without CUDA.
std::vector<int> parse_devices(const std::string& text, const DeviceHooks& hooks);

/// The command that resumes an interrupted sweep: `argv` without --force, --resume and any -o, then
/// `-o OUTPUT --resume`, each word quoted for a POSIX shell where it needs it.
std::string resume_command(const std::vector<std::string>& argv, const std::string& output);

}  // namespace labrun
