// Tests of the timing statistics against hand-computed values: summarize (Hyndman-Fan 7 quantiles, sample
// standard deviation), the median's confidence interval that stops sampling, and the batch size.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "lab.hpp"
#include "stats.hpp"

namespace labrun {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

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
  EXPECT_DOUBLE_EQ(s.p5, 1.2);   // h = 4 * 0.05 = 0.2: 1 + 0.2 * (2 - 1)
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

// Values 1..11: half = 1.96*sqrt(11)/2 = 3.2502; indices floor(5.5-3.2502) = 2 and ceil(5.5+3.2502) = 9 of the
// sorted values (3 and 10), median 6: (10 - 3) / (2 * 6) = 7/12.
TEST(Stats, MedianCiOneToEleven) {
  const std::vector<double> v = {11, 1, 10, 2, 9, 3, 8, 4, 7, 5, 6};
  EXPECT_DOUBLE_EQ(median_ci_rel_halfwidth(v), 7.0 / 12.0);
  const Summary s = summarize(v);
  EXPECT_EQ(s.ci_low, 3.0);
  EXPECT_EQ(s.ci_high, 10.0);
  EXPECT_DOUBLE_EQ(s.ci_rel_halfwidth, 7.0 / 12.0);
}

// Values 1..6: half = 1.96*sqrt(6)/2 = 2.4005; indices floor(0.5995) = 0 and ceil(5.4005) = 6 clamped to 5
// (values 1 and 6), median 3.5: 5/7. Values 1..8: half 2.7719, indices 1 and 7 (2 and 8), median 4.5: 6/9.
TEST(Stats, MedianCiClampsAndSmallCounts) {
  EXPECT_DOUBLE_EQ(median_ci_rel_halfwidth({1, 2, 3, 4, 5, 6}), 5.0 / 7.0);
  EXPECT_DOUBLE_EQ(median_ci_rel_halfwidth({1, 2, 3, 4, 5, 6, 7, 8}), 6.0 / 9.0);
}

// Identical samples give a zero-width interval; a zero median gives +inf rather than a division by zero.
TEST(Stats, MedianCiConstantAndZeroMedian) {
  EXPECT_EQ(median_ci_rel_halfwidth(std::vector<double>(20, 1e-3)), 0.0);
  EXPECT_EQ(median_ci_rel_halfwidth(std::vector<double>(20, 0.0)), kInf);
}

// 100 values 1..100: half = 1.96*10/2 = 9.8; indices floor(40.2) = 40 and ceil(59.8) = 60 (values 41 and 61),
// median 50.5: 20 / 101.
TEST(Stats, MedianCiHundredValues) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  EXPECT_DOUBLE_EQ(median_ci_rel_halfwidth(v), 20.0 / 101.0);
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
