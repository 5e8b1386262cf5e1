#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace labrun {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return quantile_sorted(values, 0.5);
}

double quantile_sorted(const std::vector<double>& sorted, double q) {
  const double h = (static_cast<double>(sorted.size()) - 1.0) * q;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

Summary summarize(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("summarize: no values");
  std::sort(values.begin(), values.end());
  Summary s;
  s.count = values.size();
  s.min = values.front();
  s.max = values.back();
  s.median = quantile_sorted(values, 0.5);
  s.p5 = quantile_sorted(values, 0.05);
  s.p25 = quantile_sorted(values, 0.25);
  s.p75 = quantile_sorted(values, 0.75);
  s.p95 = quantile_sorted(values, 0.95);
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(s.count);
  if (s.count > 1) {
    double ss = 0;
    for (double v : values) ss += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(ss / static_cast<double>(s.count - 1));
  }
  s.rel_iqr = s.median != 0 ? (s.p75 - s.p25) / s.median : 0;
  const std::size_t k = median_ci_rank(s.count, 0.95);  // 1-based [x_(k), x_(n+1-k)], k = 0: none
  s.ci_low = k == 0 ? s.min : values[k - 1];
  s.ci_high = k == 0 ? s.max : values[s.count - k];
  s.ci_rel_halfwidth = (s.count < 6 || s.median <= 0) ? std::numeric_limits<double>::infinity()
                                                      : (s.ci_high - s.ci_low) / (2.0 * s.median);
  std::vector<double> dev;
  for (double v : values) dev.push_back(std::fabs(v - s.median));
  std::sort(dev.begin(), dev.end());
  const double mad = quantile_sorted(dev, 0.5);
  if (mad > 0)
    for (double v : values) s.outliers += 0.6745 * std::fabs(v - s.median) / mad > 3.5;
  return s;
}

std::size_t median_ci_rank(std::size_t n, double confidence) {
  // P(B <= j) for B ~ Binomial(n, 1/2), summed in log space (n up to millions without underflow of 2^-n).
  const double tail = (1 - confidence) / 2, log_half_n = static_cast<double>(n) * std::log(0.5);
  const double log_n_fact = std::lgamma(static_cast<double>(n) + 1);
  double cdf = 0;
  std::size_t k = 0;  // the largest k with P(B <= k - 1) <= tail
  for (std::size_t j = 0; 2 * j < n; ++j) {
    cdf += std::exp(log_n_fact - std::lgamma(static_cast<double>(j) + 1) - std::lgamma(static_cast<double>(n - j) + 1) +
                    log_half_n);
    if (cdf > tail) break;
    k = j + 1;
  }
  return k;
}

Json to_json(const Summary& s, const std::string& unit) {
  Json j;
  j["count"] = s.count;
  j["median_" + unit] = json_real(s.median);
  j["mean_" + unit] = json_real(s.mean);
  j["stddev_" + unit] = json_real(s.stddev);
  j["min_" + unit] = json_real(s.min);
  j["max_" + unit] = json_real(s.max);
  j["p5_" + unit] = json_real(s.p5);
  j["p25_" + unit] = json_real(s.p25);
  j["p75_" + unit] = json_real(s.p75);
  j["p95_" + unit] = json_real(s.p95);
  j["rel_iqr"] = json_real(s.rel_iqr);
  j["ci95_low_" + unit] = json_real(s.ci_low);
  j["ci95_high_" + unit] = json_real(s.ci_high);
  j["ci95_rel_halfwidth"] = json_real(s.ci_rel_halfwidth);
  j["outliers"] = s.outliers;
  return j;
}

}  // namespace labrun
