// The tests that compare two samples (stats.hpp, "Tests of two samples"): formulas and sources at each
// declaration. Pure functions of vectors of doubles.
#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace labrun {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Standard normal CDF, erfc(-x / sqrt 2) / 2.
double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }

void require_finite(const std::vector<double>& values, const char* what) {
  if (values.empty()) throw std::invalid_argument(std::string(what) + ": empty sample");
  for (double v : values)
    if (!std::isfinite(v)) throw std::invalid_argument(std::string(what) + ": non-finite value");
}

// Continued fraction of the regularized incomplete beta function (modified Lentz; Numerical Recipes, 3rd ed.,
// section 6.4, betacf), converging for x < (a + 1) / (a + b + 2).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEps = 1e-15;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 10000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a - 1 + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < kEps) break;
  }
  return h;
}

}  // namespace

double regularized_incomplete_beta(double a, double b, double x) {
  if (!(a > 0 && b > 0) || std::isnan(x)) return kNaN;
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) +
                                b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

std::vector<double> mann_whitney_null_counts(std::size_t n, std::size_t m) {
  std::vector<double> c(n * m + n + 1, 0.0);  // room for the degree-(m+i) factor before its division
  c[0] = 1;
  for (std::size_t i = 1; i <= n; ++i) {
    const std::size_t up = m + i;
    for (std::size_t k = c.size(); k-- > up;) c[k] -= c[k - up];  // times (1 - q^(m+i)), top down
    for (std::size_t k = i; k < c.size(); ++k) c[k] += c[k - i];  // divided by (1 - q^i) = times sum q^(ik)
  }
  c.resize(n * m + 1);
  return c;
}

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument(fmt::format("normal_quantile: p = {} outside (0, 1)", p));
  // Symmetry keeps the refinement step accurate: 1 - p is exact for p >= 0.5 (Sterbenz).
  if (p > 0.5) return -normal_quantile(1 - p);
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01, -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  double x = 0;
  if (p < 0.02425) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  // One Halley step on Phi(x) - p = 0.
  const double e = normal_cdf(x) - p;
  const double u = e * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

MannWhitney mann_whitney(const std::vector<double>& a, const std::vector<double>& b, MannWhitneyMethod method) {
  require_finite(a, "mann_whitney: first sample");
  require_finite(b, "mann_whitney: second sample");
  const std::size_t n = a.size(), m = b.size(), total = n + m;
  std::vector<std::pair<double, bool>> pooled;  // value, from `a`
  pooled.reserve(total);
  for (double v : a) pooled.emplace_back(v, true);
  for (double v : b) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end());

  // Midranks: a group of t tied values at 1-based ranks i+1..j all get (i + 1 + j) / 2.
  double rank_sum_a = 0, tie_term = 0;
  bool ties = false;
  for (std::size_t i = 0; i < total;) {
    std::size_t j = i;
    while (j < total && pooled[j].first == pooled[i].first) ++j;
    const double midrank = static_cast<double>(i + 1 + j) / 2.0, t = static_cast<double>(j - i);
    for (std::size_t k = i; k < j; ++k)
      if (pooled[k].second) rank_sum_a += midrank;
    if (j - i > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  const double nd = static_cast<double>(n), md = static_cast<double>(m), nm = nd * md;
  MannWhitney r;
  r.u = rank_sum_a - nd * (nd + 1) / 2;

  const bool exact = method == MannWhitneyMethod::exact ||
                     (method == MannWhitneyMethod::automatic && !ties && total <= kMannWhitneyExactMaxTotal);
  if (exact) {
    if (ties) throw std::invalid_argument("mann_whitney: exact p-value needs samples without ties");
    if (total > kMannWhitneyExactMaxTotal)
      throw std::invalid_argument(
          fmt::format("mann_whitney: exact p-value needs n + m <= {}", kMannWhitneyExactMaxTotal));
    const std::vector<double> counts = mann_whitney_null_counts(n, m);
    const auto tail_end = static_cast<std::size_t>(std::min(r.u, nm - r.u));  // U is an integer without ties
    const double tail = std::accumulate(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(tail_end) + 1,
                                        0.0);
    const double all = std::accumulate(counts.begin(), counts.end(), 0.0);
    r.p_value = std::min(1.0, 2 * tail / all);
    r.exact = true;
    return r;
  }
  const double n_all = static_cast<double>(total);
  const double variance = nm / 12.0 * ((n_all + 1) - tie_term / (n_all * (n_all - 1)));
  if (variance <= 0) return r;  // every value tied: no evidence either way, p = 1
  const double z = std::max(0.0, std::fabs(r.u - nm / 2) - 0.5) / std::sqrt(variance);
  r.p_value = std::min(1.0, std::erfc(z / std::numbers::sqrt2));
  return r;
}

std::vector<double> benjamini_hochberg(const std::vector<double>& p_values) {
  for (double p : p_values)
    if (!(p >= 0 && p <= 1))
      throw std::invalid_argument(fmt::format("benjamini_hochberg: p-value {} outside [0, 1]", p));
  const std::size_t m = p_values.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return p_values[x] < p_values[y]; });
  std::vector<double> adjusted(m);
  double running_min = 1.0;
  for (std::size_t rank = m; rank-- > 0;) {
    const double raw = p_values[order[rank]] * static_cast<double>(m) / static_cast<double>(rank + 1);
    running_min = std::min(running_min, raw);
    adjusted[order[rank]] = running_min;
  }
  return adjusted;
}

double student_t_two_sided_p(double t, double df) {
  if (!(df > 0) || std::isnan(t)) return kNaN;
  if (std::isinf(t)) return 0;
  return regularized_incomplete_beta(df / 2, 0.5, df / (df + t * t));
}

WelchLog welch_log_test(const std::vector<double>& base, const std::vector<double>& current, double min_log_sd) {
  for (const auto* side : {&base, &current}) {
    if (side->size() < 2) throw std::invalid_argument("welch_log_test: fewer than 2 values on a side");
    for (double v : *side)
      if (!std::isfinite(v) || v <= 0)
        throw std::invalid_argument("welch_log_test: a value is not finite and positive");
  }
  auto moments = [](const std::vector<double>& v) {
    double mean = 0;
    for (double x : v) mean += std::log(x);
    mean /= static_cast<double>(v.size());
    double ss = 0;
    for (double x : v) ss += (std::log(x) - mean) * (std::log(x) - mean);
    return std::pair{mean, ss / static_cast<double>(v.size() - 1)};
  };
  auto [mb, vb] = moments(base);
  auto [mn, vn] = moments(current);
  if (std::isfinite(min_log_sd) && min_log_sd > 0) {
    vb = std::max(vb, min_log_sd * min_log_sd);
    vn = std::max(vn, min_log_sd * min_log_sd);
  }
  const double nb = static_cast<double>(base.size()), nn = static_cast<double>(current.size());
  WelchLog w;
  w.ratio = std::exp(mn - mb);
  const double qb = vb / nb, qn = vn / nn, se2 = qb + qn;
  if (se2 <= 0) {
    w.p_value = mn == mb ? 1.0 : 0.0;
    w.df = nb + nn - 2;
    return w;
  }
  w.df = se2 * se2 / (qb * qb / (nb - 1) + qn * qn / (nn - 1));
  w.log_se = std::sqrt(se2);
  w.p_value = student_t_two_sided_p((mn - mb) / std::sqrt(se2), w.df);
  return w;
}

double student_t_quantile_two_sided(double p, double df) {
  if (!(p > 0 && p <= 1) || !(df > 0))
    throw std::invalid_argument("student_t_quantile_two_sided: p must lie in (0, 1] and df be > 0");
  double lo = 0, hi = 1;
  while (student_t_two_sided_p(hi, df) > p) hi *= 2;  // p falls with t: bracket first
  for (int i = 0; i < 200 && hi - lo > 1e-10 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_two_sided_p(mid, df) > p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

RatioEstimate welch_log_interval(const WelchLog& w, double confidence) {
  if (!(confidence > 0 && confidence < 1))
    throw std::invalid_argument("welch_log_interval: confidence must lie in (0, 1)");
  RatioEstimate r;
  r.ratio = w.ratio;
  const double half = w.log_se > 0 ? student_t_quantile_two_sided(1 - confidence, w.df) * w.log_se : 0.0;
  r.ci_low = w.ratio * std::exp(-half);
  r.ci_high = w.ratio * std::exp(half);
  return r;
}

CovariateAdjusted covariate_adjust(const std::vector<double>& base_time, const std::vector<double>& base_covariate,
                                   const std::vector<double>& new_time, const std::vector<double>& new_covariate) {
  if (base_time.size() != base_covariate.size() || new_time.size() != new_covariate.size())
    throw std::invalid_argument("covariate_adjust: times and covariates differ in count");
  for (const auto* v : {&base_time, &base_covariate, &new_time, &new_covariate})
    for (double x : *v)
      if (!std::isfinite(x) || x <= 0)
        throw std::invalid_argument("covariate_adjust: a value is not finite and positive");
  auto logs = [](const std::vector<double>& v) {
    std::vector<double> out(v.size());
    std::transform(v.begin(), v.end(), out.begin(), [](double x) { return std::log(x); });
    return out;
  };
  auto mean = [](const std::vector<double>& v) {
    return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  };
  const std::vector<double> yb = logs(base_time), xb = logs(base_covariate), yn = logs(new_time),
                            xn = logs(new_covariate);
  // Pooled within-side sums of squares and products (each side about its own means).
  double sxx = 0, sxy = 0;
  for (const auto& [x, y] : {std::pair{&xb, &yb}, std::pair{&xn, &yn}}) {
    const double mx = mean(*x), my = mean(*y);
    for (std::size_t i = 0; i < x->size(); ++i) {
      sxx += ((*x)[i] - mx) * ((*x)[i] - mx);
      sxy += ((*x)[i] - mx) * ((*y)[i] - my);
    }
  }
  CovariateAdjusted c;
  c.elasticity = sxx > 0 ? std::clamp(sxy / sxx, 0.0, 1.0) : 1.0;
  std::vector<double> all_x = xb;
  all_x.insert(all_x.end(), xn.begin(), xn.end());
  const double mx = mean(all_x);
  auto adjusted = [&](const std::vector<double>& x, const std::vector<double>& y) {
    std::vector<double> out(y.size());
    for (std::size_t i = 0; i < y.size(); ++i) out[i] = std::exp(y[i] - c.elasticity * (x[i] - mx));
    return out;
  };
  c.base = adjusted(xb, yb);
  c.current = adjusted(xn, yn);
  return c;
}

namespace {

/// HostAdjusted's analysis of covariance (its fields slope .. adjusted_df, and probe_ratio) from per-process times
/// and probes, already checked finite and positive by covariate_adjust.
void ancova_common_slope(const std::vector<double>& base_time, const std::vector<double>& base_probe,
                         const std::vector<double>& new_time, const std::vector<double>& new_probe, HostAdjusted& h) {
  struct Side {
    double n = 0, mx = 0, my = 0;
  };
  auto side = [](const std::vector<double>& t, const std::vector<double>& p) {
    Side s;
    s.n = static_cast<double>(t.size());
    for (std::size_t i = 0; i < t.size(); ++i) s.mx += std::log(p[i]), s.my += std::log(t[i]);
    s.mx /= s.n;
    s.my /= s.n;
    return s;
  };
  const Side b = side(base_time, base_probe), n = side(new_time, new_probe);
  double sxx = 0, sxy = 0, syy = 0;  // pooled within-side sums
  for (const auto& [t, p, s] : {std::tuple{&base_time, &base_probe, &b}, std::tuple{&new_time, &new_probe, &n}})
    for (std::size_t i = 0; i < t->size(); ++i) {
      const double dx = std::log((*p)[i]) - s->mx, dy = std::log((*t)[i]) - s->my;
      sxx += dx * dx, sxy += dx * dy, syy += dy * dy;
    }
  const double dx = n.mx - b.mx, dy = n.my - b.my;
  h.probe_ratio = std::exp(dx);
  const double df = b.n + n.n - 3;
  // A slope needs probes that vary within a side beyond rounding (1e-6 in log: a part in a million).
  if (!(sxx > 1e-12 * (b.n + n.n)) || !(df > 0)) return;
  h.slope = sxy / sxx;
  const double s2 = std::max(0.0, syy - h.slope * sxy) / df;
  h.slope_se = std::sqrt(s2 / sxx);
  h.adjusted_ratio = std::exp(dy - h.slope * dx);
  h.adjusted_log_se = std::sqrt(s2 * (1 / b.n + 1 / n.n + dx * dx / sxx));
  h.residual_log_se = std::sqrt(s2 * (1 / b.n + 1 / n.n));
  h.adjusted_df = df;
  const auto [bmin, bmax] = std::minmax_element(base_probe.begin(), base_probe.end());
  const auto [nmin, nmax] = std::minmax_element(new_probe.begin(), new_probe.end());
  h.probes_overlap = std::max(*bmin, *nmin) <= std::min(*bmax, *nmax);
}

}  // namespace

HostAdjusted host_adjusted_tests(const std::vector<double>& base_time, const std::vector<double>& base_probe,
                                 const std::vector<double>& new_time, const std::vector<double>& new_probe) {
  const CovariateAdjusted c = covariate_adjust(base_time, base_probe, new_time, new_probe);  // checks the inputs
  auto per_probe = [](const std::vector<double>& t, const std::vector<double>& p) {
    std::vector<double> out(t.size());
    for (std::size_t i = 0; i < t.size(); ++i) out[i] = t[i] / p[i];
    return out;
  };
  HostAdjusted h;
  h.elasticity = c.elasticity;
  h.per_probe = welch_log_test(per_probe(base_time, base_probe), per_probe(new_time, new_probe));
  h.covariate = welch_log_test(c.base, c.current);
  ancova_common_slope(base_time, base_probe, new_time, new_probe, h);
  return h;
}

std::pair<double, double> host_elasticity_range(const HostAdjusted& h, double confidence) {
  if (!(confidence > 0 && confidence < 1))
    throw std::invalid_argument("host_elasticity_range: confidence must lie in (0, 1)");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (!std::isfinite(h.slope) || !std::isfinite(h.slope_se) || !(h.adjusted_df > 0)) return {nan, nan};
  const double t = student_t_quantile_two_sided(1 - confidence, h.adjusted_df);
  const double lo = h.slope - t * h.slope_se, hi = h.slope + t * h.slope_se;
  if (h.probes_overlap && !h.launch_moved) return {lo, hi};
  // The host part may move as the launch path did, when that moved the same way as the probe, further.
  const double dx = std::log(h.probe_ratio), dl = std::log(h.launch_ratio);
  const double launch = dx != 0 && std::isfinite(dl) && dl / dx > 0 ? dl / dx : 0.0;
  if (h.probes_overlap) return {lo, std::max(hi, launch)};
  return {std::min(0.0, lo), std::max({1.0, hi, launch})};
}

RatioEstimate host_adjusted_interval(const HostAdjusted& h, double confidence) {
  if (!(confidence > 0 && confidence < 1))
    throw std::invalid_argument("host_adjusted_interval: confidence must lie in (0, 1)");
  RatioEstimate r;
  r.ratio = h.adjusted_ratio;
  if (!std::isfinite(h.adjusted_log_se) || !(h.adjusted_df > 0)) {
    r.ci_low = 0;
    r.ci_high = std::numeric_limits<double>::infinity();
    return r;
  }
  const double t = student_t_quantile_two_sided(1 - confidence, h.adjusted_df);
  if (h.probes_overlap && !h.launch_moved) {
    const double half = h.adjusted_log_se > 0 ? t * h.adjusted_log_se : 0.0;
    r.ci_low = h.adjusted_ratio * std::exp(-half);
    r.ci_high = h.adjusted_ratio * std::exp(half);
    return r;
  }
  // Beyond the host speeds (or launch path) observed: the change at every elasticity in the range, each with its
  // residual noise.
  const auto [b_lo, b_hi] = host_elasticity_range(h, confidence);
  const double dx = std::log(h.probe_ratio), dy = std::log(h.adjusted_ratio) + h.slope * dx;
  const double d1 = dy - b_lo * dx, d2 = dy - b_hi * dx, half = t * h.residual_log_se;
  r.ci_low = std::exp(std::min(d1, d2) - half);
  r.ci_high = std::exp(std::max(d1, d2) + half);
  return r;
}

RatioEstimate hodges_lehmann_ratio(const std::vector<double>& base, const std::vector<double>& current,
                                   double confidence) {
  for (const auto* sample : {&base, &current}) {
    if (sample->empty()) throw std::invalid_argument("hodges_lehmann_ratio: empty sample");
    for (double v : *sample)
      if (!std::isfinite(v) || v <= 0)
        throw std::invalid_argument(fmt::format("hodges_lehmann_ratio: {} is not a finite positive time", v));
  }
  if (!(confidence > 0 && confidence < 1))
    throw std::invalid_argument(fmt::format("hodges_lehmann_ratio: confidence {} outside (0, 1)", confidence));

  std::vector<double> log_base(base.size());
  std::transform(base.begin(), base.end(), log_base.begin(), [](double v) { return std::log(v); });
  std::vector<double> diffs;
  diffs.reserve(base.size() * current.size());
  for (double c : current)
    for (double lb : log_base) diffs.push_back(std::log(c) - lb);
  const std::size_t nm = diffs.size();
  // k-th smallest (0-based) pairwise difference; nth_element keeps this O(nm) per call.
  const auto kth = [&](std::size_t k) {
    std::nth_element(diffs.begin(), diffs.begin() + static_cast<std::ptrdiff_t>(k), diffs.end());
    return diffs[k];
  };

  RatioEstimate r;
  const double median = nm % 2 == 1 ? kth(nm / 2) : (kth(nm / 2 - 1) + kth(nm / 2)) / 2;
  r.ratio = std::exp(median);
  const double n = static_cast<double>(base.size()), m = static_cast<double>(current.size());
  const double z = normal_quantile(1 - (1 - confidence) / 2);
  const double k = std::floor(n * m / 2 - z * std::sqrt(n * m * (n + m + 1) / 12));
  if (k < 1) {
    r.ci_low = 0;
    r.ci_high = kInf;
    return r;
  }
  const auto ki = static_cast<std::size_t>(k);
  r.ci_low = std::exp(kth(ki - 1));
  r.ci_high = std::exp(kth(nm - ki));
  return r;
}

SummaryTest summary_test(double base_mean_s, double base_sd_s, std::int64_t base_count, double new_mean_s,
                         double new_sd_s, std::int64_t new_count, double confidence) {
  const auto usable = [](double mean, double sd, std::int64_t n) {
    return std::isfinite(mean) && mean > 0 && std::isfinite(sd) && sd >= 0 && n >= 2;
  };
  if (!usable(base_mean_s, base_sd_s, base_count) || !usable(new_mean_s, new_sd_s, new_count) ||
      !(confidence > 0 && confidence < 1))
    throw std::invalid_argument("summary_test: means > 0, sds >= 0, counts >= 2 and 0 < confidence < 1 are required");
  const double log_ratio = std::log(new_mean_s / base_mean_s);
  const double se = std::sqrt(std::pow(base_sd_s / base_mean_s, 2) / static_cast<double>(base_count) +
                              std::pow(new_sd_s / new_mean_s, 2) / static_cast<double>(new_count));
  SummaryTest t;
  t.ratio.ratio = std::exp(log_ratio);
  if (se == 0) {  // no spread on either side: the means are the times
    t.ratio.ci_low = t.ratio.ci_high = t.ratio.ratio;
    t.p_value = log_ratio == 0 ? 1.0 : 0.0;
    return t;
  }
  const double z = normal_quantile(0.5 + confidence / 2);
  t.ratio.ci_low = std::exp(log_ratio - z * se);
  t.ratio.ci_high = std::exp(log_ratio + z * se);
  t.p_value = std::erfc(std::abs(log_ratio / se) / std::sqrt(2.0));
  return t;
}

}  // namespace labrun
