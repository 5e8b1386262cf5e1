// labrun diff: compares the results of two runs (say, two commits) point by point and decides, for each point,
// whether the new run is slower, faster, the same, or whether the samples cannot tell — with the rate of false
// "slower" verdicts over a whole sweep held at alpha (Benjamini-Hochberg). Host code only; docs/diff.md.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include "record.hpp"
#include "stats.hpp"

namespace labrun {

// ---- Comparing result files ---------------------------------------------------------------------------------

/// Settings of one diff.
struct DiffOptions {
  /// Smallest relative change worth a verdict: 0.05 means a point is `slower` only if new/base is surely
  /// above 1.05, `faster` only if surely below 1/1.05, `same` if surely within [1/1.05, 1.05]. >= 0.
  double min_effect = 0.05;
  /// False discovery rate held by the Benjamini-Hochberg correction; the ratio's confidence level is
  /// 1 - alpha. In (0, 1).
  double alpha = 0.05;
  /// Compare times multiplied by each run's calibrated copy bandwidth (calibration.copy.bandwidth_Bps), i.e. in
  /// "bytes the device could have copied in that time" — cancels a GPU whose memory is uniformly faster or slower.
  bool normalize = false;
  /// What makes `regression` true (and cmd_diff exit 1).
  enum class FailOn {
    slower,  ///< any `slower` point, or a point whose status became `incorrect` or `error`
    any,     ///< also any change of status (either direction), any missing point, or an incomplete new run
  };
  FailOn fail_on = FailOn::slower;
};

/// "slower" or "any".
const char* to_string(DiffOptions::FailOn fail_on);

/// Reads "slower" or "any". @throws std::invalid_argument naming the accepted words.
DiffOptions::FailOn parse_fail_on(const std::string& text);

/// Reads a fraction written as a percentage ("5%", "0.5%") or as a plain fraction ("0.05"). A plain number must
/// lie in [0, 1] so that "5" (meant as 5%, read as 500%) is refused rather than silently accepted.
/// @return the fraction (0.05 for "5%"). @throws std::invalid_argument on anything else (empty, trailing text,
/// negative, non-finite).
double parse_percent(const std::string& text);

/// Compares two sets of records point by point.
///
/// `base_records` and `new_records` are every line of one or more result files each (shards: several headers
/// are fine; each point belongs to the header above it). Points are matched by `id` (a hash of experiment,
/// variant and axis values). If one side holds an id twice (overlapping shards), the later record wins and the
/// point keeps the position of its first appearance. Records of other types are ignored.
///
/// Timing samples are `timing.device_samples_s` when not null, else `timing.wall_samples_s` (seconds).
/// Verdict of a point (field `verdict`; `reason` says why for every verdict but same/slower/faster):
///  - both statuses `ok`: from the Hodges-Lehmann ratio new/base and its (1 - alpha) interval [lo, hi], the
///    Mann-Whitney p-value and its Benjamini-Hochberg adjustment p_adj over every ok/ok point with a p-value,
///    and e = min_effect:
///      `slower`        p_adj <= alpha and lo > 1 + e
///      `faster`        p_adj <= alpha and hi < 1 / (1 + e)
///      and, when both records come from lab.processes runs (timing.processes.time_s, >= 2 each), the
///      processes' medians must differ too: Welch's t on their logs with p <= alpha (field `process_p`), else
///      `inconclusive` (the change is within the variation between processes). For a host_sensitive point whose
///      processes all probed the host (timing.processes.host_probe_time_s) instead: both host_adjusted_tests
///      ratios beyond the minimum effect in the verdict's direction, and one of the raw, per-probe and covariate
///      Welch p-values <= alpha / 3 (field `host_adjusted`)
///      `same`          1 / (1 + e) <= lo and hi <= 1 + e
///      `inconclusive`  otherwise; also fewer than 3 samples on a side, or a sample that is not a finite
///                      positive number (C14: "NaN"/"Infinity" are read, never crash), or no samples at all
///  - statuses differ (e.g. ok -> incorrect): `status_changed`, also listed in "status_changes"
///  - same non-ok status on both sides (e.g. capture_unsupported): `not_compared`
///
/// Output (ordered JSON): {"type": "diff", "schema_version", "options", "environment": {"warnings": [...],
/// "base": {...}, "new": {...}}, "points": [{id, key, variant, axes, base_status, new_status, verdict, reason,
/// ratio, ratio_ci_low, ratio_ci_high, p_value, p_adjusted, base_median_s, new_median_s, base_n, new_n,
/// host_sensitive, process_p, process_ratio, host_adjusted {per_probe_ratio, per_probe_p, elasticity,
/// covariate_ratio, covariate_p}, gate ("samples", "processes" or "host_adjusted")}],
/// "new": [{id, key, status}], "missing": [{id, key, status}], "status_changes": [{id, key, base_status,
/// new_status, reason}], "summary": {matched, compared, same, slower, faster, inconclusive, status_changed,
/// not_compared, new, missing, host_sensitive_changes}, "regression": bool}. Numbers go through json_real (non-finite as strings);
/// a statistic that was not computed is null. Medians are of the raw samples, in seconds, even with normalize.
///
/// Environment warnings: GPU name, driver, CUDA runtime, build type or a lab setting differ; a calibrated
/// ceiling (copy and read bandwidth, FP32 FMA and BF16 GEMM rate) differs by more than 5%; the median SM clock
/// seen by the points (device_state before/after) differs by more than 2%; device samples compared with wall
/// samples; a side with fewer points than its headers' point_count (a run killed part-way). New and missing
/// points are reported; under fail_on=any, missing points or an incomplete new run are a regression.
///
/// @throws std::invalid_argument for options out of range, a point record without a string `id`, no point in
/// common between the sides, or `normalize` with a point whose header has no finite positive
/// calibration.copy.bandwidth_Bps.
Json diff_results(const std::vector<Json>& base_records, const std::vector<Json>& new_records,
                  const DiffOptions& options);

/// Aligned plain text: environment warnings, then one row per point that is not `same` (and not
/// `not_compared`) unless `all_rows`, worst first (status change, slower, faster, inconclusive; the biggest
/// change first within each), then a summary line. `diff` is a diff_results() object.
std::string diff_table(const Json& diff, bool all_rows = false);

/// Markdown to paste into a pull request: a verdict headline, the counts, environment warnings, a table of the
/// status-change / slower / faster rows (change and interval in %, BH-adjusted p), the inconclusive rows folded
/// in a <details> block, and the new / missing points. `diff` is a diff_results() object.
std::string diff_markdown(const Json& diff);

/// Exit codes of cmd_diff (and of `labrun diff`).
enum DiffExit : int {
  kDiffNoRegression = 0,  ///< compared; no regression per fail_on
  kDiffRegression = 1,    ///< compared; a regression per fail_on
  kDiffBadInput = 2,      ///< a file unreadable, not JSONL, without a header or points; bad options or format
};

/// `labrun diff`: reads every file of each side (read_jsonl), checks that each is a labrun result (JSONL, a
/// header line first, at least one point, every point with a string id), runs diff_results() and writes it to
/// `out` as `format` "table", "markdown" or "json". Errors go to `err`, naming the file; so does a note when a
/// file's torn last line (a killed run) was dropped.
/// @return a DiffExit code. Never throws for bad input.
int cmd_diff(const std::vector<std::string>& base_paths, const std::vector<std::string>& new_paths,
             const DiffOptions& options, const std::string& format, std::ostream& out, std::ostream& err);

}  // namespace labrun
