// --devices: one child supervisor per GPU, each a whole sweep on its fixed shard, merged at the end as the cluster's
// shards are (src/cluster/merge.hpp); and the parsing of the device list.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exit_codes.hpp"
#include "interrupt.hpp"
#include "log.hpp"
#include "merge.hpp"
#include "output_file.hpp"
#include "spawn.hpp"
#include "supervisor.hpp"
#include "sweep_parts.hpp"

namespace labrun {

namespace sweep_detail {

namespace fs = std::filesystem;

namespace {

// The command line of the child supervisor of shard i of n, writing `file` on the one device it sees.
std::vector<std::string> shard_argv(const SweepArgs& a, const std::string& file, int i, int n) {
  std::error_code ec;
  const std::string device = a.device == "cpu" || a.device == "host" ? "cpu" : "cuda:0";
  std::vector<std::string> child{a.argv.empty() ? "labrun" : a.argv[0],
                                 "sweep",
                                 a.config_path,
                                 "--device",
                                 device,
                                 "-o",
                                 file,
                                 "--shard",
                                 fmt::format("{}/{}", i, n),
                                 "-q"};
  if (a.resume && fs::exists(file, ec)) child.push_back("--resume");
  if (a.force) child.push_back("--force");
  if (!a.only.empty()) child.insert(child.end(), {"--only", a.only});
  for (const auto& o : a.lab_overrides) child.insert(child.end(), {"--lab", o});
  if (!a.code_rev.empty()) child.insert(child.end(), {"--code-rev", a.code_rev});
  child.insert(child.end(), {"--log-level", log_level()});
  return child;
}

// Waits for every child in `pids`, their exit codes into `codes`; on SIGINT/SIGTERM passes SIGTERM on to those still
// running and returns the signal (0 when none came).
int wait_children(const std::vector<int>& pids, std::vector<std::optional<int>>& codes) {
  codes.assign(pids.size(), std::nullopt);
  int stop_signal = 0;
  while (std::any_of(codes.begin(), codes.end(), [](const auto& c) { return !c; })) {
    for (std::size_t k = 0; k < pids.size(); ++k)
      if (!codes[k]) codes[k] = wait_process(pids[k], false);
    if (const int s = interrupt_signal(); s && !stop_signal) {
      stop_signal = s;
      for (std::size_t k = 0; k < pids.size(); ++k)
        if (!codes[k]) ::kill(pids[k], SIGTERM);
    }
    ::usleep(50 * 1000);
  }
  return stop_signal;
}

}  // namespace

// --devices: one child supervisor per device, each on its fixed shard i/N of the sweep (pinned by
// CUDA_VISIBLE_DEVICES, so it sees its GPU as cuda:0) writing OUTPUT.devices/shard-i-of-N.jsonl, all at once;
// then the shards are merged into OUTPUT (merge_shards, as `labrun merge`). Fixed shards, not a shared queue:
// each child is a whole sweep with its own resume, pooling and fault isolation, and the merge is the cluster's.
int run_devices(const SweepPlan& plan, const std::vector<int>& devices) {
  const SweepArgs& a = plan.args;
  const std::size_t total_points = plan.points.size();
  const int n = static_cast<int>(devices.size());
  const fs::path dir = a.output + ".devices";
  std::error_code ec;
  if (fs::exists(a.output, ec) && a.resume && !fs::exists(dir, ec)) {
    spdlog::info("{} is complete (its shards were merged); nothing to resume", a.output.c_str());
    return finish(plan, points_of(a.output), "results: " + a.output);
  }
  if (fs::exists(a.output, ec) && !a.force && !a.resume)
    throw OutputError("output file " + a.output + " exists; labrun never overwrites results (use --force)");
  if (fs::exists(dir, ec) && !a.resume) {
    if (!a.force)
      throw OutputError(dir.string() +
                        " exists (the shards of an earlier --devices run?): --resume continues it, "
                        "--force replaces it");
    fs::remove_all(dir, ec);
  }
  fs::create_directories(dir, ec);
  std::vector<int> pids;
  std::vector<std::string> files;
  for (int i = 1; i <= n; ++i) {
    files.push_back((dir / fmt::format("shard-{}-of-{}.jsonl", i, n)).string());
    const int gpu = devices[static_cast<std::size_t>(i - 1)];
    SpawnOptions options;
    options.program = "/proc/self/exe";
    options.parent_death_signal = SIGTERM;  // a supervisor: it stops its own worker on SIGTERM
    options.env = {"CUDA_VISIBLE_DEVICES=" + std::to_string(gpu)};
    spdlog::info("shard {} of {} on device {} -> {}", i, n, gpu, files.back().c_str());
    pids.push_back(start_process(shard_argv(a, files.back(), i, n), options));
  }
  std::vector<std::optional<int>> codes;
  const int stop_signal = wait_children(pids, codes);
  if (stop_signal) {
    std::size_t finished = 0;
    for (const auto& f : files) finished += read_lane(f).done.size();
    print_interrupted(stop_signal, finished, total_points, dir.string(), a.argv, a.output);
    return 128 + stop_signal;
  }
  for (std::size_t k = 0; k < codes.size(); ++k)
    if (*codes[k] != kExitOk && *codes[k] != kExitPointsFailed) {
      spdlog::warn(
          "the worker of shard {} of {} (device {}) failed with status {}; the finished points are kept in {} "
          "(--resume continues)",
          k + 1, n, devices[k], *codes[k], files[k].c_str());
      return *codes[k];
    }
  std::vector<Run> shards;
  for (const auto& f : files)
    for (auto& r : load_results({f}).runs) shards.push_back(std::move(r));
  Run merged = merge_shards(std::move(shards));
  merged.header.json["argv"] = a.argv;  // the user's command, not the first child's
  write_run_file(a.output, merged, true);
  fs::remove_all(dir, ec);
  return finish(plan, merged.points, fmt::format("results: {} ({} devices, merged)", a.output, n));
}

}  // namespace sweep_detail

std::vector<int> parse_devices(const std::string& text, const DeviceHooks& hooks) {
  std::vector<int> out;
  if (text == "all") {
    const int n = hooks.device_count ? hooks.device_count() : 0;
    if (n <= 0) throw DeviceError("--devices all: no CUDA device is visible");
    for (int i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    int d = -1;
    std::size_t used = 0;
    try {
      d = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || d < 0)
      throw std::invalid_argument("--devices: expected all or a list of device numbers like 0,1,2,3; got '" + text +
                                  "'");
    if (std::find(out.begin(), out.end(), d) != out.end())
      throw std::invalid_argument("--devices: device " + std::to_string(d) + " is listed twice in '" + text + "'");
    out.push_back(d);
    start = comma + 1;
  }
  return out;
}

}  // namespace labrun
