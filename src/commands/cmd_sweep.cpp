// `labrun sweep CONFIG`: its options (add_sweep_command), the config's points cut by --only and --shard or listed
// by --dry-run, and the sweep itself (cmd_sweep): the supervisor that owns the result file (lock, resume, pooling,
// interrupts) and the worker that runs points (src/run/supervisor.hpp explains the model). Every record and every
// console line of a sweep goes through a record sink (src/export/output.hpp): the worker's FanOut of the result
// file and the progress lines, and the summary table that finish() feeds the sweep's records.
#include "cmd_sweep.hpp"

#include <CLI/CLI.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "build_info.hpp"
#include "code_rev.hpp"
#include "command_inputs.hpp"
#include "commands.hpp"
#include "env.hpp"
#include "exit_codes.hpp"
#include "format.hpp"
#include "host_backend.hpp"
#include "interrupt.hpp"
#include "lab.hpp"
#include "log.hpp"
#include "output_file.hpp"
#include "profiler.hpp"
#include "point_record.hpp"
#include "output.hpp"
#include "output_table.hpp"
#include "processes.hpp"
#include "record.hpp"
#include "reference_cache.hpp"
#include <labrun/status.hpp>
#include "shard.hpp"
#include "supervisor.hpp"
#include "merge.hpp"
#include "spawn.hpp"
#include "sanitize.hpp"

namespace labrun {

namespace fs = std::filesystem;

namespace {
// Set by a sweep that said it runs on the host for want of a CUDA device, for the workers and processes it starts,
// so that -q prints that line once per sweep, not once per process.
constexpr const char* kToldHostFallback = "LABRUN_TOLD_HOST_FALLBACK";
}  // namespace

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

namespace {

/// When cmd_sweep began (the summary line's sweep wall time).
std::chrono::steady_clock::time_point g_sweep_started = std::chrono::steady_clock::now();

bool any_failed(const std::vector<PointRecord>& records) {
  return std::any_of(records.begin(), records.end(), [](const PointRecord& r) { return is_failure(r.status); });
}

// "I/K" of --process: this run is process I of K of a lab.processes sweep.
std::pair<int, int> parse_process(const std::string& text) {
  int i = 0, k = 0;
  char slash = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &i, &slash, &k, &extra) != 3 || slash != '/' || i < 1 || k < 1 || i > k)
    throw std::invalid_argument("--process: expected I/K with 1 <= I <= K, got '" + text + "'");
  return {i, k};
}

// Every point of `file`, each once, in file order (all its segments).
std::vector<PointRecord> points_of(const std::string& file) {
  std::vector<PointRecord> out;
  for (auto& run : load_results({file}).runs)
    for (auto& p : run.points) out.push_back(std::move(p));
  return out;
}

// The header of a result file that is to be continued. @throws std::invalid_argument (exit 2) when it is not a
// labrun result file of one run with a header first and each point once, or load_results refuses it (FILE:LINE:
// ...); Interrupted on a signal while it is read.
RunHeader header_to_continue(const std::string& file) {
  ResultSet set;
  try {
    set = load_results({file});
  } catch (const ResultError& e) {
    throw std::invalid_argument("cannot resume " + file + ": " + e.what());
  }
  if (set.runs.empty() || !set.runs.front().has_header)
    throw std::invalid_argument("cannot resume " + file + ": it does not start with a labrun header");
  // A file to continue is one run: each point once, under its one header (a point kept twice, or a second run
  // appended, would be written back as if it were this sweep's).
  if (!set.first_duplicate.empty())
    throw std::invalid_argument("cannot resume " + file + ": " + set.first_duplicate +
                                "; a resumed file holds each point once");
  if (set.runs.size() > 1)
    throw std::invalid_argument("cannot resume " + file + ": it holds " + std::to_string(set.runs.size()) +
                                " runs (a second header follows the first run); a resumed file holds one run");
  return set.runs.front().header;
}

// A mismatch between the file to continue and this run, as "its X is A, this run's is B".
void check_same(std::vector<std::string>& mismatches, const char* what, const std::string& file_value,
                const std::string& run_value) {
  if (file_value != run_value)
    mismatches.push_back(fmt::format("its {} is {}, this run's {}", what, file_value.empty() ? "(none)" : file_value,
                                     run_value.empty() ? "(none)" : run_value));
}

// Refuses to continue `file` over `mismatches`, or with `force` continues and says what differs (the segment
// line records this run's config hash and lab settings).
void refuse_mismatch(const std::string& file, const std::vector<std::string>& mismatches, bool force) {
  if (mismatches.empty()) return;
  std::string all;
  for (const auto& m : mismatches) all += (all.empty() ? "" : "; ") + m;
  if (force) {
    spdlog::warn("resuming {} despite a mismatch (--force): {}", file, all);
    return;
  }
  throw OutputError("cannot resume " + file + ": it holds another run (" + all +
                    "); --resume --force continues it anyway, -o another file starts afresh");
}

// The supervisor's check before continuing `file`: the same config bytes, lab settings, code under test (project,
// commit, dirty flag) and labrun version.
void check_resumable(const std::string& file, const SweepConfig& config, bool force) {
  const RunHeader h = header_to_continue(file);
  // Not a mismatch --force may accept: the points of another experiment cannot join this file's run (a reader then
  // refuses the file: "experiment: B, but the header of this run is of experiment A").
  if (!h.experiment().empty() && h.experiment() != config.experiment)
    throw OutputError("cannot resume " + printable(file) + ": it holds a run of experiment " +
                      printable(h.experiment()) + " and the config is of experiment " + config.experiment +
                      " (a result of a runner with other experiments, or of another config?); even --force cannot "
                      "put two experiments in one run: -o another file starts afresh");
  std::vector<std::string> m;
  check_same(m, "config sha256", h.config_sha256(), config.sha256);
  // The settings that differ, by name, rather than both objects.
  const Json now = to_json(config.lab);
  for (const auto& [key, value] : now.items())
    if (!h.lab().contains(key) || h.lab()[key] != value)
      check_same(m, ("lab." + key).c_str(), h.lab().contains(key) ? h.lab()[key].dump() : "", value.dump());
  // The code under test (a header of schema <= 2: labrun's own commit, RunHeader::code_sha) and the tool.
  const CodeRev code = code_rev();
  check_same(m, "code under test", h.code_project(), code.project);
  check_same(m, "code commit", h.code_sha(), code.git_sha);
  const auto dirty = h.code_dirty();
  check_same(m, "code dirty flag", dirty ? (*dirty ? "true" : "false") : "", code.git_dirty ? "true" : "false");
  check_same(m, "labrun version", h.labrun_version(), build_info().version);
  refuse_mismatch(file, m, force);
}

// Shell quoting for a word of the resume command: bare when it is safe, else in single quotes.
std::string shell_word(const std::string& w) {
  const bool safe = !w.empty() && std::all_of(w.begin(), w.end(), [](unsigned char c) {
    return std::isalnum(c) || std::strchr("@%+=:,./-_", c);
  });
  if (safe) return w;
  // A control character (a newline, ESC) in single quotes would reach the terminal raw, or escaped by the log as
  // text that names another file when pasted: bash's $'...' spells it \xHH, which names the same bytes.
  if (std::any_of(w.begin(), w.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
    std::string out = "$'";
    for (unsigned char c : w) {
      if (c == '\'' || c == '\\') out += std::string("\\") + static_cast<char>(c);
      else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
      else out += static_cast<char>(c);
    }
    return out + "'";
  }
  std::string out = "'";
  for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

void print_interrupted(int signal, std::size_t finished, std::size_t total, const std::string& where,
                       const std::vector<std::string>& argv, const std::string& output) {
  spdlog::warn("interrupted by SIG{}: {} of {} points finished, kept in {}",
               sigabbrev_np(signal) ? sigabbrev_np(signal) : "?", finished, total, where.c_str());
  spdlog::warn("resume with: {}", resume_command(argv, output).c_str());
}

}  // namespace

std::string resume_command(const std::vector<std::string>& argv, const std::string& output) {
  std::string out;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& w = argv[i];
    if (w == "--force" || w == "--resume") continue;
    if (w == "-o" || w == "--output") {
      ++i;
      continue;
    }
    if (w.rfind("--output=", 0) == 0 || (w.rfind("-o", 0) == 0 && w.size() > 2)) continue;
    out += (out.empty() ? "" : " ") + shell_word(w);
  }
  return out + " -o " + shell_word(output) + " --resume";
}

namespace {

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

// A worker: runs the points its file does not hold yet, appending each as it finishes, and reports its phases
// on the status pipe. "fresh" creates the file (header first); "continue" appends a segment line (this
// worker's environment and calibration) and the rest.
int run_worker(const SweepArgs& a, const SweepConfig& config, const RegisteredExperiment& experiment,
               const std::vector<Point>& points, const DeviceHooks& hooks) {
  Worker w = plan_worker(a, points);
  open_worker(w, a, config, points, hooks);
  // Where the records go (outputs(), output_table.hpp): the result file, then the progress lines (numbered across
  // the processes of a lab.processes sweep).
  const std::size_t processes = w.process_count > 0 ? static_cast<std::size_t>(w.process_count) : 1;
  const std::size_t before = w.process_count > 0 ? static_cast<std::size_t>(w.process_index - 1) * points.size() : 0;
  OutputArgs args;
  args.file = w.writer.get();
  args.progress = {before + w.held, processes * points.size(), w.todo.size()};
  args.quiet = a.quiet;
  const std::unique_ptr<Output> file = find_output(Product::records, "jsonl")->make(args);
  const std::unique_ptr<Output> progress = find_output(Product::console, "progress")->make(args);
  FanOut out({file.get(), progress.get()});
  begin_worker_file(w, a, config, points, out);
  return run_worker_points(w, a, config, experiment, out);
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
// exit code from the points' statuses.
int finish(const std::vector<PointRecord>& points, const std::string& line) {
  OutputArgs args;
  args.started = g_sweep_started;
  const std::unique_ptr<Output> summary = find_output(Product::console, "summary")->make(args);
  for (const PointRecord& r : points) summary->point(0, r);
  summary->finish();
  std::printf("%s\n", line.c_str());
  return any_failed(points) ? kExitPointsFailed : kExitOk;
}

// The K of the process-I-of-K.jsonl files in a pooled run's folder (0: none there).
int pooled_count_in(const fs::path& dir) {
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

// lab.processes = K: K lanes, one after another, each a result file in OUTPUT.processes/ (its workers run the
// whole sweep), then their records pooled point by point (src/run/processes.hpp) into OUTPUT, written whole. A
// failed or killed run leaves no OUTPUT; the lanes' files stay for --resume, which keeps finished lanes,
// continues the interrupted one and pools at the end.
int run_pooled(const SweepArgs& a, const SweepConfig& config, const std::vector<Point>& points) {
  const int k = static_cast<int>(config.lab.processes);
  const fs::path dir = a.output + ".processes";
  std::error_code ec;
  const bool dir_exists = fs::exists(fs::symlink_status(dir, ec));
  if (a.resume && dir_exists)
    if (const int held = pooled_count_in(dir); held != 0 && held != k)
      throw OutputError(
          fmt::format("cannot resume {}: {} holds the processes of a {}-process run, and this one has "
                      "lab.processes = {} (resume with --lab processes={}; --force replaces them)",
                      a.output, dir.string(), held, k, held));
  if (fs::exists(a.output, ec)) {
    if (a.resume && !dir_exists) {
      check_resumable(a.output, config, a.force);
      const RunHeader h = header_to_continue(a.output);
      if (!h.json.contains("processes") || h.process_count() != k)
        throw OutputError(
            fmt::format("cannot resume {} as a pooled run of {} processes: its header is {} (its "
                        "processes' files are resumed in {}.processes/)",
                        a.output, k, h.json.contains("process") ? "one process's" : "not a pooled run's", a.output));
      spdlog::info("{} is complete (its {} processes were pooled); nothing to resume", a.output.c_str(), k);
      return finish(points_of(a.output), "results: " + a.output);
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
  // The processes share host references (reference_cache.hpp) in the run's folder, unless the caller named a cache.
  if (const char* set = std::getenv(kReferenceCacheEnv); set == nullptr || *set == '\0')
    ::setenv(kReferenceCacheEnv, (dir / "references").c_str(), 1);
  std::vector<std::string> parts;
  for (int i = 1; i <= k; ++i) {
    const std::string part = (dir / fmt::format("process-{}-of-{}.jsonl", i, k)).string();
    parts.push_back(part);
    const std::string process = fmt::format("{}/{}", i, k);
    Lane lane;
    lane.file = part;
    lane.points = points;
    lane.point_timeout_s = config.lab.point_timeout_s;
    lane.continue_existing = a.resume && fs::exists(part, ec);
    if (lane.continue_existing) check_resumable(part, config, a.force);
    lane.worker_argv = [&, part, process](bool fresh) {
      return worker_argv(a, part, fresh, a.force && !fresh, process);
    };
    lane.env = {"LABRUN_ARGV=" + Json(a.argv).dump()};
    lane.label = fmt::format("process {} of {}: ", i, k);
    spdlog::info("process {} of {} (lab.processes)", i, k);
    const LaneEnd end = supervise_lane(lane);
    if (end.kind == LaneEnd::Kind::interrupted) {
      std::size_t finished = 0;
      for (const auto& p : parts) finished += read_lane(p).done.size();
      print_interrupted(end.signal, finished, points.size() * static_cast<std::size_t>(k), dir.string(), a.argv,
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
  for (const auto& part : parts) {
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
    runs.push_back(std::move(run));
  }
  Run pooled;
  try {
    pooled = pool_processes(runs, a.argv, config.lab);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(std::string("pooling the processes failed: ") + e.what() + " (their files are kept in " +
                             dir.string() + ")");
  }
  write_run_file(a.output, pooled, true);
  fs::remove_all(dir, ec);
  return finish(pooled.points, fmt::format("results: {} ({} processes pooled)", a.output, k));
}

// --devices: one child supervisor per device, each on its fixed shard i/N of the sweep (pinned by
// CUDA_VISIBLE_DEVICES, so it sees its GPU as cuda:0) writing OUTPUT.devices/shard-i-of-N.jsonl, all at once;
// then the shards are merged into OUTPUT (merge_shards, as `labrun merge`). Fixed shards, not a shared queue:
// each child is a whole sweep with its own resume, pooling and fault isolation, and the merge is the cluster's.
int run_devices(const SweepArgs& a, const std::vector<int>& devices, std::size_t total_points) {
  const int n = static_cast<int>(devices.size());
  const fs::path dir = a.output + ".devices";
  std::error_code ec;
  if (fs::exists(a.output, ec) && a.resume && !fs::exists(dir, ec)) {
    spdlog::info("{} is complete (its shards were merged); nothing to resume", a.output.c_str());
    return finish(points_of(a.output), "results: " + a.output);
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
  const std::string device = a.device == "cpu" || a.device == "host" ? "cpu" : "cuda:0";
  std::vector<int> pids;
  std::vector<std::string> files;
  for (int i = 1; i <= n; ++i) {
    const std::string file = (dir / fmt::format("shard-{}-of-{}.jsonl", i, n)).string();
    files.push_back(file);
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
    SpawnOptions options;
    options.program = "/proc/self/exe";
    options.parent_death_signal = SIGTERM;  // a supervisor: it stops its own worker on SIGTERM
    options.env = {"CUDA_VISIBLE_DEVICES=" + std::to_string(devices[static_cast<std::size_t>(i - 1)])};
    spdlog::info("shard {} of {} on device {} -> {}", i, n, devices[static_cast<std::size_t>(i - 1)], file.c_str());
    pids.push_back(start_process(child, options));
  }
  std::vector<std::optional<int>> codes(pids.size());
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
  return finish(merged.points, fmt::format("results: {} ({} devices, merged)", a.output, n));
}

}  // namespace

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

// A sanitizer sweep (lab.sanitize): every point in a worker of its own under compute-sanitizer (src/run/sanitize.hpp).
int run_sanitize_sweep(const SweepArgs& a, const SweepConfig& config, const std::vector<Point>& points) {
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
  return finish(run_sanitized(run), "results: " + a.output);
}

int cmd_sweep(const SweepArgs& args, const SweepConfig& config, const RegisteredExperiment& experiment,
              const std::vector<Point>& points, const DeviceHooks& hooks) {
  if (!args.worker.empty()) return run_worker(args, config, experiment, points, hooks);
  g_sweep_started = std::chrono::steady_clock::now();
  SweepArgs a = args;
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
    return run_devices(a, parse_devices(a.devices, hooks), points.size());
  }
  if (config.lab.processes > 1) return run_pooled(a, config, points);

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
  if (config.lab.sanitize != "none") return run_sanitize_sweep(a, config, points);
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
  return finish(points_of(a.output), "results: " + a.output);
}

namespace {

/// The sweep command's options as parsed: the sweep's own and those that only shape what runs.
struct SweepOptions {
  SweepArgs args;
  bool dry_run = false;
  bool profile = false;
  bool verbose = false;
  std::string log_level;  ///< --log-level as given
};

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
  return cmd_sweep(o.args, in.config, *in.experiment, in.points, context.hooks);
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
