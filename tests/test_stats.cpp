// Tests of the statistics (stats.hpp) against hand-computed and published values: summarize (Hyndman-Fan 7
// quantiles, sample standard deviation), the median's confidence interval that stops sampling, the batch size;
// and the tests of two samples: the normal quantile, Mann-Whitney U (normal and exact, its null counts),
// Benjamini-Hochberg, the Hodges-Lehmann ratio and its interval, the incomplete beta function and Student's t,
// Welch's t on logs and the host-adjusted tests.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "lab.hpp"
#include "stats.hpp"

namespace labrun {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// n values around `median` with lognormal noise of log-sd `sigma`.
std::vector<double> lognormal(std::mt19937_64& rng, std::size_t n, double median, double sigma) {
  std::lognormal_distribution<double> dist(std::log(median), sigma);
  std::vector<double> out(n);
  for (double& v : out) v = dist(rng);
  return out;
}

// {1,2,3,4,100} in any order: median 3, mean 22, sd sqrt(7610/4), p25 2, p75 4, p5 1.2, p95 80.8, IQR/median 2/3.
TEST(Stats, SummarizeHandComputed) {
  const Summary s = summarize({100, 3, 1, 4, 2});
  EXPECT_EQ(s.count, 5u);
  EXPECT_EQ(s.median, 3.0);
  EXPECT_EQ(s.mean, 22.0);
  EXPECT_EQ(s.min, 1.0);
  EXPECT_EQ(s.max, 100.0);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt((21.0 * 21 + 20.0 * 20 + 19.0 * 19 + 18.0 * 18 + 78.0 * 78) / 4.0));
  EXPECT_NEAR(s.stddev, 43.617656975128774, 1e-12);
  EXPECT_EQ(s.p25, 2.0);
  EXPECT_EQ(s.p75, 4.0);
  EXPECT_DOUBLE_EQ(s.p5, 1.2);    // h = 4 * 0.05 = 0.2: 1 + 0.2 * (2 - 1)
  EXPECT_DOUBLE_EQ(s.p95, 80.8);  // h = 4 * 0.95 = 3.8: 4 + 0.8 * (100 - 4)
  EXPECT_DOUBLE_EQ(s.rel_iqr, 2.0 / 3.0);
}

// Hyndman-Fan 7 on an even count interpolates: median of {1,2,3,4} is 2.5, p25 = 1.75, p75 = 3.25.
TEST(Stats, QuantileInterpolatesBetweenOrderStatistics) {
  const std::vector<double> sorted = {1, 2, 3, 4};
  EXPECT_EQ(quantile_sorted(sorted, 0.5), 2.5);
  EXPECT_EQ(quantile_sorted(sorted, 0.25), 1.75);
  EXPECT_EQ(quantile_sorted(sorted, 0.75), 3.25);
  EXPECT_EQ(quantile_sorted(sorted, 0.0), 1.0);
  EXPECT_EQ(quantile_sorted(sorted, 1.0), 4.0);
  EXPECT_EQ(summarize({4, 1, 3, 2}).median, 2.5);
}

// One value: every location statistic is that value, stddev 0 (n - 1 = 0), rel_iqr 0.
TEST(Stats, SummarizeSingleValue) {
  const Summary s = summarize({2.5e-6});
  EXPECT_EQ(s.count, 1u);
  EXPECT_EQ(s.median, 2.5e-6);
  EXPECT_EQ(s.mean, 2.5e-6);
  EXPECT_EQ(s.min, 2.5e-6);
  EXPECT_EQ(s.max, 2.5e-6);
  EXPECT_EQ(s.p5, 2.5e-6);
  EXPECT_EQ(s.p95, 2.5e-6);
  EXPECT_EQ(s.stddev, 0.0);
  EXPECT_EQ(s.rel_iqr, 0.0);
}

// No values is an error, not a summary of zeros; a zero median gives rel_iqr 0, not NaN.
TEST(Stats, SummarizeEmptyThrowsAndZeroMedianHasZeroRelIqr) {
  EXPECT_THROW(summarize({}), std::invalid_argument);
  EXPECT_EQ(summarize({0, 0, 0, 1}).rel_iqr, 0.0);
}

// to_json names keys <stat>_<unit> and keeps the values.
TEST(Stats, SummaryJsonKeys) {
  const Json j = to_json(summarize({100, 3, 1, 4, 2}), "time_s");
  EXPECT_EQ(j["count"], 5);
  EXPECT_EQ(j["median_time_s"].get<double>(), 3.0);
  EXPECT_EQ(j["mean_time_s"].get<double>(), 22.0);
  EXPECT_EQ(j["p25_time_s"].get<double>(), 2.0);
  EXPECT_EQ(j["max_time_s"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(j["rel_iqr"].get<double>(), 2.0 / 3.0);
}

// Fewer than 6 values: +inf (sampling never stops on the CI target) and the interval is [min, max].
TEST(Stats, MedianCiInfiniteBelowSixValues) {
  EXPECT_EQ(median_ci_rel_halfwidth({}), kInf);
  EXPECT_EQ(median_ci_rel_halfwidth({1}), kInf);
  EXPECT_EQ(median_ci_rel_halfwidth({1, 2, 3, 4, 5}), kInf);
  const Summary s = summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(s.ci_low, 1.0);
  EXPECT_EQ(s.ci_high, 5.0);
  EXPECT_EQ(s.ci_rel_halfwidth, kInf);
}

// Values 1..11: P(B <= 1) = 12/2048 <= 2.5% < P(B <= 2) = 67/2048 for B ~ Bin(11, 1/2), so k = 2: the 2nd and
// 10th order statistics (2 and 10; coverage 1 - 24/2048 = 98.8%), median 6: (10 - 2) / (2 * 6) = 8/12.
TEST(Stats, MedianCiOneToEleven) {
  const std::vector<double> v = {11, 1, 10, 2, 9, 3, 8, 4, 7, 5, 6};
  EXPECT_DOUBLE_EQ(median_ci_rel_halfwidth(v), 8.0 / 12.0);
  const Summary s = summarize(v);
  EXPECT_EQ(s.ci_low, 2.0);
  EXPECT_EQ(s.ci_high, 10.0);
  EXPECT_DOUBLE_EQ(s.ci_rel_halfwidth, 8.0 / 12.0);
}

// Values 1..6: P(B <= 0) = 1/64 <= 2.5% < P(B <= 1) = 7/64, k = 1: min and max (1 and 6), median 3.5: 5/7.
// Values 1..8: P(B <= 1) = 9/256 > 2.5%, k = 1 again (1 and 8; the normal approximation took 2 and 8, covering
// 94.5%), median 4.5: 7/9.
TEST(Stats, MedianCiClampsAndSmallCounts) {
  EXPECT_DOUBLE_EQ(median_ci_rel_halfwidth({1, 2, 3, 4, 5, 6}), 5.0 / 7.0);
  EXPECT_DOUBLE_EQ(median_ci_rel_halfwidth({1, 2, 3, 4, 5, 6, 7, 8}), 7.0 / 9.0);
}

// Identical samples give a zero-width interval; a zero median gives +inf rather than a division by zero.
TEST(Stats, MedianCiConstantAndZeroMedian) {
  EXPECT_EQ(median_ci_rel_halfwidth(std::vector<double>(20, 1e-3)), 0.0);
  EXPECT_EQ(median_ci_rel_halfwidth(std::vector<double>(20, 0.0)), kInf);
}

// 100 values 1..100: k = 40 (P(B <= 39) = 1.76% <= 2.5% < P(B <= 40) = 2.84%), the 40th and 61st order
// statistics (40 and 61), median 50.5: 21 / 101.
TEST(Stats, MedianCiHundredValues) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  EXPECT_DOUBLE_EQ(median_ci_rel_halfwidth(v), 21.0 / 101.0);
}

// ---- Tests of two samples -----------------------------------------------------------------------------------

// {1..5} vs {6..10}: U = 0, mean 12.5, variance 5*5*11/12, continuity-corrected z = 12/sqrt(275/12) = 2.5067,
// two-sided p = erfc(z / sqrt 2) = 0.0122. The exact null gives 2 / C(10, 5) = 2/252.
TEST(Stats, MannWhitneyHandChecked) {
  const std::vector<double> a = {1, 2, 3, 4, 5}, b = {6, 7, 8, 9, 10};
  const MannWhitney normal = mann_whitney(a, b, MannWhitneyMethod::normal);
  EXPECT_EQ(normal.u, 0.0);
  EXPECT_FALSE(normal.exact);
  const double z = (12.5 - 0.5) / std::sqrt(25.0 * 11.0 / 12.0);
  EXPECT_NEAR(normal.p_value, std::erfc(z / std::numbers::sqrt2), 1e-15);
  EXPECT_NEAR(normal.p_value, 0.0122, 1e-4);
  EXPECT_LT(normal.p_value, 0.02);

  const MannWhitney exact = mann_whitney(a, b);  // automatic: no ties, n + m = 10
  EXPECT_TRUE(exact.exact);
  EXPECT_NEAR(exact.p_value, 2.0 / 252.0, 1e-15);
  EXPECT_EQ(mann_whitney(b, a).u, 25.0);
  EXPECT_NEAR(mann_whitney(b, a).p_value, 2.0 / 252.0, 1e-15);
}

// With 3 vs 3 values the most extreme arrangement has exact probability 1/20 each side: p >= 0.1.
TEST(Stats, MannWhitneyThreeVersusThreeNeverSignificant) {
  const MannWhitney r = mann_whitney({1, 2, 3}, {4, 5, 6});
  EXPECT_TRUE(r.exact);
  EXPECT_NEAR(r.p_value, 0.1, 1e-15);
}

// {1,2,2,3} vs {2,3,4,5}: midranks 1, 3, 3, 5.5 for the first sample -> R = 12.5, U = 2.5. Tie groups of 3 and 2:
// sum(t^3 - t) = 30, variance 16/12 * (9 - 30/56), z = (|2.5 - 8| - 0.5) / sd.
TEST(Stats, MannWhitneyTieCorrection) {
  const MannWhitney r = mann_whitney({1, 2, 2, 3}, {2, 3, 4, 5});
  EXPECT_FALSE(r.exact);  // ties force the normal approximation
  EXPECT_EQ(r.u, 2.5);
  const double z = 5.0 / std::sqrt(16.0 / 12.0 * (9.0 - 30.0 / 56.0));
  EXPECT_NEAR(r.p_value, std::erfc(z / std::numbers::sqrt2), 1e-15);
  EXPECT_THROW(mann_whitney({1, 2, 2, 3}, {2, 3, 4, 5}, MannWhitneyMethod::exact), std::invalid_argument);
  EXPECT_EQ(mann_whitney({7, 7}, {7, 7, 7}).p_value, 1.0);  // all tied: no evidence
  EXPECT_THROW(mann_whitney({}, {1.0}), std::invalid_argument);
  EXPECT_THROW(mann_whitney({std::numeric_limits<double>::quiet_NaN()}, {1.0}), std::invalid_argument);
}

// Sorted 0.005, 0.01, 0.03, 0.04 -> m p / rank = 0.02, 0.02, 0.04, 0.04 (already monotone).
TEST(Stats, BenjaminiHochbergHandChecked) {
  const std::vector<double> adj = benjamini_hochberg({0.01, 0.04, 0.03, 0.005});
  ASSERT_EQ(adj.size(), 4u);
  EXPECT_NEAR(adj[0], 0.02, 1e-15);
  EXPECT_NEAR(adj[1], 0.04, 1e-15);
  EXPECT_NEAR(adj[2], 0.04, 1e-15);
  EXPECT_NEAR(adj[3], 0.02, 1e-15);
  // Step-up: 0.04 * 3/2 = 0.06 is lowered to the 0.05 of the rank above it; capped at 1.
  const std::vector<double> stepped = benjamini_hochberg({0.04, 0.05, 0.05, 0.9});
  EXPECT_NEAR(stepped[0], 0.0666666666666667, 1e-12);
  EXPECT_NEAR(stepped[1], 0.0666666666666667, 1e-12);
  EXPECT_NEAR(stepped[3], 0.9, 1e-15);
  EXPECT_TRUE(benjamini_hochberg({}).empty());
  EXPECT_THROW(benjamini_hochberg({std::numeric_limits<double>::quiet_NaN()}), std::invalid_argument);
}

TEST(Stats, HodgesLehmannRatioOfScaledSamples) {
  std::mt19937_64 rng(7);
  const std::vector<double> base = lognormal(rng, 20, 1e-3, 0.05);
  std::vector<double> scaled = base;
  for (double& v : scaled) v *= 1.1;
  const RatioEstimate r = hodges_lehmann_ratio(base, scaled, 0.95);
  EXPECT_NEAR(r.ratio, 1.1, 1e-12);
  EXPECT_LT(r.ci_low, 1.1);
  EXPECT_GT(r.ci_high, 1.1);
  // 3 vs 3 at 95%: k = floor(4.5 - 1.96 sqrt(5.25)) = 0 -> unbounded interval.
  const RatioEstimate tiny = hodges_lehmann_ratio({1, 2, 3}, {1.1, 2.2, 3.3}, 0.95);
  EXPECT_EQ(tiny.ci_low, 0.0);
  EXPECT_TRUE(std::isinf(tiny.ci_high));
  EXPECT_THROW(hodges_lehmann_ratio({1.0, 0.0}, {1.0}, 0.95), std::invalid_argument);
}

// 4 vs 4 at 95%: k = floor(8 - 1.96 sqrt(12)) = 1, so the interval is [min, max] of the 16 pairwise log ratios,
// here [1/8, 8]; their median is 0 (ratio 1).
TEST(Stats, HodgesLehmannIntervalOrderStatistics) {
  const std::vector<double> base = {1, 2, 4, 8}, current = {1, 2, 4, 8};
  const RatioEstimate r = hodges_lehmann_ratio(base, current, 0.95);
  EXPECT_NEAR(r.ratio, 1.0, 1e-15);
  EXPECT_NEAR(r.ci_low, 1.0 / 8.0, 1e-15);
  EXPECT_NEAR(r.ci_high, 8.0, 1e-14);
}

TEST(Stats, NormalQuantile) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-14);
  EXPECT_NEAR(normal_quantile(0.025), -1.959963984540054, 1e-14);
  EXPECT_EQ(normal_quantile(0.5), 0.0);
  EXPECT_NEAR(normal_quantile(1e-10), -6.361340902404056, 1e-12);
  EXPECT_THROW(normal_quantile(1.0), std::invalid_argument);
}

// Two-sided Student t p-values against table values (e.g. t_{0.975, 4} = 2.776445, t_{0.975, 1} = 12.7062).
TEST(Stats, StudentTTwoSidedP) {
  EXPECT_NEAR(student_t_two_sided_p(2.776445, 4), 0.05, 1e-6);
  EXPECT_NEAR(student_t_two_sided_p(12.7062, 1), 0.05, 1e-5);
  EXPECT_NEAR(student_t_two_sided_p(-2.228139, 10), 0.05, 1e-6);
  EXPECT_NEAR(student_t_two_sided_p(2.0, 10), 0.0733880, 1e-6);
  EXPECT_NEAR(student_t_two_sided_p(1.959964, 1e7), 0.05, 1e-5);  // the normal limit
  EXPECT_DOUBLE_EQ(student_t_two_sided_p(0, 3), 1.0);
  EXPECT_TRUE(std::isnan(student_t_two_sided_p(1, 0)));
}

// Welch on logs of {1.00, 1.02, 0.98} ms vs {1.10, 1.12, 1.09} ms, by hand: ratio exp(mean log new - mean log
// base) = 1.1034102, t = 7.0111393, Welch-Satterthwaite df = 3.5544288.
TEST(Stats, WelchLogTest) {
  const WelchLog w = welch_log_test({1.00e-3, 1.02e-3, 0.98e-3}, {1.10e-3, 1.12e-3, 1.09e-3});
  EXPECT_NEAR(w.ratio, 1.1034102, 1e-7);
  EXPECT_NEAR(w.df, 3.5544288, 1e-6);
  EXPECT_NEAR(w.p_value, student_t_two_sided_p(7.0111393, 3.5544288), 1e-7);
  EXPECT_LT(w.p_value, 0.01);
  EXPECT_DOUBLE_EQ(welch_log_test({1.0, 1.0}, {1.0, 1.0}).p_value, 1.0);
  EXPECT_DOUBLE_EQ(welch_log_test({1.0, 1.0}, {2.0, 2.0}).p_value, 0.0);
  EXPECT_THROW(welch_log_test({1.0}, {1.0, 2.0}), std::invalid_argument);
  EXPECT_THROW(welch_log_test({1.0, -1.0}, {1.0, 2.0}), std::invalid_argument);
}

// The elasticity is the within-side slope of log time on log probe: time = a * probe^0.5 on both sides gives
// 0.5, and a new side 20% slower at equal probes gives a covariate ratio of 1.2; the per-probe ratio also moves
// with the probes' own difference. Constant probes give elasticity 1; slopes outside [0, 1] are clamped.
TEST(Stats, HostAdjustedTestsRecoverTheElasticity) {
  const std::vector<double> pb = {10e-6, 12e-6, 14e-6}, pn = {11e-6, 13e-6, 15e-6};
  std::vector<double> tb, tn;
  for (double p : pb) tb.push_back(1e-3 * std::sqrt(p));
  for (double p : pn) tn.push_back(1.2e-3 * std::sqrt(p));
  const HostAdjusted h = host_adjusted_tests(tb, pb, tn, pn);
  EXPECT_NEAR(h.elasticity, 0.5, 1e-9);
  EXPECT_NEAR(h.covariate.ratio, 1.2, 1e-9);
  EXPECT_LT(h.covariate.p_value, 1e-6);
  EXPECT_GT(h.per_probe.ratio, 1.0);
  EXPECT_LT(h.per_probe.ratio, 1.2);  // the new side's slower probes take part of the change out
  EXPECT_DOUBLE_EQ(host_adjusted_tests({1, 2}, {3, 3}, {1, 2}, {3, 3}).elasticity, 1.0);
  EXPECT_DOUBLE_EQ(host_adjusted_tests({1, 4}, {1, 2}, {1, 4}, {1, 2}).elasticity, 1.0);  // slope 2, clamped
  EXPECT_THROW(host_adjusted_tests({1, 2}, {1}, {1, 2}, {1, 2}), std::invalid_argument);
  EXPECT_THROW(host_adjusted_tests({1, 2}, {1, 0}, {1, 2}, {1, 2}), std::invalid_argument);
}

// Case C24 (docs/diff.md "Across hosts"): the numbers of eager `index` at n = 1e5, density 0.7, 8 downstream launches,
// between two H100 hosts (results/h100/fleet/five-processes/): probe +9.1%, calibrated eager launch +29.9%, slope 1.465
// +- 0.052 on 7 degrees of freedom, the change with the probe's slope taken out +8.1%. With the probe alone the
// elasticity range is [0, 1.59] and the interval lies wholly beyond +5% (the point was `slower`); the launch path's
// ratio stretches the range to log 1.299 / log 1.091 = 3.0, and the interval then holds no change.
TEST(Stats, C24_TheLaunchPathsRatioWidensAnAcrossHostElasticity) {
  HostAdjusted h{.probe_ratio = 1.0909,
                 .slope = 1.4654,
                 .slope_se = 0.05153,
                 .adjusted_ratio = 1.0809,
                 .adjusted_log_se = 0.007387,
                 .adjusted_df = 7,
                 .residual_log_se = 0.0070,
                 .probes_overlap = false};
  const auto [lo1, hi1] = host_elasticity_range(h, 0.95);
  EXPECT_DOUBLE_EQ(lo1, 0.0);
  EXPECT_NEAR(hi1, 1.4654 + 2.3646 * 0.05153, 1e-3);
  EXPECT_GT(host_adjusted_interval(h, 0.95).ci_low, 1.05);
  h.launch_ratio = 1.2992;
  const auto [lo2, hi2] = host_elasticity_range(h, 0.95);
  EXPECT_DOUBLE_EQ(lo2, 0.0);
  EXPECT_NEAR(hi2, std::log(1.2992) / std::log(1.0909), 1e-9);
  const RatioEstimate wide = host_adjusted_interval(h, 0.95);
  EXPECT_LT(wide.ci_low, 1.0);
  EXPECT_GT(wide.ci_high, 1.2);
  // A launch path that moved the other way, or less, changes nothing; nor does it when the probes overlap.
  h.launch_ratio = 0.9;
  EXPECT_NEAR(host_elasticity_range(h, 0.95).second, hi1, 1e-12);
  h.launch_ratio = 1.05;
  EXPECT_NEAR(host_elasticity_range(h, 0.95).second, hi1, 1e-12);
  h.launch_ratio = 1.2992;
  h.probes_overlap = true;
  EXPECT_NEAR(host_elasticity_range(h, 0.95).second, hi1, 1e-12);
  // Overlapping probes and a launch that moved past the processes' spread (launch_moved): the fitted range's lower
  // end stays, its upper end reaches the launch's elasticity, and the interval is the hull over that range.
  h.launch_moved = true;
  const auto [lo3, hi3] = host_elasticity_range(h, 0.95);
  EXPECT_NEAR(lo3, 1.4654 - 2.3646 * 0.05153, 1e-3);
  EXPECT_NEAR(hi3, std::log(1.2992) / std::log(1.0909), 1e-9);
  const RatioEstimate moved = host_adjusted_interval(h, 0.95);
  EXPECT_LT(moved.ci_low, 1.0);
  EXPECT_LT(moved.ci_high, wide.ci_high);
}

// The null counts of U are the Gaussian binomial coefficients: [4 choose 2]_q = 1 + q + 2q^2 + q^3 + q^4, and
// [6 choose 3]_q = 1 + q + 2q^2 + 3q^3 + 3q^4 + 3q^5 + 3q^6 + 2q^7 + q^8 + q^9 (Andrews, ch. 3; the U table of
// Mann & Whitney 1947 for n = m = 3). Each list is symmetric and sums to C(n + m, n).
TEST(Stats, MannWhitneyNullCounts) {
  EXPECT_EQ(mann_whitney_null_counts(2, 2), (std::vector<double>{1, 1, 2, 1, 1}));
  EXPECT_EQ(mann_whitney_null_counts(3, 3), (std::vector<double>{1, 1, 2, 3, 3, 3, 3, 2, 1, 1}));
  EXPECT_EQ(mann_whitney_null_counts(1, 4), (std::vector<double>{1, 1, 1, 1, 1}));
  EXPECT_EQ(mann_whitney_null_counts(0, 5), (std::vector<double>{1}));
  const std::vector<double> c = mann_whitney_null_counts(20, 20);  // the largest exact case
  ASSERT_EQ(c.size(), 401u);
  EXPECT_EQ(std::accumulate(c.begin(), c.end(), 0.0), 137846528820.0);  // C(40, 20)
  for (std::size_t u = 0; u <= 400; ++u) EXPECT_EQ(c[u], c[400 - u]) << u;
  // n = 4, m = 5: P(U <= 2) = (1 + 1 + 2) / C(9, 4) = 4/126, the published critical-value table's 0.032.
  const std::vector<double> c45 = mann_whitney_null_counts(4, 5);
  EXPECT_EQ(c45[0] + c45[1] + c45[2], 4.0);
  EXPECT_EQ(std::accumulate(c45.begin(), c45.end(), 0.0), 126.0);
}

// Exact two-sided p of a partly separated pair: {1, 2, 4} vs {3, 5, 6} has U = 1, P(U <= 1) = 2/20, p = 0.2.
TEST(Stats, MannWhitneyExactPartialOverlap) {
  const MannWhitney r = mann_whitney({1, 2, 4}, {3, 5, 6});
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.u, 1.0);
  EXPECT_NEAR(r.p_value, 0.2, 1e-15);
  EXPECT_NEAR(mann_whitney({1, 2, 4}, {3, 5, 6}, MannWhitneyMethod::normal).p_value,
              std::erfc((4.5 - 1 - 0.5) / std::sqrt(9.0 * 7 / 12) / std::numbers::sqrt2), 1e-15);
}

// I_x(a, b) against closed forms: I_x(1, 1) = x, I_x(a, 1) = x^a, I_x(1, b) = 1 - (1 - x)^b, I_{1/2}(a, a) = 1/2,
// and I_x(1/2, 1/2) = (2/pi) asin(sqrt x) (Abramowitz & Stegun 26.5).
TEST(Stats, RegularizedIncompleteBetaClosedForms) {
  for (double x : {0.01, 0.2, 0.5, 0.77, 0.99}) {
    EXPECT_NEAR(regularized_incomplete_beta(1, 1, x), x, 1e-14) << x;
    EXPECT_NEAR(regularized_incomplete_beta(3.5, 1, x), std::pow(x, 3.5), 1e-14) << x;
    EXPECT_NEAR(regularized_incomplete_beta(1, 4, x), 1 - std::pow(1 - x, 4), 1e-14) << x;
    EXPECT_NEAR(regularized_incomplete_beta(0.5, 0.5, x), 2 / std::numbers::pi * std::asin(std::sqrt(x)), 1e-13) << x;
  }
  EXPECT_NEAR(regularized_incomplete_beta(7.25, 7.25, 0.5), 0.5, 1e-14);
  EXPECT_EQ(regularized_incomplete_beta(2, 3, 0), 0.0);
  EXPECT_EQ(regularized_incomplete_beta(2, 3, 1), 1.0);
  EXPECT_TRUE(std::isnan(regularized_incomplete_beta(0, 3, 0.5)));
}

// Student t with 2 degrees of freedom has the closed form p = 1 - |t| / sqrt(2 + t^2) (two-sided).
TEST(Stats, StudentTTwoDegreesOfFreedomClosedForm) {
  for (double t : {0.1, 0.8165, 1.5, 4.302653, 30.0})
    EXPECT_NEAR(student_t_two_sided_p(t, 2), 1 - t / std::sqrt(2 + t * t), 1e-13) << t;
  EXPECT_NEAR(student_t_two_sided_p(4.302653, 2), 0.05, 1e-6);  // t_{0.975, 2}
  EXPECT_EQ(student_t_two_sided_p(kInf, 5), 0.0);
}

// Welch's df when both sides have the same variance and size n reduces to 2(n - 1), and t to the pooled
// Student t. {1, e, e^2} vs {e, e^2, e^3}: logs {0, 1, 2} and {1, 2, 3}, means 1 and 2, variances 1, so
// |t| = 1 / sqrt(1/3 + 1/3) = sqrt(3/2), df = (2/3)^2 / (2 (1/3)^2 / 2) = 4, ratio e.
TEST(Stats, WelchLogEqualVariances) {
  const double e = std::numbers::e;
  const WelchLog w = welch_log_test({1, e, e * e}, {e, e * e, e * e * e});
  EXPECT_NEAR(w.ratio, e, 1e-14);
  EXPECT_NEAR(w.df, 4.0, 1e-12);
  EXPECT_NEAR(w.p_value, student_t_two_sided_p(std::sqrt(1.5), 4), 1e-14);
  // Closed form for 4 df: p = 1 - x (1 + (1 - x^2) / 2), x = |t| / sqrt(t^2 + 4) (A&S 26.7.3).
  const double x = std::sqrt(1.5) / std::sqrt(1.5 + 4);
  EXPECT_NEAR(w.p_value, 1 - x * (1 + (1 - x * x) / 2), 1e-13);
  EXPECT_NEAR(w.p_value, 0.28786413, 1e-8);
}

// Normal quantiles against published values (Abramowitz & Stegun table 26.5): z_{0.95} = 1.644853626951,
// z_{0.99} = 2.326347874041, z_{0.999} = 3.090232306168; and Phi(z(p)) = p across the range.
TEST(Stats, NormalQuantilePublishedValues) {
  EXPECT_NEAR(normal_quantile(0.95), 1.644853626951472, 1e-13);
  EXPECT_NEAR(normal_quantile(0.99), 2.326347874040841, 1e-13);
  EXPECT_NEAR(normal_quantile(0.999), 3.090232306167814, 1e-12);
  EXPECT_NEAR(normal_quantile(0.8413447460685429), 1.0, 1e-12);  // Phi(1)
  for (double p : {1e-300, 1e-20, 1e-5, 0.02, 0.1, 0.3, 0.7, 0.97, 1 - 1e-9})
    EXPECT_NEAR(0.5 * std::erfc(-normal_quantile(p) / std::numbers::sqrt2) / p, 1.0, 1e-12) << p;
  EXPECT_THROW(normal_quantile(0.0), std::invalid_argument);
  EXPECT_THROW(normal_quantile(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
}

// Hodges-Lehmann on an even count of pairs: base {1, 2}, new {2, 4}: log ratios log 2, log 4, 0, log 2 ->
// sorted 0, log 2, log 2, log 4; median log 2 (ratio 2). 2 vs 2 is too few for any 95% interval.
TEST(Stats, HodgesLehmannEvenPairCount) {
  const RatioEstimate r = hodges_lehmann_ratio({1, 2}, {2, 4}, 0.95);
  EXPECT_NEAR(r.ratio, 2.0, 1e-15);
  EXPECT_EQ(r.ci_low, 0.0);
  EXPECT_TRUE(std::isinf(r.ci_high));
  // 10 vs 10 at 95%: k = floor(50 - 1.959964 sqrt(175)) = 24, so [D_(24), D_(77)]. With base all 1 and new
  // 1..10 (each ten times), the sorted log differences are log 1 x10, log 2 x10, ...: D_(24) = log 3, D_(77) = log 8.
  std::vector<double> base(10, 1.0), current;
  for (int i = 1; i <= 10; ++i) current.push_back(i);
  const RatioEstimate w = hodges_lehmann_ratio(base, current, 0.95);
  EXPECT_NEAR(w.ratio, std::sqrt(30.0), 1e-12);  // median of 100: the mean of log 5 and log 6
  EXPECT_NEAR(w.ci_low, 3.0, 1e-14);
  EXPECT_NEAR(w.ci_high, 8.0, 1e-13);
}

// Batch = ceil(min_sample_time / iteration_time) in [1, 100000]: 1 us iterations, 1 ms samples -> 1000.
TEST(Stats, ChooseBatch) {
  EXPECT_EQ(choose_batch(1e-6, 1e-3), 1000);
  EXPECT_EQ(choose_batch(0.25, 1.0), 4);
  EXPECT_EQ(choose_batch(0.3, 1.0), 4);
  EXPECT_EQ(choose_batch(2.0, 1.0), 1);
  EXPECT_EQ(choose_batch(0, 1e-3), 1);
  EXPECT_EQ(choose_batch(-1, 1e-3), 1);
  EXPECT_EQ(choose_batch(std::numeric_limits<double>::quiet_NaN(), 1e-3), 1);
  EXPECT_EQ(choose_batch(1e-12, 1.0), 100000);
  EXPECT_EQ(choose_batch(1e-3, 0), 1);
}

}  // namespace
}  // namespace labrun

namespace labrun {
namespace {

/// P(B <= j) for B ~ Binomial(n, 1/2), by the exact recurrence on long doubles (n <= 1000 here).
long double binomial_half_cdf(std::size_t n, std::size_t j) {
  long double pmf = std::pow(0.5L, static_cast<long double>(n)), cdf = 0;
  for (std::size_t i = 0; i <= j; ++i) {
    cdf += pmf;
    pmf = pmf * static_cast<long double>(n - i) / static_cast<long double>(i + 1);
  }
  return cdf;
}

// The median's 95% interval is truly conservative: exact coverage >= 95% at every n from 6 to 1000 (the normal
// approximation it replaced covered 94.75% at worst, and below 95% at 18 counts), and it is the narrowest such
// interval of order statistics (k + 1 would cover less than 95%).
TEST(StatsMedianInterval, ExactCoverageIsAtLeastNinetyFivePercent) {
  for (std::size_t n = 1; n < 6; ++n) EXPECT_EQ(median_ci_rank(n, 0.95), 0u) << n;
  for (std::size_t n = 6; n <= 1000; ++n) {
    const std::size_t k = median_ci_rank(n, 0.95);
    ASSERT_GE(k, 1u) << n;
    const long double coverage = 1 - 2 * binomial_half_cdf(n, k - 1);
    EXPECT_GE(coverage, 0.95L) << "n " << n << " k " << k;
    EXPECT_LT(1 - 2 * binomial_half_cdf(n, k), 0.95L) << "n " << n << ": k + 1 would still cover";
  }
  // Tables (Conover, table A3): n = 10 -> k = 2 (coverage 97.9%), n = 100 -> k = 40.
  EXPECT_EQ(median_ci_rank(10, 0.95), 2u);
  EXPECT_EQ(median_ci_rank(100, 0.95), 40u);
}

}  // namespace
}  // namespace labrun

namespace labrun {
namespace {

// summary_test: the delta-method z-test on log means, against values worked by hand.
TEST(Stats, SummaryTestOfTwoMeansByHand) {
  // base mean 10, sd 1, n 100; new mean 11, sd 1.1, n 100: log ratio ln 1.1 = 0.0953102; se = sqrt(2 * 0.01 / 100)
  // = 0.0141421; z = 6.739447; 95%: exp(0.0953102 -+ 1.959964 * 0.0141421) = [1.069929, 1.130916].
  const SummaryTest t = summary_test(10, 1, 100, 11, 1.1, 100, 0.95);
  EXPECT_NEAR(t.ratio.ratio, 1.1, 1e-12);
  EXPECT_NEAR(t.ratio.ci_low, 1.069929, 1e-6);
  EXPECT_NEAR(t.ratio.ci_high, 1.130916, 1e-6);
  EXPECT_NEAR(t.p_value, std::erfc(6.739447 / std::sqrt(2.0)), 1e-12);
  // The same summaries: ratio 1, p 1, an interval about 1.
  const SummaryTest same = summary_test(10, 1, 100, 10, 1, 100, 0.95);
  EXPECT_DOUBLE_EQ(same.ratio.ratio, 1.0);
  EXPECT_DOUBLE_EQ(same.p_value, 1.0);
  EXPECT_LT(same.ratio.ci_low, 1.0);
  EXPECT_GT(same.ratio.ci_high, 1.0);
  // No spread on either side: the means are the times.
  const SummaryTest exact = summary_test(2, 0, 10, 3, 0, 10, 0.95);
  EXPECT_DOUBLE_EQ(exact.ratio.ci_low, 1.5);
  EXPECT_DOUBLE_EQ(exact.p_value, 0.0);
  EXPECT_THROW(summary_test(0, 1, 10, 1, 1, 10, 0.95), std::invalid_argument);
  EXPECT_THROW(summary_test(1, -1, 10, 1, 1, 10, 0.95), std::invalid_argument);
  EXPECT_THROW(summary_test(1, 1, 1, 1, 1, 10, 0.95), std::invalid_argument);
  EXPECT_THROW(summary_test(1, 1, 10, 1, 1, 10, 1.0), std::invalid_argument);
}

}  // namespace
}  // namespace labrun
