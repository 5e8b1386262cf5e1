// What a sweep writes to the console, each an Output (output.hpp; one file each: progress.cpp, summary.cpp): a progress
// line per point as it finishes (ProgressSink, in the worker's FanOut) and the summary table at the end (SummarySink,
// fed the sweep's records by cmd_sweep's finish()).
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "point_record.hpp"
#include "output.hpp"

namespace labrun {

/// The cells both console outputs write (src/export/console.cpp).
namespace console_text {
/// A time in seconds as "114 µs" (format_time, shared with the report); "-" when not finite.
std::string fmt_time(double time_s);
/// A point's axes as "n=1024 density=0" (format_axis_value, as the report and --dry-run write them).
std::string short_axes(const Json& axes);
}  // namespace console_text

/// How a run's progress lines are numbered: "[N/TOTAL]" with N = before + the run's point number.
struct ProgressNumbers {
  std::size_t before = 0;  ///< points of the sweep done before this run's first (earlier processes, held points)
  std::size_t total = 0;   ///< the points of the whole sweep (every process of a lab.processes sweep)
  std::size_t todo = 0;    ///< the points this run runs (the ETA's denominator)
};

/// One line per point that ran (a skipped or not-supported point is counted, not listed), numbered across the
/// processes of a lab.processes sweep, with the elapsed time and an ETA from the points done so far: on stderr when it
/// is a terminal, else in the log (timestamped, for batch logs). At finish, how many points did not run. Quiet: none.
class ProgressSink final : public Output {
 public:
  ProgressSink(ProgressNumbers numbers, bool quiet) : numbers_(numbers), quiet_(quiet) {}
  void point(std::size_t index, const PointRecord& record) override;
  void finish() override;
  /// Points counted as not run (not supported or skipped) so far.
  std::size_t not_run() const { return not_run_; }

 private:
  ProgressNumbers numbers_;
  bool quiet_ = false;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::size_t not_run_ = 0;
};

/// The table a sweep prints on stdout at its end, from the points fed to it: one row per point that ran (ok or failed;
/// a failed one with its reason), the skipped and not-supported points counted by reason, the time in each phase
/// summed over the points, the sweep's wall time since `started`, and the count of each status. It keeps each row's
/// text and the counts, not the records; nothing is printed before finish.
class SummarySink final : public Output {
 public:
  explicit SummarySink(std::chrono::steady_clock::time_point started) : started_(started) {}
  void point(std::size_t index, const PointRecord& record) override;
  void finish() override;

 private:
  /// One row of the table, its columns as printed (a failed point's reason on a line below it).
  struct Row {
    std::string variant, status, time, wall, bandwidth, syncs, bound, axes;
    std::optional<std::string> reason;
  };
  std::chrono::steady_clock::time_point started_;
  std::vector<Row> rows_;
  std::size_t points_ = 0;
  std::map<std::string, int> counts_;                    ///< points by status
  std::map<std::string, int> not_run_;                   ///< the points without a row, by status and the kind of reason
  std::vector<std::pair<std::string, double>> phase_s_;  ///< each phase's time summed, in first-seen order
};

}  // namespace labrun
