// labrun diff: compares the results of two runs (say, two commits) point by point and decides, for each point,
// whether the new run is slower, faster, the same, or whether the samples cannot tell — with the rate of false
// "slower" verdicts over a whole sweep held at alpha (Benjamini-Hochberg). Host code only; docs/diff.md.
#pragma once

// Three parts: src/diff/diff.cpp compares (matches points, applies the gates, decides verdicts) and produces a
// DiffResult; its outputs write one (src/diff/diff_json.cpp, diff_table.cpp, diff_markdown.cpp, sharing diff_text.hpp's
// cells); src/commands/cmd_diff.cpp is cmd_diff, which loads the files (load_results), checks them and picks the
// output from outputs(). The statistics are in stats.hpp.
#include <cstddef>
#include <iosfwd>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "output.hpp"
#include "point_record.hpp"
#include "record.hpp"
#include "stats.hpp"

namespace labrun {

// ---- Reading a point's times (shared with labrun history, src/history/history.hpp) ---------------------------------

/// Timing samples of a point in seconds, or the reason there are none usable.
struct Samples {
  std::vector<double> seconds;
  std::string source;   ///< "device" or "wall"
  std::string problem;  ///< empty when every sample is a finite positive number
};

/// The primary samples of `point`: timing.device_samples_s when not empty, else timing.wall_samples_s. A sample
/// that is not a finite positive number makes `problem` say which (C14) and leaves `seconds` partial. Never throws.
Samples read_samples(const PointRecord& point);

/// What a pooled lab.processes record says per process (timing.processes).
struct ProcessData {
  bool pooled = false;         ///< the record has a timing.processes block
  std::vector<double> times;   ///< each process's median (seconds), >= 2 of them, in process order
  std::vector<double> probes;  ///< each process's host probe median (seconds per round trip), same order; or none
  std::string problem;         ///< why a timing.processes block that is there cannot be used; empty if it can
};

/// Reads timing.processes: `time_s` must hold >= 2 finite positive times, and `host_probe_time_s`, when
/// present, one finite positive time per process. A block that breaks either is a problem, never dropped in
/// part: times and probes are paired by position. Never throws.
ProcessData read_processes(const PointRecord& point);

/// The calibration that takes the machine out of a point's time, by its bound: calibration.<ceiling>.<key>, and
/// whether it is a rate (bandwidth, FLOP/s) rather than a time.
struct Ceiling {
  const char* ceiling;
  const char* key;
  bool rate;
};

/// The ceiling of a point's bound (interpretation.bound): launch -> launch.eager_queued_time_s (graph mode:
/// launch.graph_time_s), memory -> the read or copy bandwidth the point was judged against, compute ->
/// fp32_fma.flop_per_s; nullopt for any other bound (sync: the host probe's gate; unknown). Never throws.
std::optional<Ceiling> ceiling_for(const PointRecord& record);

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
  /// --allow-shared: points measured while another process held the device (case C23) do not make a regression.
  /// They are never compared either way; without it, any such point on either side is a regression, so a tenant
  /// cannot hide one.
  bool allow_shared = false;
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

/// Verdict of one matched point (docs/diff.md "Verdicts").
enum class Verdict {
  same,            ///< the interval lies within the minimum effect
  slower,          ///< significant after BH and the interval above 1 + min_effect (and the gate agrees)
  faster,          ///< significant after BH and the interval below 1 / (1 + min_effect) (and the gate agrees)
  inconclusive,    ///< none of these; `reason` says why
  status_changed,  ///< the statuses differ (e.g. ok -> incorrect)
  not_compared,    ///< the same non-ok status on both sides
};

/// "same", "slower", "faster", "inconclusive", "status_changed", "not_compared".
const char* to_string(Verdict verdict);

/// The test that had the last word on a compared point: "samples" (Mann-Whitney and Hodges-Lehmann on the
/// samples alone), "processes" (also Welch's t on the per-process medians of lab.processes runs) or
/// "host_adjusted" (also the host-adjusted tests of a host-sensitive point whose processes probed the host).
enum class Gate { samples, processes, host_adjusted, normalized, summaries };

/// "samples", "processes", "host_adjusted", "normalized" (the bound-normalised process medians decided `same`),
/// "summaries" (imported results without samples: their means, standard deviations and counts, summary_test).
const char* to_string(Gate gate);

/// One matched point of a diff: what was compared and what was decided. Times in seconds; ratios new / base,
/// dimensionless. nullopt is a statistic that was not computed (written null).
struct DiffPoint {
  std::string id, key, variant;  ///< of the new record
  Json axes = Json::object();    ///< of the new record
  Status base_status = Status::ok, new_status = Status::ok;
  Verdict verdict = Verdict::inconclusive;
  std::optional<std::string> reason;                     ///< why, for every verdict but same / slower / faster
  std::optional<RatioEstimate> ratio;                    ///< Hodges-Lehmann ratio and its (1 - alpha) interval
  std::optional<double> p_value;                         ///< Mann-Whitney, two-sided
  std::optional<double> p_adjusted;                      ///< Benjamini-Hochberg over every compared point
  std::optional<double> base_median_s, new_median_s;     ///< of the raw samples, even with normalize
  std::optional<std::size_t> base_samples, new_samples;  ///< sample counts (set whenever both are ok)
  bool host_sensitive = false;                           ///< either record is timed live and sync- or launch-bound
  bool shared = false;  ///< not compared: another process held the device on a side (case C23; `reason` names it)
  std::optional<WelchLog> process;  ///< Welch's t on the per-process medians (both sides pooled)
  /// process's ratio with its (1 - alpha) Welch interval (welch_log_interval): the process-level evidence.
  std::optional<RatioEstimate> process_interval;
  /// The process-level p of this point's family: process->p_value, or for a host-adjusted point the smallest of
  /// its three tests times 3 (Bonferroni); process_p_adjusted is Benjamini-Hochberg of it over the pooled points.
  std::optional<double> process_family_p, process_p_adjusted;
  /// process's interval at the false-coverage-rate level 1 - R alpha / m of the R points of m that pass BH
  /// (Benjamini & Yekutieli 2005): slower / faster needs it wholly beyond the minimum effect.
  std::optional<RatioEstimate> process_selected_interval;
  std::pair<std::size_t, std::size_t> process_counts{0, 0};  ///< processes pooled, base and new
  std::vector<double> base_process_s, new_process_s;         ///< the per-process medians compared (seconds, or scaled)
  /// The machine taken out: each process's median divided by that process's calibrated ceiling for the point's
  /// bound (launch: its GPU-side launch time; memory: times its read or copy bandwidth; compute: times its FP32
  /// FMA rate), Welch on their logs with the noise floor, and its (1 - alpha) interval. nullopt where a side has
  /// no per-process calibration (an older pooled run, one process) or the bound has no ceiling (sync: the host
  /// probe's gate, unknown).
  std::optional<WelchLog> normalized;
  std::optional<RatioEstimate> normalized_interval;
  std::string normalized_by;                            ///< the calibration used, e.g. "launch.eager_queued_time_s"
  std::vector<double> base_normalized, new_normalized;  ///< the bound-normalised process medians
  double normalized_elasticity = kNoValue;  ///< the fitted share of the time that moves with the ceiling, [0, 1]
  /// The two sides ran on different physical GPUs (environment.device.uuid) and the point has the normalised
  /// comparison: it is judged on that alone (case C24, docs/diff.md "Across GPUs"), and its process family p-value and
  /// selection-adjusted interval are the normalised test's.
  bool across_gpus = false;
  std::optional<HostAdjusted> host_adjusted;  ///< host_adjusted_tests (host-sensitive, every process probed)
  std::optional<Gate> gate;                   ///< set when the samples were compared
};

/// A point on one side only: {id, key, status}.
struct DiffPointStub {
  std::string id, key;
  Status status = Status::ok;
};

/// A matched point whose status differs; `reason` is the new record's.
struct DiffStatusChange {
  std::string id, key;
  Status base_status = Status::ok, new_status = Status::ok;
  std::optional<std::string> reason;
};

/// What a side's environment was, as compared: (name, value) in output order; nullopt when no header has it.
struct DiffEnvironmentSide {
  std::vector<std::pair<std::string, std::optional<std::string>>> text;  ///< gpu, driver_version, ...
  std::vector<std::pair<std::string, std::optional<double>>> numbers;    ///< calibrated ceilings (SI), clocks
};

/// Counts over the matched points (and the new / missing ones).
struct DiffSummary {
  std::size_t matched = 0, compared = 0, same = 0, slower = 0, faster = 0, inconclusive = 0, status_changed = 0,
              not_compared = 0, added = 0, missing = 0;
  std::size_t host_sensitive_changes = 0;  ///< slower / faster verdicts on host-sensitive points
  std::size_t shared = 0;  ///< not compared: another process held the device on one side or both (case C23)
};

/// How much a comparison can be trusted: the noise floor it assumed (the minimum effect) and, from the points pooled
/// from lab.processes, the one it measured: per point and side the standard deviation of the log process medians
/// (about the relative spread of a process's level), summarised over the points.
struct DiffNoise {
  double assumed_rel = kNoValue;    ///< the minimum effect, a fraction
  std::size_t measured_points = 0;  ///< point-sides with >= 2 processes
  double median_rel = kNoValue;     ///< median over them of the sd of log process medians
  double p90_rel = kNoValue;        ///< its 90th percentile
};

/// The outcome of diff_results(): every decision, nothing rendered. to_json(DiffResult) gives the `--format
/// json` object; diff_table and diff_markdown render it as text.
struct DiffResult {
  DiffOptions options;
  std::vector<std::string> warnings;  ///< environment warnings, in order
  DiffEnvironmentSide base_environment, new_environment;
  std::vector<DiffPoint> points;       ///< matched points in the base's order of first appearance
  std::vector<DiffPointStub> added;    ///< in the new side only, in its order
  std::vector<DiffPointStub> missing;  ///< in the base side only, in its order
  std::vector<DiffStatusChange> status_changes;
  DiffSummary summary;
  DiffNoise noise;
  /// The host difference the host-sensitive points measured: the median over them of HostAdjusted::probe_ratio
  /// (new against base), and how many of them lay beyond the 3% of hosts alike; unset without such points.
  std::optional<double> host_probe_ratio;
  std::size_t hosts_differ_points = 0, host_probed_points = 0;
  /// What each side's headers say of its host, beside the probe: CPU models and sync-wait modes (distinct values
  /// joined by ", "; "" when not recorded) and the median 1-minute load average over its processes (NaN when not
  /// recorded).
  struct HostSide {
    std::string cpu_model, sync_wait;
    double load_average_1m = std::numeric_limits<double>::quiet_NaN();
  } base_host, new_host;
  bool regression = false;  ///< per options.fail_on
};

/// Compares two sets of runs point by point.
///
/// `base` and `current` are the runs of one or more result files each (load_results(); shards: several runs
/// are fine; each point belongs to its run's header). Points are matched by `id` (a hash of experiment,
/// variant and axis values). If one side holds an id twice (overlapping shards), the later record wins and the
/// point keeps the position of its first appearance.
///
/// Timing samples are `timing.device_samples_s` when not empty, else `timing.wall_samples_s` (seconds).
/// Verdict of a point (`reason` says why for every verdict but same/slower/faster):
///  - both statuses `ok`: from the Hodges-Lehmann ratio new/base and its (1 - alpha) interval [lo, hi], the
///    Mann-Whitney p-value and its Benjamini-Hochberg adjustment p_adj over every ok/ok point with a p-value,
///    and e = min_effect:
///      `slower`        p_adj <= alpha and lo > 1 + e
///      `faster`        p_adj <= alpha and hi < 1 / (1 + e)
///      and, when both records come from lab.processes runs (timing.processes.time_s, >= 2 each), the
///      processes' medians must differ too: Welch's t on their logs with p <= alpha (`process`), else
///      `inconclusive` (the change is within the variation between processes). For a host_sensitive point whose
///      processes all probed the host (timing.processes.host_probe_time_s) instead: both host_adjusted_tests
///      ratios beyond the minimum effect in the verdict's direction, and one of the raw, per-probe and covariate
///      Welch p-values <= alpha / 3 (`host_adjusted`)
///      `same`          1 / (1 + e) <= lo and hi <= 1 + e
///      `inconclusive`  otherwise; also fewer than 3 samples on a side, or a sample that is not a finite
///                      positive number (C14: "NaN"/"Infinity" are read, never crash), or no samples at all
///  - statuses differ (e.g. ok -> incorrect): `status_changed`, also listed in `status_changes`
///  - same non-ok status on both sides (e.g. capture_unsupported): `not_compared`
///
/// Environment warnings: GPU name, driver, CUDA runtime, build type or a lab setting differ; a calibrated
/// ceiling (copy and read bandwidth, FP32 FMA and BF16 GEMM rate) differs by more than 5%; the host's speed
/// (calibrated eager launch time, and its GPU-side queued cost) by more than 5%; the median SM clock seen by
/// the points (device_state before/after) differs by more than 2%; device samples compared with wall samples;
/// a side with fewer points than its headers' point_count (a run killed part-way); runs whose every point a
/// later record replaced (their headers are left out). Under fail_on=any, missing points or an incomplete new
/// run are a regression.
///
/// @throws std::invalid_argument for options out of range, no point in common between the sides, or
/// `normalize` with a point whose header has no finite positive calibration.copy.bandwidth_Bps.
DiffResult diff_results(const std::vector<Run>& base, const std::vector<Run>& current, const DiffOptions& options);

// ---- Outputs (src/diff/diff_{json,table,markdown}.cpp)
// --------------------------------------------------------------------------

/// The `--format json` object (ordered): {"type": "diff", "schema_version", "options", "environment":
/// {"warnings": [...], "base": {...}, "new": {...}}, "points": [{id, key, variant, axes, base_status,
/// new_status, verdict, reason, ratio, ratio_ci_low, ratio_ci_high, p_value, p_adjusted, base_median_s,
/// new_median_s, base_n, new_n, host_sensitive, process_p, process_ratio, host_adjusted {per_probe_ratio,
/// per_probe_p, elasticity, covariate_ratio, covariate_p, probe_ratio, slope, slope_se, adjusted_ratio,
/// adjusted_log_se, adjusted_df}, gate}], "new": [{id, key, status}], "missing": [...],
/// "status_changes": [{id, key, base_status, new_status, reason}], "summary": {matched, compared, same, slower,
/// faster, inconclusive, status_changed, not_compared, new, missing, host_sensitive_changes}, "regression"}.
/// base_n / new_n are sample counts. Numbers go through json_real (non-finite as strings); a statistic that was
/// not computed is null.
Json to_json(const DiffResult& diff);

/// Aligned plain text: environment warnings, then one row per point that is not `same` (and not
/// `not_compared`) unless `all_rows`, worst first (status change, slower, faster, inconclusive; the biggest
/// change first within each), then a summary line. The column "samples" holds the sample counts base/new.
std::string diff_table(const DiffResult& diff, bool all_rows = false);

/// Markdown to paste into a pull request: a verdict headline, the counts, environment warnings, a table of the
/// status-change / slower / faster rows (change and interval in %, BH-adjusted p), the inconclusive rows folded
/// in a <details> block, and the new / missing points.
std::string diff_markdown(const DiffResult& diff);

/// diff's outputs (output.hpp), one file each, listed in outputs() (src/commands/output_table.hpp) as `--format`
/// table (diff_table, the default; diff_table.cpp), markdown (diff_markdown; diff_markdown.cpp), json (to_json,
/// indented by 2, then a newline; diff_json.cpp) and html (a self-contained page with a forest plot of the ratios,
/// html_page.hpp and docs/html.md; diff_html.cpp).
std::unique_ptr<Output> make_diff_table_output();
std::unique_ptr<Output> make_diff_markdown_output();
std::unique_ptr<Output> make_diff_json_output();
std::unique_ptr<Output> make_diff_html_output();

// ---- The command's exit codes (the command: cmd_diff in src/commands/commands.hpp) ---------------------------

/// Exit codes of cmd_diff (and of `labrun diff`).
enum DiffExit : int {
  kDiffNoRegression = 0,  ///< compared; no regression per fail_on
  kDiffRegression = 1,    ///< compared; a regression per fail_on
  kDiffBadInput = 2,      ///< a file unreadable, not JSONL, without a header or points; bad options or format
  kDiffOutput = 4,        ///< -o FILE exists (no --force) or cannot be written; nothing written (kExitOutput)
};

}  // namespace labrun
