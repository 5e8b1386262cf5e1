// labrun diff: compares the results of two runs (say, two commits) point by point and decides, for each point,
// whether the new run is slower, faster, the same, or whether the samples cannot tell — with the rate of false
// "slower" verdicts over a whole sweep held at alpha (Benjamini-Hochberg). Host code only; docs/diff.md.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include "record.hpp"

namespace labrun {

// ---- Statistics -------------------------------------------------------------------------------------------

/// Quantile function of the standard normal distribution: the z with Phi(z) = p, for p in (0, 1).
/// Acklam's rational approximation (P. J. Acklam, "An algorithm for computing the inverse normal cumulative
/// distribution function", 2003; relative error 1.15e-9) refined by one Halley step on erfc, which brings it
/// to about double precision. @throws std::invalid_argument unless 0 < p < 1.
double normal_quantile(double p);

/// How mann_whitney() computes its p-value.
enum class MannWhitneyMethod {
  automatic,  ///< exact when there are no ties and n + m <= kMannWhitneyExactMaxTotal, otherwise normal
  normal,     ///< normal approximation with tie correction and continuity correction
  exact,      ///< exact null distribution; @throws std::invalid_argument if there are ties or n + m is too big
};

/// Largest n + m for which the exact distribution is computed: every count of arrangements, C(40, 20) at most,
/// is an integer below 2^53 and so exact in a double.
inline constexpr std::size_t kMannWhitneyExactMaxTotal = 40;

/// Result of the Mann-Whitney U (Wilcoxon rank-sum) test of two independent samples.
struct MannWhitney {
  double u = 0;        ///< U of the first sample: #pairs (a_i, b_j) with a_i > b_j plus half the tied pairs
  double p_value = 1;  ///< two-sided p-value, in [0, 1]
  bool exact = false;  ///< true when p_value comes from the exact null distribution
};

/// Two-sided Mann-Whitney U test of `a` against `b` (H. B. Mann & D. R. Whitney, Ann. Math. Statist. 18, 1947;
/// M. Hollander & D. A. Wolfe, Nonparametric Statistical Methods, 2nd ed., 1999, section 4.1).
/// Normal approximation: mean nm/2, variance nm/12 * ((N + 1) - sum(t^3 - t) / (N(N - 1))) over tie groups of
/// size t, N = n + m (tie correction); z = max(0, |U - nm/2| - 1/2) / sd (continuity correction);
/// p = 2 (1 - Phi(z)); p = 1 when every value is tied. Exact: the null distribution of U is the coefficient
/// list of the Gaussian binomial [N choose n]_q; p = min(1, 2 P(U <= min(U, nm - U))).
/// Note that with 3 vs 3 values the smallest exact two-sided p is 2/20 = 0.1, so no such pair is significant.
/// @param a, b  samples in any unit (only the order matters), non-empty, every value finite.
/// @throws std::invalid_argument on an empty sample or a non-finite value, or (exact) ties / n + m too big.
MannWhitney mann_whitney(const std::vector<double>& a, const std::vector<double>& b,
                         MannWhitneyMethod method = MannWhitneyMethod::automatic);

/// Benjamini-Hochberg adjusted p-values (Y. Benjamini & Y. Hochberg, J. R. Statist. Soc. B 57, 1995), in the
/// order given: with p sorted ascending and m = p_values.size(), adj_(i) = min over j >= i of min(1, m p_(j) / j)
/// (step-up, so the adjusted values are monotone in p). Rejecting every adj <= alpha holds the false discovery
/// rate at alpha. @throws std::invalid_argument for a value outside [0, 1] (NaN included).
std::vector<double> benjamini_hochberg(const std::vector<double>& p_values);

/// Hodges-Lehmann estimate of the ratio new / base, with its distribution-free confidence interval.
struct RatioEstimate {
  double ratio = 1;    ///< exp(median of log(new_j) - log(base_i) over all n*m pairs)
  double ci_low = 0;   ///< exp(D_(k)); 0 when the samples are too few for the confidence level (k < 1)
  double ci_high = 0;  ///< exp(D_(nm-k+1)); +infinity when k < 1
};

/// Hodges-Lehmann shift estimate on log times, i.e. a ratio (J. L. Hodges & E. L. Lehmann, Ann. Math. Statist.
/// 34, 1963; Hollander & Wolfe, 2nd ed., sections 4.2-4.3). D_(1) <= ... <= D_(nm) are the sorted pairwise
/// differences log(current_j) - log(base_i). The interval is [D_(k), D_(nm-k+1)] (1-based) with
/// k = floor(nm/2 - z sqrt(nm (n + m + 1) / 12)), z = Phi^-1(1 - (1 - confidence)/2): the normal approximation
/// of U's critical value. Time and memory O(n m).
/// @param base, current  times (any one unit, e.g. seconds), non-empty, every value finite and > 0.
/// @param confidence     in (0, 1), e.g. 0.95.
/// @throws std::invalid_argument on an empty sample, a value that is not finite and positive, or a bad level.
RatioEstimate hodges_lehmann_ratio(const std::vector<double>& base, const std::vector<double>& current,
                                   double confidence);

/// Two-sided p-value of Student's t statistic `t` with `df` > 0 degrees of freedom (df need not be an integer):
/// I_{df/(df+t^2)}(df/2, 1/2), the regularized incomplete beta function (Abramowitz & Stegun 26.7.1 with
/// 26.5.2), evaluated by its continued fraction (Numerical Recipes, 3rd ed., section 6.4). NaN for df <= 0.
double student_t_two_sided_p(double t, double df);

/// Welch's t-test on log times: does the new side's mean log time differ from the base's? Used on the
/// per-process medians of a lab.processes run, where the process, not the sample, is the unit of replication.
struct WelchLog {
  double ratio = 1;    ///< exp(mean log new - mean log base)
  double p_value = 1;  ///< two-sided; 0 when both sides are constant and differ, 1 when they are equal
  double df = 0;       ///< Welch-Satterthwaite degrees of freedom
};
/// @param base, current  at least 2 values each, every one finite and > 0.
/// @throws std::invalid_argument otherwise.
WelchLog welch_log_test(const std::vector<double>& base, const std::vector<double>& current);

/// A host-sensitive point's per-process medians with the host's speed taken out two ways, each tested with
/// welch_log_test (docs/diff.md "Host-sensitive points"):
///  - per_probe:  time / host probe (the whole time scales with the host);
///  - covariate:  log time - b (log probe - mean log probe), b the elasticity, the pooled within-side slope of log
///                time on log probe (analysis of covariance with a common slope), clamped to [0, 1]; 1 where the
///                probes do not vary within either side. Only the part of the time that moves with the host
///                is scaled. (The slope's own degree of freedom is not deducted: an approximation.)
struct HostAdjusted {
  WelchLog per_probe;
  WelchLog covariate;
  double elasticity = 1;
};
/// @param base_time, base_probe, new_time, new_probe  per-process medians (seconds) and host probe medians
///        (seconds per round trip) in process order; each pair of one length >= 2, every value finite and > 0.
/// @throws std::invalid_argument otherwise.
HostAdjusted host_adjusted_tests(const std::vector<double>& base_time, const std::vector<double>& base_probe,
                                 const std::vector<double>& new_time, const std::vector<double>& new_probe);

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
