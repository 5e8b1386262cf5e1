// Another tool's results as labrun records (`labrun import`, docs/formats.md "Import"): nvbench's JSON (its `--json`
// printer) read into one labrun run, so that report, diff and history read it as they read a sweep's file.
#pragma once

#include <string>

#include "point_record.hpp"
#include "record.hpp"

namespace labrun {

/// What the file does not say and `labrun import` is told.
struct ImportOptions {
  /// The code under test, "SHA" or "SHA+dirty" (--code-rev): environment.code {project, git_sha, git_dirty,
  /// source "--code-rev"}; "" to leave the code unknown (history then cannot order the run by commit).
  std::string code_rev;
  std::string project = "imported";  ///< environment.code.project with a code_rev (--project)
  /// When the results were measured, ISO 8601 UTC (--created): the header's created_utc. Required: neither format
  /// records it.
  std::string created_utc;
  std::string file;  ///< the file as given, for messages and the header's import.file
};

/// The run an nvbench JSON document (nvbench's JSON printer, json version 1.x) holds: a header (the tool, its
/// version and argv, each device's name, SM count, L2 and memory size, bus bandwidth in B/s) and, per benchmark
/// state, one point per measurement it has:
/// - `nv/cold/...` (each sample one isolated launch, L2 flushed before it): axis `l2` = "cold", timing.method
///   "nvbench_cold", timing.device the GPU-time summary (count, median, mean, stddev, min, max, quartiles; seconds),
///   time_s its median;
/// - `nv/batch/...` (launches back to back behind a blocking kernel, their mean): axis `l2` = "hot", timing.method
///   "nvbench_batch", timing.device {count, mean}, time_s the mean.
/// Points are experiment "nvbench", variant the benchmark's name, axes the state's (int64 as integers, float64 as
/// reals, strings and type axes as words; `Device` only where the file has several devices). A skipped state is one
/// point, `skipped`, with nvbench's reason. cost.bytes is the sum of the `nv/gmem/reads/*` and `nv/gmem/writes/*`
/// summaries when the benchmark declared them (nvbench's add_global_memory_reads/writes).
/// @throws ResultError naming the file and the JSON path ("f.json: benchmarks[0].states[3].summaries[5].data[0].value:
/// not a number: \"x\"") when the document is not such a file or a value makes no sense (a negative time, a count
/// that is not a positive integer, a median outside [min, max]).
Run import_nvbench(const Json& document, const ImportOptions& options);

}  // namespace labrun
