// The sanitizer sweep (sweep --sanitize TOOL; docs/integrity.md "The sanitizer sweep"): each point in a worker of its
// own under NVIDIA compute-sanitizer, its setup and correctness iteration only, the tool's findings added to the
// point's record.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <labrun/point.hpp>
#include "point_record.hpp"

namespace labrun {

/// compute-sanitizer's path: $LABRUN_COMPUTE_SANITIZER when set (must exist), else the first of compute-sanitizer
/// on PATH, $CUDA_HOME/bin, $CUDA_PATH/bin and /usr/local/cuda/bin that is an executable file; "" when none is.
std::string find_compute_sanitizer();

/// A sanitizer sweep to run.
struct SanitizeRun {
  std::string tool;       ///< memcheck, racecheck, initcheck or synccheck (lab.sanitize)
  std::string sanitizer;  ///< compute-sanitizer's path (find_compute_sanitizer)
  std::string output;     ///< the result file; written with the first worker's header, "sanitizer" added
  bool force = false;     ///< replace an existing output (JsonlWriter's force)
  bool quiet = false;     ///< no per-point progress line on stderr
  std::vector<Point> points;
  /// The worker command line (labrun's own, argv[0] first) that runs point `point` alone into the fresh file `file`.
  std::function<std::vector<std::string>(const Point& point, const std::string& file)> worker_argv;
  std::vector<std::string> env;  ///< "KEY=VALUE" set in each worker's environment (LABRUN_ARGV)
  double point_timeout_s = 0;    ///< a worker running longer is killed and its point `timeout`; 0: no limit
};

/// Runs every point of `run`, one process each: `compute-sanitizer --tool TOOL --log-file LOG --print-limit 20
/// --show-backtrace no WORKER...`, then reads the worker's record and the tool's report (parse_sanitizer_log) and
/// writes the point to run.output with its `sanitizer` findings, its arrays located. A point the tool reported an
/// error for is `incorrect` (reason: sanitizer_failure_reason; the worker's own reason after it when it had one);
/// a worker that wrote no record leaves its point `crashed` (or `timeout`), with what the tool found. Other points
/// go on. Returns the records written, in order. Stopped by SIGINT/SIGTERM between points (Interrupted).
/// @throws OutputError if the output cannot be written; Interrupted.
std::vector<PointRecord> run_sanitized(const SanitizeRun& run);

}  // namespace labrun
