// Result records in another tool's format (`labrun export`, docs/formats.md): one Output (output.hpp) per format, one
// file each (export_<format>.cpp), listed in outputs() (src/commands/output_table.hpp) with the rest of labrun's
// outputs; and what the formats share (which points may leave as numbers, the interval behind time_s, the units).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "output.hpp"
#include "point_record.hpp"
#include "record.hpp"

namespace labrun {

/// A point that an export left out, and why: "KEY: incorrect: wrote past the end of y".
struct LeftOut {
  std::string key;
  std::string why;
};

/// What an export wrote: the document, the points it wrote as numbers and those it left out.
struct Exported {
  Json document;
  std::size_t written = 0;
  std::vector<LeftOut> left_out;  ///< every point not written as a number, in file order
};

/// What `labrun export`'s options ask of a format.
struct ExportOptions {
  /// One entry per point: a pooled point is written as its pooled time alone, not as one repetition per process
  /// and their aggregates (gbench; the other formats write one entry per point anyway). For dashboards that take
  /// every entry as a benchmark of its own (github-action-benchmark `googlecpp`, Bencher `cpp_google`).
  bool one_per_point = false;
};

/// The export formats, each an Output (output.hpp) writing the `runs` hook, in its own file, listed in outputs()
/// (src/commands/output_table.hpp): Google Benchmark's JSON (export_gbench.cpp; `options` say how a pooled point is
/// written), Bencher Metric Format (export_bmf.cpp), github-action-benchmark's customSmallerIsBetter
/// (export_github_action.cpp).
std::unique_ptr<Output> make_gbench_output(const ExportOptions& options);
std::unique_ptr<Output> make_bmf_output();
std::unique_ptr<Output> make_github_action_output();

/// Why no point of the run with header `header` may leave labrun as a number, or nullopt when its points may: a
/// profiler-mode run ("profiler mode: the times are the profiler's, not a measurement"), an unsynchronized one
/// (lab.timing: it times the enqueue, not the work), or one with a test aid's delay kernel (lab.delay_s > 0).
std::optional<std::string> run_not_exportable(const RunHeader& header);

/// Why `point` may not leave labrun as a number, or nullopt when it may: its status is not `ok` ("incorrect:
/// REASON"), its correctness check did not pass, an integrity check found something (failed, or warned:
/// "integrity: audit warned: ..."), or it has no time that is finite and positive in seconds and in nanoseconds
/// ("no time").
std::optional<std::string> not_exportable(const PointRecord& point);

/// Calls `write(point, header)` for every point of `runs` that may leave as a number (run_not_exportable of its run's
/// header, then not_exportable), in file order, counting them in `out.written`; lists every other in `out.left_out`.
void for_each_exportable(const std::vector<Run>& runs, Exported& out,
                         const std::function<void(const PointRecord&, const RunHeader&)>& write);

/// Where a format with one entry per point puts each entry: under the point's key in a JSON object (a later point of
/// the same key replaces an earlier one; BMF), or appended to a JSON array (github-action-benchmark).
enum class EntryLayout { object_by_key, array };

/// A point's entry in a format with one entry per point, from the point and its run's header.
using PointEntry = std::function<Json(const PointRecord& point, const RunHeader& header)>;

/// A format whose document is entry(point, header) for every point that may leave as a number (for_each_exportable),
/// in file order, laid out as `layout` says; the others are listed in out.left_out. Its runs hook throws what `entry`
/// throws.
std::unique_ptr<Output> make_entry_per_point_output(EntryLayout layout, PointEntry entry);

/// The 95% confidence interval of the median behind a point's time_s, seconds: from timing.device when its median is
/// time_s, else from timing.wall when its median is; nullopt when neither is, the interval is not finite (fewer than 6
/// samples: ci95_rel_halfwidth is +inf), its low end is not positive, or it does not hold time_s.
std::optional<std::pair<double, double>> time_interval(const PointRecord& point);

/// The per-process medians of a pooled point (timing.processes with more than one process, as many medians as
/// processes, each finite and positive), seconds; empty otherwise.
std::vector<double> process_medians(const PointRecord& point);

/// The samples behind time_s (timing.device's count, else timing.wall's); 0 without timing.
std::int64_t sample_count(const PointRecord& point);

/// Seconds to nanoseconds (the unit Google Benchmark's JSON, Bencher's `latency` and the github-action-benchmark
/// export use): s * 1e9.
double to_ns(double seconds);

}  // namespace labrun
