// The statistics of labrun, in one unit: summaries of timing samples (quantiles, summarize, the median's
// confidence interval; src/stats/stats.cpp) and the tests that compare two samples (normal quantile, Mann-Whitney U
// with its exact null distribution, Student's t p-value, Welch's t on logs, the host-adjusted tests,
// Benjamini-Hochberg, the Hodges-Lehmann ratio with its interval; src/stats/stats_tests.cpp). Pure functions of
// vectors of doubles: no records, no I/O. Host code, unit-tested against hand-computed and published values
// (tests/test_stats.cpp).
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "record.hpp"

namespace labrun {

/// Summary of a sample of times (seconds). Quantiles use linear interpolation between order statistics
/// (Hyndman & Fan 1996, definition 7 — the default of R and numpy).
struct Summary {
  std::size_t count = 0;
  double median = 0, mean = 0, stddev = 0, min = 0, max = 0;
  double p5 = 0, p25 = 0, p75 = 0, p95 = 0;
  double rel_iqr = 0;  ///< (p75 - p25) / median; 0 when median is 0
  /// Distribution-free 95% confidence interval of the median: the order statistics [x_(k), x_(n+1-k)]
  /// (1-based) with k = median_ci_rank(n, 0.95), whose exact coverage is at least 95% for every n >= 6
  /// (Conover, Practical Nonparametric Statistics, 3rd ed., section 3.2, from the binomial itself, not its
  /// normal approximation). Equal to [min, max] for n < 6, since no narrower interval reaches 95% there.
  double ci_low = 0, ci_high = 0;
  /// (ci_high - ci_low) / (2 * median): the relative half-width the adaptive stop compares with its target;
  /// +inf for n < 6 or median 0.
  double ci_rel_halfwidth = 0;
  /// Values whose modified z-score 0.6745 * |x - median| / MAD exceeds 3.5 (Iglewicz & Hoaglin, How to
  /// Detect and Handle Outliers, 1993). Counted, never removed. 0 when MAD is 0.
  std::size_t outliers = 0;
};

/// Quantile q in [0, 1] of `sorted` (ascending, non-empty), Hyndman-Fan definition 7.
double quantile_sorted(const std::vector<double>& sorted, double q);
/// Median of `values` (any order, non-empty): quantile_sorted of the sorted copy at 0.5, i.e. the mean of the
/// middle two for an even count.
double median(std::vector<double> values);

/// The rank k of the distribution-free confidence interval of a median of n samples: the largest k with
/// P(B <= k - 1) <= (1 - confidence) / 2 for B ~ Binomial(n, 1/2), so that [x_(k), x_(n+1-k)] (1-based order
/// statistics) covers the median with probability 1 - 2 P(B <= k - 1) >= confidence. 0 when no such interval
/// exists (n < 6 at 95%).
std::size_t median_ci_rank(std::size_t n, double confidence);

/// Summary of `values`. Sample standard deviation uses n - 1 (0 for a single value).
/// @throws std::invalid_argument if `values` is empty.
Summary summarize(std::vector<double> values);

/// Summary as JSON with keys `<name>_<unit>` e.g. median_time_s when unit = "time_s".
Json to_json(const Summary& s, const std::string& unit_suffix);

// ---- Tests of two samples (src/stats/stats_tests.cpp) -------------------------------------------------------------

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

/// Number of arrangements of n a's and m b's with U = u, for u = 0..nm (the null distribution of U times
/// C(n + m, n)): the coefficients of the Gaussian binomial [n+m choose n]_q = prod_{i=1..n} (1 - q^(m+i)) /
/// (1 - q^i) (G. E. Andrews, The Theory of Partitions, 1976, chapter 3). After step i the list holds
/// [m+i choose i]_q, a polynomial of degree i*m with integer coefficients, so every value is an exact integer
/// in a double while n + m <= kMannWhitneyExactMaxTotal. E.g. n = m = 2: {1, 1, 2, 1, 1}; the list sums to
/// C(n + m, n). @return nm + 1 counts (just {1} when n or m is 0).
std::vector<double> mann_whitney_null_counts(std::size_t n, std::size_t m);

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

/// Two times compared from their summaries alone (another tool's results imported without samples: a mean, a standard
/// deviation and a count per side, seconds): the ratio of the means new / base with its `confidence` interval, and the
/// two-sided p-value of no change. On log scale, by the delta method (Casella & Berger, Statistical Inference, 2nd
/// ed., 5.5.4): var(log mean) = (sd / mean)^2 / n; the difference of the logs is taken as normal (a large-sample
/// z-test). It assumes independent samples: where the tool's samples drift or correlate, the interval is narrower
/// than the truth (docs/diff.md "Imported results").
struct SummaryTest {
  RatioEstimate ratio;  ///< new mean / base mean, [low, high]
  double p_value = 1;
};
/// @throws std::invalid_argument unless both means are finite and positive, both sds finite and >= 0, both counts
/// >= 2, and 0 < confidence < 1.
SummaryTest summary_test(double base_mean_s, double base_sd_s, std::int64_t base_count, double new_mean_s,
                         double new_sd_s, std::int64_t new_count, double confidence);

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

/// The regularized incomplete beta function I_x(a, b) = B(x; a, b) / B(a, b) (Abramowitz & Stegun 26.5.1), for
/// a, b > 0: 0 for x <= 0, 1 for x >= 1, otherwise the continued fraction 26.5.8 by the modified Lentz method
/// (Numerical Recipes, 3rd ed., section 6.4, betai/betacf), on x or, by I_x(a, b) = 1 - I_{1-x}(b, a), on 1 - x,
/// whichever converges (x < (a + 1) / (a + b + 2)); relative accuracy about 1e-14. NaN for a or b <= 0 or NaN x.
double regularized_incomplete_beta(double a, double b, double x);

/// Two-sided p-value of Student's t statistic `t` with `df` > 0 degrees of freedom (df need not be an integer):
/// I_{df/(df+t^2)}(df/2, 1/2), the regularized incomplete beta function (Abramowitz & Stegun 26.7.1 with
/// 26.5.2), evaluated by its continued fraction (Numerical Recipes, 3rd ed., section 6.4). NaN for df <= 0.
double student_t_two_sided_p(double t, double df);

/// Welch's t-test on log times: does the new side's mean log time differ from the base's? Used on the
/// per-process medians of a lab.processes run, in which the process, not the sample, is the unit of replication.
struct WelchLog {
  double ratio = 1;    ///< exp(mean log new - mean log base)
  double p_value = 1;  ///< two-sided; 0 when both sides are constant and differ, 1 when they are equal
  double df = 0;       ///< Welch-Satterthwaite degrees of freedom
  double log_se = 0;   ///< standard error of the difference of mean logs (0: both sides constant)
};

/// The two-sided t quantile: the t >= 0 with student_t_two_sided_p(t, df) = p, by bisection to 1e-10 relative.
/// @param p in (0, 1]; df > 0. @throws std::invalid_argument otherwise.
double student_t_quantile_two_sided(double p, double df);

/// The (confidence) interval of WelchLog::ratio: exp(log ratio -+ t_{df} * log_se), the Welch interval on the
/// mean log, i.e. on the geometric-mean ratio of the processes (a degenerate [ratio, ratio] when log_se is 0).
/// @param confidence in (0, 1). @throws std::invalid_argument otherwise.
RatioEstimate welch_log_interval(const WelchLog& w, double confidence);
/// @param base, current  at least 2 values each, every one finite and > 0.
/// @param min_log_sd  a floor under each side's standard deviation of the logs (0: none); labrun diff passes the
///        median over a run's pooled points, so a point whose few processes happened to agree is not judged surer
///        than the run's processes are (a random-effects view, docs/diff.md).
/// @throws std::invalid_argument otherwise.
WelchLog welch_log_test(const std::vector<double>& base, const std::vector<double>& current, double min_log_sd = 0);

/// Times with a covariate taken out by analysis of covariance with a common slope: log t - b (log c - mean log c),
/// b the pooled within-side slope of log time on log covariate clamped to [0, 1] (1 when the covariates do not
/// vary within either side), the mean over both sides. Used with the host probe (host_adjusted_tests) and with a
/// process's calibrated ceiling (labrun diff's bound-normalised comparison, docs/diff.md).
struct CovariateAdjusted {
  double elasticity = 1;              ///< b
  std::vector<double> base, current;  ///< the adjusted times, seconds (same order as the inputs)
};
/// @throws std::invalid_argument when times and covariates differ in count or a value is not finite and positive.
CovariateAdjusted covariate_adjust(const std::vector<double>& base_time, const std::vector<double>& base_covariate,
                                   const std::vector<double>& new_time, const std::vector<double>& new_covariate);

/// A host-sensitive point's per-process medians with the host's speed taken out two ways, each tested with
/// welch_log_test (docs/diff.md "Host-sensitive points"):
///  - per_probe:  time / host probe (the whole time scales with the host);
///  - covariate:  log time - b (log probe - mean log probe), b the elasticity, the pooled within-side slope of log
///                time on log probe (analysis of covariance with a common slope), clamped to [0, 1]; 1 when the
///                probes do not vary within either side. Only the part of the time that moves with the host
///                is scaled. (The slope's own degree of freedom is not deducted: an approximation.)
struct HostAdjusted {
  WelchLog per_probe;
  WelchLog covariate;
  double elasticity = 1;
  /// The host difference: exp(mean log probe new - mean log probe base), the ratio of the sides' host probes.
  double probe_ratio = 1;
  /// The change with the host's speed taken out by analysis of covariance with a common, unclamped slope
  /// (Snedecor & Cochran, Statistical Methods, 8th ed., 18.3): slope b = Sxy / Sxx (pooled within-side sums of
  /// log time on log probe), its standard error sqrt(s2 / Sxx), the adjusted log change
  /// d = (mean log time new - base) - b (mean log probe new - base) and its standard error
  /// sqrt(s2 (1/n_base + 1/n_new + (mean log probe new - base)^2 / Sxx)), which counts the slope's uncertainty;
  /// s2 = the residual variance on n_base + n_new - 3 degrees of freedom. Undetermined (slope NaN, se infinite)
  /// when the probes do not vary within the sides or there are fewer than 4 processes in all.
  double slope = std::numeric_limits<double>::quiet_NaN();
  double slope_se = std::numeric_limits<double>::infinity();
  double adjusted_ratio = 1;  ///< exp(d)
  double adjusted_log_se = std::numeric_limits<double>::infinity();
  double adjusted_df = 0;
  /// sqrt(s2 (1/n_base + 1/n_new)): adjusted_log_se without the slope's term, for an interval whose elasticity is
  /// given as a range (host_adjusted_interval, when the probes do not overlap).
  double residual_log_se = std::numeric_limits<double>::infinity();
  /// Whether the sides' ranges of process probes [min, max] overlap: the host difference lies within the host
  /// speeds the processes observed, and the fitted slope interpolates. When they do not, the slope (fitted on the
  /// sides' own, small and differently caused variation) would be extrapolated to the host difference, and
  /// host_adjusted_interval widens the elasticity to a range instead (docs/diff.md, "Across hosts").
  bool probes_overlap = true;
  /// The sides' calibrated eager launch times, new against base (medians over each side's headers; 1 when either
  /// side has none). An iteration that launches many kernels while the host waits on it moves with the host's
  /// launch path, which the one-round-trip probe can under-read (measured on two H100 hosts: probe +9%, eager
  /// launch +30%, eager `index` at n = 1e5 with 8 downstream launches +17-43%; results/h100/fleet/five-processes/).
  /// When the probes do not overlap, host_elasticity_range lets the elasticity reach log(launch_ratio) /
  /// log(probe_ratio).
  double launch_ratio = 1;
  /// Whether the sides' calibrated eager launch moved beyond their processes' spread: a Welch test on the log of
  /// each process's `launch.eager_time_s` (p below the diff's alpha), in the probe's direction and further than
  /// it. The probes may then overlap while the launch path moved past anything the sides' own variation spans
  /// (measured on two H100s: probe +13-18%, probes overlapping, calibrated eager launch +28%, eager `index` at
  /// n = 1e7 +20-29% with a fitted slope of 0.45-0.5; results/h100/fleet/), and host_elasticity_range lets the
  /// elasticity reach the launch's as well (for slower/faster; labrun diff judges `same` on the fitted slope).
  /// False when either side has fewer than two processes' calibrations.
  bool launch_moved = false;
};

/// The elasticity range an across-host interval allows, at `confidence`: [slope -+ t se] when the probes overlap
/// (reaching up to log(launch_ratio) / log(probe_ratio) as well when launch_moved); otherwise [min(0, slope - t se),
/// max(1, slope + t se)]: a point's host part can be none of its time or all of it, moving as the probe does, or as the
/// calibrated eager launch does (launch_ratio), and beyond that only as far as the slope itself was measured to go.
/// Why: measured on the H200 (docs/diff.md, "Across hosts"), a slope fitted within sides of 0.26 +- 0.07 against a time
/// that moved with elasticity 0.70 between a normal and a blocking-sync host (probe x2.7). {NaN, NaN} when the slope is
/// undetermined.
std::pair<double, double> host_elasticity_range(const HostAdjusted& h, double confidence);

/// The interval of HostAdjusted::adjusted_ratio at `confidence`: exp(d -+ t_{df} se) when the probes overlap and
/// the launch did not move (launch_moved); otherwise the hull over the elasticity range (host_elasticity_range) of
/// exp(dy - b dx -+ t_{df} residual_log_se), dy and dx the sides' differences of mean log time and log probe. [0, inf]
/// when it is undetermined. @throws std::invalid_argument for a confidence outside (0, 1).
RatioEstimate host_adjusted_interval(const HostAdjusted& h, double confidence);
/// @param base_time, base_probe, new_time, new_probe  per-process medians (seconds) and host probe medians
///        (seconds per round trip) in process order; each pair of one length >= 2, every value finite and > 0.
/// @throws std::invalid_argument otherwise.
HostAdjusted host_adjusted_tests(const std::vector<double>& base_time, const std::vector<double>& base_probe,
                                 const std::vector<double>& new_time, const std::vector<double>& new_probe);

}  // namespace labrun
