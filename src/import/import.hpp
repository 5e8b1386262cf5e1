// Another tool's results as labrun records (`labrun import`, docs/formats.md "Import"): nvbench's JSON (its `--json`
// printer) and Google Benchmark's JSON (--benchmark_format=json, --benchmark_out) each read into one labrun run, so
// that report, diff and history read it as they read a sweep's file.
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
  /// When the results were measured, UTC as labrun writes a timestamp (--created): the header's created_utc. Empty:
  /// the file's own date where it has one (Google Benchmark's context.date), else left empty for the command to fill
  /// (the file's modification time).
  std::string created_utc;
  std::string file;  ///< the file as given, for messages and the header's import.file
  /// --samples DIR (nvbench): the folder of the per-sample files nvbench's --jsonbin wrote (the JSON's
  /// "nv/json/bin:nv/cold/sample_times" names each); "" to read the summaries alone.
  std::string samples_dir;
  /// What the file should have been, for a message about a member it lacks ("nvbench's --json output"); set by
  /// each importer.
  std::string expected;
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
/// summaries when the benchmark declared them (nvbench's add_global_memory_reads/writes). With options.samples_dir,
/// each cold point also holds its samples (timing.device_samples_s, seconds, from the float32 file --jsonbin wrote,
/// found under samples_dir by the name the JSON gives it), so diff and history test the samples themselves.
/// @throws ResultError naming the file and the JSON path ("f.json: benchmarks[0].states[3].summaries[5].data[0].value:
/// not a number: \"x\"") when the document is not such a file or a value makes no sense (a negative time, a count
/// that is not a positive integer, a median outside [min, max]).
Run import_nvbench(const Json& document, const ImportOptions& options);

/// The run a Google Benchmark JSON document holds (its JSON reporter, library v1.6 to v1.9): a header (the tool, its
/// version, build type and executable; the host's name, CPU count and clock, load average; created_utc from
/// context.date when options.created_utc is empty) and one point per benchmark run (entries sharing a run_name):
/// experiment "gbench", variant the family's name (before the first '/'), axes its arguments (`n:8` as n = 8, an
/// unnamed one as arg0, arg1, ...; int64 where they parse; `threads:N` as threads; the run's settings, real_time,
/// iterations:N, min_time:X, ..., as one word axis `options`). Timing (method "gbench", the host's wall clock, l2 hot):
/// - with repetitions (run_type "iteration"): each repetition's real_time per iteration is a sample (timing.wall and
///   wall_samples_s; time_s their median; batch the median iteration count), and with two or more also a process
///   median (timing.processes), so diff and history treat repetitions as they treat lab.processes;
/// - with aggregates alone (--benchmark_report_aggregates_only): timing.wall {count = repetitions, mean, median,
///   stddev, min, max where given}, no samples; time_s the median, else the mean.
/// cost.bytes is bytes_per_second x the time it was computed from (real_time for /real_time or /manual_time runs,
/// else cpu_time) where the benchmark set it. An entry with error_occurred makes its point
/// `error` with the message. cpu_time, items_per_second and user counters are not kept.
/// @throws ResultError naming the file and the JSON path when the document is not such a file or a value makes no
/// sense (a time that is not positive, a unit other than ns/us/ms/s, a repetition given twice, two runs that make one
/// point, a context.date that is not a time).
Run import_gbench(const Json& document, const ImportOptions& options);

}  // namespace labrun
