// A pooled sweep (lab.processes = K > 1): K lanes, one after another, each a supervised worker writing its own
// result file in OUTPUT.processes/, then their records pooled point by point (src/run/processes.hpp) into OUTPUT.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "log.hpp"
#include "output_file.hpp"
#include "processes.hpp"
#include "reference_cache.hpp"
#include "supervisor.hpp"
#include "sweep_parts.hpp"

namespace labrun::sweep_detail {

namespace fs = std::filesystem;

// The K of the process-I-of-K.jsonl files in a pooled run's folder (0: none there).
int pooled_count_in(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    int i = 0, k = 0;
    char tail[8] = {0};
    if (std::sscanf(e.path().filename().string().c_str(), "process-%d-of-%d.%7s", &i, &k, tail) == 3 &&
        std::string(tail) == "jsonl")
      return k;
  }
  return 0;
}

namespace {

// The output of a pooled run checked before any process runs, and its processes' folder made. Returns the exit code
// when there is nothing to run (the output is a complete pooled run and --resume was given).
std::optional<int> prepare_pooled_output(const SweepPlan& plan, const fs::path& dir) {
  const SweepArgs& a = plan.args;
  const int k = static_cast<int>(plan.config.lab.processes);
  std::error_code ec;
  const bool dir_exists = fs::exists(fs::symlink_status(dir, ec));
  if (a.resume && dir_exists)
    if (const int held = pooled_count_in(dir.string()); held != 0 && held != k)
      throw OutputError(
          fmt::format("cannot resume {}: {} holds the processes of a {}-process run, and this one has "
                      "lab.processes = {} (resume with --lab processes={}; --force replaces them)",
                      a.output, dir.string(), held, k, held));
  if (fs::exists(a.output, ec)) {
    if (a.resume && !dir_exists) {
      check_resumable(a.output, plan.config, a.force);
      const RunHeader h = header_to_continue(a.output);
      if (!h.json.contains("processes") || h.process_count() != k)
        throw OutputError(
            fmt::format("cannot resume {} as a pooled run of {} processes: its header is {} (its "
                        "processes' files are resumed in {}.processes/)",
                        a.output, k, h.json.contains("process") ? "one process's" : "not a pooled run's", a.output));
      spdlog::info("{} is complete (its {} processes were pooled); nothing to resume", a.output.c_str(), k);
      return finish(plan, points_of(a.output), "results: " + a.output);
    }
    if (!a.force && !a.resume)
      throw OutputError("output file " + a.output + " exists; labrun never overwrites results (use --force)");
  }
  if (dir_exists && !a.resume) {
    if (!a.force)
      throw OutputError(dir.string() +
                        " exists (the processes' files of an earlier pooled run?); labrun never "
                        "overwrites results: --resume continues it, --force replaces it");
    fs::remove_all(dir, ec);
  }
  if (!fs::create_directories(dir, ec) && !fs::is_directory(dir, ec))
    throw OutputError("cannot create " + dir.string() + ": " + ec.message());
  return std::nullopt;
}

// The lane of process i of k: its file `part` in the run's folder, continued with --resume when it is there.
Lane process_lane(const SweepPlan& plan, const std::string& part, int i, int k) {
  const SweepArgs& a = plan.args;
  std::error_code ec;
  Lane lane;
  lane.file = part;
  lane.points = plan.points;
  lane.point_timeout_s = plan.config.lab.point_timeout_s;
  lane.continue_existing = a.resume && fs::exists(part, ec);
  if (lane.continue_existing) check_resumable(part, plan.config, a.force);
  const std::string process = fmt::format("{}/{}", i, k);
  lane.worker_argv = [&a, part, process](bool fresh) {
    return worker_argv(a, part, fresh, a.force && !fresh, process);
  };
  lane.env = {"LABRUN_ARGV=" + Json(a.argv).dump()};
  lane.label = fmt::format("process {} of {}: ", i, k);
  return lane;
}

// One process's file as one run: its header, and the points and segment lines of all its segments.
Run read_process_file(const std::string& part) {
  Run run;
  for (auto& r : load_results({part}).runs) {
    if (!run.has_header) {
      run.file = r.file;
      run.header = r.header;
      run.has_header = r.has_header;
    }
    for (auto& p : r.points) run.points.push_back(std::move(p));
    for (auto& seg : r.segments) run.segments.push_back(std::move(seg));
  }
  return run;
}

}  // namespace

// lab.processes = K: K lanes, one after another, each a result file in OUTPUT.processes/ (its workers run the
// whole sweep), then their records pooled point by point (src/run/processes.hpp) into OUTPUT, written whole. A
// failed or killed run leaves no OUTPUT; the lanes' files stay for --resume, which keeps finished lanes,
// continues the interrupted one and pools at the end.
int run_pooled(const SweepPlan& plan) {
  const SweepArgs& a = plan.args;
  const int k = static_cast<int>(plan.config.lab.processes);
  const fs::path dir = a.output + ".processes";
  if (const auto done = prepare_pooled_output(plan, dir)) return *done;
  // The processes share host references (reference_cache.hpp) in the run's folder, unless the caller named a cache.
  if (const char* set = std::getenv(kReferenceCacheEnv); set == nullptr || *set == '\0')
    ::setenv(kReferenceCacheEnv, (dir / "references").c_str(), 1);
  std::error_code ec;
  std::vector<std::string> parts;
  for (int i = 1; i <= k; ++i) {
    parts.push_back((dir / fmt::format("process-{}-of-{}.jsonl", i, k)).string());
    spdlog::info("process {} of {} (lab.processes)", i, k);
    const LaneEnd end = supervise_lane(process_lane(plan, parts.back(), i, k));
    if (end.kind == LaneEnd::Kind::interrupted) {
      std::size_t finished = 0;
      for (const auto& p : parts) finished += read_lane(p).done.size();
      print_interrupted(end.signal, finished, plan.points.size() * static_cast<std::size_t>(k), dir.string(), a.argv,
                        a.output);
      return 128 + end.signal;
    }
    if (end.kind == LaneEnd::Kind::failed) {
      const bool empty = fs::is_empty(dir, ec);
      if (empty) fs::remove(dir, ec);  // nothing ran: leave nothing behind
      spdlog::warn(
          "process {} of {} failed (status {}){}", i, k, end.exit_code,
          empty ? "" : ("; the processes' files are kept in " + dir.string() + " (--resume continues them)").c_str());
      return end.exit_code;
    }
  }
  std::vector<Run> runs;
  for (const auto& part : parts) runs.push_back(read_process_file(part));
  Run pooled;
  try {
    pooled = pool_processes(runs, a.argv, plan.config.lab);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(std::string("pooling the processes failed: ") + e.what() + " (their files are kept in " +
                             dir.string() + ")");
  }
  write_run_file(a.output, pooled, true);
  fs::remove_all(dir, ec);
  return finish(plan, pooled.points, fmt::format("results: {} ({} processes pooled)", a.output, k));
}

}  // namespace labrun::sweep_detail
