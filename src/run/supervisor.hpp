// The one worker model every sweep runs under: a supervisor process that owns the result file and restartable
// worker processes that run the points. A worker is this binary again (`sweep --worker ...`); it tells its
// supervisor, through a pipe, each point's phases as they start (PhaseListener). When a worker dies the
// supervisor knows which point it was in:
//   - a sticky CUDA error: the worker itself wrote the point as `device_fault` and exited kExitWorkerFault;
//   - a signal (abort, segfault): the supervisor writes the point as `crashed`, with the signal and phase;
//   - no word for lab.point_timeout_s: the supervisor kills the worker (SIGKILL) and writes `timeout`;
// then starts a fresh worker (which opens the device and calibrates again) that appends to the same file,
// skipping every point the file holds. Resume (--resume) is the same step after a dead supervisor; pooling
// (lab.processes) supervises one file per process. docs/records.md "Workers and resume".
#pragma once

#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <labrun/point.hpp>

namespace labrun {

/// What one result file holds so far, as a supervisor reads it between workers.
struct LaneState {
  bool exists = false;         ///< the file exists
  bool has_header = false;     ///< its first record is a header
  std::set<std::string> done;  ///< ids of the points it holds (each once: workers skip held points)
  std::string backend;         ///< environment.backend of its last header or segment ("" if none)
  std::size_t segments = 0;    ///< header and segment lines: the workers that wrote it
};

/// Reads `path` (a missing file gives exists = false; a torn last line is ignored).
/// @throws std::runtime_error for a line that is not JSON other than a torn last one.
LaneState read_lane(const std::string& path);

/// One result file and the points it must end up holding.
struct Lane {
  std::string file;            ///< the result file the workers append to
  std::vector<Point> points;   ///< every point it must hold, in sweep order
  double point_timeout_s = 0;  ///< lab.point_timeout_s (0: no limit)
  /// The worker's command line. `fresh`: the file is to be created (or, with --force, replaced); otherwise the
  /// worker continues it. The supervisor appends "--status-fd N".
  std::function<std::vector<std::string>(bool fresh)> worker_argv;
  /// true: the file exists and is continued from the start (resume); false: the first worker creates it.
  bool continue_existing = false;
  std::vector<std::string> env;  ///< set in every worker's environment ("KEY=VALUE"; e.g. LABRUN_ARGV)
  std::string label;             ///< how messages name the lane ("" for a single-process sweep, "process 2 of 3: ")
};

/// How a lane ended.
struct LaneEnd {
  enum class Kind { finished, interrupted, failed } kind = Kind::finished;
  int exit_code = 0;         ///< failed: the status to exit with (a worker's own 2-5, or 70)
  int signal = 0;            ///< interrupted: SIGINT or SIGTERM
  std::size_t restarts = 0;  ///< fresh workers started after a device fault, crash or timeout
};

/// Runs workers until `lane.file` holds every point of `lane.points`, or a signal (interrupt_signal()) stops it,
/// or a worker fails in a way no restart can fix (bad input, no device, a death before its first point).
/// On SIGINT/SIGTERM the worker gets SIGTERM, then SIGKILL after 10 s; it is always reaped before returning.
/// Messages (restarts, crashes) go to stderr. Before the first worker and after the last, partial files of workers
/// that died (FILE.new-PID) are removed; a lane that did not finish and whose file holds no record (its header
/// could not be written) leaves no file.
LaneEnd supervise_lane(const Lane& lane);

}  // namespace labrun
