// `labrun sweep`: its options, parsed into a plan (the config's points, cut to --shard, with the lab settings final)
// that the sweep driver runs (src/run/sweep_driver.hpp), or listed with --dry-run.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "code_rev.hpp"
#include "command_inputs.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "format.hpp"
#include "log.hpp"
#include "output_table.hpp"
#include "profiler.hpp"
#include "sanitize.hpp"
#include "shard.hpp"
#include "sweep_driver.hpp"

namespace labrun {

namespace {

/// The sweep command's options as parsed: the sweep's own and those that only shape what runs.
struct SweepOptions {
  SweepArgs args;
  bool dry_run = false;
  bool profile = false;
  bool verbose = false;
  std::string log_level;  ///< --log-level as given
};

// The sweep's outputs, from the output table: the result file, the progress lines and the summary.
SweepOutputs sweep_outputs() {
  SweepOutputs out;
  out.records = [](JsonlWriter& file) {
    OutputArgs args;
    args.file = &file;
    return find_output(Product::records, "jsonl")->make(args);
  };
  out.progress = [](const ProgressNumbers& numbers, bool quiet) {
    OutputArgs args;
    args.progress = numbers;
    args.quiet = quiet;
    return find_output(Product::console, "progress")->make(args);
  };
  out.summary = [](std::chrono::steady_clock::time_point started) {
    OutputArgs args;
    args.started = started;
    return find_output(Product::console, "summary")->make(args);
  };
  return out;
}

// Adds the sweep's options to `sweep` (in the order of its --help), parsed straight into `o`.
void add_sweep_options(CLI::App& sweep, SweepOptions& o) {
  SweepArgs& a = o.args;
  sweep.add_option("config", a.config_path, "sweep config (YAML, docs/config.md)")->required();
  sweep.add_option("--device", a.device, "auto (GPU if any, else host), cpu, cuda or cuda:N");
  sweep.add_option("-o,--output", a.output, "JSONL output (default results/<experiment>-<UTC time>.jsonl)");
  sweep.add_flag("--force", a.force, "replace the output file if it exists (kept until the new run has a point)");
  sweep.add_flag("--resume", a.resume,
                 "continue the output file: keep its points, run the rest (same config, labrun build, GPU model and "
                 "driver; --force accepts a mismatch)");
  sweep.add_flag("--dry-run", o.dry_run, "print the expanded points and their count; run nothing");
  sweep.add_flag("--profile", o.profile,
                 "profiler mode, for ncu/nsys: correctness, then 5 plain iterations per point in NVTX ranges named by "
                 "its key (= --lab profile=true; on by itself under a profiler; docs/profiling.md)");
  sweep.add_option("--only", a.only, "run only points matching e.g. \"variant=index,n=1e7,density=0.7\"")
      ->check(non_empty("a filter such as variant=index,n=1e7; leave --only out to run every point"));
  sweep.add_flag("-q,--quiet", a.quiet, "no per-point progress on stderr, and only warnings and errors in the log");
  sweep.add_flag("-v,--verbose", o.verbose, "debug messages in the log too");
  sweep.add_option("--log-level", o.log_level, "trace, debug, info (default), warn, error or off");
  sweep.add_option("--shard", a.shard,
                   "run shard I of N: a balanced, deterministic subset of the points (docs/cluster.md)");
  sweep
      .add_option("--devices", a.devices,
                  "one worker per GPU (0,1,2,3 or all), pinned with CUDA_VISIBLE_DEVICES, merged at the end")
      ->check(non_empty("a list of GPUs such as 0,1 or all; leave --devices out to run on one device"));
  add_lab_option(sweep, a.lab_overrides,
                 "override a lab setting, KEY=VALUE (repeatable), checked as under lab: (e.g. --lab processes=5)");
  sweep
      .add_option("--sanitize", a.sanitize,
                  "sanitizer sweep: each point's setup and correctness iteration under NVIDIA compute-sanitizer's "
                  "TOOL, in a worker of its own, untimed; the tool's findings in the record (= --lab sanitize=TOOL; "
                  "docs/integrity.md)")
      ->check(CLI::IsMember({"memcheck", "racecheck", "initcheck", "synccheck"}));
  sweep.add_option("--code-rev", a.code_rev,
                   "the commit of the code under test, SHA[+dirty], for a runner built without its repository "
                   "(overrides LABRUN_CODE_REV and the build's; recorded in environment.code)");
  // Internal: set by the parent of a lab.processes sweep on each child it starts.
  sweep.add_option("--process", a.process, "run as process I/K of a lab.processes sweep (set by labrun itself)")
      ->group("");
  // Internal: set by the supervisor on each worker it starts (src/run/supervisor.hpp).
  sweep.add_option("--worker", a.worker, "run as a worker: fresh or continue (set by labrun itself)")->group("");
  sweep.add_option("--status-fd", a.status_fd, "the worker's status pipe (set by labrun itself)")->group("");
  sweep.add_option("--point", a.point_id, "run this point alone (set by labrun itself)")->group("");
}

// Profiler mode: asked for, or found under a profiler (said once, by the supervisor; its workers and processes
// inherit it through --lab, as every lab override).
void choose_profiler_mode(SweepOptions& o, SweepConfig& config) {
  if (config.lab.profile || !o.args.worker.empty() || !o.args.process.empty()) return;
  const auto tool = profiler_detected();
  if (!o.profile && !tool) return;
  if (!o.profile)
    std::cerr << fmt::format(
        "labrun: running under {}: profiler mode (--profile): each point's correctness "
        "check, then {} plain iterations in NVTX ranges named by its key; no blocking kernel, "
        "calibration, adaptive sampling or time limit (docs/profiling.md)\n",
        *tool, kProfileIterations);
  o.args.lab_overrides.push_back("profile=true");
  config.lab.profile = true;
}

// A sanitizer sweep is refused before anything runs where it cannot: compute-sanitizer absent (kExitTool), the host
// backend (kExitDevice: the tool checks GPU kernels), and the options that time or split a sweep (kExitUsage).
void check_sanitize_sweep(const SweepOptions& o, const SweepInput& in) {
  if (!o.args.worker.empty()) return;
  const std::string tool = in.config.lab.sanitize;
  if (find_compute_sanitizer().empty())
    throw ToolMissing("--sanitize " + tool +
                      ": compute-sanitizer not found (looked at $LABRUN_COMPUTE_SANITIZER, PATH, $CUDA_HOME/bin, "
                      "$CUDA_PATH/bin, /usr/local/cuda/bin); it comes with the CUDA toolkit");
  if (in.kind != BackendKind::cuda)
    throw DeviceError("--sanitize " + tool +
                      ": compute-sanitizer checks CUDA kernels, and this sweep runs on the host backend (it has none); "
                      "run it on a GPU with --device cuda");
  if (o.profile || in.config.lab.profile)
    throw std::invalid_argument("--sanitize and --profile: a sanitizer sweep runs no timed iteration to profile");
  if (o.args.resume) throw std::invalid_argument("--sanitize: a sanitizer sweep is not resumed; run it again");
  if (!o.args.devices.empty())
    throw std::invalid_argument("--sanitize: a sanitizer sweep runs one point at a time; it does not take --devices");
}

// --dry-run: each point with the estimate sharding balances by (src/cluster/shard.hpp), and their sum per process.
int print_dry_run(const SweepInput& in) {
  double total_s = 0;
  for (const auto& p : in.points) {
    const double t = estimated_point_time_s(p, *in.experiment, in.config.lab, in.kind);
    total_s += t;
    std::printf("%s  %-20s %-9s %s\n", p.id().c_str(), p.variant.c_str(), format_time(t).c_str(), p.label().c_str());
  }
  std::printf("%zu points, estimated %s per process on the %s backend\n", in.points.size(),
              format_time(total_s).c_str(), to_string(in.kind));
  return kExitOk;
}

// The sweep command once parsed: the config's points, cut to --shard, listed (--dry-run) or run.
int run_sweep_command(SweepOptions& o, const CommandContext& context) {
  apply_code_rev_option(o.args.code_rev);
  if (!o.args.sanitize.empty()) o.args.lab_overrides.push_back("sanitize=" + o.args.sanitize);
  Registry registry = make_registry(context.hooks);
  SweepInput in = load_sweep(o.args.config_path, o.args.lab_overrides, o.args.only, o.args.device, registry,
                             context.hooks);
  if (o.args.worker.empty() && o.args.process.empty() && !context.hooks.left_out_cuda.empty())
    spdlog::warn(
        "this runner was built without its CUDA sources {} (its project did not enable CUDA: add "
        "enable_language(CUDA); docs/your-kernel.md): their variants run on the host backend only",
        context.hooks.left_out_cuda);
  if (o.args.worker.empty() && o.args.process.empty() && o.args.device == "auto" && in.kind == BackendKind::host &&
      !std::getenv(kToldHostFallback)) {
    spdlog::warn("no usable CUDA device ({}); running on the host backend",
                 context.hooks.open_cuda ? "none is visible" : "labrun was built without CUDA");
    ::setenv(kToldHostFallback, "1", 1);
  }
  if (in.config.lab.sanitize != "none") check_sanitize_sweep(o, in);
  else choose_profiler_mode(o, in.config);
  in.config.lab = sanitize_settings(profile_settings(in.config.lab));
  if (!o.args.point_id.empty()) {
    std::erase_if(in.points, [&](const Point& p) { return p.id() != o.args.point_id; });
    if (in.points.empty()) throw std::invalid_argument("--point " + o.args.point_id + ": no point of the sweep has it");
  }
  if (!o.args.shard.empty())
    in.points = shard_points(in.points, *in.experiment, in.config.lab, parse_shard(o.args.shard), in.kind);
  if (o.dry_run) return print_dry_run(in);
  o.args.argv = context.argv;
  SweepPlan plan{o.args, in.config, in.experiment, std::move(in.points), sweep_outputs()};
  return run_sweep_plan(std::move(plan), context.hooks);
}

}  // namespace

Command add_sweep_command(CLI::App& app, const CommandContext& context) {
  auto options = std::make_shared<SweepOptions>();
  CLI::App* sweep = app.add_subcommand("sweep", "run every point of a sweep config through the lab pass");
  add_sweep_options(*sweep, *options);
  return {sweep, [options, &context] { return run_sweep_command(*options, context); },
          [options] {
    const SweepOptions& o = *options;
    return !o.log_level.empty() ? o.log_level : o.verbose ? "debug" : o.args.quiet ? "warn" : "info";
          }};
}

}  // namespace labrun
