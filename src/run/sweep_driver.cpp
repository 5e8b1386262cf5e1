// The sweep driver (src/run/sweep_driver.hpp): the output checked and claimed, then the plan run one of four ways; and
// what those ways share (the device, the worker's command line, the summary at the end).
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "env.hpp"
#include "exit_codes.hpp"
#include "host_backend.hpp"
#include "interrupt.hpp"
#include "log.hpp"
#include "output_file.hpp"
#include "sanitize.hpp"
#include "supervisor.hpp"
#include "sweep_parts.hpp"

namespace labrun {

namespace fs = std::filesystem;

std::unique_ptr<Backend> open_backend(const std::string& device, const DeviceHooks& hooks) {
  if (device == "cpu" || device == "host") return std::make_unique<HostBackend>();
  if (device == "auto") {
    std::string why = "labrun was built without CUDA";
    if (hooks.open_cuda)
      if (auto b = hooks.open_cuda(0, &why)) return b;
    // Said once per sweep: the command that started the workers and processes said it already (kToldHostFallback).
    if (std::getenv(kToldHostFallback)) spdlog::debug("no usable CUDA device ({}); the host backend", why.c_str());
    else spdlog::warn("no usable CUDA device ({}); running on the host backend", why.c_str());
    return std::make_unique<HostBackend>();
  }
  if (device.rfind("cuda", 0) == 0) {
    int index = 0;
    if (device.size() > 4) {
      if (device[4] != ':') throw std::invalid_argument("--device: expected cuda or cuda:N, got '" + device + "'");
      try {
        std::size_t used = 0;
        index = std::stoi(device.substr(5), &used);
        if (used != device.size() - 5 || index < 0) throw std::invalid_argument("");
      } catch (const std::exception&) {
        throw std::invalid_argument("--device: '" + device + "' has no valid device number");
      }
    }
    if (!hooks.open_cuda) throw DeviceError("--device " + device + ": labrun was built without CUDA");
    std::string why;
    if (auto b = hooks.open_cuda(index, &why)) return b;
    throw DeviceError("--device " + device + ": " + why);
  }
  throw std::invalid_argument("--device: expected auto, cpu, cuda or cuda:N, got '" + device + "'");
}

namespace sweep_detail {

bool any_failed(const std::vector<PointRecord>& records) {
  return std::any_of(records.begin(), records.end(), [](const PointRecord& r) { return is_failure(r.status); });
}

// The worker command line for `output` (a lane's file).
std::vector<std::string> worker_argv(const SweepArgs& a, const std::string& output, bool fresh, bool force,
                                     const std::string& process) {
  std::vector<std::string> w{
      a.argv.empty() ? "labrun" : a.argv[0], "sweep", a.config_path, "--device", a.device, "-o", output, "--worker",
      fresh ? "fresh" : "continue"};
  if (force) w.push_back("--force");
  if (!process.empty()) w.insert(w.end(), {"--process", process});
  if (!a.shard.empty()) w.insert(w.end(), {"--shard", a.shard});
  if (!a.only.empty()) w.insert(w.end(), {"--only", a.only});
  for (const auto& o : a.lab_overrides) w.insert(w.end(), {"--lab", o});
  if (!a.code_rev.empty()) w.insert(w.end(), {"--code-rev", a.code_rev});
  if (a.quiet) w.push_back("-q");
  w.insert(w.end(), {"--log-level", log_level()});
  return w;
}

// The end of a sweep: the summary table of `points` (the "summary" output), then `line` (where the results are); the

int finish(const SweepPlan& plan, const std::vector<PointRecord>& points, const std::string& line) {
  const std::unique_ptr<Output> summary = plan.outputs.summary(plan.started);
  for (const PointRecord& r : points) summary->point(0, r);
  summary->finish();
  std::printf("%s\n", line.c_str());
  return any_failed(points) ? kExitPointsFailed : kExitOk;
}

}  // namespace sweep_detail

namespace {

using namespace sweep_detail;

// A sanitizer sweep (lab.sanitize): every point in a worker of its own under compute-sanitizer (src/run/sanitize.hpp).
int run_sanitize_sweep(const SweepPlan& plan) {
  const SweepArgs& a = plan.args;
  const SweepConfig& config = plan.config;
  const std::vector<Point>& points = plan.points;
  SanitizeRun run;
  run.tool = config.lab.sanitize;
  run.sanitizer = find_compute_sanitizer();
  if (run.sanitizer.empty()) throw ToolMissing("compute-sanitizer is gone since the sweep began");
  run.output = a.output;
  run.force = a.force;
  run.quiet = a.quiet;
  run.points = points;
  run.worker_argv = [&](const Point& p, const std::string& file) {
    auto w = worker_argv(a, file, true, false, "");
    w.insert(w.end(), {"--point", p.id()});
    return w;
  };
  run.env = {"LABRUN_ARGV=" + Json(a.argv).dump()};
  run.point_timeout_s = config.lab.point_timeout_s;
  spdlog::info(
      "{} points, each under compute-sanitizer {} ({}): setup and the correctness iteration, untimed; "
      "writing {}",
      points.size(), run.tool, run.sanitizer, a.output);
  return finish(plan, run_sanitized(run), "results: " + a.output);
}

// One lane: a supervised worker writing the output file, restarted after a crash, continued with --resume; or, once
// the output is checked, a sanitizer sweep (point by point).
int run_serial(const SweepPlan& plan) {
  const SweepArgs& a = plan.args;
  const SweepConfig& config = plan.config;
  const std::vector<Point>& points = plan.points;
  std::error_code ec;
  if (a.resume && !fs::exists(a.output, ec) && fs::exists(a.output + ".processes", ec))
    throw OutputError(
        fmt::format("cannot resume {}: {}.processes/ holds a pooled run's processes (lab.processes = "
                    "{}): resume with the same --lab processes",
                    a.output, a.output, pooled_count_in(a.output + ".processes")));
  const bool exists = fs::exists(a.output, ec);
  // The file this run may replace (--force): if it is still that file when the run is interrupted, nothing of
  // this run was kept.
  struct stat before {};
  const bool replacing = exists && a.force && !a.resume && ::stat(a.output.c_str(), &before) == 0;
  if (exists && !a.force && !a.resume)
    throw OutputError("output file " + a.output +
                      " exists; labrun never overwrites results (use --force, or --resume "
                      "to continue it)");
  if (config.lab.sanitize != "none") return run_sanitize_sweep(plan);
  Lane lane;
  lane.file = a.output;
  lane.points = points;
  lane.point_timeout_s = config.lab.point_timeout_s;
  lane.continue_existing = a.resume && exists;
  if (lane.continue_existing) check_resumable(a.output, config, a.force);
  lane.worker_argv = [&](bool fresh) { return worker_argv(a, a.output, fresh, a.force, ""); };
  lane.env = {"LABRUN_ARGV=" + Json(a.argv).dump()};
  const LaneEnd end = supervise_lane(lane);
  if (end.kind == LaneEnd::Kind::interrupted) {
    struct stat now {};
    if (replacing && ::stat(a.output.c_str(), &now) == 0 && now.st_ino == before.st_ino &&
        now.st_dev == before.st_dev) {
      spdlog::warn("interrupted by SIG{} before this run's first point: {} still holds the earlier results, unchanged",
                   sigabbrev_np(end.signal) ? sigabbrev_np(end.signal) : "?", a.output);
      return 128 + end.signal;
    }
    const std::size_t finished = read_lane(a.output).done.size();
    print_interrupted(end.signal, finished, points.size(), a.output, a.argv, a.output);
    return 128 + end.signal;
  }
  if (end.kind == LaneEnd::Kind::failed) return end.exit_code;
  return finish(plan, points_of(a.output), "results: " + a.output);
}

}  // namespace

int run_sweep_plan(SweepPlan plan, const DeviceHooks& hooks) {
  if (!plan.args.worker.empty()) return run_worker(plan, hooks);
  plan.started = std::chrono::steady_clock::now();
  SweepArgs& a = plan.args;
  const SweepConfig& config = plan.config;
  if (a.output.empty()) a.output = "results/" + config.experiment + "-" + utc_timestamp(true) + ".jsonl";
  install_interrupt_handlers();
  std::error_code ec;
  if (fs::is_directory(a.output, ec))
    throw OutputError(a.output + " is a folder; -o names the result file (e.g. -o " +
                      (fs::path(a.output) / (config.experiment + ".jsonl")).string() + ")");
  // labrun's readers (diff, merge, report, history, and the pooling of a run's processes) take a comma as a list of
  // files: a result named with one could never be read back, so it is refused before any point runs.
  if (a.output.find(',') != std::string::npos) {
    std::string suggestion = a.output;
    std::replace(suggestion.begin(), suggestion.end(), ',', '_');
    throw OutputError(a.output +
                      ": a result file's name cannot hold ',' (labrun reads a comma as a list of files); "
                      "name it e.g. " +
                      suggestion);
  }
  // A regular file only, one writer per result file (its workers included), stale partial files and a file that
  // holds no results removed (src/base/output_file.hpp).
  const FileClaim claim(a.output, "labrun sweep");
  claim.remove_if_empty();  // the sweep creates its file anew (JsonlWriter, O_EXCL); --resume then starts afresh
  if (!a.devices.empty()) {
    if (!a.shard.empty()) throw std::invalid_argument("--devices splits the sweep itself: it does not take --shard");
    return run_devices(plan, parse_devices(a.devices, hooks));
  }
  if (config.lab.processes > 1) return run_pooled(plan);
  return run_serial(plan);
}

}  // namespace labrun
