#include "sanitize.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include <spdlog/spdlog.h>

#include "format.hpp"
#include "interrupt.hpp"
#include "lab.hpp"
#include "record.hpp"
#include "output.hpp"
#include "sanitizer_log.hpp"
#include "spawn.hpp"

namespace labrun {

namespace fs = std::filesystem;

namespace {

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The last `n` lines of `text`, joined with " | " (a dead worker's last words).
std::string last_lines(const std::string& text, std::size_t n) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line.rfind("=========", 0) != 0) lines.push_back(line);
  std::string out;
  for (std::size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i)
    out += (out.empty() ? "" : " | ") + lines[i];
  return out;
}

// One point's worker under the tool: its exit status, or nullopt when it ran past the timeout (killed).
std::optional<int> run_worker_process(const std::vector<std::string>& argv, const SpawnOptions& options,
                                      double timeout_s) {
  const int pid = start_process(argv, options);
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    if (const auto status = wait_process(pid, false)) return *status;
    const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (interrupt_signal() != 0 || (timeout_s > 0 && elapsed_s > timeout_s)) {
      // The tool, then its target (the worker is its child, killed with it by its parent-death signal).
      ::kill(pid, SIGKILL);
      wait_process(pid, true);
      throw_if_interrupted();
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The header and point the worker wrote to `file` (either may be missing).
std::pair<std::optional<Json>, std::optional<PointRecord>> worker_lines(const std::string& file) {
  std::pair<std::optional<Json>, std::optional<PointRecord>> got;
  std::error_code ec;
  if (!fs::exists(file, ec)) return got;
  for (const Json& line : read_jsonl(file)) {
    if (!line.is_object()) continue;
    const auto type = line.value("type", "");
    if (type == "header") got.first = line;
    else if (type == "point") got.second = point_from_json(line);
  }
  return got;
}

// `rec` with the tool's findings: incorrect when it reported an error.
void judge(PointRecord& rec, const std::string& tool, const SanitizerLog& log) {
  if (!rec.sanitizer) rec.sanitizer = SanitizerReport{tool, 0, {}, {}};
  add_sanitizer_log(*rec.sanitizer, log);
  if (rec.sanitizer->errors <= 0) return;
  std::string reason = sanitizer_failure_reason(*rec.sanitizer);
  if (rec.status != Status::sanitized && rec.reason)
    reason += "; the point was " + std::string(to_string(rec.status)) + ": " + *rec.reason;
  rec.status = Status::incorrect;
  rec.reason = reason;
}

void print_progress(std::size_t i, std::size_t n, const PointRecord& rec, double elapsed_s) {
  std::string reason = rec.reason.value_or("");
  if (reason.size() > 160) reason = reason.substr(0, 160) + "...";
  std::cerr << fmt::format("[{}/{}] {} {:<20} {:<20} {}", i, n, format_duration(elapsed_s), rec.variant,
                           to_string(rec.status), reason)
            << "\n";
}

}  // namespace

std::string find_compute_sanitizer() {
  if (const char* given = std::getenv("LABRUN_COMPUTE_SANITIZER"))
    return is_executable_file(given) ? std::string(given) : std::string();
  std::vector<std::string> candidates;
  if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':'))
      if (!dir.empty()) candidates.push_back(dir + "/compute-sanitizer");
  }
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* home = std::getenv(var)) candidates.push_back(std::string(home) + "/bin/compute-sanitizer");
  candidates.push_back("/usr/local/cuda/bin/compute-sanitizer");
  for (const auto& c : candidates)
    if (is_executable_file(c)) return c;
  return "";
}

std::vector<PointRecord> run_sanitized(const SanitizeRun& run) {
  const std::string dir = run.output + ".sanitize-" + std::to_string(::getpid());
  fs::create_directories(dir);
  struct RemoveDir {
    std::string path;
    ~RemoveDir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } cleanup{dir};
  const std::string file = dir + "/point.jsonl", log_file = dir + "/sanitizer.log", out = dir + "/worker.out";
  std::unique_ptr<JsonlWriter> writer;
  std::unique_ptr<JsonlSink> sink;            // the result file, once a worker gave the header
  std::vector<PointRecord> records, pending;  // pending: points finished before any worker wrote a header
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < run.points.size(); ++i) {
    throw_if_interrupted();
    const Point& point = run.points[i];
    std::error_code ec;
    for (const auto& f : {file, log_file, out}) fs::remove(f, ec);
    std::vector<std::string> argv{run.sanitizer,
                                  "--tool",
                                  run.tool,
                                  "--log-file",
                                  log_file,
                                  "--print-limit",
                                  std::to_string(kMaxSanitizerFindings),
                                  "--show-backtrace",
                                  "no"};
    const auto worker = run.worker_argv(point, file);
    argv.insert(argv.end(), worker.begin(), worker.end());
    SpawnOptions options;
    options.program = run.sanitizer;
    options.parent_death_signal = SIGKILL;
    options.env = run.env;
    options.output = out;
    const auto status = run_worker_process(argv, options, run.point_timeout_s);
    auto [header, rec] = worker_lines(file);
    if (!rec) {
      PointRecord lost = new_point_record(point, header ? header->value("backend", "cuda") : "cuda");
      lost.status = status ? Status::crashed : Status::timeout;
      lost.reason = status ? "its worker under compute-sanitizer ended with status " + std::to_string(*status) +
                                 " before writing the point: " + last_lines(read_text(out), 3)
                           : "its worker under compute-sanitizer ran past lab.point_timeout_s and was killed";
      rec = std::move(lost);
    }
    judge(*rec, run.tool, parse_sanitizer_log(read_text(log_file)));
    if (!writer && header) {
      (*header)["sanitizer"] = {{"tool", run.tool}, {"path", run.sanitizer}};
      writer = std::make_unique<JsonlWriter>(run.output, run.force);
      sink = std::make_unique<JsonlSink>(*writer);
      sink->line(*header);
      for (const auto& p : pending) sink->point(0, p);
      pending.clear();
    }
    if (sink) sink->point(0, *rec);
    else pending.push_back(*rec);
    records.push_back(*rec);
    if (!run.quiet)
      print_progress(i + 1, run.points.size(), *rec,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  if (!writer)
    throw OutputError("no worker under compute-sanitizer started: " + run.output +
                      " not written (the last worker's output: " + last_lines(read_text(out), 3) + ")");
  sink->finish();  // the file commits
  return records;
}

}  // namespace labrun
