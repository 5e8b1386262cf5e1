// Summary statistics of timing samples. Host code, unit-tested against hand-computed values.
#pragma once

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
  /// Distribution-free 95% confidence interval of the median: order statistics at 0-based ranks
  /// floor(n/2 - 1.96*sqrt(n)/2) and ceil(n/2 + 1.96*sqrt(n)/2), clamped to [0, n-1] (normal approximation to
  /// the binomial; Conover, Practical Nonparametric Statistics, 3rd ed., section 3.2). Equal to [min, max]
  /// for n < 6, where no narrower interval reaches 95%.
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

/// Summary of `values`. Sample standard deviation uses n - 1 (0 for a single value).
/// @throws std::invalid_argument if `values` is empty.
Summary summarize(std::vector<double> values);

/// Summary as JSON with keys `<name>_<unit>` e.g. median_time_s when unit = "time_s".
Json to_json(const Summary& s, const std::string& unit_suffix);

}  // namespace labrun
