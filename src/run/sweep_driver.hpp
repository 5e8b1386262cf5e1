// The sweep driver: a plan (the points, the config's lab settings, the output file and how to resume it) and one
// function that runs it serially in a supervised worker, pooled over lab.processes processes, one worker per device
// (--devices), or point by point under compute-sanitizer, writing through the output seam (src/export/output.hpp).
// The supervisor owns the result file (lock, resume, interrupts); src/run/supervisor.hpp explains the model.
// `labrun sweep` (src/commands/cmd_sweep.cpp) parses the options into a plan and calls run_sweep_plan.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <labrun/point.hpp>

#include "backend.hpp"
#include "config.hpp"
#include "console.hpp"
#include "device_hooks.hpp"
#include "output.hpp"
#include "record.hpp"
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

/// Set in the environment by a sweep that said it runs on the host for want of a CUDA device, for the workers and
/// processes it starts, so that -q prints that line once per sweep, not once per process.
inline constexpr const char* kToldHostFallback = "LABRUN_TOLD_HOST_FALLBACK";

/// --device auto|cpu|cuda[:N]. auto: the first CUDA device if one can be opened, else the host with a notice
/// on stderr. @throws std::invalid_argument for a malformed value, DeviceError when the device cannot be opened.
std::unique_ptr<Backend> open_backend(const std::string& device, const DeviceHooks& hooks);

/// How a sweep runs, as the command's options give it.
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

/// Where a sweep's records and console lines go: each makes an Output (src/export/output.hpp). The command fills
/// them from its output table, so the driver names no format.
struct SweepOutputs {
  /// The result file's writer (Product::records).
  std::function<std::unique_ptr<Output>(JsonlWriter& file)> records;
  /// The per-point progress lines on stderr, numbered as `numbers` says; none with `quiet`.
  std::function<std::unique_ptr<Output>(const ProgressNumbers& numbers, bool quiet)> progress;
  /// The summary table at the end; its time line counts from `started`.
  std::function<std::unique_ptr<Output>(std::chrono::steady_clock::time_point started)> summary;
};

/// One sweep to run: the points (expanded, filtered, cut to args.shard), the config (lab settings final: overrides,
/// profiler and sanitizer modes applied), the experiment they dispatch to, how to run them and where they go.
struct SweepPlan {
  SweepArgs args;
  SweepConfig config;
  const RegisteredExperiment* experiment = nullptr;
  std::vector<Point> points;
  SweepOutputs outputs;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();  ///< the summary's wall time
};

/// Runs `plan` as supervisor or, with args.worker set, as a worker; with args.devices, as one supervisor per device
/// (each a child process on its own fixed shard, CUDA_VISIBLE_DEVICES pinning it) whose shard files are merged into
/// the output at the end; with lab.processes > 1, pooled; with lab.sanitize, point by point under the sanitizer.
/// Returns the exit status (README "Exit codes"); 128 + the signal after SIGINT/SIGTERM.
/// @throws OutputError, DeviceError, ToolMissing, ConfigError, std::invalid_argument as run_cli maps them.
int run_sweep_plan(SweepPlan plan, const DeviceHooks& hooks);

/// The devices of --devices: "all" (every CUDA device of DeviceHooks::device_count) or a comma-separated list
/// of distinct indices. @throws std::invalid_argument for a malformed list, DeviceError for "all" without CUDA.
std::vector<int> parse_devices(const std::string& text, const DeviceHooks& hooks);

/// The command that resumes an interrupted sweep: `argv` without --force, --resume and any -o, then
/// `-o OUTPUT --resume`, each word quoted for a POSIX shell where it needs it.
std::string resume_command(const std::vector<std::string>& argv, const std::string& output);

}  // namespace labrun
