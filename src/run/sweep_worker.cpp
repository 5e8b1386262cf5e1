// A sweep's worker: the process that runs points. It opens the device and the result file (fresh, or continuing
// it with a segment line), calibrates, runs the points the file does not hold yet through the lab pass, appending
// each, and reports each point's phases to its supervisor on the status pipe (src/run/supervisor.hpp).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "exit_codes.hpp"
#include "interrupt.hpp"
#include "lab.hpp"
#include "log.hpp"
#include "output_file.hpp"
#include "shard.hpp"
#include "supervisor.hpp"
#include "sweep_parts.hpp"

namespace labrun::sweep_detail {

namespace fs = std::filesystem;

namespace {

// "I/K" of --process: this run is process I of K of a lab.processes sweep.
// "I/K" of --process: this run is process I of K of a lab.processes sweep.
std::pair<int, int> parse_process(const std::string& text) {
  int i = 0, k = 0;
  char slash = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &i, &slash, &k, &extra) != 3 || slash != '/' || i < 1 || k < 1 || i > k)
    throw std::invalid_argument("--process: expected I/K with 1 <= I <= K, got '" + text + "'");
  return {i, k};
}

// A worker's state between its steps: which points it runs, and the file and backend it runs them on.
struct Worker {
  int process_index = 0, process_count = 0;  ///< --process I/K; 0 and 0 outside a lab.processes sweep
  bool fresh = true;                         ///< --worker fresh (a new file) or continue
  std::vector<Point> todo;                   ///< the points its file does not hold yet
  std::size_t held = 0, segment = 1;         ///< points the file holds; this worker's segment number
  std::optional<RunHeader> existing;         ///< the header of the file it continues
  std::unique_ptr<Backend> backend;
  std::unique_ptr<JsonlWriter> writer;
  Json header;  ///< this run's header (written first by a fresh worker, the source of a segment line otherwise)
};

// The worker's options checked, and the points its file does not hold yet.
Worker plan_worker(const SweepArgs& a, const std::vector<Point>& points) {
  install_interrupt_handlers();
  Worker w;
  if (!a.process.empty()) std::tie(w.process_index, w.process_count) = parse_process(a.process);
  w.fresh = a.worker == "fresh";
  if (!w.fresh && a.worker != "continue") throw std::invalid_argument("--worker: expected fresh or continue");
  if (w.fresh) {
    w.todo = points;
  } else {
    w.existing = header_to_continue(a.output);
    const LaneState state = read_lane(a.output);
    w.segment = state.segments + 1;
    for (const auto& p : points) {
      if (state.done.count(p.id())) ++w.held;
      else w.todo.push_back(p);
    }
  }
  return w;
}

// Opens the device and the result file, calibrates, and makes this run's header.
void open_worker(Worker& w, const SweepArgs& a, const SweepConfig& config, const std::vector<Point>& points,
                 const DeviceHooks& hooks) {
  w.backend = open_backend(a.device, hooks);
  w.writer = w.fresh ? std::make_unique<JsonlWriter>(a.output, a.force)
                     : std::make_unique<JsonlWriter>(a.output, JsonlWriter::Append{});
  // Profiler mode skips calibration: under ncu its thousands of kernels would each be replayed, and its blocked
  // launch measurement would wait on a serialized stream.
  // A sanitizer sweep's worker skips it too: the tool instruments every kernel (racecheck many times slower).
  const Json calibration = config.lab.profile
                               ? Json{{"backend", w.backend->name()}, {"skipped", "profiler mode (lab.profile)"}}
                           : config.lab.sanitize != "none"
                               ? Json{{"backend", w.backend->name()},
                                      {"skipped", "sanitizer sweep (lab.sanitize " + config.lab.sanitize + ")"}}
                               : w.backend->calibrate();
  // The header records the user's command line (the supervisor's, passed in LABRUN_ARGV), not the worker's.
  std::vector<std::string> argv = a.argv;
  if (const char* given = std::getenv("LABRUN_ARGV")) {
    try {
      argv = Json::parse(given).get<std::vector<std::string>>();
    } catch (const std::exception&) {
    }
  }
  w.header = make_header(config, argv, *w.backend, calibration, points.size());
  if (w.process_count > 0) w.header["process"] = {{"index", w.process_index}, {"count", w.process_count}};
  if (!a.shard.empty()) {
    const ShardSpec spec = parse_shard(a.shard);
    w.header["shard"] = {{"index", spec.index}, {"count", spec.count}};
  }
}

// Writes the header of a fresh file, or the segment line of a continued one (after checking its device).
void begin_worker_file(Worker& w, const SweepArgs& a, const SweepConfig& config, const std::vector<Point>& points,
                       FanOut& out) {
  const Json& header = w.header;
  if (w.fresh) {
    spdlog::info("{} points on {}; writing {}", points.size(), w.backend->name().c_str(), a.output.c_str());
    out.line(header);
    return;
  }
  // The device may differ from the one the file was begun on (another node of the cluster): the same model
  // and driver are required, or --force.
  {
    std::vector<std::string> m;
    const RunHeader now = header_from_json(header);
    check_same(m, "device", w.existing->device_name(), now.device_name());
    check_same(m, "driver", w.existing->driver_version(), now.driver_version());
    refuse_mismatch(a.output, m, a.force);
  }
  spdlog::info("{} holds {} of {} points; {} to run on {}", a.output.c_str(), w.held, points.size(), w.todo.size(),
               w.backend->name().c_str());
  out.line(Json{{"type", "segment"},
                {"index", w.segment},
                {"created_utc", header["created_utc"]},
                {"argv", header["argv"]},
                {"environment", header["environment"]},
                {"calibration", header["calibration"]},
                {"config_sha256", config.sha256},
                {"lab", header["lab"]},
                {"points_held", w.held}});
}

// A later process of a lab.processes pool takes each point's audit from the first process's file, written before it
// ran (the processes run one after another), instead of attaching CUPTI itself (PoolAudits, src/lab/lab.hpp). The
// first process, a sweep outside a pool, and a file that cannot be read: none (each point is audited where it runs).
PoolAudits first_process_audits(const Worker& w, const SweepArgs& a) {
  if (w.process_count < 2 || w.process_index < 2) return {};
  const fs::path first = fs::path(a.output).parent_path() / fmt::format("process-1-of-{}.jsonl", w.process_count);
  try {
    std::vector<PointRecord> points;
    for (Run& run : load_results({first.string()}, LoadDepth::full).runs)
      for (PointRecord& p : run.points) points.push_back(std::move(p));
    return pool_audits(points, w.process_count);
  } catch (const ResultError& e) {
    spdlog::warn("every point is audited in this process: the first process's audits cannot be read ({})", e.what());
    return {};
  }
}

// Runs the points still to run, appending each to the file and reporting its phases on the status pipe.
int run_worker_points(Worker& w, const SweepArgs& a, const SweepConfig& config, const RegisteredExperiment& experiment,
                      FanOut& out) {
  const PhaseListener listener = [&](const std::string& id, Phase phase) {
    if (a.status_fd < 0) return;
    const std::string line = id + " " + to_string(phase) + "\n";
    (void)!::write(a.status_fd, line.data(), line.size());  // one write under PIPE_BUF: never interleaved
  };
  const PoolAudits audits = config.lab.audit ? first_process_audits(w, a) : PoolAudits{};
  try {
    const auto records = run_sweep(
        w.todo, experiment, *w.backend, config.lab, w.header, [&](const PointRecord& rec) { out.add(rec); }, {},
        listener, audits);
    out.finish();  // the file commits: a shard with no points is a header alone, and still replaces the old file
    return any_failed(records) ? kExitPointsFailed : kExitOk;
  } catch (const DeviceFault& e) {
    spdlog::warn("device fault: {}", e.what());
    return kExitWorkerFault;
  } catch (const Interrupted& e) {
    return 128 + e.signal();
  }
}

}  // namespace

// A worker: runs the points its file does not hold yet, appending each as it finishes, and reports its phases
// on the status pipe. "fresh" creates the file (header first); "continue" appends a segment line (this
// worker's environment and calibration) and the rest.
int run_worker(const SweepPlan& plan, const DeviceHooks& hooks) {
  const SweepArgs& a = plan.args;
  const SweepConfig& config = plan.config;
  const std::vector<Point>& points = plan.points;
  Worker w = plan_worker(a, points);
  open_worker(w, a, config, points, hooks);
  // Where the records go: the result file, then the progress lines (numbered across the processes of a
  // lab.processes sweep).
  const std::size_t processes = w.process_count > 0 ? static_cast<std::size_t>(w.process_count) : 1;
  const std::size_t before = w.process_count > 0 ? static_cast<std::size_t>(w.process_index - 1) * points.size() : 0;
  const std::unique_ptr<Output> file = plan.outputs.records(*w.writer);
  const std::unique_ptr<Output> progress = plan.outputs.progress(
      {before + w.held, processes * points.size(), w.todo.size()}, a.quiet);
  FanOut out({file.get(), progress.get()});
  begin_worker_file(w, a, config, points, out);
  return run_worker_points(w, a, config, *plan.experiment, out);
}

}  // namespace labrun::sweep_detail
